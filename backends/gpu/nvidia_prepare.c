/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Prepare, unprepare and config validation of NVIDIA devices (health:
 * nvidia_health.c).
 *
 * Prepare gives the container the device nodes, the env vars of
 * gpu_prepare_common plus NVIDIA_VISIBLE_DEVICES=void (so a legacy
 * nvidia-container-runtime hook adds no GPUs of its own), and the driver's
 * libraries and tools. Time-slicing of a full GPU runs
 *   nvidia-smi compute-policy --set-timeslice=<0..3> -i <uuid>
 * and records the uuid and the tool in the undo state; unprepare sets the
 * interval back to Default from that state alone, so it also works after a
 * restart. adminAccess claims get the nodes and nothing exclusive.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nvidia.h"

#define UNDO_UUID "nvidia.timeslice.uuid"
#define UNDO_TOOL "nvidia.timeslice.tool"

int nvidia_validate_config(struct dralet_backend_ctx *ctx, const char *config)
{
	struct gpu_config cfg;

	return gpu_config_parse(ctx, config, &cfg);
}

/* Where nvidia-smi finds libnvidia-ml: the loader's own search on the
 * node itself; below another driver root (the host's files in the agent's
 * container), the directory of the driver's libnvidia-ml there. */
static const char *tool_lib_path(const struct nvidia_state *st, char *buf, size_t size)
{
	char *slash;

	if (!st || !strcmp(st->driver_root, "/") ||
	    !nvidia_driver_lib(st, "libnvidia-ml", buf, size) || !(slash = strrchr(buf, '/')))
		return NULL;
	*slash = '\0';
	return buf;
}

static int set_timeslice(struct dralet_backend_ctx *ctx, const struct nvidia_state *st,
			 const char *tool, const char *uuid, enum gpu_timeslice t,
			 const char *device)
{
	char arg[32], out[512], lib_dir[4096];
	char *argv[] = { (char *)tool, "compute-policy", arg, "-i", (char *)uuid, NULL };
	int r;

	snprintf(arg, sizeof(arg), "--set-timeslice=%d", (int)t);
	r = gpu_run_tool(argv, tool_lib_path(st, lib_dir, sizeof(lib_dir)), NVIDIA_TOOL_TIMEOUT_MS,
			 out, sizeof(out));
	if (r == 0)
		return 0;
	if (r < 0)
		dralet_ctx_error(ctx, "device %s: cannot run %s to set the time-slice to %s: %s",
				 device, tool, gpu_timeslice_name(t),
				 r == -ETIMEDOUT ? "timed out" : strerror(-r));
	else
		dralet_ctx_error(ctx, "device %s: %s compute-policy --set-timeslice=%d -i %s failed "
				      "(exit %d): %.300s", device, tool, (int)t, uuid, r,
				 out[0] ? out : "no output");
	return r < 0 ? r : -EIO;
}

/* False only when NVML says the GPU instance of static MIG device @dev is gone. */
static bool mig_instance_exists(const struct nvidia_state *st, const struct dralet_device *dev,
				const struct gpu_info *info)
{
	const struct dralet_pci_func *f = dralet_device_pci(dev);
	const struct nvml *n = st->nvml;
	nvml_gpu_instance gi;
	nvml_device h;

	if (!n || !f || !n->gpu_instance_by_id || n->by_pci_bus_id(f->address, &h) != NVML_OK)
		return true;	/* cannot tell */
	return n->gpu_instance_by_id(h, info->gi, &gi) != NVML_ERR_NOT_FOUND;
}

