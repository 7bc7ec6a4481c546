/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Durable file replacement: write a temporary file in the same directory
 * ("."<name>".XXXXXX", a name neither CDI runtimes nor we read as data),
 * fsync it, rename it over <dir>/<name>, fsync the directory. A crash at
 * any point leaves either the old or the new content, never a mix.
 */
#ifndef DRALET_ATOMIC_FILE_H
#define DRALET_ATOMIC_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/*
 * A replacement in progress, for content written as it is produced:
 * atomic_file_begin(), write to ->out, then atomic_file_commit() (or
 * atomic_file_abort() to drop it). The caller owns the struct.
 */
struct atomic_file {
	FILE *out;		/* the temporary file; buffered */
	int fd;			/* under ->out */
	int write_errno;	/* of the first failed write(2) to ->out, 0 when none */
	mode_t mode;
	char dir[4096], tmp[4096], target[4096];
};

/* Writes <dir>/<name> with @mode from what @write puts on its stream
 * (begin, @write, commit). 0, @write's -errno, or -errno. */
typedef int (*atomic_file_writer)(void *userdata, FILE *out);
int atomic_file_produce(const char *dir, const char *name, mode_t mode, atomic_file_writer write,
			void *userdata);

/* Creates the temporary file for <dir>/<name>. 0 or -errno. */
int atomic_file_begin(struct atomic_file *af, const char *dir, const char *name, mode_t mode);
/* Flushes, sets the mode, fsyncs, renames over the target and fsyncs the
 * directory; the temporary file is gone either way. 0 or -errno (that of
 * the write to ->out that failed, -ENOSPC on a full disk). */
int atomic_file_commit(struct atomic_file *af);
/* Closes and removes the temporary file. */
void atomic_file_abort(struct atomic_file *af);
/* Aborts after @r, a writer's error, and returns the error to report: the
 * errno of a failed write to ->out when there was one (a full disk is
 * -ENOSPC, not the -EIO a writer infers from ferror), else @r. */
int atomic_file_fail(struct atomic_file *af, int r);

/* Writes @len bytes of @data as <dir>/<name> with @mode. 0 or -errno. */
int atomic_file_write(const char *dir, const char *name, const void *data, size_t len,
		      mode_t mode);

/* Removes <dir>/<name> and fsyncs the directory; a missing file is fine. */
int atomic_file_remove(const char *dir, const char *name);

/* Reads a whole file (at most @max bytes) into a NUL-terminated malloc'd
 * buffer; *ret_len excludes the NUL. -ENOENT when missing, -EFBIG when larger. */
int atomic_file_read(const char *path, size_t max, char **ret_data, size_t *ret_len);

/*
 * Removes the temporary files a crash left behind in @dir: regular files
 * named ".<name>.XXXXXX" (six of mkostemp's letters and digits) for which
 * @ours(@name) is true. Symbolic links and other kinds of files are never
 * followed nor removed. Returns how many were removed, or -errno when @dir
 * cannot be read (a missing one is 0).
 */
typedef bool (*atomic_file_name_filter)(const char *name, void *userdata);
int atomic_file_remove_stale(const char *dir, atomic_file_name_filter ours, void *userdata);

/* mkdir -p with @mode. */
int atomic_file_mkdirs(const char *path, mode_t mode);

#endif
