/* SPDX-License-Identifier: Apache-2.0 */
/*
 * RDMA devices (class/infiniband) with their ports and the uverbs, umad and
 * issm character devices. A soft-RoCE (rxe) or siw device has no PCI device
 * link: it belongs to the function of the netdev named in its "parent" file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hal/class.h"

/* "4: ACTIVE" -> "ACTIVE" */
static const char *after_colon(struct hal_scan_private *s, const char *text)
{
	const char *colon = strchr(text, ':');
	if (colon) {
		text = colon + 1;
		while (*text == ' ')
			text++;
	}
	return arena_strdup(s->arena, text);
}

static struct dralet_pci_func *owner_of_netdev(struct hal_scan_private *s, const char *ifname)
{
	for (size_t i = 0; i < s->n_funcs; i++)
		for (size_t j = 0; j < s->funcs[i].n_net; j++)
			if (!strcmp(s->funcs[i].net[j].ifname, ifname))
				return &s->funcs[i];
	return NULL;
}

static int compare_ports(const void *a, const void *b)
{
	const struct dralet_ib_port *pa = a, *pb = b;
	return (pa->number > pb->number) - (pa->number < pb->number);
}

static void read_ports(struct hal_scan_private *s, struct dralet_ibdev *ib, int fd)
{
	struct dirent *de;
	DIR *dir;
	int pfd = openat(fd, "ports", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (pfd < 0 || !(dir = fdopendir(pfd))) {
		if (pfd >= 0)
			close(pfd);
		return;
	}
	while ((de = readdir(dir))) {
		char *end, buf[128];
		unsigned long num = strtoul(de->d_name, &end, 10);
		if (de->d_name[0] == '.' || *end || num == 0 || num > 255)
			continue;
		struct dralet_ib_port *p = scan_append(s, (const void **)&ib->ports, &ib->n_ports,
						    sizeof(*p));
		if (!p)
			break;
		int portfd = openat(dirfd(dir), de->d_name, O_PATH | O_DIRECTORY | O_CLOEXEC);
		p->number = (unsigned)num;
		if (portfd < 0)
			continue;
		if (sysfs_read(portfd, "state", buf, sizeof(buf)) > 0)
			p->state = after_colon(s, buf);
		if (sysfs_read(portfd, "phys_state", buf, sizeof(buf)) > 0)
			p->phys_state = after_colon(s, buf);
		if (sysfs_read(portfd, "link_layer", buf, sizeof(buf)) > 0)
			p->link_layer = arena_strdup(s->arena, buf);
		if (sysfs_read(portfd, "rate", buf, sizeof(buf)) > 0) {
			p->rate = arena_strdup(s->arena, buf);
			p->rate_gbps = (unsigned)strtoul(buf, NULL, 10);
		}
		/* RoCE: the netdev behind the port's first GID */
		if (!ib->netdev && sysfs_read(portfd, "gid_attrs/ndevs/0", buf, sizeof(buf)) > 0)
			ib->netdev = arena_strdup(s->arena, buf);
		close(portfd);
	}
	closedir(dir);
	if (ib->n_ports > 1)
		qsort((void *)ib->ports, ib->n_ports, sizeof(*ib->ports), compare_ports);
}

static void on_ibdev(struct hal_scan_private *s, const char *name, int fd, const char *path,
		     void *userdata)
{
	struct dralet_pci_func *f = scan_owner_of_path(s, path);
	struct dralet_ibdev *ib;
	char buf[256], parent[64] = "";

	(void)userdata;
	if (!f && sysfs_read(fd, "parent", parent, sizeof(parent)) > 0)
		f = owner_of_netdev(s, parent);
	if (!f)
		return;
	ib = scan_append(s, (const void **)&f->ib, &f->n_ib, sizeof(*ib));
	if (!ib)
		return;
	ib->name = arena_strdup(s->arena, name);
	if (parent[0]) {
		ib->software = true;
		ib->netdev = arena_strdup(s->arena, parent);
	}
	if (sysfs_read(fd, "node_guid", buf, sizeof(buf)) > 0)
		ib->node_guid = arena_strdup(s->arena, buf);
	if (sysfs_read(fd, "sys_image_guid", buf, sizeof(buf)) > 0)
		ib->sys_image_guid = arena_strdup(s->arena, buf);
	if (sysfs_read(fd, "fw_ver", buf, sizeof(buf)) > 0)
		ib->fw_ver = arena_strdup(s->arena, buf);
	if (sysfs_read(fd, "node_type", buf, sizeof(buf)) > 0)
		ib->node_type = after_colon(s, buf);
	if (sysfs_read(fd, "hca_type", buf, sizeof(buf)) > 0)
		ib->hca_type = arena_strdup(s->arena, buf);
	if (sysfs_read(fd, "board_id", buf, sizeof(buf)) > 0)
		ib->board_id = arena_strdup(s->arena, buf);
	read_ports(s, ib, fd);
}

static struct dralet_ibdev *find_ibdev(struct hal_scan_private *s, const char *name)
{
	for (size_t i = 0; i < s->n_funcs; i++)
		for (size_t j = 0; j < s->funcs[i].n_ib; j++)
			if (!strcmp(s->funcs[i].ib[j].name, name))
				return (struct dralet_ibdev *)&s->funcs[i].ib[j];
	return NULL;
}

static void on_uverbs(struct hal_scan_private *s, const char *name, int fd, const char *path,
		      void *userdata)
{
	char ibname[64], dev_path[96];
	struct dralet_ibdev *ib;

	(void)path;
	(void)userdata;
	if (strncmp(name, "uverbs", 6) || sysfs_read(fd, "ibdev", ibname, sizeof(ibname)) <= 0)
		return;
	ib = find_ibdev(s, ibname);
	if (!ib)
		return;
	snprintf(dev_path, sizeof(dev_path), "infiniband/%s", name);
	scan_devnode(s, fd, "dev", dev_path, &ib->uverbs);
}

static void on_mad(struct hal_scan_private *s, const char *name, int fd, const char *path,
		   void *userdata)
{
	char ibname[64], dev_path[96];
	struct dralet_ibdev *ib;
	uint64_t port;
	bool umad = !strncmp(name, "umad", 4);

	(void)path;
	(void)userdata;
	if ((!umad && strncmp(name, "issm", 4)) ||
	    sysfs_read(fd, "ibdev", ibname, sizeof(ibname)) <= 0 ||
	    sysfs_read_u64(fd, "port", 10, &port) < 0)
		return;
	ib = find_ibdev(s, ibname);
	if (!ib)
		return;
	for (size_t i = 0; i < ib->n_ports; i++) {
		struct dralet_ib_port *p = (struct dralet_ib_port *)&ib->ports[i];
		if (p->number != port)
			continue;
		snprintf(dev_path, sizeof(dev_path), "infiniband/%s", name);
		scan_devnode(s, fd, "dev", dev_path, umad ? &p->umad : &p->issm);
	}
}

void class_infiniband_scan(struct hal_scan_private *s)
{
	class_for_each(s, "class/infiniband", NULL, on_ibdev, NULL);
	class_for_each(s, "class/infiniband_verbs", NULL, on_uverbs, NULL);
	class_for_each(s, "class/infiniband_mad", NULL, on_mad, NULL);
}
