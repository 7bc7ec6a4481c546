/* SPDX-License-Identifier: Apache-2.0 */
/* NVML through dlopen (nvml.h). */
#include "nvml.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The layouts NVML fills (nvml.h; docs/health.md, "NVIDIA GPUs: NVML events") */
_Static_assert(sizeof(void *) != 8 || sizeof(struct nvml_event_data) == 32, "nvmlEventData_t");
_Static_assert(offsetof(struct nvml_event_data, data) == 2 * sizeof(unsigned long long) ||
	       sizeof(void *) != 8, "nvmlEventData_t.eventData");
_Static_assert(sizeof(struct nvml_field_value) == 40 &&
	       offsetof(struct nvml_field_value, value) == 32, "nvmlFieldValue_t");

/* Looks up @versioned first (may be NULL), then @plain. */
static void *sym(void *lib, const char *versioned, const char *plain)
{
	void *p = versioned ? dlsym(lib, versioned) : NULL;
	return p || !plain ? p : dlsym(lib, plain);
}

/* dlsym returns an object pointer; POSIX guarantees it converts to a
 * function pointer, which memcpy does without aliasing tricks. */
#define LOAD(field, versioned, plain)                                   \
	do {                                                            \
		void *p_ = sym(n->lib, versioned, plain);               \
		_Static_assert(sizeof(p_) == sizeof(n->field), #field); \
		memcpy(&n->field, &p_, sizeof(p_));                     \
	} while (0)

int nvml_open(const char *path, struct nvml **ret, char *err, size_t errlen)
{
	struct nvml *n = calloc(1, sizeof(*n));
	int r;

	if (!n)
		return -ENOMEM;
	n->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!n->lib) {
		const char *e = dlerror();
		snprintf(err, errlen, "%s", e ? e : "cannot be loaded");
		free(n);
		return -ENOENT;
	}
	LOAD(init, "nvmlInit_v2", "nvmlInit");
	LOAD(shutdown, NULL, "nvmlShutdown");
	LOAD(error_string, NULL, "nvmlErrorString");
	LOAD(system_driver_version, NULL, "nvmlSystemGetDriverVersion");
	LOAD(system_cuda_version, "nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion");
	LOAD(by_pci_bus_id, "nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByPciBusId");
	LOAD(uuid, NULL, "nvmlDeviceGetUUID");
	LOAD(name, NULL, "nvmlDeviceGetName");
	LOAD(brand, NULL, "nvmlDeviceGetBrand");
	LOAD(architecture, NULL, "nvmlDeviceGetArchitecture");
	LOAD(compute_capability, NULL, "nvmlDeviceGetCudaComputeCapability");
	LOAD(memory, NULL, "nvmlDeviceGetMemoryInfo");
	LOAD(minor, NULL, "nvmlDeviceGetMinorNumber");
	LOAD(index, NULL, "nvmlDeviceGetIndex");
	LOAD(mig_mode, NULL, "nvmlDeviceGetMigMode");
	LOAD(max_mig_devices, NULL, "nvmlDeviceGetMaxMigDeviceCount");
	LOAD(mig_device_by_index, NULL, "nvmlDeviceGetMigDeviceHandleByIndex");
	LOAD(gpu_instance_id, NULL, "nvmlDeviceGetGpuInstanceId");
	LOAD(compute_instance_id, NULL, "nvmlDeviceGetComputeInstanceId");
	LOAD(attributes, "nvmlDeviceGetAttributes_v2", "nvmlDeviceGetAttributes");
	LOAD(gpu_instance_by_id, NULL, "nvmlDeviceGetGpuInstanceById");
	LOAD(gpu_instance_info, NULL, "nvmlGpuInstanceGetInfo");
	LOAD(gi_profile_v2, NULL, "nvmlDeviceGetGpuInstanceProfileInfoV");
	LOAD(gi_profile_v1, NULL, "nvmlDeviceGetGpuInstanceProfileInfo");
	LOAD(retired_pages_pending, NULL, "nvmlDeviceGetRetiredPagesPendingStatus");
	LOAD(remapped_rows, NULL, "nvmlDeviceGetRemappedRows");
	LOAD(event_set_create, NULL, "nvmlEventSetCreate");
	LOAD(supported_event_types, NULL, "nvmlDeviceGetSupportedEventTypes");
	LOAD(register_events, NULL, "nvmlDeviceRegisterEvents");
	/* only _v2 fills the instance ids; an NVML without it has no event source */
	LOAD(event_set_wait_v2, NULL, "nvmlEventSetWait_v2");
	LOAD(event_set_free, NULL, "nvmlEventSetFree");
	LOAD(field_values, NULL, "nvmlDeviceGetFieldValues");
	LOAD(gpu_instances, NULL, "nvmlDeviceGetGpuInstances");
	LOAD(gi_possible_placements, "nvmlDeviceGetGpuInstancePossiblePlacements_v2", NULL);
	LOAD(create_gi_with_placement, NULL, "nvmlDeviceCreateGpuInstanceWithPlacement");
	LOAD(gi_destroy, NULL, "nvmlGpuInstanceDestroy");
	LOAD(ci_profile_v1, NULL, "nvmlGpuInstanceGetComputeInstanceProfileInfo");
	LOAD(create_ci, NULL, "nvmlGpuInstanceCreateComputeInstance");
	LOAD(ci_by_id, NULL, "nvmlGpuInstanceGetComputeInstanceById");
	LOAD(ci_info, "nvmlComputeInstanceGetInfo_v2", NULL);
	LOAD(ci_destroy, NULL, "nvmlComputeInstanceDestroy");
	if (!n->init || !n->shutdown || !n->by_pci_bus_id) {
		snprintf(err, errlen, "%s lacks nvmlInit, nvmlShutdown or "
				      "nvmlDeviceGetHandleByPciBusId", path);
		dlclose(n->lib);
		free(n);
		return -ENOSYS;
	}
	r = n->init();
	if (r != NVML_OK) {
		snprintf(err, errlen, "nvmlInit failed: %s", nvml_error(n, r));
		dlclose(n->lib);
		free(n);
		return -EIO;
	}
	*ret = n;
	return 0;
}

void nvml_close(struct nvml *n)
{
	if (!n)
		return;
	n->shutdown();
	dlclose(n->lib);
	free(n);
}

const char *nvml_error(const struct nvml *n, int ret)
{
	static const char *const fixed[] = {
		[NVML_ERR_NOT_SUPPORTED] = "Not Supported",
		[NVML_ERR_NOT_FOUND] = "Not Found",
		[NVML_ERR_TIMEOUT] = "Timeout",
		[NVML_ERR_GPU_IS_LOST] = "GPU is lost",
	};
	const char *s = n && n->error_string ? n->error_string(ret) : NULL;

	if (s)
		return s;
	if (ret >= 0 && (size_t)ret < sizeof(fixed) / sizeof(fixed[0]) && fixed[ret])
		return fixed[ret];
	return "NVML error";
}
