/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A model of the kernel for SR-IOV tests, acting on a test tree: reads are
 * the real ones (the tree is the state), writes do what the kernel would
 * (linux-devices.md section 2): sriov_numvfs creates and removes VF
 * functions with their links, IOMMU groups and uevent files (0 first,
 * -ERANGE, -ENOENT without a PF driver, -ENOSPC above a limit), autoprobe
 * binds new VFs to their default driver, driver_override + unbind +
 * drivers_probe rebind (only to drivers that are "loaded"), vfio-pci brings
 * the group's class/vfio and /dev/vfio nodes, a NIC VF's kernel driver
 * brings its netdev. VF settings (rtnetlink) are kept per PF interface and
 * VF. Every write is logged. Header-only (static) so each test stays one
 * program.
 */
#ifndef DRALET_TEST_SRIOV_KERNEL_H
#define DRALET_TEST_SRIOV_KERNEL_H

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hal/node_ops.h"
#include "hal/pci_sriov.h"
#include "test_tree.h"

#define K_MAX_PFS 4
#define K_MAX_LOG 256
#define K_MAX_VFSET 64

struct k_pf {
	char address[24];
	char parent[256];	/* below sys/devices ("pci0000:16/0000:16:02.0") */
	unsigned vf_vendor, vf_device, vf_class;
	unsigned offset, stride;
	int group_base;		/* VF i: group_base + i; -1: the PF's group (shared) */
	int pf_group;
	char vf_driver[32];	/* the kernel's default driver of its VFs */
	bool vf_netdev;		/* VFs on vf_driver get a netdev <pf_ifname>v<i> */
	char pf_ifname[32];
	int pf_ifindex;
	unsigned enospc_above;	/* 0: no limit */
	int disable_error;	/* writing 0 answers this (-EBUSY: VFs assigned) */
	int enable_error;	/* writing N answers this (-EINVAL: the driver refuses) */
};

struct k_vfset {
	int ifindex;
	unsigned vf;
	struct dralet_vf_settings s;
};

struct kmodel {
	char dir[PATH_MAX];
	struct hal_roots roots;
	char sys[PATH_MAX], dev[PATH_MAX], proc[PATH_MAX];
	struct node_ops real;	/* the tree as it is */
	struct node_ops node;	/* the model: what the kernel does on writes */
	char loaded[8][32];
	size_t n_loaded;
	struct k_pf pfs[K_MAX_PFS];
	size_t n_pfs;
	struct k_vfset vfset[K_MAX_VFSET];
	size_t n_vfset;
	int vf_set_error;	/* vf_set answers this when non-zero */
	int vf_get_error;
	char log[K_MAX_LOG][192];
	size_t n_log;
};

static inline void k_log(struct kmodel *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void k_log(struct kmodel *k, const char *fmt, ...)
{
	va_list ap;

	if (k->n_log >= K_MAX_LOG)
		return;
	va_start(ap, fmt);
	vsnprintf(k->log[k->n_log++], sizeof(k->log[0]), fmt, ap);
	va_end(ap);
}

/* The index of the first log line containing @needle at or after @from, or -1. */
static inline int k_find_log(const struct kmodel *k, size_t from, const char *needle)
{
	for (size_t i = from; i < k->n_log; i++)
		if (strstr(k->log[i], needle))
			return (int)i;
	return -1;
}

static inline bool k_loaded(const struct kmodel *k, const char *driver)
{
	for (size_t i = 0; i < k->n_loaded; i++)
		if (!strcmp(k->loaded[i], driver))
			return true;
	return false;
}

static inline void k_load(struct kmodel *k, const char *driver)
{
	if (!k_loaded(k, driver) && k->n_loaded < 8)
		snprintf(k->loaded[k->n_loaded++], sizeof(k->loaded[0]), "%s", driver);
}

static inline int k_devdir(const struct kmodel *k, const char *address, char *buf)
{
	char link[PATH_MAX + 64];

	snprintf(link, sizeof(link), "%s/bus/pci/devices/%s", k->sys, address);
	return realpath(link, buf) ? 0 : -ENOENT;
}

static inline struct k_pf *k_pf_of(struct kmodel *k, const char *address)
{
	for (size_t i = 0; i < k->n_pfs; i++)
		if (!strcmp(k->pfs[i].address, address))
			return &k->pfs[i];
	return NULL;
}

/* The PF of VF @vf and its index, from the physfn link and virtfnN. */
static inline struct k_pf *k_pf_of_vf(struct kmodel *k, const char *vf, int *ret_index)
{
	char devdir[PATH_MAX], link[PATH_MAX + 16], target[PATH_MAX], rel[128], t2[PATH_MAX];
	struct k_pf *pf;
	ssize_t n;

	if (k_devdir(k, vf, devdir) < 0)
		return NULL;
	snprintf(link, sizeof(link), "%s/physfn", devdir);
	if ((n = readlink(link, target, sizeof(target) - 1)) < 0)
		return NULL;
	target[n] = '\0';
	pf = k_pf_of(k, strrchr(target, '/') ? strrchr(target, '/') + 1 : target);
	for (int i = 0; pf && i < 256; i++) {
		snprintf(rel, sizeof(rel), "bus/pci/devices/%s/virtfn%d", pf->address, i);
		if (k->real.readlink(k->real.userdata, rel, t2, sizeof(t2)) < 0)
			break;
		if (!strcmp(strrchr(t2, '/') + 1, vf)) {
			*ret_index = i;
			return pf;
		}
	}
	return NULL;
}

static inline struct dralet_vf_settings *k_vfset(struct kmodel *k, int ifindex, unsigned vf,
					      bool create)
{
	for (size_t i = 0; i < k->n_vfset; i++)
		if (k->vfset[i].ifindex == ifindex && k->vfset[i].vf == vf)
			return &k->vfset[i].s;
	if (!create || k->n_vfset >= K_MAX_VFSET)
		return NULL;
	k->vfset[k->n_vfset] = (struct k_vfset){ ifindex, vf, DRALET_VF_SETTINGS_INIT };
	/* what a NIC reports for a fresh VF */
	struct dralet_vf_settings *s = &k->vfset[k->n_vfset++].s;
	s->has_mac = s->has_vlan = s->has_rate = true;
	s->trust = 0;
	s->spoof_check = 1;
	s->link_state = DRALET_VF_LINK_AUTO;
	return s;
}

static inline int k_rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(path);
}

