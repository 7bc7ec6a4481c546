/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The in-tree backends, in tie-break order: vendor-specific backends before
 * the generic ones of their family.
 */
#include "agent/core/registry.h"
#include "backends/gpu/gpu_backends.h"

/* fpga, net, sriov, accel families */
#include "backends/accel/accel.h"
#include "backends/fpga/fpga.h"
#include "backends/net/net.h"
#include "backends/sriov/sriov.h"

const struct dralet_backend *const registry_builtin[] = {
	/* gpu family (backends/gpu): vendors first, generic DRM last */
	&gpu_nvidia_backend,
	&gpu_amdgpu_backend,
	&gpu_intel_backend,
	&gpu_vfio_backend,
	&gpu_drm_backend,
	/* fpga, net, sriov, accel families (vendor-specific first, accel last) */
	&backend_xrt,
	&backend_dfl,
	&backend_fpga_region,
	&backend_rdma,
	&backend_sriov,
	&backend_nic_vf,
	&backend_accel,
	NULL,
};
