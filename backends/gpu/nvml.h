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
#define NVML_ERR_TIMEOUT 10		/* an event wait that found none */
#define NVML_ERR_GPU_IS_LOST 15

#define NVML_BUFFER 96		/* NVML_DEVICE_UUID_V2_BUFFER_SIZE, _NAME_V2_ */
#define NVML_VERSION_BUFFER 80	/* NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE */

typedef struct nvml_device_opaque *nvml_device;
typedef struct nvml_gpu_instance_opaque *nvml_gpu_instance;
typedef struct nvml_event_set_opaque *nvml_event_set;
typedef struct nvml_compute_instance_opaque *nvml_compute_instance;

/* nvmlEventType bits (nvmlEventTypeSingleBitEccError, ...DoubleBitEccError,
 * ...XidCriticalError) */
#define NVML_EVENT_SINGLE_BIT_ECC 0x1ull
#define NVML_EVENT_DOUBLE_BIT_ECC 0x2ull
#define NVML_EVENT_XID 0x8ull
/* gpuInstanceId / computeInstanceId of an event that is not a MIG instance's */
#define NVML_NO_INSTANCE 0xffffffffu

/* nvmlEventData_t as nvmlEventSetWait_v2 fills it (v1 lacks the instance ids) */
struct nvml_event_data {
	nvml_device device;
	unsigned long long type;	/* one nvmlEventType bit */
	unsigned long long data;	/* the XID of an XID event, 0 for others */
	unsigned gpu_instance, compute_instance;	/* NVML_NO_INSTANCE: the whole GPU */
};

/* nvmlFieldValue_t, and the one field the backend asks for */
#define NVML_FI_DEV_GET_GPU_RECOVERY_ACTION 230
struct nvml_field_value {
	unsigned field_id, scope_id;
	long long timestamp, latency_usec;
	int value_type;
	int ret;			/* nvmlReturn_t of this field */
	union {
		double d;
		unsigned ui;
		unsigned long ul;
		unsigned long long ull;
		long long sll;
		int si;
		unsigned short us;
	} value;
};

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

/* nvmlGpuInstancePlacement_t, nvmlComputeInstancePlacement_t */
struct nvml_placement {
	unsigned start, size;
};

/* nvmlComputeInstanceProfileInfo_t (v1) */
struct nvml_ci_profile_v1 {
	unsigned id, slices, instances, multiprocessors;
	unsigned copy_engines, decoders, encoders, jpeg_engines, ofa_engines;	/* shared */
};
#define NVML_CI_ENGINE_PROFILE_SHARED 0

/* nvmlComputeInstanceInfo_t (nvmlComputeInstanceGetInfo_v2) */
struct nvml_ci_info {
	nvml_device device;
	nvml_gpu_instance gpu_instance;
	unsigned id, profile_id;
	struct nvml_placement placement;
};

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
	/* events (nvidia_events.h): all five or none are used */
	int (*event_set_create)(nvml_event_set *set);
	int (*supported_event_types)(nvml_device dev, unsigned long long *types);
	int (*register_events)(nvml_device dev, unsigned long long types, nvml_event_set set);
	int (*event_set_wait_v2)(nvml_event_set set, struct nvml_event_data *data,
				 unsigned timeout_ms);
	int (*event_set_free)(nvml_event_set set);
	int (*field_values)(nvml_device dev, int count, struct nvml_field_value *values);
	/* dynamic MIG (nvidia_dynmig.c): all of them or none are used */
	int (*gpu_instances)(nvml_device dev, unsigned profile_id, nvml_gpu_instance *gis,
			     unsigned *count);
	int (*gi_possible_placements)(nvml_device dev, unsigned profile_id,
				      struct nvml_placement *placements, unsigned *count);
	int (*create_gi_with_placement)(nvml_device dev, unsigned profile_id,
					const struct nvml_placement *placement,
					nvml_gpu_instance *gi);
	int (*gi_destroy)(nvml_gpu_instance gi);
	int (*ci_profile_v1)(nvml_gpu_instance gi, unsigned profile, unsigned engine_profile,
			     struct nvml_ci_profile_v1 *info);
	int (*create_ci)(nvml_gpu_instance gi, unsigned profile_id, nvml_compute_instance *ci);
	int (*ci_by_id)(nvml_gpu_instance gi, unsigned id, nvml_compute_instance *ci);
	int (*ci_info)(nvml_compute_instance ci, struct nvml_ci_info *info);
	int (*ci_destroy)(nvml_compute_instance ci);
};

/* True when @n has every call dynamic MIG needs. */
#define NVML_HAS_DYNAMIC_MIG(n)                                                          \
	((n)->gpu_instances && (n)->gi_possible_placements && (n)->create_gi_with_placement && \
	 (n)->gi_destroy && (n)->ci_profile_v1 && (n)->create_ci && (n)->ci_by_id &&         \
	 (n)->ci_info && (n)->ci_destroy && (n)->gpu_instance_by_id &&                        \
	 (n)->gpu_instance_info && (n)->gi_profile_v2)

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
