/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AMD Instinct compute partitions made at prepare ("dynamic partitions",
 * docs/sharing.md "AMD compute partitions"): an MI300-class GPU in SPX mode
 * with no partition in use is published whole and as every partition of
 * every compute partition mode its memory partition mode allows, each
 * consuming the XCCs it would own from the GPU's counter set. Prepare of a
 * partition switches the GPU's current_compute_partition; unprepare of the
 * last partition switches it back, from the undo state alone.
 *
 * The planner (amdgpu_partition_plan.c) is pure: facts in, plan out. The
 * shell (amdgpu_partition.c) reads sysfs, publishes, prepares, unprepares.
 */
#ifndef DRALET_BACKENDS_GPU_AMDGPU_PARTITION_H
#define DRALET_BACKENDS_GPU_AMDGPU_PARTITION_H

#include <stdbool.h>
#include <stddef.h>

#include "amdgpu.h"

#define AMD_MODES_MAX 5		/* SPX DPX TPX QPX CPX */
#define AMD_XCC_MAX 16

/* One compute partition mode: "dpx", split into @count partitions. */
struct amd_mode {
	char name[8];
	unsigned count;
};

/* What the planner needs to know of a GPU (all text lower case). */
struct amd_partition_facts {
	const char *compute;	/* current_compute_partition: "spx" */
	const char *available;	/* available_compute_partition: "spx, dpx, qpx, cpx" */
	const char *memory;	/* current_memory_partition: "nps1" */
	unsigned num_xcc;	/* XCCs of the whole GPU (KFD num_xcc, summed) */
};

/* The partition modes to publish, in the order of @available. */
struct amd_partition_plan {
	struct amd_mode modes[AMD_MODES_MAX];
	size_t n_modes;
	unsigned num_xcc;
};

/*
 * Plans the partitions of a GPU in SPX (@f->compute "spx"): every mode of
 * @f->available but SPX that the kernel accepts under @f->memory
 * (amd_mode_valid) and that splits the XCCs evenly. -ENOENT when there is
 * nothing to publish: not in SPX, XCCs unknown, no other mode available.
 */
int amd_partition_plan(const struct amd_partition_facts *f, struct amd_partition_plan *ret);

/* Partitions of @mode on a GPU of @num_xcc XCCs: spx 1, dpx 2, tpx 3,
 * qpx 4, cpx one per XCC; 0 for an unknown mode. */
unsigned amd_mode_count(const char *mode, unsigned num_xcc);

/* Whether the kernel switches a GPU of @num_xcc XCCs in memory partition
 * mode @memory ("nps1") to compute partition mode @mode (the rules of
 * drivers/gpu/drm/amd/amdgpu/aqua_vanjaram.c __aqua_vanjaram_is_valid_mode,
 * read conservatively: docs/sharing.md). */
bool amd_mode_valid(const char *mode, const char *memory, unsigned num_xcc);

/* The XCCs partition @index of @mode owns: [*first, *first + *n). */
void amd_partition_xccs(const struct amd_mode *mode, unsigned num_xcc, unsigned index,
			unsigned *first, unsigned *n);

/*
 * A claim's wish for memory partition mode @wanted ("NPS4", any case; NULL
 * or "" for none) on a GPU in @current. 0 when it is the current mode (or
 * none); -EOPNOTSUPP with the reason in @why otherwise: the change takes a
 * driver reload, which dralet never does.
 */
int amd_memory_partition_check(const char *current, const char *wanted, char *why,
			       size_t size);

/* ---- the shell (amdgpu_partition.c) ---- */

struct amd_state;

/* True when option dynamicPartitions is "true" and @func is ours to
 * partition: in SPX with no partition in use, or switched by us (marked). */
bool amd_partition_applies(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
			   char *ret_base_mode, size_t size);
/* Publishes the counter set on @full and the partition devices of @func;
 * the number published or -errno. */
int amd_partition_probe(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
			struct dralet_device *full, const struct amd_partition_facts *facts,
			void (*describe)(struct dralet_device *dev, void *arg), void *arg);
int amd_partition_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			  struct dralet_prepare_req *req, const char *memory_wanted);
bool amd_partition_owns_undo(const struct dralet_undo *undo);
int amd_partition_unprepare(struct dralet_backend_ctx *ctx, const struct dralet_undo *undo);

#endif
