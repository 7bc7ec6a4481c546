/* SPDX-License-Identifier: Apache-2.0 */
/* File-writing primitives of the materializer (see board_write.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boards/sim/board_write.h"

void bw_fail(struct bw *w, int err, const char *what, const char *path)
{
	pthread_mutex_lock(&w->lock);
	if (!bw_failed(w)) {
		snprintf(w->err_what, sizeof(w->err_what), "%s %s", what, path);
		__atomic_store_n(&w->err, -err, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&w->lock);
}

void bw_mkdirs(struct bw *w, int base, const char *rel)
{
	char buf[PATH_MAX];
	size_t len = strlen(rel);

	if (bw_failed(w) || !len)
		return;
	if (mkdirat(base, rel, 0755) == 0 || errno == EEXIST)
		return;
	if (errno != ENOENT || len >= sizeof(buf)) {
		bw_fail(w, errno, "cannot create directory", rel);
		return;
	}
	/* create the parents, then retry */
	memcpy(buf, rel, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdirat(base, buf, 0755) < 0 && errno != EEXIST) {
			bw_fail(w, errno, "cannot create directory", buf);
			return;
		}
		*p = '/';
	}
	if (mkdirat(base, rel, 0755) < 0 && errno != EEXIST)
		bw_fail(w, errno, "cannot create directory", rel);
}

void bw_open(struct bw *w, struct bw_dir *d, int base, const char *path_base, const char *rel)
{
	d->fd = -1;
	if ((size_t)snprintf(d->path, sizeof(d->path), "%s%s%s", path_base,
			     path_base[0] ? "/" : "", rel) >= sizeof(d->path)) {
		bw_fail(w, ENAMETOOLONG, "path too long:", rel);
		return;
	}
	bw_mkdirs(w, base, rel);
	if (bw_failed(w))
		return;
	d->fd = openat(base, rel, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (d->fd < 0)
		bw_fail(w, errno, "cannot open directory", d->path);
}

void bw_close(struct bw_dir *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}

static void make_parent(struct bw *w, int dirfd, const char *name)
{
	const char *slash = strrchr(name, '/');
	char buf[PATH_MAX];

	if (!slash || (size_t)(slash - name) >= sizeof(buf))
		return;
	memcpy(buf, name, (size_t)(slash - name));
	buf[slash - name] = '\0';
	bw_mkdirs(w, dirfd, buf);
}

static void write_mode(struct bw *w, int dirfd, const char *name, const void *data, size_t len,
		       mode_t mode)
{
	int fd;

	if (bw_failed(w) || dirfd < 0)
		return;
	/* an empty file takes one syscall */
	if (!len && mknodat(dirfd, name, S_IFREG | mode, 0) == 0)
		return;
	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0 && errno == ENOENT && strchr(name, '/')) {
		make_parent(w, dirfd, name);
		fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	}
	if (fd < 0) {
		bw_fail(w, errno, "cannot create", name);
		return;
	}
	for (size_t off = 0; off < len;) {
		ssize_t n = write(fd, (const char *)data + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			bw_fail(w, n < 0 ? errno : EIO, "cannot write", name);
			break;
		}
		off += (size_t)n;
	}
	if (close(fd) < 0)
		bw_fail(w, errno, "cannot write", name);
}

void bw_write(struct bw *w, int dirfd, const char *name, const void *data, size_t len)
{
	write_mode(w, dirfd, name, data, len, 0644);
}

void bw_text(struct bw *w, int dirfd, const char *name, const char *text)
{
	write_mode(w, dirfd, name, text, strlen(text), 0644);
}

void bw_writeonly(struct bw *w, int dirfd, const char *name)
{
	write_mode(w, dirfd, name, "", 0, 0200);
}

