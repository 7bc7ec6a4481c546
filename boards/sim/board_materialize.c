/* SPDX-License-Identifier: Apache-2.0 */
/* board.h: load a board file and write its sysfs/dev/proc tree. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <json-c/json.h>

#include "boards/sim/board.h"
#include "boards/sim/board_model.h"
#include "boards/sim/board_write.h"
#include "agent/lib/err_msg.h"
#include "agent/lib/yaml_load.h"

#define BOARD_MAX_FILE (16u << 20)

static int read_file(const char *path, char **ret, size_t *ret_len)
{
	struct stat st;
	size_t off = 0;
	char *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > BOARD_MAX_FILE) {
		int r = S_ISDIR(st.st_mode) ? -EISDIR : -EFBIG;

		close(fd);
		return r;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (off < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + off, (size_t)st.st_size - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	buf[off] = '\0';
	*ret = buf;
	*ret_len = off;
	return 0;
}

int board_load(const char *path, struct board *b, char *err, size_t errlen)
{
	struct board_diag d = { .file = path, .err = err, .errlen = errlen };
	struct json_object *dom = NULL;
	struct err_msg yerr;
	char *text = NULL;
	size_t len = 0;
	int r;

	if (errlen)
		err[0] = '\0';
	b->arena = arena_new();
	if (!b->arena)
		return err_printf(err, errlen, -ENOMEM, "%s: out of memory", path);
	r = read_file(path, &text, &len);
	if (r < 0)
		return err_printf(err, errlen, r, "%s: cannot read the board file: %s", path,
				  strerror(-r));
	if (memchr(text, '\0', len)) {
		free(text);
		return err_printf(err, errlen, -EINVAL, "%s: not a text file", path);
	}
	r = yaml_load_buffer(text, len, &dom, ERR_MSG_ARGS(&yerr));
	if (r < 0) {
		free(text);
		return err_printf(err, errlen, r, "%s: %s", path, yerr.text);
	}
	d.text = text;
	d.text_len = len;
	r = board_parse(b, dom, &d);
	json_object_put(dom);
	if (r == 0)
		r = board_layout(b, &d);
	if (r == -ENOMEM)
		err_printf(err, errlen, r, "%s: out of memory", path);
	free(text);
	return r;
}

/* @dir: created when missing, else it must be an empty directory. */
static int prepare_dir(const char *dir, char *err, size_t errlen)
{
	DIR *dp;
	struct dirent *de;

	if (mkdir(dir, 0755) == 0)
		return 0;
	if (errno != EEXIST) {
		int r = -errno;

		return err_printf(err, errlen, r, "cannot create %s: %s", dir, strerror(-r));
	}
	dp = opendir(dir);
	if (!dp) {
		int r = -errno;

		return err_printf(err, errlen, r, "cannot open %s: %s", dir, strerror(-r));
	}
	while ((de = readdir(dp)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			closedir(dp);
			return err_printf(err, errlen, -ENOTEMPTY, "%s is not empty; materialize "
					  "into a new or empty directory", dir);
		}
	closedir(dp);
	return 0;
}

static int open_subdir(int top, const char *name)
{
	if (mkdirat(top, name, 0755) < 0 && errno != EEXIST)
		return -1;
	return openat(top, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

int bw_begin(struct bw *w, const struct board *b, const char *dir, char *err, size_t errlen)
{
	*w = (struct bw){ .b = b, .sys = -1, .dev = -1, .proc = -1 };
	pthread_mutex_init(&w->lock, NULL);
	w->top = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (w->top >= 0) {
		w->sys = open_subdir(w->top, "sys");
		w->dev = open_subdir(w->top, "dev");
		w->proc = open_subdir(w->top, "proc");
	}
	if (w->top < 0 || w->sys < 0 || w->dev < 0 || w->proc < 0) {
		int r = -errno;

		bw_fail(w, -r, "cannot open", dir);
		return err_printf(err, errlen, r, "cannot create the tree in %s: %s", dir,
				  strerror(-r));
	}
	return 0;
}

int bw_end(struct bw *w, char *err, size_t errlen)
{
	int r = w->err;

	if (r < 0)
		err_printf(err, errlen, r, "%s: %s", w->err_what[0] ? w->err_what : "write failed",
			   strerror(-r));
	if (w->proc >= 0)
		close(w->proc);
	if (w->dev >= 0)
		close(w->dev);
	if (w->sys >= 0)
		close(w->sys);
	if (w->top >= 0)
		close(w->top);
	pthread_mutex_destroy(&w->lock);
	return r;
}

static int write_tree(const struct board *b, const char *dir, char *err, size_t errlen)
{
	struct bw w;
	int r = bw_begin(&w, b, dir, err, errlen);

	if (r < 0) {
		bw_end(&w, NULL, 0);
		return r;
	}
	bw_pci(&w);
	bw_virtual_classes(&w);
	bw_platform(&w);
	bw_nvidia(&w);
	bw_system(&w);
	if (w.err < 0)
		err_printf(err, errlen, w.err, "cannot materialize board %s into %s: %s: %s",
			   b->name, dir, w.err_what[0] ? w.err_what : "write failed",
			   strerror(-w.err));
	return bw_end(&w, NULL, 0);
}

int board_write(const struct board *b, const char *dir, char *err, size_t errlen)
{
	int r = prepare_dir(dir, err, errlen);

	return r < 0 ? r : write_tree(b, dir, err, errlen);
}

int board_materialize(const char *path, const char *dir, char *err, size_t errlen)
{
	struct board b;
	int r;

	memset(&b, 0, sizeof(b));
	r = board_load(path, &b, err, errlen);
	if (r == 0)
		r = board_write(&b, dir, err, errlen);
	board_free(&b);
	return r;
}

/* $TMPDIR when set; else /dev/shm when it is a writable tmpfs (a board is
 * tens of thousands of tiny files: on tmpfs they take a few hundred
 * milliseconds, on a disk or overlay filesystem seconds, and many on a busy
 * one); else /tmp. A container's /dev/shm is small (64 MiB by default, hgx-h100
 * takes 44): a board that does not fit is written to /tmp instead
 * (board_materialize_temp). */
static const char *temp_parent(void)
{
	const char *tmp = getenv("TMPDIR");
	struct statfs fs;

	if (tmp && tmp[0])
		return tmp;
	if (statfs("/dev/shm", &fs) == 0 && fs.f_type == TMPFS_MAGIC &&
	    access("/dev/shm", W_OK | X_OK) == 0)
		return "/dev/shm";
	return "/tmp";
}

static int materialize_under(const char *parent, const char *path, char **ret_dir, char *err,
			     size_t errlen)
{
	char *dir;
	int r;

	if (asprintf(&dir, "%s/dralet-board.XXXXXX", parent) < 0)
		return -ENOMEM;
	if (!mkdtemp(dir)) {
		r = err_printf(err, errlen, -errno, "cannot create a directory in %s: %s", parent,
			       strerror(errno));
		free(dir);
		return r;
	}
	r = board_materialize(path, dir, err, errlen);
	if (r < 0) {
		board_remove_tree(dir);
		free(dir);
		return r;
	}
	*ret_dir = dir;
	return 0;
}

int board_materialize_temp(const char *path, char **ret_dir, char *err, size_t errlen)
{
	const char *tmp = temp_parent();
	int r = materialize_under(tmp, path, ret_dir, err, errlen);

	if (r == -ENOSPC && !strcmp(tmp, "/dev/shm"))
		r = materialize_under("/tmp", path, ret_dir, err, errlen);
	return r;
}

/* Removes the entries of the directory @fd (which it closes), never
 * following symlinks. */
static int remove_contents(int fd, unsigned depth)
{
	DIR *dp = fdopendir(fd);
	struct dirent *de;
	int r = 0;

	if (!dp) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(dp))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(dirfd(dp), de->d_name, 0) == 0)
			continue;
		if (errno == EISDIR || errno == EPERM) {
			int sub = openat(dirfd(dp), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub < 0 || depth > 256) {
				if (sub >= 0)
					close(sub);
				r = r ? r : -errno;
				continue;
			}
			int rr = remove_contents(sub, depth + 1);

			if (rr < 0 && !r)
				r = rr;
			if (unlinkat(dirfd(dp), de->d_name, AT_REMOVEDIR) < 0 && !r)
				r = -errno;
		} else if (errno != ENOENT && !r) {
			r = -errno;
		}
	}
	closedir(dp);
	return r;
}

int board_remove_tree(const char *dir)
{
	int fd, r;

	if (!dir || !dir[0] || !strcmp(dir, "/"))
		return -EINVAL;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	r = remove_contents(fd, 0);
	if (rmdir(dir) < 0 && r == 0)
		r = -errno;
	return r;
}
