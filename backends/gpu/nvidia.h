/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The nvidia backend's internals: its state (NVML handle, driver versions,
 * device majors, MIG capability minors, driver roots), the /proc/driver/nvidia
 * readers, MIG device creation, driver library lookup and prepare.
 * Private to backends/gpu.
 */
#ifndef DRALET_BACKENDS_GPU_NVIDIA_H
#define DRALET_BACKENDS_GPU_NVIDIA_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "gpu.h"
#include "nvidia_events.h"
#include "nvml.h"

#define NVIDIA_DEFAULT_MAJOR 195	/* nvidia-frontend, fixed by the driver */
#define NVIDIA_CTL_MINOR 255
#define NVIDIA_NVML_DEFAULT "libnvidia-ml.so.1"
#define NVIDIA_TOOL_TIMEOUT_MS 30000

/* One line of proc/driver/nvidia-caps/mig-minors: "gpu0/gi1/ci0/access 22". */
struct nvidia_cap_minor {
	unsigned gpu, gi;
	int ci;			/* -1: the GPU instance's own access capability */
	unsigned minor;
};

struct nvidia_state {
	bool nvml_tried;		/* NVML is opened at the first probe */
	struct nvml *nvml;		/* NULL: no NVML facts */
	char proc_driver_version[64];	/* from proc/driver/nvidia/version */
	char nvml_driver_version[NVML_VERSION_BUFFER];
	char cuda_version[16];		/* "12.4"; "" unknown */
	int major;			/* nvidia-frontend */
	int uvm_major;			/* -1 unknown */
	int caps_major;			/* -1 unknown */
	/* mig-minors, read at the first need: by a prepare on a worker thread,
	 * and prepares of different claims run at once, so under caps_lock */
	pthread_mutex_t caps_lock;
	bool caps_loaded;
	struct nvidia_cap_minor *caps;
	size_t n_caps;
	char driver_root[4096];		/* where dralet reads driver files */
	char host_driver_root[4096];	/* the same tree as the runtime sees it */
	bool warned_ctl, warned_uvm;	/* say a missing shared node once */
	/* one per published device (nvidia_health.c): added by probe, removed
	 * by remove; health reads only its own device's */
	struct nvidia_watch **watches;
	size_t n_watches;
	/* GPUs (PCI addresses) taken as dynamic MIG in this process */
	char (*dynamic)[32];
	size_t n_dynamic;
	/* dynamic MIG: a GPU's mark and its instances change together, by
	 * prepares and unprepares on worker threads (nvidia_dynmig.c) */
	pthread_mutex_t mig_lock;
};

/* Facts of /proc/driver/nvidia/gpus/<address>/information. */
struct nvidia_proc_gpu {
	bool found;
	char model[128];
	char uuid[GPU_UUID_MAX];
	char vbios[64];
	int minor;		/* -1 unknown */
	bool excluded;
};

/* The driver version: NVML's when known, else the proc file's ("" none). */
const char *nvidia_driver_version(const struct nvidia_state *st);

/* ---- nvidia_proc.c ---- */
/* Reads the information file of @address; -ENOENT when absent. Garbage
 * values are warnings and stay unknown. */
int nvidia_proc_gpu_read(struct dralet_backend_ctx *ctx, const char *address,
			 struct nvidia_proc_gpu *ret);
/* "NVRM version: ... 550.54.15 ..." -> "550.54.15". */
int nvidia_proc_driver_version(struct dralet_backend_ctx *ctx, char *buf, size_t size);
/* Parses proc/driver/nvidia-caps/mig-minors into st->caps. */
/* The minor of gpu<gpu>/gi<gi>[/ci<ci>]/access, or -ENOENT. */
int nvidia_cap_minor(struct dralet_backend_ctx *ctx, struct nvidia_state *st, unsigned gpu,
		     unsigned gi, int ci);
/* True when proc/driver/nvidia/capabilities/gpu<minor>/mig has GPU
 * instances (the GPU is in MIG mode with instances configured). */
bool nvidia_proc_has_gpu_instances(struct dralet_backend_ctx *ctx, int minor);

/* ---- nvidia.c ---- */
/* The nodes every NVIDIA device needs: /dev/nvidia<minor>, nvidiactl,
 * nvidia-uvm, nvidia-uvm-tools. */
void nvidia_add_nodes(struct dralet_backend_ctx *ctx, struct nvidia_state *st,
		      struct dralet_device *dev, int minor);
/* Sets the identity attributes a MIG device shares with its GPU. */
struct nvidia_gpu_facts {
	char uuid[GPU_UUID_MAX];
	char name[128];
	const char *brand;		/* static string or NULL */
	const char *architecture;	/* static string or NULL */
	char compute_capability[32];	/* "9.0" or "" */
	int minor, index;		/* -1 unknown */
	unsigned long long memory;	/* bytes, 0 unknown */
};
void nvidia_set_identity(struct dralet_backend_ctx *ctx, struct nvidia_state *st,
			 struct dralet_device *dev, const struct nvidia_gpu_facts *g);

