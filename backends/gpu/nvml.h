/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NVML, loaded at run time with dlopen (never linked): the few calls the
 * nvidia backend makes, with the structure layouts of the NVML C ABI
 * declared here under our own names. Like go-nvml, each versioned entry
 * point ("nvmlInit_v2") is tried first and the unversioned one second.
 *
 * A missing library means "no NVML facts"; a symbol that is missing leaves
 * its function pointer NULL and that fact unknown.
 */
#ifndef DRALET_BACKENDS_GPU_NVML_H
#define DRALET_BACKENDS_GPU_NVML_H

#include <stddef.h>

/* nvmlReturn_t values the backend tells apart */
#define NVML_OK 0
#define NVML_ERR_NOT_SUPPORTED 3
#define NVML_ERR_NOT_FOUND 6
#define NVML_ERR_GPU_IS_LOST 15

#define NVML_BUFFER 96		/* NVML_DEVICE_UUID_V2_BUFFER_SIZE, _NAME_V2_ */
#define NVML_VERSION_BUFFER 80	/* NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE */

typedef struct nvml_device_opaque *nvml_device;
typedef struct nvml_gpu_instance_opaque *nvml_gpu_instance;

/* nvmlMemory_t */
struct nvml_memory {
	unsigned long long total, free, used;
};

/* nvmlDeviceAttributes_t (the v2 layout; v1 fills the first six fields) */
struct nvml_device_attributes {
	unsigned multiprocessors, copy_engines, decoders, encoders, jpeg_engines, ofa_engines;
	unsigned gpu_instance_slices, compute_instance_slices;
	unsigned long long memory_mib;
};

/* nvmlGpuInstanceInfo_t */
struct nvml_gpu_instance_info {
	nvml_device device;
	unsigned id;
	unsigned profile_id;
	unsigned placement_start, placement_size;
};

/* nvmlGpuInstanceProfileInfo_t (v1) */
struct nvml_gi_profile_v1 {
	unsigned id, p2p, slices, instances;
	unsigned multiprocessors, copy_engines, decoders, encoders, jpeg_engines, ofa_engines;
	unsigned long long memory_mib;
};

/* nvmlGpuInstanceProfileInfo_v2_t: a version word first, a name last */
struct nvml_gi_profile_v2 {
	unsigned version;
	unsigned id, p2p, slices, instances;
	unsigned multiprocessors, copy_engines, decoders, encoders, jpeg_engines, ofa_engines;
	unsigned long long memory_mib;
	char name[NVML_BUFFER];
};
/* NVML_STRUCT_VERSION(GpuInstanceProfileInfo, 2) */
#define NVML_GI_PROFILE_V2_VERSION ((unsigned)sizeof(struct nvml_gi_profile_v2) | (2u << 24))

struct nvml {
	void *lib;
	int (*init)(void);
	int (*shutdown)(void);
	const char *(*error_string)(int ret);
	int (*system_driver_version)(char *buf, unsigned len);
	int (*system_cuda_version)(int *version);
	int (*by_pci_bus_id)(const char *bus_id, nvml_device *dev);
	int (*uuid)(nvml_device dev, char *buf, unsigned len);
	int (*name)(nvml_device dev, char *buf, unsigned len);
	int (*brand)(nvml_device dev, unsigned *brand);
	int (*architecture)(nvml_device dev, unsigned *arch);
	int (*compute_capability)(nvml_device dev, int *major, int *minor);
	int (*memory)(nvml_device dev, struct nvml_memory *mem);
	int (*minor)(nvml_device dev, unsigned *minor);
	int (*index)(nvml_device dev, unsigned *index);
	int (*mig_mode)(nvml_device dev, unsigned *current, unsigned *pending);
	int (*max_mig_devices)(nvml_device dev, unsigned *count);
	int (*mig_device_by_index)(nvml_device dev, unsigned index, nvml_device *mig);
	int (*gpu_instance_id)(nvml_device mig, unsigned *id);
	int (*compute_instance_id)(nvml_device mig, unsigned *id);
	int (*attributes)(nvml_device mig, struct nvml_device_attributes *attrs);
	int (*gpu_instance_by_id)(nvml_device dev, unsigned id, nvml_gpu_instance *gi);
	int (*gpu_instance_info)(nvml_gpu_instance gi, struct nvml_gpu_instance_info *info);
	int (*gi_profile_v2)(nvml_device dev, unsigned profile, struct nvml_gi_profile_v2 *info);
	int (*gi_profile_v1)(nvml_device dev, unsigned profile, struct nvml_gi_profile_v1 *info);
	int (*retired_pages_pending)(nvml_device dev, unsigned *pending);
	int (*remapped_rows)(nvml_device dev, unsigned *corrected, unsigned *uncorrected,
			     unsigned *pending, unsigned *failure);
};

/*
 * Loads @path and calls nvmlInit. Returns 0 and a handle to close with
 * nvml_close(); -ENOENT when the library cannot be loaded, -ENOSYS when it
 * lacks nvmlInit/nvmlShutdown/the PCI lookup, -EIO when nvmlInit fails. The
 * reason is written to @err in every failure case.
 */
int nvml_open(const char *path, struct nvml **ret, char *err, size_t errlen);
/* nvmlShutdown and dlclose; accepts NULL. */
void nvml_close(struct nvml *nvml);
/* nvmlErrorString, or "NVML error <n>". */
const char *nvml_error(const struct nvml *nvml, int ret);

#endif
