/* SPDX-License-Identifier: Apache-2.0 */
/* Small-file reads below a directory fd, the way sysfs wants them read. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hal/scan_internal.h"

int sysfs_read(int dirfd, const char *name, char *buf, size_t size)
{
	ssize_t n;
	size_t len = 0;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	/* sysfs answers in one read; loop for other filesystems (boards, procfs) */
	while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int r = -errno;
			close(fd);
			return r;
		}
		len += (size_t)n;
	}
	if (len + 1 >= size) {
		char extra;
		if (read(fd, &extra, 1) > 0) {
			close(fd);
			return -EFBIG;
		}
	}
	close(fd);
	while (len > 0 && isspace((unsigned char)buf[len - 1]))
		len--;
	buf[len] = '\0';
	return (int)len;
}

int sysfs_read_u64(int dirfd, const char *name, int base, uint64_t *ret)
{
	char buf[64], *end;
	unsigned long long v;
	int r = sysfs_read(dirfd, name, buf, sizeof(buf));

	if (r < 0)
		return r;
	if (r == 0 || buf[0] == '-' || isspace((unsigned char)buf[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(buf, &end, base);
	if (errno || *end)
		return -EINVAL;
	*ret = v;
	return 0;
}

int sysfs_read_int(int dirfd, const char *name, int64_t *ret)
{
	char buf[64], *end;
	long long v;
	int r = sysfs_read(dirfd, name, buf, sizeof(buf));

	if (r < 0)
		return r;
	if (r == 0)
		return -EINVAL;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*ret = v;
	return 0;
}

int sysfs_readlink(int dirfd, const char *name, char *buf, size_t size)
{
	ssize_t n = readlinkat(dirfd, name, buf, size);

	if (n < 0)
		return -errno;
	if ((size_t)n >= size)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return (int)n;
}

const char *path_basename(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

int sysfs_resolve_link(const char *link_dir, const char *target, char *buf, size_t size)
{
	char tmp[4096];
	size_t len;
	int n;

	if (target[0] == '/')
		return -EINVAL;	/* sysfs links are relative */
	n = snprintf(tmp, sizeof(tmp), "%s/%s", link_dir, target);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -ENAMETOOLONG;
	/* normalise "a/b/../c" -> "a/c" in place, refusing to climb above the root */
	len = 0;
	for (char *p = tmp, *next; p && *p; p = next) {
		next = strchr(p, '/');
		if (next)
			*next++ = '\0';
		if (!*p || !strcmp(p, "."))
			continue;
		if (!strcmp(p, "..")) {
			if (len == 0)
				return -EINVAL;
			while (len > 0 && buf[len - 1] != '/')
				len--;
			if (len > 0)
				len--;
			continue;
		}
		size_t plen = strlen(p);
		if (len + plen + 2 > size)
			return -ENAMETOOLONG;
		if (len)
			buf[len++] = '/';
		memcpy(buf + len, p, plen);
		len += plen;
	}
	buf[len] = '\0';
	return len ? 0 : -EINVAL;
}

int sysfs_read_devnum(int dirfd, const char *name, unsigned *major, unsigned *minor)
{
	char buf[32];
	unsigned ma, mi;
	char tail;
	int r = sysfs_read(dirfd, name, buf, sizeof(buf));

	if (r < 0)
		return r;
	if (sscanf(buf, "%u:%u%c", &ma, &mi, &tail) != 2)
		return -EINVAL;
	*major = ma;
	*minor = mi;
	return 0;
}

int hal_read_file(const char *path, char *buf, size_t size)
{
	return sysfs_read(AT_FDCWD, path, buf, size);
}