static inline void k_rmrf(const char *path)
{
	nftw(path, k_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static inline void k_file(const char *path, const char *content)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fprintf(f, "%s\n", content);
		fclose(f);
	}
}

static inline void k_uevent(const char *devdir, const char *address, const char *driver)
{
	char path[PATH_MAX + 16], content[256];

	snprintf(path, sizeof(path), "%s/uevent", devdir);
	if (driver && *driver)
		snprintf(content, sizeof(content), "DRIVER=%s\nPCI_SLOT_NAME=%s", driver, address);
	else
		snprintf(content, sizeof(content), "PCI_SLOT_NAME=%s", address);
	k_file(path, content);
}

static inline int k_group_of(const char *devdir)
{
	char link[PATH_MAX + 16], target[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "%s/iommu_group", devdir);
	if ((n = readlink(link, target, sizeof(target) - 1)) < 0)
		return -1;
	target[n] = '\0';
	return atoi(strrchr(target, '/') + 1);
}

static inline void k_bind(struct kmodel *k, const char *address, const char *driver)
{
	char devdir[PATH_MAX], path[PATH_MAX + 256], target[PATH_MAX + 64], rel[512], v[64];
	struct k_pf *pf;
	int index = -1;

	if (k_devdir(k, address, devdir) < 0)
		return;
	snprintf(target, sizeof(target), "%s/bus/pci/drivers/%s", k->sys, driver);
	snprintf(rel, sizeof(rel), "sys/bus/pci/drivers/%s", driver);
	tree_mkdir(k->dir, rel);
	snprintf(path, sizeof(path), "%s/driver", devdir);
	unlink(path);
	if (symlink(target, path) < 0)
		return;
	k_uevent(devdir, address, driver);
	if (!strcmp(driver, "vfio-pci")) {
		int g = k_group_of(devdir);
		/* the loaded vfio module's container node */
		t_misc(k->dir, "vfio", "10:196", "vfio/vfio");
		snprintf(rel, sizeof(rel), "sys/class/vfio/%d/dev", g);
		snprintf(v, sizeof(v), "511:%d", g);
		tree_write(k->dir, rel, v);
		snprintf(rel, sizeof(rel), "dev/vfio/%d", g);
		tree_write(k->dir, rel, "");
		return;
	}
	pf = k_pf_of_vf(k, address, &index);
	if (pf && pf->vf_netdev && !strcmp(driver, pf->vf_driver)) {
		struct dralet_vf_settings *s = k_vfset(k, pf->pf_ifindex, (unsigned)index, true);
		char ifname[64], mac[32];
		static const uint8_t zero[6];
		snprintf(ifname, sizeof(ifname), "%sv%d", pf->pf_ifname, index);
		if (s->has_mac && memcmp(s->mac, zero, 6))
			snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", s->mac[0],
				 s->mac[1], s->mac[2], s->mac[3], s->mac[4], s->mac[5]);
		else
			snprintf(mac, sizeof(mac), "06:00:00:00:%02x:%02x", pf->pf_ifindex, index);
		snprintf(path, sizeof(path), "%s/net/%s", devdir, ifname);
		snprintf(rel, sizeof(rel), "%s/net/%s/address", devdir + strlen(k->dir) + 1, ifname);
		tree_write(k->dir, rel, mac);
		snprintf(rel, sizeof(rel), "%s/net/%s/operstate", devdir + strlen(k->dir) + 1,
			 ifname);
		tree_write(k->dir, rel, "up");
		snprintf(rel, sizeof(rel), "sys/class/net/%s", ifname);
		tree_link(k->dir, rel, path);
	}
}

