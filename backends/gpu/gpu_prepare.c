/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Container edits every GPU gets, and the health check every GPU gets.
 *
 * Environment scheme (docs/attributes-gpu.md): each device contributes
 * variables named DRALET_<DEVICE>_<FIELD>, where <DEVICE> is the device name
 * in upper case with '-' turned into '_' ("gpu-0000-18-00-0" ->
 * DRALET_GPU_0000_18_00_0_UUID). Device names are unique per driver, so a
 * container holding several GPUs (one claim or several) never sees two
 * devices write the same variable.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <dralet/pci_ctl.h>

#include "gpu.h"
#include "../common/pcidev.h"

int gpu_env(struct dralet_device *dev, struct dralet_edits *edits, const char *field,
	    const char *value)
{
	char name[PCIDEV_ENV_NAME_MAX];
	int r = pcidev_env_name(dev, field, name, sizeof(name));

	return r < 0 ? r : dralet_edits_add_env(edits, name, value);
}

int gpu_prepare_common(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		       struct dralet_prepare_req *req)
{
	size_t n = dralet_device_n_nodes(dev);
	int r = 0;

	if (n == 0) {
		dralet_ctx_error(ctx, "device %s has no device nodes on this node (driver not "
				      "loaded or nodes not created); it cannot be used",
				 dralet_device_name(dev));
		return -ENODEV;
	}
	for (size_t i = 0; i < n && r >= 0; i++)
		r = dralet_edits_add_node(req->edits, dralet_device_node(dev, i), NULL);
	if (r < 0) {
		dralet_ctx_error(ctx, "device %s: cannot build container edits: %s",
				 dralet_device_name(dev), strerror(-r));
		return r;
	}
	return gpu_prepare_env(ctx, dev, req);
}

int gpu_prepare_env(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		    struct dralet_prepare_req *req)
{
	const struct dralet_pci_func *f = dralet_device_pci(dev);
	const struct gpu_info *info = gpu_info_of(dev);
	char num[24];
	int r = gpu_env(dev, req->edits, "DEVICE", dralet_device_name(dev));

	if (r >= 0 && f)
		r = gpu_env(dev, req->edits, "PCI_ADDRESS", f->address);
	if (r >= 0 && req->claim.uid)
		r = gpu_env(dev, req->edits, "CLAIM_UID", req->claim.uid);
	if (r >= 0 && req->request)
		r = gpu_env(dev, req->edits, "REQUEST", req->request);
	if (r >= 0 && info && info->uuid[0])
		r = gpu_env(dev, req->edits, "UUID", info->uuid);
	if (r >= 0 && info && info->minor >= 0) {
		snprintf(num, sizeof(num), "%d", info->minor);
		r = gpu_env(dev, req->edits, "MINOR", num);
	}
	if (r >= 0 && info && info->index >= 0) {
		snprintf(num, sizeof(num), "%d", info->index);
		r = gpu_env(dev, req->edits, "INDEX", num);
	}
	if (r >= 0 && info && info->profile[0])
		r = gpu_env(dev, req->edits, "PROFILE", info->profile);
	if (r < 0)
		dralet_ctx_error(ctx, "device %s: cannot build container edits: %s",
				 dralet_device_name(dev), strerror(-r));
	return r;
}

int gpu_prepare_plain(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		      struct dralet_prepare_req *req)
{
	struct gpu_config cfg;
	int r = gpu_config_parse(ctx, req->config, &cfg);

	if (r < 0)
		return r;
	if (cfg.kind == GPU_CONFIG_MIG) {
		dralet_ctx_error(ctx, "device %s: MigDeviceConfig applies to NVIDIA MIG devices only",
				 dralet_device_name(dev));
		return -EINVAL;
	}
	/* adminAccess only watches the device: its config changes nothing */
	if (cfg.sharing && !req->admin_access) {
		dralet_ctx_error(ctx, "device %s: sharing strategy TimeSlicing is not supported by "
				      "this device", dralet_device_name(dev));
		return -EOPNOTSUPP;
	}
	return gpu_prepare_common(ctx, dev, req);
}

int gpu_health_pci(struct dralet_backend_ctx *ctx, struct dralet_device *dev)
{
	const struct dralet_pci_func *f = dralet_device_pci(dev);
	char driver[64];
	int r;

	if (!f)
		return DRALET_HEALTH_UNKNOWN;
	r = dralet_pci_driver(ctx, f->address, driver, sizeof(driver));
	if (r < 0)
		return DRALET_HEALTH_UNHEALTHY;	/* the function is gone */
	if (!f->driver)
		return DRALET_HEALTH_HEALTHY;
	return r == 0 || strcmp(driver, f->driver) ? DRALET_HEALTH_UNHEALTHY	/* unbound, rebound */
						   : DRALET_HEALTH_HEALTHY;
}
