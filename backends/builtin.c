/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The in-tree backends, in tie-break order: vendor-specific backends before
 * the generic ones of their family.
 */
#include "backends/registry.h"
#include "backends/gpu/gpu_backends.h"

const struct dralet_backend *const registry_builtin[] = {
	/* gpu family (backends/gpu): vendors first, generic DRM last */
	&gpu_nvidia_backend,
	&gpu_amdgpu_backend,
	&gpu_intel_backend,
	&gpu_drm_backend,
	NULL,
};