static inline void k_unbind(struct kmodel *k, const char *address)
{
	char devdir[PATH_MAX], path[PATH_MAX + 300];
	DIR *dir;
	struct dirent *de;

	if (k_devdir(k, address, devdir) < 0)
		return;
	snprintf(path, sizeof(path), "%s/driver", devdir);
	unlink(path);
	k_uevent(devdir, address, NULL);
	snprintf(path, sizeof(path), "%s/net", devdir);
	if ((dir = opendir(path))) {
		while ((de = readdir(dir))) {
			char link[PATH_MAX + 300];
			if (de->d_name[0] == '.')
				continue;
			snprintf(link, sizeof(link), "%s/class/net/%s", k->sys, de->d_name);
			unlink(link);
		}
		closedir(dir);
		k_rmrf(path);
	}
}

static inline int k_read_file(struct kmodel *k, const char *address, const char *file, char *buf,
			      size_t size)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/%s", address, file);
	return k->real.read(k->real.userdata, rel, buf, size);
}

static inline void k_write_file(struct kmodel *k, const char *address, const char *file,
				const char *value)
{
	char devdir[PATH_MAX], path[PATH_MAX + 64];

	if (k_devdir(k, address, devdir) < 0)
		return;
	snprintf(path, sizeof(path), "%s/%s", devdir, file);
	k_file(path, value);
}

static inline bool k_bound(struct kmodel *k, const char *address, char *driver, size_t size)
{
	return hal_pci_driver(&k->real, address, driver, size) == 0 && driver[0];
}

static inline void k_vf_address(const struct k_pf *pf, unsigned i, char *buf, size_t size)
{
	unsigned d, b, dv, f;
	unsigned rid, vrid;

	hal_parse_address(pf->address, &d, &b, &dv, &f);
	rid = b << 8 | dv << 3 | f;
	vrid = rid + pf->offset + i * pf->stride;
	snprintf(buf, size, "%04x:%02x:%02x.%x", d, vrid >> 8, (vrid >> 3) & 0x1f, vrid & 7);
}

static inline void k_remove_vfs(struct kmodel *k, struct k_pf *pf, unsigned n)
{
	char rel[512], vf[32], devdir[PATH_MAX], path[PATH_MAX + 64];

	for (unsigned i = 0; i < n; i++) {
		k_vf_address(pf, i, vf, sizeof(vf));
		if (k_devdir(k, vf, devdir) < 0)
			continue;
		k_unbind(k, vf);
		int g = k_group_of(devdir);
		snprintf(path, sizeof(path), "%s/kernel/iommu_groups/%d/devices/%s", k->sys, g, vf);
		unlink(path);
		k_rmrf(devdir);
		snprintf(path, sizeof(path), "%s/bus/pci/devices/%s", k->sys, vf);
		unlink(path);
		snprintf(rel, sizeof(rel), "%s/sys/devices/%s/%s/virtfn%u", k->dir, pf->parent,
			 pf->address, i);
		unlink(rel);
	}
}

static inline void k_create_vfs(struct kmodel *k, struct k_pf *pf, unsigned n, bool autoprobe)
{
	char vf[32];

	for (unsigned i = 0; i < n; i++) {
		char devdir[PATH_MAX];
		k_vf_address(pf, i, vf, sizeof(vf));
		tree_add_pci(k->dir, pf->parent, vf, pf->vf_vendor, pf->vf_device, pf->vf_class);
		t_vf(k->dir, pf->parent, pf->address, vf, (int)i);
		t_group(k->dir, pf->parent, vf, pf->group_base >= 0 ? pf->group_base + (int)i
								  : pf->pf_group);
		t_write(k->dir, pf->parent, vf, "driver_override", "(null)");
		if (k_devdir(k, vf, devdir) == 0)
			k_uevent(devdir, vf, NULL);
		if (autoprobe && k_loaded(k, pf->vf_driver))
			k_bind(k, vf, pf->vf_driver);
	}
}