/* ---- nvidia_mig.c ---- */
/* Publishes the MIG devices of the GPU @handle (MIG mode on). Returns the
 * number published or -errno. */
int nvidia_probe_mig(struct dralet_backend_ctx *ctx, struct nvidia_state *st,
		     const struct dralet_pci_func *func, nvml_device handle,
		     const struct nvidia_gpu_facts *gpu);

/* ---- nvidia_dynmig.c ---- */
/* True when GPU @h (MIG mode on) is published as dynamic MIG: NVML has the
 * calls, the option allows it, and no GPU instance exists that the backend
 * did not make (remembered from then on). */
bool nvidia_dynmig_applies(struct dralet_backend_ctx *ctx, struct nvidia_state *st,
			   const struct dralet_pci_func *func, nvml_device h);
/* Gives @full (the GPU's device) its counter set and publishes every MIG
 * profile x placement as a partition. The number published or -errno. */
int nvidia_dynmig_probe(struct dralet_backend_ctx *ctx, struct nvidia_state *st,
			const struct dralet_pci_func *func, nvml_device h,
			const struct nvidia_gpu_facts *gpu, struct dralet_device *full);
/* Makes the GPU and compute instance of partition @dev (config checked). */
int nvidia_dynmig_prepare(struct dralet_backend_ctx *ctx, struct nvidia_state *st,
			  struct dralet_device *dev, struct dralet_prepare_req *req);
/* True when @undo is a dynamic MIG instance's; then unprepare destroys it. */
bool nvidia_dynmig_owns_undo(const struct dralet_undo *undo);
int nvidia_dynmig_unprepare(struct dralet_backend_ctx *ctx, struct nvidia_state *st,
			    const struct dralet_undo *undo);

/* ---- nvidia_libs.c ---- */
/* Fills st->driver_root and st->host_driver_root from the options. */
void nvidia_roots_init(struct dralet_backend_ctx *ctx, struct nvidia_state *st);
/* Bind-mounts the driver's user-space libraries and tools found below the
 * driver root (read-only); what is absent is skipped. */
int nvidia_add_driver_mounts(struct dralet_backend_ctx *ctx, const struct nvidia_state *st,
			     struct dralet_edits *edits);
/* The running driver's <stem>.so.<version> below the driver root, looked up
 * as the mounts are ("libnvidia-ml"): its path in @path, or false. */
bool nvidia_driver_lib(const struct nvidia_state *st, const char *stem, char *path, size_t size);
/* The nvidia-smi to run: option nvidiaSmi, else looked up below the driver
 * root. Returns false (and the path tried in @buf) when there is none. */
bool nvidia_smi_path(struct dralet_backend_ctx *ctx, const struct nvidia_state *st, char *buf,
		     size_t size);

/* ---- nvidia_sharing.c ---- */
/* Makes full GPU @dev (with @memory bytes) shareable by memory and compute
 * shares, unless the backend option sharing is "false". */
void nvidia_publish_sharing(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			    uint64_t memory);
/* The share part of a prepare (nothing for an exclusive allocation): refuses
 * a time-slicing config (@timeslice) on a share that does not hold all the
 * memory, and tells the container its share. */
int nvidia_prepare_share(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			 struct dralet_prepare_req *req, bool timeslice);

/* ---- nvidia_prepare.c ---- */
int nvidia_validate_config(struct dralet_backend_ctx *ctx, const char *config);
int nvidia_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		   struct dralet_prepare_req *req);
int nvidia_unprepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		     const struct dralet_claim_ref *claim, const struct dralet_undo *undo);

/* ---- nvidia_health.c ---- */
/* What the health operation keeps of one device: its place on the GPU and
 * its NVML event set (NULL: NVML has no events for it) with the verdict's
 * memory (nvidia_events.h). */
struct nvidia_watch {
	const struct dralet_device *dev;
	struct nvidia_place place;
	nvml_event_set set;
	struct nvidia_event_state events;
};
/* Probe: watches @dev, on GPU @gpu (NULL: NVML does not know it) at @place,
 * registering an event set for the XID and double-bit ECC events the GPU
 * supports. 0 or -ENOMEM. */
int nvidia_watch_add(struct nvidia_state *st, const struct dralet_device *dev, nvml_device gpu,
		     const struct nvidia_place *place);
/* Remove: frees @dev's watch and event set (nothing when it has none). */
void nvidia_watch_remove(struct nvidia_state *st, const struct dralet_device *dev);
/* Fini: frees every watch left. */
void nvidia_watch_clear(struct nvidia_state *st);
/* The health operation: PCI (gpu_health_pci), then NVML: the GPU lost, the
 * recovery action, the events drained without waiting, retired pages and row
 * remapping; the verdict's reason goes to dralet_ctx_error, its cause's
 * taint key to dralet_ctx_health_cause. */
int nvidia_health(struct dralet_backend_ctx *ctx, struct dralet_device *dev);

#endif
