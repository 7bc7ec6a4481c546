/* SPDX-License-Identifier: Apache-2.0 */
#include "pcidev.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The kernel's fixed minor of the vfio container node (VFIO_MINOR). */
#define VFIO_CONTAINER_MAJOR 10
#define VFIO_CONTAINER_MINOR 196

bool pcidev_vfio_capable(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func)
{
	(void)ctx;
	/* alone in its IOMMU group: vfio can take it without taking others */
	return func->iommu_group >= 0 && func->iommu_group_size == 1;
}

static bool parse_devnum(const char *s, unsigned *major, unsigned *minor)
{
	char *end;
	unsigned long ma = strtoul(s, &end, 10), mi;

	if (end == s || *end != ':')
		return false;
	s = end + 1;
	mi = strtoul(s, &end, 10);
	if (end == s || *end || ma > 0xfff || mi > 0xfffff)
		return false;
	*major = (unsigned)ma;
	*minor = (unsigned)mi;
	return true;
}

int pcidev_misc_node(struct dralet_backend_ctx *ctx, const char *misc_name, const char *dev_path,
		     unsigned major, unsigned minor, char *path, struct dralet_devnode *ret_node)
{
	char rel[128], buf[32];
	int r;

	snprintf(rel, sizeof(rel), "class/misc/%s/dev", misc_name);
	r = dralet_read_file(ctx, DRALET_ROOT_SYS, rel, buf, sizeof(buf));
	if (r > 0 && !parse_devnum(buf, &major, &minor))
		dralet_ctx_warn(ctx, "class/misc/%s/dev: \"%s\" is not <major>:<minor>", misc_name,
				buf);
	r = dralet_devnode(ctx, dev_path, major, minor, path, ret_node);
	if (r < 0)
		return r;
	if (!ret_node->major && !ret_node->minor)
		ret_node->path = NULL;	/* a placeholder with unknown numbers is no node */
	return 0;
}

int pcidev_device_add_vfio(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			   const struct dralet_pci_func *func)
{
	char path[DRALET_DEVNODE_PATH_MAX];
	struct dralet_devnode container;
	int r;

	if (!pcidev_is_vfio(func))
		return 0;
	if (!func->vfio_group.path) {
		dralet_ctx_warn(ctx, "%s is bound to vfio-pci but /dev/vfio/%d is missing",
				func->address, func->iommu_group);
		return 0;
	}
	r = dralet_device_add_node(dev, &func->vfio_group);
	if (r < 0)
		return r;
	if (func->vfio_container)	/* the discovery resolved it already */
		return dralet_device_add_node(dev, func->vfio_container);
	r = pcidev_misc_node(ctx, "vfio", "vfio/vfio", VFIO_CONTAINER_MAJOR, VFIO_CONTAINER_MINOR,
			     path, &container);
	if (r < 0 || !container.path)
		return r;
	return dralet_device_add_node(dev, &container);
}

/* <class>/<name>: one child device with a "dev" file. */
static int add_chardev(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		       const struct dralet_pci_func *func, const char *cls, const char *name)
{
	char rel[512], buf[512], devname[256], path[DRALET_DEVNODE_PATH_MAX];
	unsigned major, minor;
	struct dralet_devnode node;
	int r;

	if (snprintf(rel, sizeof(rel), "%s/%s/dev", cls, name) >= (int)sizeof(rel) ||
	    dralet_read_pci_file(ctx, func, rel, buf, sizeof(buf)) <= 0)
		return 0;
	if (!parse_devnum(buf, &major, &minor)) {
		dralet_ctx_warn(ctx, "%s/%s: \"%s\" is not <major>:<minor>", func->address, rel, buf);
		return 0;
	}
	snprintf(devname, sizeof(devname), "%s", name);
	if (snprintf(rel, sizeof(rel), "%s/%s/uevent", cls, name) < (int)sizeof(rel) &&
	    dralet_read_pci_file(ctx, func, rel, buf, sizeof(buf)) > 0) {
		for (char *line = buf, *next; line && *line; line = next) {
			next = strchr(line, '\n');
			if (next)
				*next++ = '\0';
			if (!strncmp(line, "DEVNAME=", 8) && line[8] && !strstr(line, ".."))
				snprintf(devname, sizeof(devname), "%s", line + 8);
		}
	}
	r = dralet_devnode(ctx, devname, major, minor, path, &node);
	if (r < 0 || !node.path)
		return r < 0 ? r : 0;
	r = dralet_device_add_node(dev, &node);
	return r < 0 ? r : 1;
}

int pcidev_device_add_chardevs(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			       const struct dralet_pci_func *func)
{
	char path[4096], sub[4608];
	struct dirent *de, *ce;
	int n = 0, r;
	DIR *dir, *cdir;

	r = dralet_root_path(ctx, DRALET_ROOT_SYS, func->sysfs_path, path, sizeof(path));
	if (r < 0)
		return r;
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		struct stat st;
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "vfio-dev") ||
		    !strcmp(de->d_name, "power") || !strcmp(de->d_name, "msi_irqs"))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		/* class glue directories are real directories; links lead elsewhere */
		if (lstat(sub, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		cdir = opendir(sub);
		if (!cdir)
			continue;
		while ((ce = readdir(cdir)) && r >= 0) {
			if (ce->d_name[0] == '.')
				continue;
			r = add_chardev(ctx, dev, func, de->d_name, ce->d_name);
			if (r > 0)
				n++;
		}
		closedir(cdir);
		if (r < 0)
			break;
	}
	closedir(dir);
	return r < 0 ? r : n;
}