static inline int k_numvfs(struct kmodel *k, const char *address, const char *value)
{
	struct k_pf *pf = k_pf_of(k, address);
	char buf[32], drv[64];
	unsigned total, cur, n = (unsigned)strtoul(value, NULL, 10);

	if (!pf || k_read_file(k, address, "sriov_totalvfs", buf, sizeof(buf)) < 0)
		return -EACCES;
	total = (unsigned)atoi(buf);
	cur = k_read_file(k, address, "sriov_numvfs", buf, sizeof(buf)) > 0 ? (unsigned)atoi(buf) : 0;
	if (!k_bound(k, address, drv, sizeof(drv)))
		return -ENOENT;
	if (n > total)
		return -ERANGE;
	if (n == cur)
		return 0;
	if (n && cur)
		return -EBUSY;
	if (pf->enospc_above && n > pf->enospc_above)
		return -ENOSPC;
	if (!n && pf->disable_error)
		return pf->disable_error;
	if (n && pf->enable_error)
		return pf->enable_error;
	if (!n)
		k_remove_vfs(k, pf, cur);
	else
		k_create_vfs(k, pf, n, k_read_file(k, address, "sriov_drivers_autoprobe", buf,
						    sizeof(buf)) <= 0 || atoi(buf) != 0);
	snprintf(buf, sizeof(buf), "%u", n);
	k_write_file(k, address, "sriov_numvfs", buf);
	return 0;
}

static inline int k_write(void *ud, const char *rel, const char *value)
{
	struct kmodel *k = ud;
	char address[64], file[64], drv[64], over[64];
	const char *v = strcmp(value, "\n") ? value : "";

	k_log(k, "%s=%s", strncmp(rel, "bus/pci/devices/", 16) ? rel : rel + 16, v);
	if (!strcmp(rel, "bus/pci/drivers_probe")) {
		if (k_bound(k, value, drv, sizeof(drv)))
			return 0;
		if (k_read_file(k, value, "driver_override", over, sizeof(over)) < 0)
			return -EINVAL;
		const char *want = strcmp(over, "(null)") ? over : NULL;
		int index;
		struct k_pf *pf = want ? NULL : k_pf_of_vf(k, value, &index);
		if (!want && pf)
			want = pf->vf_driver;
		if (want && k_loaded(k, want))
			k_bind(k, value, want);
		return 0;
	}
	if (sscanf(rel, "bus/pci/devices/%63[^/]/driver/%63s", address, file) == 2 &&
	    !strcmp(file, "unbind")) {
		if (strcmp(address, value) || !k_bound(k, address, drv, sizeof(drv)))
			return -ENODEV;
		k_unbind(k, address);
		return 0;
	}
	if (sscanf(rel, "bus/pci/devices/%63[^/]/%63s", address, file) != 2)
		return -EACCES;
	if (!strcmp(file, "driver_override")) {
		k_write_file(k, address, file, *v ? v : "(null)");
		return 0;
	}
	if (!strcmp(file, "sriov_drivers_autoprobe")) {
		k_write_file(k, address, file, v);
		return 0;
	}
	if (!strcmp(file, "sriov_numvfs"))
		return k_numvfs(k, address, v);
	return -EACCES;
}

static inline int k_read(void *ud, const char *rel, char *buf, size_t size)
{
	struct kmodel *k = ud;
	return k->real.read(k->real.userdata, rel, buf, size);
}

static inline int k_readlink(void *ud, const char *rel, char *buf, size_t size)
{
	struct kmodel *k = ud;
	return k->real.readlink(k->real.userdata, rel, buf, size);
}

static inline int k_vf_get(void *ud, const char *ifname, int ifindex, unsigned vf,
			   struct dralet_vf_settings *ret)
{
	struct kmodel *k = ud;

	if (!ifname || !*ifname)
		return -ENODEV;
	struct dralet_vf_settings *s;

	if (k->vf_get_error)
		return k->vf_get_error;
	s = k_vfset(k, ifindex, vf, true);
	if (!s)
		return -ENOMEM;
	*ret = *s;
	return 0;
}

