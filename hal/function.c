/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Per-function facts libpci does not give: bound driver, IOMMU group, local
 * CPUs, PCIe link, SR-IOV (PF counts and VF links), the vfio group node.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hal/scan_internal.h"

/* "32.0 GT/s PCIe", "8 GT/s", "2.5 GT/s" -> MT/s; 0 for "Unknown". */
static unsigned parse_link_speed(const char *s)
{
	unsigned whole = 0, tenths = 0;
	char dot;

	if (sscanf(s, "%u%c%u", &whole, &dot, &tenths) == 3 && dot == '.')
		return whole * 1000 + tenths * 100;
	if (sscanf(s, "%u", &whole) == 1 && strstr(s, "GT/s"))
		return whole * 1000;
	return 0;
}

static bool valid_cpulist(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || *s == ',' || *s == '-'))
			return false;
	return true;
}

static void read_link(struct hal_scan_private *s, struct dralet_pci_func *f, int fd)
{
	char buf[64];
	uint64_t v;

	if (sysfs_read(fd, "current_link_speed", buf, sizeof(buf)) > 0)
		f->link.current_mts = parse_link_speed(buf);
	if (sysfs_read(fd, "max_link_speed", buf, sizeof(buf)) > 0)
		f->link.max_mts = parse_link_speed(buf);
	if (sysfs_read_u64(fd, "current_link_width", 10, &v) == 0 && v <= 32)
		f->link.current_width = (unsigned)v;
	if (sysfs_read_u64(fd, "max_link_width", 10, &v) == 0 && v <= 32)
		f->link.max_width = (unsigned)v;
}

static void read_sriov(struct hal_scan_private *s, struct dralet_pci_func *f, int fd)
{
	struct dralet_pci_sriov *sr;
	uint64_t v;
	int r = sysfs_read_u64(fd, "sriov_totalvfs", 10, &v);

	if (r == -ENOENT)
		return;
	if (r < 0 || v > 0xffff) {
		scan_warn(s, "%s/%s/sriov_totalvfs: %s", s->roots.sys, f->sysfs_path,
			  r < 0 ? strerror(-r) : "out of range");
		return;
	}
	sr = arena_alloc(s->arena, sizeof(*sr));
	if (!sr)
		return;
	sr->total_vfs = (unsigned)v;
	sr->drivers_autoprobe = true;
	if (sysfs_read_u64(fd, "sriov_numvfs", 10, &v) == 0 && v <= sr->total_vfs)
		sr->num_vfs = (unsigned)v;
	if (sysfs_read_u64(fd, "sriov_offset", 10, &v) == 0)
		sr->offset = (unsigned)v;
	if (sysfs_read_u64(fd, "sriov_stride", 10, &v) == 0)
		sr->stride = (unsigned)v;
	/* "%x" without 0x today; a proposed kernel change prints "0x%04x" */
	if (sysfs_read_u64(fd, "sriov_vf_device", 16, &v) == 0 && v <= 0xffff)
		sr->vf_device_id = (uint16_t)v;
	if (sysfs_read_u64(fd, "sriov_drivers_autoprobe", 10, &v) == 0)
		sr->drivers_autoprobe = v != 0;

	if (sr->num_vfs) {
		const struct dralet_pci_func **vfs = arena_alloc(s->arena, sr->num_vfs * sizeof(*vfs));
		if (vfs) {
			for (unsigned n = 0; n < sr->num_vfs; n++) {
				char name[32], target[256];
				snprintf(name, sizeof(name), "virtfn%u", n);
				if (sysfs_readlink(fd, name, target, sizeof(target)) < 0)
					continue;
				struct dralet_pci_func *vf = scan_find(s, path_basename(target));
				if (!vf) {
					scan_warn(s, "%s/%s/%s: VF %s not found", s->roots.sys,
						  f->sysfs_path, name, path_basename(target));
					continue;
				}
				vfs[n] = vf;	/* vf->physfn and vf_index: link_vfs() */
			}
			sr->vfs = (const struct dralet_pci_func *const *)vfs;
			sr->n_vfs = sr->num_vfs;
		}
	}
	f->sriov = sr;
}

/* local_cpulist is the CPU mask of the function's bus (the kernel derives it
 * from the bus), so functions on one bus — adjacent in address order — share
 * the first one's answer instead of reading it again. */
struct bus_cpus {
	unsigned domain, bus;
	bool known;
	const char *cpulist;
};

/* /dev/vfio/vfio (misc 10:196 unless class/misc/vfio says otherwise): the
 * same node for every vfio-pci function, resolved once. */
static const struct dralet_devnode *vfio_container(struct hal_scan_private *s)
{
	if (!s->vfio_container_tried) {
		struct dralet_devnode *n = arena_alloc(s->arena, sizeof(*n));

		s->vfio_container_tried = true;
		if (n && faccessat(s->sys_fd, "class/misc/vfio/dev", F_OK, 0) == 0)
			scan_devnode(s, s->sys_fd, "class/misc/vfio/dev", "vfio/vfio", n);
		else if (n)
			scan_devnode_numbers(s, "vfio/vfio", 10, 196, n);
		if (n && n->path)
			s->vfio_container = n;
	}
	return s->vfio_container;
}

