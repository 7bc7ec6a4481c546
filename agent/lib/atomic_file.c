/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/lib/atomic_file.h"

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0 && errno != EINVAL)	/* some file systems cannot sync dirs */
		r = -errno;
	close(fd);
	return r;
}

/* stdio's own buffer (8 KiB for a cookie stream: setvbuf ignores the size
 * without a buffer) would mean hundreds of writes for a large checkpoint;
 * under `dralet run`'s mmap threshold (64 KiB, cmd_run.c) so that it comes
 * from the heap, not from an mmap and munmap per file */
#define ATOMIC_FILE_BUFFER (56u << 10)

/* stdio keeps only an error flag; the cookie keeps the errno behind it */
static ssize_t cookie_write(void *cookie, const char *buf, size_t size)
{
	struct atomic_file *af = cookie;
	size_t done = 0;

	while (done < size) {
		ssize_t n = write(af->fd, buf + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!af->write_errno)
				af->write_errno = n < 0 ? errno : ENOSPC;
			return done ? (ssize_t)done : -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int cookie_close(void *cookie)
{
	struct atomic_file *af = cookie;

	return close(af->fd);
}

int atomic_file_begin(struct atomic_file *af, const char *dir, const char *name, mode_t mode)
{
	static const cookie_io_functions_t io = { .write = cookie_write, .close = cookie_close };
	int fd;

	af->out = NULL;
	af->buf = NULL;
	af->fd = -1;
	af->write_errno = 0;
	if (!dir || !name || strchr(name, '/'))
		return -EINVAL;
	if (snprintf(af->dir, sizeof(af->dir), "%s", dir) >= (int)sizeof(af->dir) ||
	    snprintf(af->tmp, sizeof(af->tmp), "%s/.%s.XXXXXX", dir, name) >= (int)sizeof(af->tmp) ||
	    snprintf(af->target, sizeof(af->target), "%s/%s", dir, name) >= (int)sizeof(af->target))
		return -ENAMETOOLONG;
	fd = mkostemp(af->tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	af->fd = fd;
	af->buf = malloc(ATOMIC_FILE_BUFFER);
	af->out = af->buf ? fopencookie(af, "w", io) : NULL;
	if (!af->out) {
		int r = af->buf ? -errno : -ENOMEM;
		free(af->buf);
		af->buf = NULL;
		close(fd);
		unlink(af->tmp);
		return r;
	}
	setvbuf(af->out, af->buf, _IOFBF, ATOMIC_FILE_BUFFER);
	af->mode = mode;
	af->sync = ATOMIC_FILE_SYNC_DIR;
	return 0;
}

void atomic_file_abort(struct atomic_file *af)
{
	if (!af->out)
		return;
	fclose(af->out);
	af->out = NULL;
	free(af->buf);
	af->buf = NULL;
	unlink(af->tmp);
}

int atomic_file_fail(struct atomic_file *af, int r)
{
	if (af->out)
		fflush(af->out);	/* what is still buffered may be what fails */
	if (af->write_errno)
		r = -af->write_errno;
	atomic_file_abort(af);
	return r;
}

int atomic_file_commit(struct atomic_file *af)
{
	int r = 0;

	if (!af->out)
		return -EINVAL;
	if (fflush(af->out) != 0 || ferror(af->out))
		r = af->write_errno ? -af->write_errno : -EIO;
	if (!r && fchmod(af->fd, af->mode) < 0)
		r = -errno;
	if (!r && af->sync != ATOMIC_FILE_SYNC_NONE && fsync(af->fd) < 0)
		r = -errno;
	if (fclose(af->out) != 0 && !r)
		r = -errno;
	af->out = NULL;
	free(af->buf);
	af->buf = NULL;
	if (!r && rename(af->tmp, af->target) < 0)
		r = -errno;
	if (r) {
		unlink(af->tmp);
		return r;
	}
	return af->sync == ATOMIC_FILE_SYNC_DIR ? fsync_dir(af->dir) : 0;
}

static int produce(const char *dir, const char *name, mode_t mode, enum atomic_file_sync sync,
		   atomic_file_writer write, void *userdata)
{
	struct atomic_file *af = malloc(sizeof(*af));	/* 12 KiB of paths: not on the stack */
	int r = af ? atomic_file_begin(af, dir, name, mode) : -ENOMEM;

	if (!r) {
		af->sync = sync;
		r = write(userdata, af->out);
	}
	if (!r)
		r = atomic_file_commit(af);
	else if (af && af->out)
		r = atomic_file_fail(af, r);
	free(af);
	return r;
}

int atomic_file_produce(const char *dir, const char *name, mode_t mode, atomic_file_writer write,
			void *userdata)
{
	return produce(dir, name, mode, ATOMIC_FILE_SYNC_DIR, write, userdata);
}

struct bytes {
	const void *data;
	size_t len;
};

static int write_bytes(void *userdata, FILE *out)
{
	const struct bytes *b = userdata;
	return !b->len || fwrite(b->data, 1, b->len, out) == b->len ? 0 : -EIO;
}

int atomic_file_write_sync(const char *dir, const char *name, const void *data, size_t len,
			   mode_t mode, enum atomic_file_sync sync)
{
	struct bytes b = { data, len };
	return produce(dir, name, mode, sync, write_bytes, &b);
}

int atomic_file_write(const char *dir, const char *name, const void *data, size_t len,
		      mode_t mode)
{
	return atomic_file_write_sync(dir, name, data, len, mode, ATOMIC_FILE_SYNC_DIR);
}

int atomic_file_read(const char *path, size_t max, char **ret_data, size_t *ret_len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf;
	size_t len = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	if ((size_t)st.st_size > max) {
		close(fd);
		return -EFBIG;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t n = read(fd, buf + len, (size_t)st.st_size - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int r = -errno;
			free(buf);
			close(fd);
			return r;
		}
		if (n == 0 || (len += (size_t)n) == (size_t)st.st_size)
			break;
	}
	close(fd);
	buf[len] = '\0';
	*ret_data = buf;
	*ret_len = len;
	return 0;
}

/* The target name inside ".<name>.XXXXXX" into @buf; false when @n is no such name. */
static bool temp_target(const char *n, char *buf, size_t size)
{
	size_t len = strlen(n);

	if (n[0] != '.' || len < 9 || n[len - 7] != '.' || len - 8 >= size)
		return false;
	for (size_t i = len - 6; i < len; i++)
		if (!isalnum((unsigned char)n[i]))
			return false;
	memcpy(buf, n + 1, len - 8);
	buf[len - 8] = '\0';
	return true;
}

int atomic_file_remove_stale(const char *dir, atomic_file_name_filter ours, void *userdata)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int removed = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		char target[NAME_MAX + 1];
		struct stat st;

		if (!temp_target(de->d_name, target, sizeof(target)) || !ours(target, userdata))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == 0)
			removed++;
	}
	closedir(d);
	return removed;
}

/* mkdir of @buf (modified in place, restored), its missing parents first. */
static int mkdirs_up(char *buf, mode_t mode)
{
	char *slash;
	int r;

	if (mkdir(buf, mode) == 0 || errno == EEXIST)
		return 0;
	if (errno != ENOENT)
		return -errno;
	slash = strrchr(buf, '/');
	while (slash && slash > buf && slash[-1] == '/')
		slash--;
	if (!slash || slash == buf)
		return -ENOENT;	/* a missing root or current directory */
	*slash = '\0';
	r = mkdirs_up(buf, mode);
	*slash = '/';
	if (r < 0)
		return r;
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int atomic_file_mkdirs(const char *path, mode_t mode)
{
	char buf[4096];
	size_t len = strlen(path);

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, path, len + 1);
	while (len > 1 && buf[len - 1] == '/')
		buf[--len] = '\0';
	return mkdirs_up(buf, mode);
}
