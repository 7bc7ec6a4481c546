/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kernel model's changes to a materialized tree (board_node.h): VFs
 * appearing and going, drivers binding and unbinding with the class devices
 * they bring. New things are written by the board simulator's writers; what
 * goes is removed with every link to it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boards/sim/board.h"
#include "boards/sim/board_node.h"
#include "boards/sim/board_write.h"
#include "hal/pci_binding.h"

static bool exists_at(int dirfd, const char *rel)
{
	struct stat st;

	return fstatat(dirfd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static void unlinkf(int dirfd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void unlinkf(int dirfd, const char *fmt, ...)
{
	char rel[PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	unlinkat(dirfd, rel, 0);
}

/* rm -rf of <sys>/@rel (never following links). */
static void remove_sys_dir(struct board_node *bn, const char *rel)
{
	char *path;

	if (asprintf(&path, "%s/%s", bn->sys, rel) < 0)
		return;
	board_remove_tree(path);
	free(path);
}

/* The lowest IOMMU group id not in use, as the kernel's IDA hands them out. */
static int free_group(int sys)
{
	char rel[64];

	for (int n = 0; n < 65536; n++) {
		snprintf(rel, sizeof(rel), "kernel/iommu_groups/%d", n);
		if (!exists_at(sys, rel))
			return n;
	}
	return -1;
}

static DIR *opendir_at(int dirfd, const char *rel)
{
	int fd = openat(dirfd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);

	if (fd >= 0 && !d)
		close(fd);
	return d;
}

/* The highest ifindex of any netdev below sys/class/net, plus one. */
static int next_ifindex(struct board_node *bn)
{
	char buf[32];
	struct dirent *de;
	DIR *d = opendir_at(bn->sysfd, "class/net");
	int next = 2;

	if (!d)
		return next;
	while ((de = readdir(d))) {
		char rel[NAME_MAX + 32];

		if (de->d_name[0] == '.')
			continue;
		snprintf(rel, sizeof(rel), "class/net/%s/ifindex", de->d_name);
		if (bn->real.read(bn->real.userdata, rel, buf, sizeof(buf)) > 0 &&
		    atoi(buf) >= next)
			next = atoi(buf) + 1;
	}
	closedir(d);
	return next;
}

/* A vfio device minor no group holds now. */
static unsigned free_vfio_minor(struct board_node *bn)
{
	char rel[64], target[PATH_MAX];

	for (unsigned minor = 0;; minor++) {
		snprintf(rel, sizeof(rel), "dev/char/%u:%u", MAJOR_VFIO, minor);
		if (bn->real.readlink(bn->real.userdata, rel, target, sizeof(target)) < 0)
			return minor;
	}
}

/* uevent with DRIVER=@driver first (none when NULL), the other lines kept. */
static void write_uevent(struct bw *w, const struct bw_dir *d, const char *driver)
{
	char old[4096], out[4200];
	size_t len = 0;
	int fd = openat(d->fd, "uevent", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? 0 : read(fd, old, sizeof(old) - 1);

	if (fd >= 0)
		close(fd);
	old[n > 0 ? n : 0] = '\0';
	if (driver)
		len = (size_t)snprintf(out, sizeof(out), "DRIVER=%s\n", driver);
	for (char *line = old, *next; *line; line = next) {
		size_t l = strcspn(line, "\n");

		next = line + l + (line[l] == '\n');
		if (!strncmp(line, "DRIVER=", 7) || len + l + 2 > sizeof(out))
			continue;
		memcpy(out + len, line, l);
		len += l;
		out[len++] = '\n';
	}
	bw_write(w, d->fd, "uevent", out, len);
}

/* The MAC the PF set for VF @vf, when it set one. */
static bool admin_mac(const struct board_node *bn, const struct board_func *vf, char *buf,
		      size_t size)
{
	static const uint8_t zero[6];

	for (size_t i = 0; i < bn->n_pfs; i++) {
		const struct bn_pf *p = &bn->pfs[i];
		const struct dralet_vf_settings *s;

		if (p->pf != vf->physfn)
			continue;
		s = &p->settings[vf->vf_index];
		if (!s->has_mac || !memcmp(s->mac, zero, 6))
			return false;
		snprintf(buf, size, "%02x:%02x:%02x:%02x:%02x:%02x", s->mac[0], s->mac[1], s->mac[2],
			 s->mac[3], s->mac[4], s->mac[5]);
		return true;
	}
	return false;
}

/* A VF's `vf_net` netdev, made when it first binds to its driver. */
static void vf_netdev(struct board_node *bn, struct board_func *vf)
{
	struct board_func *pf = vf->physfn;
	struct arena *a = bn->b.arena;
	char mac[32];

	if (!vf->net && pf->vf_net && pf->n_net && !pf->vf_settings[vf->vf_index].no_net) {
		struct board_netdev *n = board_vf_netdev(a, vf);

		if (n && n->name[0] && strlen(n->name) <= 15 && !strchr(n->name, '/')) {
			n->ifindex = next_ifindex(bn);
			n->mac = board_auto_mac(a, bn->b.name, n->name, n->type);
			vf->net = n->mac ? n : NULL;
		}
	}
	if (!vf->net)
		return;
	if (admin_mac(bn, vf, mac, sizeof(mac))) {
		char *copy = arena_strdup(a, mac);

		if (copy)
			vf->net[0].mac = copy;
	}
	vf->n_net = 1;
}

/* The group's vfio device, when the first of its functions binds to vfio-pci. */
static void vfio_group_up(struct board_node *bn, struct bw *w, int group)
{
	char rel[64];

	if (group < 0 || !bn->b.iommu)
		return;
	if (!exists_at(w->sys, "devices/virtual/misc/vfio"))
		bw_vfio_container(w);
	snprintf(rel, sizeof(rel), "devices/virtual/vfio/%d", group);
	if (!exists_at(w->sys, rel))
		bw_vfio_group(w, group, free_vfio_minor(bn));
}

/* ... and its removal when the last one leaves vfio-pci. */
static void vfio_group_down(struct board_node *bn, const struct board_func *leaving, int group)
{
	char rel[96], buf[64];
	struct dirent *de;
	DIR *d;

	if (group < 0)
		return;
	snprintf(rel, sizeof(rel), "kernel/iommu_groups/%d/devices", group);
	if ((d = opendir_at(bn->sysfd, rel))) {
		while ((de = readdir(d))) {
			char drv[64];

			if (de->d_name[0] == '.' || !strcmp(de->d_name, leaving->bdf))
				continue;
			if (hal_pci_driver(&bn->real, de->d_name, drv, sizeof(drv)) == 0 &&
			    !strcmp(drv, "vfio-pci")) {
				closedir(d);
				return;
			}
		}
		closedir(d);
	}
	snprintf(rel, sizeof(rel), "devices/virtual/vfio/%d/dev", group);
	if (bn->real.read(bn->real.userdata, rel, buf, sizeof(buf)) > 0)
		unlinkf(bn->sysfd, "dev/char/%s", buf);
	unlinkf(bn->sysfd, "class/vfio/%d", group);
	snprintf(rel, sizeof(rel), "devices/virtual/vfio/%d", group);
	remove_sys_dir(bn, rel);
	unlinkf(bn->devfd, "vfio/%d", group);
	unlinkf(bn->devfd, ".node/vfio_%d", group);
}

/* Does directory @fd hold a class device (a `subsystem` link into class/)
 * within @depth levels? Devnames of those found are removed from dev/. */
static bool drop_class_devices(struct board_node *bn, int fd, int depth)
{
	char target[PATH_MAX], buf[1024];
	bool found = false;
	struct dirent *de;
	ssize_t n = readlinkat(fd, "subsystem", target, sizeof(target) - 1);
	DIR *d;

	if (n > 0) {
		target[n] = '\0';
		found = strstr(target, "class/") != NULL;
	}
	if (found) {
		int u = openat(fd, "uevent", O_RDONLY | O_CLOEXEC);
		ssize_t len = u < 0 ? 0 : read(u, buf, sizeof(buf) - 1);
		char *name;

		if (u >= 0)
			close(u);
		buf[len > 0 ? len : 0] = '\0';
		if ((name = strstr(buf, "DEVNAME="))) {
			name += 8;
			name[strcspn(name, "\n")] = '\0';
			unlinkat(bn->devfd, name, 0);
			for (char *p = name; *p; p++)
				*p = *p == '/' ? '_' : *p;
			unlinkf(bn->devfd, ".node/%s", name);
		}
	}
	if (depth <= 0 || !(d = fdopendir(dup(fd))))
		return found;
	while ((de = readdir(d))) {
		int sub;

		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		sub = openat(fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		found |= drop_class_devices(bn, sub, depth - 1);
		close(sub);
	}
	closedir(d);
	return found;
}

/* Removes links below sys/@rel (a directory of links) whose target is gone. */
static void drop_dangling(struct board_node *bn, const char *rel, int depth)
{
	struct dirent *de;
	DIR *d = opendir_at(bn->sysfd, rel);

	if (!d)
		return;
	while ((de = readdir(d))) {
		struct stat st;
		char sub[PATH_MAX];

		if (de->d_name[0] == '.')
			continue;
		if (de->d_type == DT_LNK && fstatat(dirfd(d), de->d_name, &st, 0) < 0)
			unlinkat(dirfd(d), de->d_name, 0);
		else if (de->d_type == DT_DIR && depth > 0) {
			snprintf(sub, sizeof(sub), "%s/%s", rel, de->d_name);
			drop_dangling(bn, sub, depth - 1);
		}
	}
	closedir(d);
}

/* A driver going takes the class devices it made: every directory below
 * the function holding one (not the function's child functions or buses). */
static void remove_class_devices(struct board_node *bn, const struct board_func *f)
{
	struct dirent *de;
	DIR *d = opendir_at(bn->sysfd, f->sysfs_path);

	if (!d)
		return;
	while ((de = readdir(d))) {
		unsigned x;
		int sub;

		if (de->d_name[0] == '.' || de->d_type != DT_DIR || !strcmp(de->d_name, "pci_bus") ||
		    sscanf(de->d_name, "%x:%x:", &x, &x) == 2)
			continue;
		sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		if (drop_class_devices(bn, sub, 4)) {
			char *rel;

			if (asprintf(&rel, "%s/%s", f->sysfs_path, de->d_name) >= 0) {
				remove_sys_dir(bn, rel);
				free(rel);
			}
		}
		close(sub);
	}
	closedir(d);
	drop_dangling(bn, "class", 1);
	drop_dangling(bn, "dev", 1);
	drop_dangling(bn, "bus/platform", 2);
}

int bn_bind(struct board_node *bn, struct board_func *f, const char *driver)
{
	char rel[PATH_MAX], err[256] = "";
	struct bw w;
	struct bw_dir d;
	int r = bw_begin(&w, &bn->b, bn->dir, err, sizeof(err));

	if (r < 0)
		return bw_end(&w, NULL, 0);
	snprintf(rel, sizeof(rel), "bus/pci/drivers/%s", driver);
	if (!exists_at(w.sys, rel))
		bw_driver(&w, driver);
	bw_open(&w, &d, w.sys, "", f->sysfs_path);
	bw_link(&w, &d, "driver", rel);
	snprintf(rel, sizeof(rel), "bus/pci/drivers/%s/%s", driver, f->bdf);
	bw_link_at(&w, rel, f->sysfs_path);
	write_uevent(&w, &d, driver);
	bw_text(&w, d.fd, "enable", "1\n");
	if (f->physfn)
		f->driver = arena_strdup(bn->b.arena, driver);
	if (!strcmp(driver, "vfio-pci")) {
		vfio_group_up(bn, &w, f->iommu_group);
	} else if (board_driver_makes_class_devices(driver) && bn_own_driver(f) &&
		   !strcmp(driver, bn_own_driver(f))) {
		if (f->physfn)
			vf_netdev(bn, f);
		bw_function_classes(&w, f, &d);
	}
	bw_close(&d);
	return bw_end(&w, NULL, 0);
}

int bn_unbind(struct board_node *bn, struct board_func *f)
{
	char driver[64], err[256] = "";
	struct bw w;
	struct bw_dir d;
	int r = hal_pci_driver(&bn->real, f->bdf, driver, sizeof(driver));

	if (r < 0 || !driver[0])
		return r;
	if (!strcmp(driver, "vfio-pci"))
		vfio_group_down(bn, f, f->iommu_group);
	else
		remove_class_devices(bn, f);
	if (f->physfn) {
		f->driver = NULL;
		f->n_net = 0;
	}
	unlinkf(bn->sysfd, "%s/driver", f->sysfs_path);
	unlinkf(bn->sysfd, "bus/pci/drivers/%s/%s", driver, f->bdf);
	if ((r = bw_begin(&w, &bn->b, bn->dir, err, sizeof(err))) == 0) {
		bw_open(&w, &d, w.sys, "", f->sysfs_path);
		write_uevent(&w, &d, NULL);
		bw_text(&w, d.fd, "enable", "0\n");
		bw_close(&d);
	}
	return bw_end(&w, NULL, 0);
}

/* VF @n of @p, laid out as the board simulator does (board_layout.c). */
static struct board_func *make_vf(struct board_node *bn, struct bn_pf *p, unsigned n,
				  const char *driver)
{
	struct board_func *pf = p->pf, *vf = board_vf_new(bn->b.arena, pf, n);
	const char *up = pf->parent ? pf->parent->sysfs_path : NULL;

	if (!vf)
		return NULL;
	vf->sysfs_path = up ? arena_printf(bn->b.arena, "%s/%s", up, vf->bdf)
			    : arena_printf(bn->b.arena, "devices/%s/%s", pf->root->name, vf->bdf);
	if (!vf->sysfs_path)
		return NULL;
	for (int s = 0; s < 6; s++)
		if (vf->bars[s].size)
			vf->bars[s].start = pf->vf_res[s].start + (uint64_t)n * vf->bars[s].size;
	vf->driver = driver;
	return vf;
}

int bn_add_vfs(struct board_node *bn, struct bn_pf *p, unsigned n, bool autoprobe)
{
	const char *vf_driver = p->pf->vf_driver, *driver = NULL;
	char err[256] = "", rel[96];
	struct bw w;
	struct bw_dir d;
	int r;

	/* autoprobe: each VF binds to its driver as it appears */
	for (size_t i = 0; autoprobe && vf_driver && i < bn->n_modules; i++)
		if (bn->loaded[i] && !strcmp(bn->modules[i], vf_driver))
			driver = vf_driver;
	if ((r = bw_begin(&w, &bn->b, bn->dir, err, sizeof(err))) < 0)
		return bw_end(&w, NULL, 0);
	snprintf(rel, sizeof(rel), "bus/pci/drivers/%s", driver ? driver : "");
	if (driver && !exists_at(w.sys, rel))
		bw_driver(&w, driver);
	for (unsigned i = 0; i < n && !bw_failed(&w); i++) {
		struct board_func *vf = make_vf(bn, p, i, driver);

		if (!vf) {
			bw_fail(&w, ENOMEM, "out of memory", "");
			break;
		}
		p->vfs[i] = vf;
		if (vf->iommu_group == -1 && bn->b.iommu)
			vf->iommu_group = free_group(w.sys);
		if (vf->iommu_group >= 0) {
			snprintf(rel, sizeof(rel), "kernel/iommu_groups/%d/type", vf->iommu_group);
			if (!exists_at(w.sys, rel))
				bw_text(&w, w.sys, rel, "DMA-FQ\n");
		}
		if (board_driver_makes_class_devices(driver))
			vf_netdev(bn, vf);
		bw_function(&w, vf);
		if (driver && !strcmp(driver, "vfio-pci"))
			vfio_group_up(bn, &w, vf->iommu_group);
		p->num = i + 1;
	}
	bw_open(&w, &d, w.sys, "", p->pf->sysfs_path);
	for (unsigned i = 0; i < p->num; i++) {
		char name[24];

		snprintf(name, sizeof(name), "virtfn%u", i);
		bw_link(&w, &d, name, p->vfs[i]->sysfs_path);
	}
	bw_printf(&w, d.fd, "sriov_numvfs", "%u\n", p->num);
	bw_close(&d);
	return bw_end(&w, NULL, 0);
}

int bn_remove_vfs(struct board_node *bn, struct bn_pf *p)
{
	char rel[96], num[] = "0\n";
	int r;

	for (unsigned i = 0; i < p->num; i++) {
		struct board_func *vf = p->vfs[i];

		if ((r = bn_unbind(bn, vf)) < 0)
			return r;
		if (vf->iommu_group >= 0) {
			unlinkf(bn->sysfd, "kernel/iommu_groups/%d/devices/%s", vf->iommu_group,
				vf->bdf);
			snprintf(rel, sizeof(rel), "kernel/iommu_groups/%d/devices", vf->iommu_group);
			if (unlinkat(bn->sysfd, rel, AT_REMOVEDIR) == 0) {	/* its last device */
				unlinkf(bn->sysfd, "kernel/iommu_groups/%d/type", vf->iommu_group);
				snprintf(rel, sizeof(rel), "kernel/iommu_groups/%d", vf->iommu_group);
				unlinkat(bn->sysfd, rel, AT_REMOVEDIR);
			}
		}
		unlinkf(bn->sysfd, "bus/pci/devices/%s", vf->bdf);
		remove_sys_dir(bn, vf->sysfs_path);
		unlinkf(bn->sysfd, "%s/virtfn%u", p->pf->sysfs_path, i);
	}
	p->num = 0;
	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/sriov_numvfs", p->pf->bdf);
	return bn->real.write(bn->real.userdata, rel, num);
}