static void read_function(struct hal_scan_private *s, struct dralet_pci_func *f,
			  struct bus_cpus *cache)
{
	char buf[4096];
	int64_t group;
	int fd = openat(s->sys_fd, f->sysfs_path, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		scan_warn(s, "%s/%s: %s", s->roots.sys, f->sysfs_path, strerror(errno));
		return;
	}
	if (sysfs_readlink(fd, "driver", buf, sizeof(buf)) > 0)
		f->driver = arena_strdup(s->arena, path_basename(buf));
	if (sysfs_readlink(fd, "iommu_group", buf, sizeof(buf)) > 0) {
		char *end;
		group = strtoll(path_basename(buf), &end, 10);
		if (*end || group < 0 || end == path_basename(buf))
			scan_warn(s, "%s/%s/iommu_group: link to %s is not a group number",
				  s->roots.sys, f->sysfs_path, buf);
		else
			f->iommu_group = (int)group;
	}
	if (cache->known && cache->domain == f->domain && cache->bus == f->bus) {
		f->local_cpulist = cache->cpulist;
	} else if (sysfs_read(fd, "local_cpulist", buf, sizeof(buf)) > 0) {
		if (valid_cpulist(buf))
			f->local_cpulist = arena_strdup(s->arena, buf);
		else
			scan_warn(s, "%s/%s/local_cpulist: not a CPU list", s->roots.sys,
				  f->sysfs_path);
		*cache = (struct bus_cpus){ f->domain, f->bus, true, f->local_cpulist };
	}
	/* a VF has no link of its own (its link registers are reserved) and
	 * cannot be a PF; its physfn link says so */
	if (sysfs_readlink(fd, "physfn", buf, sizeof(buf)) > 0) {
		f->physfn = scan_find(s, path_basename(buf));
		if (!f->physfn)
			scan_warn(s, "%s/%s/physfn: PF %s not found", s->roots.sys, f->sysfs_path,
				  path_basename(buf));
	}
	if (!f->physfn) {
		/* nothing publishes a bridge, and nothing asks for its link */
		if ((f->class_code >> 16) != 0x06)
			read_link(s, f, fd);
		read_sriov(s, f, fd);
	}
	close(fd);

	if (f->iommu_group >= 0 && f->driver && !strcmp(f->driver, "vfio-pci")) {
		char dev_file[64], dev_path[32];
		snprintf(dev_file, sizeof(dev_file), "class/vfio/%d/dev", f->iommu_group);
		snprintf(dev_path, sizeof(dev_path), "vfio/%d", f->iommu_group);
		scan_devnode(s, s->sys_fd, dev_file, dev_path, &f->vfio_group);
	}
}

static int compare_groups(const void *a, const void *b)
{
	const struct dralet_pci_func *fa = *(struct dralet_pci_func *const *)a;
	const struct dralet_pci_func *fb = *(struct dralet_pci_func *const *)b;
	return (fa->iommu_group > fb->iommu_group) - (fa->iommu_group < fb->iommu_group);
}

/* Group sizes from the scan itself: every member of a group is a PCI
 * function we listed, so no directory needs reading. */
static void count_iommu_groups(struct hal_scan_private *s)
{
	struct dralet_pci_func **by_group = arena_alloc(s->arena, (s->n_funcs + 1) * sizeof(*by_group));
	size_t n = 0;

	if (!by_group)
		return;
	for (size_t i = 0; i < s->n_funcs; i++)
		if (s->funcs[i].iommu_group >= 0)
			by_group[n++] = &s->funcs[i];
	qsort(by_group, n, sizeof(*by_group), compare_groups);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i; j < n && by_group[j]->iommu_group == by_group[i]->iommu_group; j++)
			;
		for (size_t k = i; k < j; k++)
			by_group[k]->iommu_group_size = (unsigned)(j - i);
	}
}

/* One thread's share of the functions: each read touches only its own
 * function (a PF notes its VFs; link_vfs() points them back afterwards). */
static void read_share(struct hal_scan_private *s, size_t begin, size_t end, void *userdata)
{
	struct bus_cpus cache = { 0 };

	(void)userdata;
	for (size_t i = begin; i < end; i++)
		read_function(s, &s->funcs[i], &cache);
}

/* VFs learn their PF and index from the PF's virtfnN links, and every
 * vfio-pci function shares one /dev/vfio/vfio. */
static void link_vfs(struct hal_scan_private *s)
{
	for (size_t i = 0; i < s->n_funcs; i++) {
		struct dralet_pci_func *f = &s->funcs[i];

		for (size_t n = 0; f->sriov && n < f->sriov->n_vfs; n++) {
			struct dralet_pci_func *vf = (struct dralet_pci_func *)f->sriov->vfs[n];
			if (vf) {
				vf->physfn = f;
				vf->vf_index = (int)n;
			}
		}
		if (f->vfio_group.path)
			f->vfio_container = vfio_container(s);
	}
}

void pci_functions_read(struct hal_scan_private *s)
{
	scan_parallel(s, s->n_funcs, read_share, NULL);
	link_vfs(s);
	count_iommu_groups(s);
}
