/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the GPU family's backends (nvidia, amdgpu, intel-gpu, drm) share:
 * device private data, the opaque configuration (GpuConfig/MigDeviceConfig),
 * container-edit helpers, the health check every GPU gets, and the seam that
 * runs an external tool. Private to backends/gpu.
 *
 * Nothing here logs: problems go to dralet_ctx_warn (discovery) or
 * dralet_ctx_error (prepare, validate) and are returned as -errno.
 */
#ifndef DRALET_BACKENDS_GPU_H
#define DRALET_BACKENDS_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dralet/backend.h>
#include <dralet/prepare.h>

#include "../common/vfio_form.h"

#define GPU_DRIVER_DEFAULT "gpu.dralet.dev"
#define GPU_API_VERSION "gpu.dralet.dev/v1alpha1"
#define GPU_UUID_MAX 96

/* The DRM major (Documentation/admin-guide/devices.txt). */
#define GPU_DRM_MAJOR 226

/* ---- device private data (one per published device, owned by it) ---- */

enum gpu_type {
	GPU_TYPE_FULL = 0,	/* a whole GPU */
	GPU_TYPE_MIG,		/* an NVIDIA MIG device (GPU + compute instance) */
	GPU_TYPE_PARTITION,	/* an AMD compute partition */
};

struct gpu_info {
	enum gpu_type type;
	char uuid[GPU_UUID_MAX];	/* "GPU-..." / "MIG-..."; "" when unknown */
	char parent_uuid[GPU_UUID_MAX];	/* MIG: the GPU's uuid */
	char profile[48];		/* MIG: "1g.10gb"; AMD partition: "cpx_nps1" */
	int minor;			/* NVIDIA /dev/nvidia<minor>; -1 unknown */
	int index;			/* NVML index / partition index; -1 unknown */
	unsigned gi, ci;		/* MIG: GPU and compute instance ids */
	bool caps_known;		/* MIG: the GI/CI capability nodes were found */
	/* dynamic MIG (nvidia_dynmig.c): made at prepare from these */
	bool dynamic;
	unsigned profile_id, placement_start, placement_size, gi_slices;
	/* AMD dynamic partition (amdgpu_partition.c): its mode and how many */
	char partition_mode[8];
	unsigned partition_count;
	/* the vfio form of a GPU (gpu_vfio_form.c): rebound to vfio at prepare */
	struct vfio_form vfio;
};

/* Allocates a zeroed gpu_info (minor and index -1) and attaches it to @dev
 * as private data (freed with the device). NULL on ENOMEM. */
struct gpu_info *gpu_info_attach(struct dralet_device *dev, enum gpu_type type);
/* The gpu_info of @dev, or NULL (devices of other backends, NULL @dev). */
const struct gpu_info *gpu_info_of(const struct dralet_device *dev);

/* ---- opaque configuration ---- */

enum gpu_config_kind {
	GPU_CONFIG_NONE = 0,	/* no parameters given */
	GPU_CONFIG_GPU,		/* kind GpuConfig */
	GPU_CONFIG_MIG,		/* kind MigDeviceConfig */
};

/* Time-slice intervals as nvidia-smi compute-policy --set-timeslice numbers. */
enum gpu_timeslice {
	GPU_TIMESLICE_NONE = -1,	/* no time-slicing requested */
	GPU_TIMESLICE_DEFAULT = 0,
	GPU_TIMESLICE_SHORT = 1,
	GPU_TIMESLICE_MEDIUM = 2,
	GPU_TIMESLICE_LONG = 3,
};

struct gpu_config {
	enum gpu_config_kind kind;
	bool sharing;			/* a sharing block was given */
	enum gpu_timeslice timeslice;	/* interval when sharing is TimeSlicing */
	bool interval_given;		/* timeSlicingConfig.interval was present */
	char memory_partition[16];	/* AMD: memoryPartition ("NPS4"); "" none */
};