static inline int k_vf_set(void *ud, const char *ifname, int ifindex, unsigned vf,
			   const struct dralet_vf_settings *n)
{
	struct kmodel *k = ud;

	if (!ifname || !*ifname)
		return -ENODEV;
	struct dralet_vf_settings *s;

	k_log(k, "vf_set if%d vf%u%s%s%s%s%s%s", ifindex, vf, n->has_mac ? " mac" : "",
	      n->has_vlan ? " vlan" : "", n->trust >= 0 ? " trust" : "",
	      n->spoof_check >= 0 ? " spoofchk" : "", n->link_state >= 0 ? " link" : "",
	      n->has_rate ? " rate" : "");
	if (k->vf_set_error)
		return k->vf_set_error;
	if (!(s = k_vfset(k, ifindex, vf, true)))
		return -ENOMEM;
	if (n->has_mac)
		memcpy(s->mac, n->mac, 6);
	if (n->has_vlan) {
		s->vlan = n->vlan;
		s->qos = n->qos;
	}
	if (n->trust >= 0)
		s->trust = n->trust;
	if (n->spoof_check >= 0)
		s->spoof_check = n->spoof_check;
	if (n->link_state >= 0)
		s->link_state = n->link_state;
	if (n->has_rate) {
		s->min_tx_mbps = n->min_tx_mbps;
		s->max_tx_mbps = n->max_tx_mbps;
	}
	return 0;
}

/* The node of the SR-IOV tests: an ice NIC (0000:17:00.0, ens1f0 with interface
 * index 7, group 20) and an NVMe (0000:18:00.0, group 30 with its root port),
 * SR-IOV PFs without VFs: the model makes them (k_pf). */
static const char K_BOARD[] =
	"board: sriov-kernel\n"
	"pci:\n"
	"  - root: \"0000:16\"\n"
	"    devices:\n"
	"      - bdf: 16:02.0\n"
	"        id: \"8086:347a\"\n"
	"        devices:\n"
	"          - bdf: 17:00.0\n"
	"            id: \"8086:1593\"\n"
	"            class: 0x020000\n"
	"            driver: ice\n"
	"            iommu_group: 20\n"
	"            net: {name: ens1f0, mac: \"b4:96:91:aa:00:00\", speed: 25000, ifindex: 7}\n"
	"            sriov: {total: 8, num: 0, vf_id: \"8086:1889\"}\n"
	"      - bdf: 16:03.0\n"
	"        id: \"8086:347b\"\n"
	"        iommu_group: 30          # a bridge in the NVMe's group\n"
	"        devices:\n"
	"          - bdf: 18:00.0\n"
	"            id: \"1b36:0010\"\n"
	"            class: 0x010802\n"
	"            driver: nvme\n"
	"            iommu_group: 30\n"
	"            sriov: {total: 4, num: 0, vf_id: \"1b36:0011\"}\n";

/* The model over the tree at @dir (a board snippet's: sys/, dev/, proc/). */
static inline void k_init(struct kmodel *k, const char *dir)
{
	memset(k, 0, sizeof(*k));
	snprintf(k->dir, sizeof(k->dir), "%s", dir);
	snprintf(k->sys, sizeof(k->sys), "%s/sys", dir);
	snprintf(k->dev, sizeof(k->dev), "%s/dev", dir);
	snprintf(k->proc, sizeof(k->proc), "%s/proc", dir);
	k->roots = (struct hal_roots){ k->sys, k->dev, k->proc };
	k->real = node_ops_real(&k->roots);
	k->node = (struct node_ops){
		.write = k_write,
		.read = k_read,
		.readlink = k_readlink,
		.vf_get = k_vf_get,
		.vf_set = k_vf_set,
		.userdata = k,
	};
	k_load(k, "vfio-pci");
}

/*
 * Tells the model about the SR-IOV PF at @parent/@address that the board
 * snippet built (with 0 VFs; its netdev, when @ifname is not NULL, has
 * interface index @ifindex, and it is in IOMMU group @pf_group). VFs get the
 * PF's vendor, device + 1 and class @cls. Returns the model's PF to adjust
 * (VF ids, groups, default VF driver ...) before VFs are made.
 */
static inline struct k_pf *k_pf(struct kmodel *k, const char *parent, const char *address,
				unsigned vendor, unsigned device, unsigned cls, const char *ifname,
				int ifindex, int pf_group)
{
	struct k_pf *pf = &k->pfs[k->n_pfs++];

	*pf = (struct k_pf){ .vf_vendor = vendor, .vf_device = device + 1, .vf_class = cls,
			     .offset = 1, .stride = 1, .group_base = -1, .pf_group = pf_group,
			     .pf_ifindex = ifindex };
	snprintf(pf->address, sizeof(pf->address), "%s", address);
	snprintf(pf->parent, sizeof(pf->parent), "%s", parent);
	if (ifname)
		snprintf(pf->pf_ifname, sizeof(pf->pf_ifname), "%s", ifname);
	return pf;
}

#endif