int nvidia_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		   struct dralet_prepare_req *req)
{
	struct nvidia_state *st = dralet_ctx_state(ctx);
	const struct gpu_info *info = gpu_info_of(dev);
	const char *name = dralet_device_name(dev);
	struct gpu_config cfg;
	char tool[4096];
	int r;

	if (!st || !info)
		return -EINVAL;
	if (info->vfio.is_form)
		return gpu_vfio_form_prepare(ctx, dev, req);
	if ((r = gpu_config_parse(ctx, req->config, &cfg)) < 0)
		return r;
	if (info->type == GPU_TYPE_MIG && cfg.kind == GPU_CONFIG_GPU) {
		dralet_ctx_error(ctx, "device %s is a MIG device: use kind MigDeviceConfig, not "
				      "GpuConfig", name);
		return -EINVAL;
	}
	if (info->type != GPU_TYPE_MIG && cfg.kind == GPU_CONFIG_MIG) {
		dralet_ctx_error(ctx, "device %s is a full GPU: use kind GpuConfig, not "
				      "MigDeviceConfig", name);
		return -EINVAL;
	}
	if (info->dynamic) {
		if ((r = nvidia_dynmig_prepare(ctx, st, dev, req)) < 0)
			return r;
		if ((r = dralet_edits_add_env(req->edits, "NVIDIA_VISIBLE_DEVICES", "void")) < 0 ||
		    (r = nvidia_add_driver_mounts(ctx, st, req->edits)) < 0) {
			dralet_ctx_error(ctx, "device %s: cannot build container edits: %s", name,
					 strerror(-r));
			/* a failing prepare cleans up after itself (backend.h) */
			nvidia_dynmig_unprepare(ctx, st, req->undo);
		}
		return r;
	}
	if (info->type == GPU_TYPE_MIG && !mig_instance_exists(st, dev, info)) {
		/* made dynamically and destroyed since (a claim's undo after a
		 * restart): discovery publishes the GPU's partitions again */
		dralet_ctx_error(ctx, "device %s: its MIG GPU instance %u no longer exists; the "
				      "node's devices are being discovered again", name, info->gi);
		dralet_ctx_node_changed(ctx);
		return -ENODEV;
	}
	if (info->type == GPU_TYPE_MIG && !info->caps_known) {
		dralet_ctx_error(ctx, "device %s: the nvidia-cap device nodes of MIG GPU instance "
				      "%u / compute instance %u are missing", name, info->gi, info->ci);
		return -ENODEV;
	}
	if ((r = nvidia_prepare_share(ctx, dev, req, cfg.sharing && !req->admin_access)) < 0)
		return r;
	if ((r = gpu_prepare_common(ctx, dev, req)) < 0)
		return r;
	if ((r = dralet_edits_add_env(req->edits, "NVIDIA_VISIBLE_DEVICES", "void")) < 0 ||
	    (r = nvidia_add_driver_mounts(ctx, st, req->edits)) < 0) {
		dralet_ctx_error(ctx, "device %s: cannot build container edits: %s", name,
				 strerror(-r));
		return r;
	}
	/* MIG devices always time-slice their compute instance; adminAccess
	 * must not change what the device's owner gets */
	if (!cfg.sharing || info->type == GPU_TYPE_MIG || req->admin_access)
		return 0;
	if (!info->uuid[0]) {
		dralet_ctx_error(ctx, "device %s: time-slicing needs the GPU's UUID, which neither "
				      "NVML nor procfs gave", name);
		return -ENODATA;
	}
	if (!nvidia_smi_path(ctx, st, tool, sizeof(tool))) {
		dralet_ctx_error(ctx, "device %s: time-slicing needs nvidia-smi, which is not at %s "
				      "(set the nvidia backend's option nvidiaSmi or driverRoot)",
				 name, tool);
		return -ENOENT;
	}
	/* recorded first: if the tool half-succeeds, unprepare still resets */
	r = dralet_undo_set_all(req->undo, (const struct dralet_undo_value[]){
		{ UNDO_UUID, info->uuid }, { UNDO_TOOL, tool } }, 2);
	if (r < 0)
		return r;
	if ((r = set_timeslice(ctx, st, tool, info->uuid, cfg.timeslice, name)) < 0)
		return r;
	return gpu_env(dev, req->edits, "TIMESLICE", gpu_timeslice_name(cfg.timeslice));
}

int nvidia_unprepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		     const struct dralet_claim_ref *claim, const struct dralet_undo *undo)
{
	struct nvidia_state *st = dralet_ctx_state(ctx);
	const char *uuid = dralet_undo_get(undo, UNDO_UUID);
	const char *recorded = dralet_undo_get(undo, UNDO_TOOL);
	const char *name = dev ? dralet_device_name(dev) : uuid;
	char tool[4096];

	(void)claim;
	if (dralet_undo_get(undo, "vfio.group"))
		return gpu_vfio_form_unprepare(ctx, undo);
	if (nvidia_dynmig_owns_undo(undo)) {
		int r = nvidia_dynmig_unprepare(ctx, st, undo);
		if (r == 0)
			dralet_ctx_node_changed(ctx);	/* a static-MIG GPU may be dynamic again */
		return r;
	}
	if (!uuid)
		return 0;	/* nothing was changed */
	/* the tool prepare used, unless it is gone and another one is known */
	if (recorded && gpu_executable(recorded))
		snprintf(tool, sizeof(tool), "%s", recorded);
	else if (!st || !nvidia_smi_path(ctx, st, tool, sizeof(tool))) {
		dralet_ctx_error(ctx, "device %s: cannot restore the Default time-slice of %s: "
				      "nvidia-smi not found (was %s)", name, uuid,
				 recorded ? recorded : "unknown");
		return -ENOENT;
	}
	return set_timeslice(ctx, st, tool, uuid, GPU_TIMESLICE_DEFAULT, name);
}