void pcidev_node_list(const struct dralet_device *dev, char *buf, size_t size)
{
	size_t o = 0;

	if (size)
		buf[0] = '\0';
	for (size_t i = 0; i < dralet_device_n_nodes(dev) && o + 1 < size; i++) {
		int n = snprintf(buf + o, size - o, "%s%s", o ? "," : "",
				 dralet_device_node(dev, i)->path);
		if (n < 0 || (size_t)n >= size - o) {
			buf[o] = '\0';	/* do not cut a path in half */
			break;
		}
		o += (size_t)n;
	}
}

int pcidev_edit_device_nodes(struct dralet_edits *edits, const struct dralet_device *dev)
{
	for (size_t i = 0; i < dralet_device_n_nodes(dev); i++) {
		int r = dralet_edits_add_node(edits, dralet_device_node(dev, i), NULL);
		if (r < 0)
			return r;
	}
	return 0;
}

int pcidev_edit_vfio(struct dralet_backend_ctx *ctx, struct dralet_edits *edits,
		     const struct dralet_device *dev, const struct dralet_pci_func *func)
{
	char group_path[DRALET_DEVNODE_PATH_MAX], container_path[DRALET_DEVNODE_PATH_MAX];
	struct dralet_devnode group, container;
	char rel[32];
	int r;

	if (func->iommu_group < 0) {
		dralet_ctx_error(ctx, "%s is bound to vfio-pci but has no IOMMU group",
				 func->address);
		return -ENODEV;
	}
	unsigned major = func->vfio_group.major, minor = func->vfio_group.minor;
	char numbers[32];

	/* the group node may be younger than the scan (bound at prepare) */
	snprintf(rel, sizeof(rel), "class/vfio/%d/dev", func->iommu_group);
	if (dralet_read_file(ctx, DRALET_ROOT_SYS, rel, numbers, sizeof(numbers)) > 0)
		parse_devnum(numbers, &major, &minor);
	snprintf(rel, sizeof(rel), "vfio/%d", func->iommu_group);
	r = dralet_devnode(ctx, rel, major, minor, group_path, &group);
	if (r < 0 || !group.path) {
		dralet_ctx_error(ctx, "%s is bound to vfio-pci but /dev/vfio/%d does not exist",
				 func->address, func->iommu_group);
		return r < 0 ? r : -ENODEV;
	}
	/* the container node cannot have changed since the scan found it (a fixed
	 * path and misc minor); the group node above can (a rebind since) */
	if (func->vfio_container)
		container = *func->vfio_container;
	else
		r = pcidev_misc_node(ctx, "vfio", "vfio/vfio", VFIO_CONTAINER_MAJOR,
				     VFIO_CONTAINER_MINOR, container_path, &container);
	if (r >= 0 && !container.path) {
		dralet_ctx_error(ctx, "%s: the vfio container node /dev/vfio/vfio does not exist",
				 func->address);
		r = -ENODEV;
	}
	if (r >= 0)
		r = dralet_edits_add_node(edits, &group, NULL);
	if (r >= 0)
		r = dralet_edits_add_node(edits, &container, NULL);
	if (r >= 0)
		r = pcidev_env_int(edits, dev, "IOMMU_GROUP", func->iommu_group);
	if (r >= 0)
		r = pcidev_env(edits, dev, "VFIO_GROUP", group.path);
	return r < 0 ? r : 0;
}

int pcidev_env_name(const struct dralet_device *dev, const char *field, char *buf, size_t size)
{
	const char *name = dralet_device_name(dev);
	int n = snprintf(buf, size, "DRALET_");
	size_t o;

	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	o = (size_t)n;
	for (const char *p = name; *p; p++) {
		char c = *p;

		if (o + 1 >= size)
			return -ENAMETOOLONG;
		if (c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		else if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
			c = '_';
		buf[o++] = c;
	}
	n = snprintf(buf + o, size - o, "_%s", field);
	return n < 0 || (size_t)n >= size - o ? -ENAMETOOLONG : 0;
}

int pcidev_env(struct dralet_edits *edits, const struct dralet_device *dev, const char *field,
	       const char *value)
{
	char name[PCIDEV_ENV_NAME_MAX];
	int r;

	if (!value || !*value)
		return 0;
	r = pcidev_env_name(dev, field, name, sizeof(name));
	return r < 0 ? r : dralet_edits_add_env(edits, name, value);
}

int pcidev_env_int(struct dralet_edits *edits, const struct dralet_device *dev, const char *field,
		   long long value)
{
	char v[24];

	snprintf(v, sizeof(v), "%lld", value);
	return pcidev_env(edits, dev, field, v);
}

int pcidev_undo_record(struct dralet_undo *undo, const struct dralet_pci_func *func,
		       const char *driver)
{
	const struct dralet_undo_value values[] = {
		{ "pciAddress", func->address },
		{ "driver", driver && *driver ? driver : "none" },
	};

	return dralet_undo_set_all(undo, values, 2);
}

bool pcidev_is_bridge(struct dralet_backend_ctx *ctx, const char *address)
{
	char rel[320], buf[32];

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/class", address);
	if (dralet_read_file(ctx, DRALET_ROOT_SYS, rel, buf, sizeof(buf)) <= 0)
		return false;
	return (strtoul(buf, NULL, 16) >> 8) == 0x0604;
}