/*
 * Parses and strictly validates opaque parameters (JSON object text, NULL or
 * "" for none): apiVersion gpu.dralet.dev/v1alpha1 (or "<driver>/v1alpha1"),
 * kind GpuConfig or MigDeviceConfig, optional sharing {strategy TimeSlicing,
 * timeSlicingConfig {interval Default|Short|Medium|Long}}. Any unknown field,
 * wrong type or value is -EINVAL with the reason in dralet_ctx_error().
 */
int gpu_config_parse(struct dralet_backend_ctx *ctx, const char *text, struct gpu_config *ret);
const char *gpu_timeslice_name(enum gpu_timeslice t);
/* gpu_config_parse that also takes memoryPartition (in GpuConfig), which
 * the other parse refuses: it applies to AMD Instinct GPUs only. */
int gpu_config_parse_amd(struct dralet_backend_ctx *ctx, const char *text,
			 struct gpu_config *ret);

/* validate_config of the backends that cannot time-slice (amdgpu,
 * intel-gpu, drm): a valid GpuConfig without sharing passes, sharing is
 * "not supported by this device". */
int gpu_validate_config_no_sharing(struct dralet_backend_ctx *ctx, const char *config);
/* The same for amdgpu, which takes memoryPartition too. */
int gpu_validate_config_amd(struct dralet_backend_ctx *ctx, const char *config);

/* ---- discovery helpers ---- */

/* Adds the function's DRM card and render nodes to @dev and sets the int
 * attributes cardIndex and renderIndex from their names. */
void gpu_add_drm_nodes(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		       const struct dralet_pci_func *func);
/* Resolves "/dev/<dev_path>" (numbers @major:@minor where the tree has no
 * character device) and adds it to @dev. With @required_missing_ok false a
 * missing node is a warning. Returns 0 when added, -ENOENT when absent. */
int gpu_add_node(struct dralet_backend_ctx *ctx, struct dralet_device *dev, const char *dev_path,
		 int major, unsigned minor, bool warn_missing);
/* Reads a sysfs file of @func as a trimmed string; false when absent, empty
 * or not printable text (garbage vendor files). */
bool gpu_read_pci_text(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		       const char *name, char *buf, size_t size);
/* Reads an unsigned decimal (or 0x hex) number from a sysfs file of @func. */
bool gpu_read_pci_u64(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		      const char *name, uint64_t *ret);
/* Parses an unsigned decimal or 0x-hex number that fills all of @s. */
bool gpu_parse_u64(const char *s, uint64_t *ret);
/* True when @s is non-empty printable ASCII (what an attribute may carry). */
bool gpu_text_ok(const char *s);
/* Sets the "type" attribute every GPU device carries. */
void gpu_set_common(struct dralet_device *dev, const char *type);
/* Gives @dev the keys every device of the family carries, so that a CEL
 * selector naming them never fails with "no such key" (which aborts the whole
 * allocation): capacity memory ("0" when unknown) and attribute migProfile
 * ("" on anything but a MIG device). Call after the device's own facts. */
void gpu_set_defaults(struct dralet_device *dev);

/* ---- prepare helpers ---- */

/* Adds DRALET_<DEV>_<field>=value (the name: pcidev_env_name), even when
 * @value is empty: unique per device, so several GPUs in one container never
 * collide. */
int gpu_env(struct dralet_device *dev, struct dralet_edits *edits, const char *field,
	    const char *value);
/* Adds every device node of @dev (fails with a clear error when @dev has
 * none) and the env vars every GPU gets: _DEVICE, _PCI_ADDRESS, _CLAIM_UID,
 * _REQUEST, and _UUID/_MINOR/_INDEX/_PROFILE when known. */
int gpu_prepare_common(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		       struct dralet_prepare_req *req);
/* Only the env vars of gpu_prepare_common (for a device whose nodes the
 * backend hands over itself: a GPU on vfio-pci). */
int gpu_prepare_env(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		    struct dralet_prepare_req *req);
/* prepare of the backends without vendor-specific work. It changes nothing on
 * the host, so they leave unprepare NULL (the agent's default: nothing to
 * undo). */
