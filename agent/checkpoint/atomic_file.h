/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Durable file replacement: write a temporary file in the same directory
 * ("."<name>".XXXXXX", a name neither CDI runtimes nor we read as data),
 * fsync it, rename it over <dir>/<name>, fsync the directory. A crash at
 * any point leaves either the old or the new content, never a mix.
 */
#ifndef DRALET_ATOMIC_FILE_H
#define DRALET_ATOMIC_FILE_H

#include <stddef.h>
#include <sys/types.h>

/* Writes @len bytes of @data as <dir>/<name> with @mode. 0 or -errno. */
int atomic_file_write(const char *dir, const char *name, const void *data, size_t len,
		      mode_t mode);

/* Removes <dir>/<name> and fsyncs the directory; a missing file is fine. */
int atomic_file_remove(const char *dir, const char *name);

/* Reads a whole file (at most @max bytes) into a NUL-terminated malloc'd
 * buffer; *ret_len excludes the NUL. -ENOENT when missing, -EFBIG when larger. */
int atomic_file_read(const char *path, size_t max, char **ret_data, size_t *ret_len);

/* Removes the temporary files a crash left behind for names starting with
 * @prefix (".<prefix>*.XXXXXX"). Returns how many were removed. */
int atomic_file_remove_stale(const char *dir, const char *prefix);

/* mkdir -p with @mode. */
int atomic_file_mkdirs(const char *path, mode_t mode);

#endif
