/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ledger of a PF's VFs on demand on disk (on_demand_plan.h has its
 * text): <state dir>/sriov-on-demand-<pf>, held under an exclusive flock of
 * <...>.lock for a whole prepare or unprepare (worker threads and a rolling
 * update's other instance take turns), written durably (temporary file,
 * fsync, rename, directory fsync).
 *
 * Errors: 0 or -errno, the reason set as the operation's error.
 */
#ifndef DRALET_BACKENDS_SRIOV_ON_DEMAND_LEDGER_H
#define DRALET_BACKENDS_SRIOV_ON_DEMAND_LEDGER_H

#include <limits.h>

#include <dralet/backend.h>

#include "on_demand_plan.h"

struct vfod_file {
	char path[PATH_MAX];
	int lock_fd;	/* -1: not held */
};

/* Opens and locks PF @pf's ledger in the driver's state directory (waits
 * for the lock); -EOPNOTSUPP without a state directory (not dralet run). */
int vfod_file_open(struct dralet_backend_ctx *ctx, const char *pf, struct vfod_file *f);
/* Releases the lock (accepts a file never opened). */
void vfod_file_close(struct vfod_file *f);
/* Reads the ledger into @l (no file: empty). */
int vfod_file_read(struct dralet_backend_ctx *ctx, const struct vfod_file *f,
		struct vfod_ledger *l);
/* Writes @l; an empty ledger without an original count removes the file. */
int vfod_file_write(struct dralet_backend_ctx *ctx, const struct vfod_file *f,
		 const struct vfod_ledger *l);

#endif
