/* SPDX-License-Identifier: Apache-2.0 */
/* board.h: a temporary board tree owned by a live agent, and the sweep of
 * trees whose agent died without removing them. */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "boards/sim/board.h"
#include "agent/lib/err_msg.h"

#define OWNER_FILE ".owner"

/* Creates @dir/.owner holding an exclusive flock. The lock is taken on a
 * temporary name and then renamed into place, so a sweeper never finds an
 * .owner file that is not locked yet. Returns the lock's fd or -errno. */
static int take_ownership(const char *dir)
{
	char tmp[4200], owner[4200];
	int fd;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/" OWNER_FILE ".tmp", dir) >= sizeof(tmp) ||
	    (size_t)snprintf(owner, sizeof(owner), "%s/" OWNER_FILE, dir) >= sizeof(owner))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX) < 0 || rename(tmp, owner) < 0) {
		int r = -errno;

		unlink(tmp);
		close(fd);
		return r;
	}
	return fd;
}

/* Whether @dir is a tree whose owner is gone: it has an .owner file and
 * nobody holds its lock. Trees without .owner (being written, or made by
 * board_materialize_temp for a test) are never taken. */
static bool owner_gone(const char *dir)
{
	char owner[4200];
	bool gone;
	int fd;

	if ((size_t)snprintf(owner, sizeof(owner), "%s/" OWNER_FILE, dir) >= sizeof(owner))
		return false;
	fd = open(owner, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return false;
	gone = flock(fd, LOCK_EX | LOCK_NB) == 0;
	close(fd);	/* a live agent taking it now is impossible: it never reopens */
	return gone;
}

/* Removes the dralet-board.* trees in @parent other than @self whose owner
 * is gone; returns how many. */
static int sweep(const char *parent, const char *self)
{
	DIR *dp = opendir(parent);
	struct dirent *de;
	int n = 0;

	if (!dp)
		return 0;
	while ((de = readdir(dp))) {
		char path[4200];

		if (strncmp(de->d_name, "dralet-board.", 13))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", parent, de->d_name) >= sizeof(path))
			continue;
		if (strcmp(path, self) && owner_gone(path) && board_remove_tree(path) == 0)
			n++;
	}
	closedir(dp);
	return n;
}

int board_materialize_owned(const char *path, char **ret_dir, int *ret_lock_fd,
			    int *ret_swept, char *err, size_t errlen)
{
	char *dir = NULL, *slash, parent[4200];
	int r = board_materialize_temp(path, &dir, err, errlen), fd;

	if (r < 0)
		return r;
	fd = take_ownership(dir);
	if (fd < 0) {
		r = err_printf(err, errlen, fd, "cannot lock the board tree %s: %s", dir,
			       strerror(-fd));
		board_remove_tree(dir);
		free(dir);
		return r;
	}
	snprintf(parent, sizeof(parent), "%s", dir);
	if ((slash = strrchr(parent, '/')))
		*slash = '\0';
	*ret_swept = sweep(slash ? parent : ".", dir);
	*ret_dir = dir;
	*ret_lock_fd = fd;
	return 0;
}
