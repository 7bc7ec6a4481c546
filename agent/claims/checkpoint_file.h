/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The checkpoint on disk (the I/O shell around checkpoint.h):
 * <plugins-dir>/<driver>/checkpoint.json, written atomically (temp file,
 * fsync, rename, fsync of the directory), mode 0600.
 */
#ifndef DRALET_CHECKPOINT_FILE_H
#define DRALET_CHECKPOINT_FILE_H

#include <stddef.h>

#include "agent/claims/checkpoint.h"

#define CHECKPOINT_FILE_NAME "checkpoint.json"

/*
 * Reads <dir>/checkpoint.json. -ENOENT when there is none; -EBADMSG or
 * -EPROTONOSUPPORT (checkpoint_decode) with the reason in @err when it
 * cannot be used; another -errno when it cannot be read.
 */
int checkpoint_file_load(const char *dir, struct checkpoint **ret_ck, char *err, size_t errlen);

/* Writes @ck as <dir>/checkpoint.json. */
int checkpoint_file_save(const char *dir, struct checkpoint *ck);

/* Removes the temporary checkpoint files a crash mid-write left in @dir
 * (".checkpoint.json.XXXXXX", regular files only). How many, or -errno. */
int checkpoint_file_remove_stale(const char *dir);

/* Renames an unusable checkpoint to checkpoint.json.corrupt-<UTC time> and
 * puts the new name into @ret_path. */
int checkpoint_file_move_aside(const char *dir, char *ret_path, size_t size);

/* Reads <proc_root>/sys/kernel/random/boot_id into @buf (without newline).
 * Returns the length or -errno. */
int checkpoint_boot_id(const char *proc_root, char *buf, size_t size);

#endif
