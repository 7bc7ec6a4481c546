/* SPDX-License-Identifier: Apache-2.0 */
/* The GPU family's backends, for the in-tree registry (agent/core/builtin.c). */
#ifndef DRALET_BACKENDS_GPU_BACKENDS_H
#define DRALET_BACKENDS_GPU_BACKENDS_H

#include <dralet/backend.h>

extern const struct dralet_backend gpu_nvidia_backend;	/* nvidia.c */
extern const struct dralet_backend gpu_amdgpu_backend;	/* amdgpu.c */
extern const struct dralet_backend gpu_intel_backend;	/* intel_gpu.c */
extern const struct dralet_backend gpu_vfio_backend;	/* vfio.c: a GPU on vfio-pci at discovery */
extern const struct dralet_backend gpu_drm_backend;	/* drm.c: any other display function with DRM */

#endif