int gpu_prepare_plain(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		      struct dralet_prepare_req *req);

/* ---- health ---- */

/* Healthy while the PCI function of @dev still exists and the driver bound at
 * discovery is still bound; Unhealthy otherwise. */
int gpu_health_pci(struct dralet_backend_ctx *ctx, struct dralet_device *dev);

/* ---- the vfio form (gpu_vfio_form.c; docs/sharing.md, "Whole-device VFIO
 * passthrough") ---- */

/*
 * A backend publishes vfio forms with VFIO_FORM_OPTIONS and vfio_form_enabled
 * (backends/common/vfio_form.h, which does the work). Publishes the vfio form
 * of the GPU @native (a whole GPU on its vendor driver) as device
 * "<native name>-vfio" of type "vfio": both consume the counter "gpu" of a
 * counter set named after @native (created when @native owns none; a
 * dynamic-MIG GPU's own set is consumed whole instead), so the scheduler
 * hands out one form at most. The vfio form is a partition:
 * published only where the server supports counters (1.36 and later).
 */
int gpu_vfio_form_add(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		      struct dralet_device *native);

/* True for a device gpu_vfio_form_add or gpu_vfio_form_publish_marked made. */
bool gpu_is_vfio_form(const struct dralet_device *dev);

/*
 * A GPU that a prepare of its vfio form moved to vfio: the mark
 * "<state dir>/gpu-vfio-<address>" holds what its IOMMU group had (the
 * vfio_group undo text), from before the first rebinding until unprepare
 * put it back. Copies the text to @buf; false when there is no mark.
 */
bool gpu_vfio_form_marked(struct dralet_backend_ctx *ctx, const char *address, char *buf,
			  size_t size);

/* The vfio form of a marked GPU that is on vfio (or on no driver, after a
 * crash in the middle of a prepare), so that its claim can still be
 * unprepared after a restart: the same name, owning its counter set. */
int gpu_vfio_form_publish_marked(struct dralet_backend_ctx *ctx,
				 const struct dralet_pci_func *func, const char *mark);

/* Prepare of a vfio form: refuses a GPU with VFs or one a host process
 * holds, records the group's bindings in the undo state and the mark, moves
 * every non-bridge function of the IOMMU group to vfio-pci (the GPU to
 * option vfioDriver), and hands over /dev/vfio/<group> and /dev/vfio/vfio
 * (and /dev/iommu with /dev/vfio/devices/vfioN where the kernel has the
 * iommufd cdev). */
int gpu_vfio_form_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			  struct dralet_prepare_req *req);

/* Puts the group back from the undo state alone (idempotent; nothing to do
 * without it) and removes the mark. */
int gpu_vfio_form_unprepare(struct dralet_backend_ctx *ctx, const struct dralet_undo *undo);

/* prepare and unprepare of the backends without other host changes (amdgpu,
 * intel-gpu, gpu-vfio): the vfio form's, else gpu_prepare_plain. */
int gpu_prepare_plain_or_vfio(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			      struct dralet_prepare_req *req);
int gpu_unprepare_vfio(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		       const struct dralet_claim_ref *claim, const struct dralet_undo *undo);

/* ---- running an external tool (nvidia-smi) ---- */

/*
 * Runs @argv[0] (an absolute path) with @argv, stdin from /dev/null, and
 * collects up to @out_size-1 bytes of its combined stdout/stderr into @out.
 * The child gets the agent's environment, with LD_LIBRARY_PATH=@lib_path
 * instead when @lib_path is given (a tool of the host's driver root, run in
 * the agent's container, finds the driver's libraries there). Kills it after
 * @timeout_ms. Returns the exit status (0..255), -ETIMEDOUT, -ENOENT/-EACCES
 * when it cannot be started, or another -errno.
 */
int gpu_run_tool(char *const argv[], const char *lib_path, int timeout_ms, char *out,
		 size_t out_size);

/* True when @path names an executable regular file. */
bool gpu_executable(const char *path);

#endif
