/* SPDX-License-Identifier: Apache-2.0 */
#include "vfio_group.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <dralet/pci_ctl.h>

#include "pcidev.h"

#define VFIO_PCI "vfio-pci"

static int add_member(struct dralet_backend_ctx *ctx, struct vfio_group *g, const char *address)
{
	struct vfio_group_member *m;
	int r;

	if (g->n == VFIO_GROUP_MEMBERS_MAX) {
		dralet_ctx_error(ctx, "IOMMU group %d has more than %d functions", g->group,
				 VFIO_GROUP_MEMBERS_MAX);
		return -E2BIG;
	}
	m = &g->m[g->n];
	snprintf(m->address, sizeof(m->address), "%s", address);
	r = dralet_pci_binding(ctx, address, m->driver, sizeof(m->driver), m->override,
			       sizeof(m->override));
	if (r == -ENODEV)
		return 0;	/* left since the listing */
	if (r < 0) {
		dralet_ctx_error(ctx, "%s: cannot read its driver: %s", address, strerror(-r));
		return r;
	}
	g->n++;
	return 0;
}

int vfio_group_read(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		    struct vfio_group *ret)
{
	char rel[64], path[4096];
	struct dirent *de;
	DIR *dir;
	int r;

	memset(ret, 0, sizeof(*ret));
	ret->group = func->iommu_group;
	if (func->iommu_group < 0) {
		dralet_ctx_error(ctx, "%s has no IOMMU group, so vfio cannot hand it over; turn "
				 "the IOMMU on (intel_iommu=on or amd_iommu=on)", func->address);
		return -EPERM;
	}
	if ((r = add_member(ctx, ret, func->address)) < 0)
		return r;
	if (!ret->n) {
		dralet_ctx_error(ctx, "%s is gone", func->address);
		return -ENODEV;
	}
	snprintf(rel, sizeof(rel), "kernel/iommu_groups/%d/devices", func->iommu_group);
	if (dralet_root_path(ctx, DRALET_ROOT_SYS, rel, path, sizeof(path)) < 0 ||
	    !(dir = opendir(path))) {
		dralet_ctx_error(ctx, "%s: cannot list IOMMU group %d: %s", func->address,
				 func->iommu_group, strerror(errno));
		return -EPERM;
	}
	r = 0;
	while (r >= 0 && (de = readdir(dir)))
		if (de->d_name[0] != '.' && strcmp(de->d_name, func->address) &&
		    !pcidev_is_bridge(ctx, de->d_name))
			r = add_member(ctx, ret, de->d_name);
	closedir(dir);
	return r < 0 ? r : 0;
}

/* ---- refusals ---- */

static int check_vfs(struct dralet_backend_ctx *ctx, const struct vfio_group_member *m)
{
	char rel[160], buf[32];

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/sriov_numvfs", m->address);
	if (dralet_read_file(ctx, DRALET_ROOT_SYS, rel, buf, sizeof(buf)) <= 0 ||
	    strtoul(buf, NULL, 10) == 0)
		return 0;
	dralet_ctx_error(ctx, "%s has %s SR-IOV VFs enabled; rebinding it to vfio would take "
			 "them from their users. Set sriov_numvfs to 0 first", m->address, buf);
	return -EBUSY;
}