void bw_printf(struct bw *w, int dirfd, const char *name, const char *fmt, ...)
{
	char small[512], *buf = small;
	va_list ap;
	int n;

	if (bw_failed(w))
		return;
	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		bw_fail(w, EINVAL, "cannot format", name);
		return;
	}
	if ((size_t)n >= sizeof(small)) {
		buf = malloc((size_t)n + 1);
		if (!buf) {
			bw_fail(w, ENOMEM, "cannot format", name);
			return;
		}
		va_start(ap, fmt);
		vsnprintf(buf, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	bw_write(w, dirfd, name, buf, (size_t)n);
	if (buf != small)
		free(buf);
}

/* The relative path from directory @from to @to, both below the sys root,
 * through their common ancestor (what sysfs_create_link produces). */
static int relative(char *out, size_t size, const char *from, const char *to)
{
	const char *f = from, *t = to;
	size_t len = 0;
	int n;

	/* like kernfs_get_target_path, the common base is searched among the
	 * target's parents, so a link to an ancestor reads "../../../<name>" */
	for (;;) {
		size_t fl = strcspn(f, "/"), tl = strcspn(t, "/");

		if (!fl || fl != tl || memcmp(f, t, fl) || !t[tl])
			break;
		f += fl + (f[fl] == '/');
		t += tl + (t[tl] == '/');
	}
	out[0] = '\0';
	while (*f) {
		f += strcspn(f, "/");
		f += *f == '/';
		n = snprintf(out + len, size - len, "../");
		if (n < 0 || (size_t)n >= size - len)
			return -ENAMETOOLONG;
		len += (size_t)n;
	}
	n = snprintf(out + len, size - len, "%s", t);
	if (n < 0 || (size_t)n >= size - len)
		return -ENAMETOOLONG;
	len += (size_t)n;
	if (len > 1 && out[len - 1] == '/')
		out[len - 1] = '\0';
	return 0;
}

void bw_link_at(struct bw *w, const char *link_path, const char *target)
{
	char dir[PATH_MAX], rel[PATH_MAX];
	const char *slash = strrchr(link_path, '/');
	size_t dl = slash ? (size_t)(slash - link_path) : 0;

	if (bw_failed(w))
		return;
	if (dl >= sizeof(dir)) {
		bw_fail(w, ENAMETOOLONG, "path too long:", link_path);
		return;
	}
	memcpy(dir, link_path, dl);
	dir[dl] = '\0';
	if (relative(rel, sizeof(rel), dir, target) < 0) {
		bw_fail(w, ENAMETOOLONG, "path too long:", link_path);
		return;
	}
	if (symlinkat(rel, w->sys, link_path) == 0)
		return;
	if (errno == ENOENT) {
		bw_mkdirs(w, w->sys, dir);
		if (bw_failed(w))
			return;
		if (symlinkat(rel, w->sys, link_path) == 0)
			return;
	}
	bw_fail(w, errno, "cannot create link", link_path);
}

void bw_link(struct bw *w, const struct bw_dir *d, const char *name, const char *target)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", d->path, name) >= sizeof(path)) {
		bw_fail(w, ENAMETOOLONG, "path too long:", name);
		return;
	}
	bw_link_at(w, path, target);
}

void bw_devnode(struct bw *w, const char *devname, unsigned major, unsigned minor)
{
	char node[PATH_MAX], target[32];

	if (bw_failed(w))
		return;
	write_mode(w, w->dev, devname, "", 0, 0666);
	/* umockdev: dev/.node/<name with '/' as '_'> -> "major:minor" */
	snprintf(node, sizeof(node), ".node/%s", devname);
	for (char *p = node + 6; *p; p++)
		if (*p == '/')
			*p = '_';
	snprintf(target, sizeof(target), "%u:%u", major, minor);
	if (symlinkat(target, w->dev, node) < 0) {
		if (errno == ENOENT) {
			bw_mkdirs(w, w->dev, ".node");
			if (!bw_failed(w) && symlinkat(target, w->dev, node) == 0)
				return;
		}
		if (errno != EEXIST)
			bw_fail(w, errno, "cannot create link dev/", node);
	}
}

void bw_class_device(struct bw *w, const struct bw_dir *d, const char *cls, const char *name,
		     const char *device_path, unsigned major, unsigned minor, const char *devname,
		     const char *extra_uevent)
{
	char path[PATH_MAX];

	if (major) {
		bw_printf(w, d->fd, "dev", "%u:%u\n", major, minor);
		bw_printf(w, d->fd, "uevent", "MAJOR=%u\nMINOR=%u\nDEVNAME=%s\n%s", major, minor,
			  devname ? devname : name, extra_uevent ? extra_uevent : "");
		snprintf(path, sizeof(path), "dev/char/%u:%u", major, minor);
		bw_link_at(w, path, d->path);
	} else {
		bw_printf(w, d->fd, "uevent", "%s", extra_uevent ? extra_uevent : "");
	}
	snprintf(path, sizeof(path), "class/%s", cls);
	bw_link(w, d, "subsystem", path);
	if (device_path)
		bw_link(w, d, "device", device_path);
	snprintf(path, sizeof(path), "class/%s/%s", cls, name);
	bw_link_at(w, path, d->path);
}
