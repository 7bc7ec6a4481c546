/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Functions the node cannot lose: the NIC carrying a default route and any
 * controller holding a mounted filesystem (through partitions, device-mapper
 * or md stacks). Allocating them to a container would cut the node off or
 * pull its storage away, so they get an unsafe_reason. So does every
 * network function when the agent is not in the host's namespaces
 * (host_ns.c): the route check cannot work there.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hal/scan_internal.h"

#define MAX_STACK_DEPTH 8

static void mark(struct hal_scan_private *s, struct dralet_pci_func *f, const char *reason)
{
	if (!f->unsafe_reason)
		f->unsafe_reason = arena_strdup(s->arena, reason);
}

static void mark_netdev(struct hal_scan_private *s, const char *ifname, const char *family)
{
	char reason[160];

	for (size_t i = 0; i < s->n_funcs; i++)
		for (size_t j = 0; j < s->funcs[i].n_net; j++) {
			struct dralet_netdev *n = (struct dralet_netdev *)&s->funcs[i].net[j];
			if (strcmp(n->ifname, ifname))
				continue;
			n->default_route = true;
			snprintf(reason, sizeof(reason), "carries the node's %s default route (%s)",
				 family, ifname);
			mark(s, &s->funcs[i], reason);
		}
}

/* /proc/net/route: "Iface Destination Gateway ..." with hex destinations;
 * /proc/net/ipv6_route: "dest destlen src srclen next metric ref use flags iface". */
static void mark_default_routes(struct hal_scan_private *s)
{
	char line[512], iface[64], dest[64];
	unsigned plen;
	FILE *f;
	int fd;

	if ((fd = openat(s->proc_fd, "net/route", O_RDONLY | O_CLOEXEC)) >= 0 &&
	    (f = fdopen(fd, "r"))) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "%63s %63s", iface, dest) == 2 && !strcmp(dest, "00000000"))
				mark_netdev(s, iface, "IPv4");
		fclose(f);
	} else if (fd >= 0) {
		close(fd);
	}
	if ((fd = openat(s->proc_fd, "net/ipv6_route", O_RDONLY | O_CLOEXEC)) >= 0 &&
	    (f = fdopen(fd, "r"))) {
		while (fgets(line, sizeof(line), f)) {
			char *last = strrchr(line, ' ');
			if (sscanf(line, "%63s %x", dest, &plen) != 2 || plen != 0 || !last ||
			    strspn(dest, "0") != 32)
				continue;
			if (sscanf(last + 1, "%63s", iface) == 1 && strcmp(iface, "lo"))
				mark_netdev(s, iface, "IPv6");
		}
		fclose(f);
	} else if (fd >= 0) {
		close(fd);
	}
}

/* Marks the function under block device @path (below the sysfs root); for
 * virtual stacks (dm, md) follows slaves/ down to the real disks. */
static void mark_block(struct hal_scan_private *s, const char *path, const char *mountpoint,
		       unsigned depth)
{
	struct dralet_pci_func *f = scan_owner_of_path(s, path);
	char reason[512], sub[4200];
	struct dirent *de;
	DIR *dir;

	if (f) {
		snprintf(reason, sizeof(reason), "holds the filesystem mounted on %s", mountpoint);
		mark(s, f, reason);
		return;
	}
	if (depth >= MAX_STACK_DEPTH)
		return;
	snprintf(sub, sizeof(sub), "%s/slaves", path);
	int dfd = openat(s->sys_fd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || !(dir = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	while ((de = readdir(dir))) {
		char link[320], target[4096], resolved[4096];
		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "class/block/%s", de->d_name);
		if (sysfs_readlink(s->sys_fd, link, target, sizeof(target)) > 0 &&
		    sysfs_resolve_link("class/block", target, resolved, sizeof(resolved)) == 0)
			mark_block(s, resolved, mountpoint, depth + 1);
	}
	closedir(dir);
}

/* mountinfo: "id parent major:minor root mountpoint options ..." */
static void mark_mounted_storage(struct hal_scan_private *s)
{
	char line[4096], devnum[32], mountpoint[1024];
	unsigned major, minor;
	FILE *f = NULL;
	int fd;

	/* the host's mounts when /proc is the host's (hostPID), ours otherwise */
	fd = openat(s->proc_fd, "1/mountinfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fd = openat(s->proc_fd, "self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !(f = fdopen(fd, "r"))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char link[64], target[4096], resolved[4096];
		if (sscanf(line, "%*u %*u %31s %*s %1023s", devnum, mountpoint) != 2 ||
		    sscanf(devnum, "%u:%u", &major, &minor) != 2 || major == 0)
			continue;
		snprintf(link, sizeof(link), "dev/block/%u:%u", major, minor);
		if (sysfs_readlink(s->sys_fd, link, target, sizeof(target)) > 0 &&
		    sysfs_resolve_link("dev/block", target, resolved, sizeof(resolved)) == 0)
			mark_block(s, resolved, mountpoint, 0);
	}
	fclose(f);
}

/* PCI class 02: network controllers (Ethernet, InfiniBand, ...) and their VFs. */
static void mark_network_functions(struct hal_scan_private *s, const char *why)
{
	char reason[640];

	snprintf(reason, sizeof(reason), "is a network device and %s", why);
	for (size_t i = 0; i < s->n_funcs; i++)
		if ((s->funcs[i].class_code >> 16) == 0x02)
			mark(s, &s->funcs[i], reason);
}

void safety_mark(struct hal_scan_private *s)
{
	if (s->proc_fd < 0)
		return;
	/* first: in another namespace the route check below reads the wrong routes */
	s->host_net_problem = host_ns_problem(s);
	if (s->host_net_problem)
		mark_network_functions(s, s->host_net_problem);
	mark_default_routes(s);
	mark_mounted_storage(s);
}