static bool numeric(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

static bool holds(struct dralet_backend_ctx *ctx, const char *fd,
		  const struct dralet_devnode *nodes, size_t n)
{
	char target[4096], node[4096];
	struct stat st;
	ssize_t len;

	if (stat(fd, &st) < 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (S_ISCHR(st.st_mode) && major(st.st_rdev) == nodes[i].major &&
		    minor(st.st_rdev) == nodes[i].minor)
			return true;
	if (S_ISCHR(st.st_mode) || (len = readlink(fd, target, sizeof(target) - 1)) <= 0)
		return false;
	target[len] = '\0';
	/* a simulated tree's nodes are plain files: the link names the file */
	for (size_t i = 0; i < n; i++)
		if (!strncmp(nodes[i].path, "/dev/", 5) &&
		    dralet_root_path(ctx, DRALET_ROOT_DEV, nodes[i].path + 5, node, sizeof(node)) >= 0 &&
		    !strcmp(node, target))
			return true;
	return false;
}

/* 1 with @ret_pid when a process other than the agent holds one of @nodes. */
static int find_holder(struct dralet_backend_ctx *ctx, const struct dralet_devnode *nodes,
		       size_t n, long *ret_pid)
{
	char proc[4096], fds[4400], fd[4700];
	struct dirent *p, *f;
	DIR *pd, *fdd;
	long self = (long)getpid();
	int found = 0;

	if (dralet_root_path(ctx, DRALET_ROOT_PROC, "", proc, sizeof(proc)) < 0 ||
	    !(pd = opendir(proc)))
		return 0;	/* no procfs to ask: nothing known to hold it */
	while (!found && (p = readdir(pd))) {
		if (!numeric(p->d_name) || atol(p->d_name) == self)
			continue;
		snprintf(fds, sizeof(fds), "%s/%s/fd", proc, p->d_name);
		if (!(fdd = opendir(fds)))
			continue;	/* gone, or not ours to read */
		while (!found && (f = readdir(fdd))) {
			if (f->d_name[0] == '.')
				continue;
			snprintf(fd, sizeof(fd), "%s/%s", fds, f->d_name);
			if (holds(ctx, fd, nodes, n)) {
				*ret_pid = atol(p->d_name);
				found = 1;
			}
		}
		closedir(fdd);
	}
	closedir(pd);
	return found;
}

int vfio_group_check_free(struct dralet_backend_ctx *ctx, const struct vfio_group *g,
			  const struct dralet_devnode *nodes, size_t n)
{
	char rel[64], comm[64] = "?";
	long pid = 0;
	int r;

	for (size_t i = 0; i < g->n; i++)
		if ((r = check_vfs(ctx, &g->m[i])) < 0)
			return r;
	if (!n || !find_holder(ctx, nodes, n, &pid))
		return 0;
	snprintf(rel, sizeof(rel), "%ld/comm", pid);
	dralet_read_file(ctx, DRALET_ROOT_PROC, rel, comm, sizeof(comm));
	dralet_ctx_error(ctx, "%s is in use on the host: process %ld (%s) holds its device node; "
			 "it is handed to vfio only when no host process uses it", g->m[0].address,
			 pid, comm);
	return -EBUSY;
}

/* ---- undo text ---- */

int vfio_group_text(const struct vfio_group *g, char *buf, size_t size)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < g->n; i++) {
		const struct vfio_group_member *m = &g->m[i];
		int w = snprintf(buf + o, size - o, "%s%s=%s,%s", i ? " " : "", m->address,
				 m->driver[0] ? m->driver : "none",
				 m->override[0] ? m->override : "none");
		if (w < 0 || (size_t)w >= size - o)
			return -ENAMETOOLONG;
		o += (size_t)w;
	}
	return 0;
}

static int parse_field(const char *s, size_t len, char *out, size_t size)
{
	if (!len || len >= size)
		return -EINVAL;
	memcpy(out, s, len);
	out[len] = '\0';
	if (!strcmp(out, "none"))
		out[0] = '\0';
	return 0;
}

int vfio_group_parse(const char *text, struct vfio_group *ret)
{
	const char *s = text;

	memset(ret, 0, sizeof(*ret));
	ret->group = -1;
	while (s && *s) {
		struct vfio_group_member *m;
		const char *eq, *comma, *end;

		if (ret->n == VFIO_GROUP_MEMBERS_MAX)
			return -EINVAL;
		m = &ret->m[ret->n];
		end = strchr(s, ' ');
		end = end ? end : s + strlen(s);
		eq = memchr(s, '=', (size_t)(end - s));
		comma = eq ? memchr(eq, ',', (size_t)(end - eq)) : NULL;
		if (!comma || eq - s >= (long)sizeof(m->address) || eq == s)
			return -EINVAL;
		memcpy(m->address, s, (size_t)(eq - s));
		m->address[eq - s] = '\0';
		if (parse_field(eq + 1, (size_t)(comma - eq - 1), m->driver, sizeof(m->driver)) < 0 ||
		    parse_field(comma + 1, (size_t)(end - comma - 1), m->override,
				sizeof(m->override)) < 0)
			return -EINVAL;
		ret->n++;
		s = *end ? end + 1 : end;
	}
	return ret->n ? 0 : -EINVAL;
}

/* ---- binding ---- */

int vfio_group_bind(struct dralet_backend_ctx *ctx, const struct vfio_group *g,
		    const char *driver)
{
	int r;

	/* the companions first: vfio-pci opens the group only when all of it is
	 * on vfio drivers, and the requested function is what a user waits for */
	for (size_t i = g->n; i-- > 0;)
		if ((r = dralet_pci_bind(ctx, g->m[i].address, i ? VFIO_PCI : driver)) < 0)
			return r;
	return 0;
}

int vfio_group_restore(struct dralet_backend_ctx *ctx, const struct vfio_group *g)
{
	int first = 0, r;

	for (size_t i = g->n; i-- > 0;) {
		r = dralet_pci_restore(ctx, g->m[i].address, g->m[i].driver, g->m[i].override);
		if (r < 0 && r != -ENODEV && !first)
			first = r;
	}
	return first;
}
