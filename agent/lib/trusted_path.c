/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/lib/trusted_path.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/lib/err_msg.h"

/* A root-owned directory that another filesystem is mounted on. */
static bool root_mount_point(const char *path, const struct stat *st)
{
	char parent[PATH_MAX + 4];
	struct stat up;

	if (!S_ISDIR(st->st_mode) || st->st_uid != 0)
		return false;
	snprintf(parent, sizeof(parent), "%s/..", path);
	return stat(parent, &up) == 0 && up.st_dev != st->st_dev;
}

/* One inode, reached through @path (stat follows links). */
static int check_one(const char *path, char *err, size_t errlen)
{
	struct stat st;
	bool shared_dir;
	uid_t me = geteuid();

	if (stat(path, &st) < 0) {
		int r = -errno;
		return err_printf(err, errlen, r, "%s: %s", path, strerror(errno));
	}
	shared_dir = S_ISDIR(st.st_mode) &&
		     ((st.st_mode & S_ISVTX) || root_mount_point(path, &st));
	if (st.st_uid != 0 && st.st_uid != me) {
		return err_printf(err, errlen, -EPERM,
				  "%s is owned by uid %u, not by root or the agent's user (uid %u)",
				  path, (unsigned)st.st_uid, (unsigned)me);
	}
	if ((st.st_mode & S_IWOTH) && !shared_dir) {
		return err_printf(err, errlen, -EPERM, "%s is writable by every user (mode %04o)", path,
				  (unsigned)(st.st_mode & 07777));
	}
	if ((st.st_mode & S_IWGRP) && st.st_gid != 0 && !shared_dir) {
		return err_printf(err, errlen, -EPERM, "%s is writable by group %u (mode %04o)", path,
				  (unsigned)st.st_gid, (unsigned)(st.st_mode & 07777));
	}
	return 0;
}

/* @abs (an absolute path) and every directory above it. */
static int check_chain(const char *abs, char *err, size_t errlen)
{
	char buf[PATH_MAX];
	size_t len = strlen(abs);
	int r;

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, abs, len + 1);
	while ((r = check_one(buf, err, errlen)) == 0) {
		char *slash = strrchr(buf, '/');

		if (!slash || slash == buf) {
			/* the root directory last */
			return strcmp(buf, "/") ? check_one("/", err, errlen) : 0;
		}
		*slash = '\0';
	}
	return r;
}

int trusted_path_check(const char *path, char *err, size_t errlen)
{
	char literal[PATH_MAX], *resolved;
	int r;

	if (!path || !*path) {
		return err_printf(err, errlen, -EINVAL, "empty path");
	}
	/* the directories the name goes through: where a link could be swapped */
	if (path[0] == '/') {
		if (snprintf(literal, sizeof(literal), "%s", path) >= (int)sizeof(literal))
			return -ENAMETOOLONG;
	} else {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof(cwd)) ||
		    snprintf(literal, sizeof(literal), "%s/%s", cwd, path) >= (int)sizeof(literal))
			return -ENAMETOOLONG;
	}
	r = check_chain(literal, err, errlen);
	if (r < 0)
		return r;
	/* and the file itself where links lead, with its directories */
	resolved = realpath(path, NULL);
	if (!resolved) {
		r = -errno;
		return err_printf(err, errlen, r, "%s: %s", path, strerror(errno));
	}
	r = check_chain(resolved, err, errlen);
	free(resolved);
	return r;
}
