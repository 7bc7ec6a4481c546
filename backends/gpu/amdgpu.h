/* SPDX-License-Identifier: Apache-2.0 */
/* The amdgpu backend's internals: the KFD topology it reads. */
#ifndef DRALET_BACKENDS_GPU_AMDGPU_H
#define DRALET_BACKENDS_GPU_AMDGPU_H

#include <stddef.h>
#include <stdint.h>

#include "gpu.h"

/* One GPU node of <sys>/class/kfd/kfd/topology/nodes/<n>/properties: a whole
 * GPU, or one compute partition of it (partitions share the PCI location). */
struct amd_kfd_node {
	unsigned node;			/* the directory number */
	unsigned domain, location_id;	/* location_id = bus << 8 | devfn */
	int render_minor;		/* drm_render_minor; -1 unknown */
	uint64_t simd_count, simd_per_cu, local_mem_size, gfx_target_version, num_xcc;
};

struct amd_kfd {
	struct amd_kfd_node *nodes;
	size_t n;
};

/* Reads the topology (a missing one is an empty result). */
int amd_kfd_read(struct dralet_backend_ctx *ctx, struct amd_kfd *ret);
void amd_kfd_free(struct amd_kfd *kfd);
/* The GPU nodes at @func's PCI location, sorted by render minor; returns the
 * count and fills at most @max pointers. */
size_t amd_kfd_nodes_of(const struct amd_kfd *kfd, const struct dralet_pci_func *func,
			const struct amd_kfd_node **out, size_t max);

#endif
