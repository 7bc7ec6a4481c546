/* SPDX-License-Identifier: Apache-2.0 */
/* Walking sysfs class directories. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "hal/class.h"

static bool wanted(const char *name, const char *const *prefixes)
{
	if (!prefixes)
		return true;
	for (; *prefixes; prefixes++)
		if (!strncmp(name, *prefixes, strlen(*prefixes)))
			return true;
	return false;
}

void class_for_each(struct hal_scan_private *s, const char *class_dir,
		    const char *const *prefixes, class_entry_fn fn, void *userdata)
{
	struct dirent *de;
	DIR *dir;
	int dfd = openat(s->sys_fd, class_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0) {
		if (errno != ENOENT)
			scan_warn(s, "%s/%s: %s", s->roots.sys, class_dir, strerror(errno));
		return;
	}
	dir = fdopendir(dfd);
	if (!dir) {
		close(dfd);
		return;
	}
	while ((de = readdir(dir))) {
		char target[4096], path[4096];
		if (de->d_name[0] == '.' || !wanted(de->d_name, prefixes))
			continue;
		/* class directories also hold plain files (infiniband_verbs/abi_version) */
		if (de->d_type != DT_LNK && de->d_type != DT_UNKNOWN)
			continue;
		if (sysfs_readlink(dirfd(dir), de->d_name, target, sizeof(target)) < 0 ||
		    sysfs_resolve_link(class_dir, target, path, sizeof(path)) < 0 ||
		    strncmp(path, "devices/", 8)) {
			scan_warn(s, "%s/%s/%s: not a link into devices/; skipped", s->roots.sys,
				  class_dir, de->d_name);
			continue;
		}
		int fd = openat(dirfd(dir), de->d_name, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			scan_warn(s, "%s/%s/%s: %s (dangling link?); skipped", s->roots.sys,
				  class_dir, de->d_name, strerror(errno));
			continue;
		}
		fn(s, de->d_name, fd, path, userdata);
		close(fd);
	}
	closedir(dir);
}
