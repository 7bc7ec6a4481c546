/* SPDX-License-Identifier: Apache-2.0 */
#include "hal/node_ops.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <linux/fpga-dfl.h>
#include <linux/magic.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/vfs.h>

#include "hal/scan_internal.h"
#include "hal/vf_netlink.h"

/* configfs's magic ("beep"; fs/configfs/configfs_internal.h), which
 * linux/magic.h does not carry. */
#define CONFIGFS_MAGIC 0x62656570

/* Whether @fd is a kernel attribute (sysfs, or configfs for overlay items),
 * which takes a value whole and must not be truncated. */
static bool on_sysfs(int fd)
{
	struct statfs fs;

	return fstatfs(fd, &fs) == 0 && (fs.f_type == SYSFS_MAGIC || fs.f_type == CONFIGFS_MAGIC);
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

/* A device node name below the dev root: one component. */
static int dev_path(const struct hal_roots *roots, const char *name, char *path, size_t size)
{
	if (!name || !*name || strchr(name, '/') || !strcmp(name, "..") || !strcmp(name, "."))
		return -EINVAL;
	return hal_root_path(roots->dev, name, path, size);
}

static int real_fpga_pr(void *userdata, const char *fme, const char *port, unsigned port_id,
			const void *image, size_t size)
{
	const struct hal_roots *roots = userdata;
	struct dfl_fpga_fme_port_pr pr = {
		.argsz = sizeof(pr),
		.flags = 0,
		.port_id = port_id,
		.buffer_size = (__u32)size,
		.buffer_address = (__u64)(uintptr_t)image,
	};
	char fme_path[4096], port_path[4096];
	int fme_fd, port_fd, r;

	if (size == 0 || size > UINT32_MAX)
		return -EINVAL;
	if ((r = dev_path(roots, fme, fme_path, sizeof(fme_path))) < 0 ||
	    (r = dev_path(roots, port, port_path, sizeof(port_path))) < 0)
		return r;
	/* dfl_feature_dev_use_begin(): O_EXCL fails with -EBUSY while it is open */
	port_fd = open(port_path, O_RDWR | O_EXCL | O_CLOEXEC | O_NOCTTY);
	if (port_fd < 0)
		return -errno;
	fme_fd = open(fme_path, O_RDWR | O_CLOEXEC | O_NOCTTY);
	if (fme_fd < 0) {
		r = -errno;
		close(port_fd);
		return r;
	}
	r = ioctl(fme_fd, DFL_FPGA_FME_PORT_PR, &pr) < 0 ? -errno : 0;
	close(fme_fd);
	close(port_fd);
	return r;
}

/* One path component: no '/', not "." or "..". */
static bool plain_name(const char *name)
{
	return name && *name && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
}

static int real_fpga_mgr_load(void *userdata, const char *manager, unsigned long flags,
			      const char *image)
{
	char rel[512], value[32];
	int r;

	if (!plain_name(manager) || !plain_name(image))
		return -EINVAL;
	snprintf(rel, sizeof(rel), "class/fpga_manager/%s/flags", manager);
	snprintf(value, sizeof(value), "%lx", flags);
	if ((r = real_write(userdata, rel, value)) < 0)
		return r;
	snprintf(rel, sizeof(rel), "class/fpga_manager/%s/firmware", manager);
	return real_write(userdata, rel, image);
}

#define OVERLAYS "kernel/config/device-tree/overlays"

static int real_fpga_overlay(void *userdata, const char *name, const char *dtbo)
{
	const struct hal_roots *roots = userdata;
	char rel[512], path[4096];
	int r;

	if (!plain_name(name) || (dtbo && !plain_name(dtbo)))
		return -EINVAL;
	snprintf(rel, sizeof(rel), OVERLAYS "/%s", name);
	if ((r = hal_root_path(roots->sys, rel, path, sizeof(path))) < 0)
		return r;
	if (!dtbo)
		return rmdir(path) < 0 && errno != ENOENT ? -errno : 0;
	if (mkdir(path, 0755) < 0)
		return -errno;
	snprintf(rel, sizeof(rel), OVERLAYS "/%s/path", name);
	return real_write(userdata, rel, dtbo);
}

struct node_ops node_ops_real(const struct hal_roots *roots)
{
	return (struct node_ops){
		.write = real_write,
		.read = real_read,
		.readlink = real_readlink,
		.vf_get = real_vf_get,
		.vf_set = real_vf_set,
		.fpga_pr = real_fpga_pr,
		.fpga_mgr_load = real_fpga_mgr_load,
		.fpga_overlay = real_fpga_overlay,
		.userdata = (void *)roots,
	};
}
