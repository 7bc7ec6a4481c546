/* SPDX-License-Identifier: Apache-2.0 */
#include "hal/node_ops.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>
#include <net/if.h>
#include <sys/vfs.h>

#include "hal/scan_internal.h"
#include "hal/vf_netlink.h"

static bool on_sysfs(int fd)
{
	struct statfs fs;

	return fstatfs(fd, &fs) == 0 && fs.f_type == SYSFS_MAGIC;
}

static int real_write(void *userdata, const char *relpath, const char *value)
{
	const struct hal_roots *roots = userdata;
	char path[4096];
	size_t len = strlen(value);
	ssize_t n;
	int fd, r = hal_root_path(roots->sys, relpath, path, sizeof(path));

	if (r < 0)
		return r;
	fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	/* A sysfs attribute takes the whole value from one write; a simulated
	 * node's tree holds plain files, which must end up the same: "8" over
	 * "64" is "8", not "84". */
	if (!on_sysfs(fd) && ftruncate(fd, 0) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	/* sysfs takes one write per value, and the kernel's error comes back here */
	n = write(fd, value, len);
	r = n < 0 ? -errno : (size_t)n == len ? 0 : -EIO;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}

static int real_read(void *userdata, const char *relpath, char *buf, size_t size)
{
	const struct hal_roots *roots = userdata;
	char path[4096];
	int r = hal_root_path(roots->sys, relpath, path, sizeof(path));

	return r < 0 ? r : sysfs_read(AT_FDCWD, path, buf, size);
}

static int real_readlink(void *userdata, const char *relpath, char *buf, size_t size)
{
	const struct hal_roots *roots = userdata;
	char path[4096];
	int r = hal_root_path(roots->sys, relpath, path, sizeof(path));

	return r < 0 ? r : sysfs_readlink(AT_FDCWD, path, buf, size);
}

/* The interface with index @ifindex here is the one the sysfs tree named. */
static bool same_interface(const char *ifname, int ifindex)
{
	char here[IF_NAMESIZE];

	return ifname && ifindex > 0 && if_indextoname((unsigned)ifindex, here) &&
	       !strcmp(here, ifname);
}

static int real_vf_get(void *userdata, const char *pf_ifname, int pf_ifindex, unsigned vf,
		       struct dralet_vf_settings *ret)
{
	(void)userdata;
	if (!same_interface(pf_ifname, pf_ifindex))
		return -ENODEV;
	return hal_vf_get(pf_ifindex, vf, ret);
}

static int real_vf_set(void *userdata, const char *pf_ifname, int pf_ifindex, unsigned vf,
		       const struct dralet_vf_settings *s)
{
	(void)userdata;
	if (!same_interface(pf_ifname, pf_ifindex))
		return -ENODEV;
	return hal_vf_apply(pf_ifindex, vf, s);
}

struct node_ops node_ops_real(const struct hal_roots *roots)
{
	return (struct node_ops){
		.write = real_write,
		.read = real_read,
		.readlink = real_readlink,
		.vf_get = real_vf_get,
		.vf_set = real_vf_set,
		.userdata = (void *)roots,
	};
}
