/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Atomic file replacement: write a temporary file in the same directory
 * ("."<name>".XXXXXX", a name neither CDI runtimes nor we read as data),
 * rename it over <dir>/<name>. A process that crashes at any point leaves
 * either the old or the new content, never a mix (the rename is atomic and
 * the page cache outlives the process). What survives a power loss or a
 * kernel crash is the caller's choice (enum atomic_file_sync): by default
 * the file is fsynced before the rename and the directory after it.
 */
#ifndef DRALET_ATOMIC_FILE_H
#define DRALET_ATOMIC_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* What of a replacement survives a power loss (a process crash never sees a
 * torn file, whichever is chosen). */
enum atomic_file_sync {
	ATOMIC_FILE_SYNC_DIR,	/* the file before the rename, the directory after it:
				 * the new content survives (the default) */
	ATOMIC_FILE_SYNC_FILE,	/* the file only: after a power loss, the old or the new
				 * content, whole (the rename may be lost, never torn) */
	ATOMIC_FILE_SYNC_NONE,	/* nothing: for content that dies with the boot anyway;
				 * after a power loss it may be missing, empty or torn */
};

/*
 * A replacement in progress, for content written as it is produced:
 * atomic_file_begin(), write to ->out, then atomic_file_commit() (or
 * atomic_file_abort() to drop it). The caller owns the struct.
 */
struct atomic_file {
	FILE *out;		/* the temporary file; buffered */
	char *buf;		/* its buffer (owned; freed when it is closed) */
	int fd;			/* under ->out */
	int write_errno;	/* of the first failed write(2) to ->out, 0 when none */
	mode_t mode;
	enum atomic_file_sync sync;	/* ATOMIC_FILE_SYNC_DIR after begin; set before commit */
	char dir[4096], tmp[4096], target[4096];
};

/* Writes <dir>/<name> with @mode from what @write puts on its stream
 * (begin, @write, commit). 0, @write's -errno, or -errno. */
typedef int (*atomic_file_writer)(void *userdata, FILE *out);
int atomic_file_produce(const char *dir, const char *name, mode_t mode, atomic_file_writer write,
			void *userdata);

/* Creates the temporary file for <dir>/<name>. 0 or -errno. */
int atomic_file_begin(struct atomic_file *af, const char *dir, const char *name, mode_t mode);
/* Flushes, sets the mode, fsyncs (as ->sync says), renames over the target
 * and fsyncs the directory (ATOMIC_FILE_SYNC_DIR only); the temporary file is
 * gone either way. 0 or -errno (that of
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
/* atomic_file_write() with @sync instead of ATOMIC_FILE_SYNC_DIR. */
int atomic_file_write_sync(const char *dir, const char *name, const void *data, size_t len,
			   mode_t mode, enum atomic_file_sync sync);


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

/* mkdir -p with @mode. From the leaf up: where the parent exists (the usual
 * case) it costs one mkdir, not one per component. */
int atomic_file_mkdirs(const char *path, mode_t mode);

#endif
