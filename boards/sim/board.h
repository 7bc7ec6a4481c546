/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Simulated boards: a YAML description of one server model (a file in boards/,
 * format in docs/boards.md) turned into a sysfs/dev/proc tree that libpci,
 * libudev (under umockdev) and the HAL read exactly like a real node.
 */
#ifndef DRALET_BOARD_H
#define DRALET_BOARD_H

#include <stddef.h>

/*
 * Materializes the board file @path into directory @dir (created when
 * missing; must be empty otherwise): @dir/sys, @dir/dev, @dir/proc, and
 * @dir/nvml.json when the board carries NVML data for the fake NVML library.
 * Returns 0, or -errno with a message naming the board, the YAML line and the
 * problem in @err.
 */
int board_materialize(const char *path, const char *dir, char *err, size_t errlen);

/* Same into a new directory under $TMPDIR; *ret_dir is malloc'd (caller frees
 * it after board_remove_tree()). Without $TMPDIR the directory goes to
 * /dev/shm when that is a writable tmpfs (to /tmp when the board does not fit
 * there), else /tmp. */
int board_materialize_temp(const char *path, char **ret_dir, char *err, size_t errlen);

/* Same, for an agent that owns the tree while it lives: *ret_lock_fd holds
 * an exclusive flock on <dir>/.owner (the caller closes it after
 * board_remove_tree()). Trees in the same parent whose owner died without
 * removing them (SIGKILL, a crash) are removed first; *ret_swept says how
 * many. Trees of board_materialize_temp have no owner and are never taken. */
int board_materialize_owned(const char *path, char **ret_dir, int *ret_lock_fd,
			    int *ret_swept, char *err, size_t errlen);

/* Removes a materialized tree (rm -rf that never follows symlinks). */
int board_remove_tree(const char *dir);

#endif
