/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node around the devices: NUMA nodes and CPUs in sysfs, and procfs
 * (devices, boot_id, routes, mountinfo, version). Formats: fs/proc,
 * net/ipv4/fib_trie.c (route), net/ipv6/route.c (ipv6_route),
 * fs/proc_namespace.c (mountinfo).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boards/sim/board_write.h"

const char *bw_numa_cpus(const struct board *b, int node)
{
	if (node >= 0 && (size_t)node < b->n_numa)
		return b->numa[node].cpulist;
	return b->all_cpus;
}

char *bw_cpumask(const char *cpulist, unsigned nr_cpus)
{
	unsigned words = (nr_cpus + 31) / 32, first_bits = nr_cpus % 32 ? nr_cpus % 32 : 32;
	uint32_t *mask = calloc(words ? words : 1, sizeof(*mask));
	char *out = malloc((size_t)words * 9 + 2), *p = out;
	const char *s = cpulist;

	if (!mask || !out) {
		free(mask);
		free(out);
		return NULL;
	}
	while (*s) {
		char *end;
		unsigned long lo = strtoul(s, &end, 10), hi = lo;

		if (*end == '-')
			hi = strtoul(end + 1, &end, 10);
		for (unsigned long c = lo; c <= hi && c < nr_cpus; c++)
			mask[c / 32] |= 1u << (c % 32);
		s = *end == ',' ? end + 1 : end;
		if (end == s && *s)
			break;
	}
	/* most significant word first; the first one only as wide as needed */
	for (unsigned i = words; i-- > 0;) {
		if (i == words - 1)
			p += sprintf(p, "%0*x", (int)((first_bits + 3) / 4), mask[i]);
		else
			p += sprintf(p, ",%08x", mask[i]);
	}
	*p = '\0';
	free(mask);
	return out;
}

static void write_numa(struct bw *w)
{
	const struct board *b = w->b;
	struct bw_dir d;
	char rel[64];

	bw_printf(w, w->sys, "devices/system/node/online", "0-%zu\n", b->n_numa - 1);
	bw_printf(w, w->sys, "devices/system/node/possible", "0-%zu\n", b->n_numa - 1);
	bw_printf(w, w->sys, "devices/system/node/has_cpu", "0-%zu\n", b->n_numa - 1);
	bw_printf(w, w->sys, "devices/system/node/has_normal_memory", "0-%zu\n", b->n_numa - 1);
	for (size_t i = 0; i < b->n_numa; i++) {
		const struct board_numa *n = &b->numa[i];
		char *mask = bw_cpumask(n->cpulist, b->nr_cpus);
		char dist[1024];
		size_t len = 0;

		snprintf(rel, sizeof(rel), "devices/system/node/node%zu", i);
		bw_open(w, &d, w->sys, "", rel);
		bw_printf(w, d.fd, "cpulist", "%s\n", n->cpulist);
		bw_printf(w, d.fd, "cpumap", "%s\n", mask ? mask : "0");
		free(mask);
		for (size_t k = 0; k < b->n_numa && len < sizeof(dist) - 8; k++)
			len += (size_t)snprintf(dist + len, sizeof(dist) - len, "%s%d", k ? " " : "",
						n->n_dist ? n->distances[k] : k == i ? 10 : 21);
		bw_printf(w, d.fd, "distance", "%s\n", dist);
		bw_close(&d);
	}
	bw_printf(w, w->sys, "devices/system/cpu/online", "%s\n", bw_numa_cpus(b, -1));
	bw_printf(w, w->sys, "devices/system/cpu/possible", "%s\n", bw_numa_cpus(b, -1));
	bw_printf(w, w->sys, "devices/system/cpu/present", "%s\n", bw_numa_cpus(b, -1));
}

struct major_line {
	unsigned major;
	const char *name;
};

static int cmp_major(const void *x, const void *y)
{
	const struct major_line *a = x, *b = y;

	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	return strcmp(a->name, b->name);
}

static void write_proc_devices(struct bw *w)
{
	static const struct major_line base[] = {
		{ 1, "mem" }, { 4, "/dev/vc/0" }, { 4, "tty" }, { 4, "ttyS" },
		{ 5, "/dev/tty" }, { 5, "/dev/console" }, { 5, "/dev/ptmx" }, { 7, "vcs" },
		{ MAJOR_MISC, "misc" }, { 13, "input" }, { 29, "fb" }, { 89, "i2c" },
		{ 128, "ptm" }, { 136, "pts" }, { 180, "usb" }, { 189, "usb_device" },
		{ 202, "cpu/msr" }, { 203, "cpu/cpuid" }, { 254, "gpiochip" },
	};
	const struct board *b = w->b;
	struct major_line lines[128];
	size_t n = 0;
	char buf[8192];
	size_t len = 0;

	memcpy(lines, base, sizeof(base));
	n = sizeof(base) / sizeof(base[0]);
	for (size_t i = 0; i < b->n_funcs; i++)
		if (b->funcs[i]->drm.card >= 0 || b->funcs[i]->drm.render >= 0) {
			lines[n++] = (struct major_line){ MAJOR_DRM, "drm" };
			break;
		}
	if (b->any_ib) {
		int max_uverbs = -1;
		unsigned umads = 0;

		for (size_t i = 0; i < b->n_funcs; i++)
			for (size_t k = 0; k < b->funcs[i]->n_ib; k++) {
				const struct board_ibdev *ib = &b->funcs[i]->ib[k];

				if (ib->uverbs > max_uverbs)
					max_uverbs = ib->uverbs;
				umads += (unsigned)ib->n_ports;
			}
		for (size_t i = 0; i < b->n_rxe; i++) {
			if (b->rxe[i].ib.uverbs > max_uverbs)
				max_uverbs = b->rxe[i].ib.uverbs;
			umads += (unsigned)b->rxe[i].ib.n_ports;
		}
		lines[n++] = (struct major_line){ MAJOR_IB, "infiniband_mad" };
		lines[n++] = (struct major_line){ MAJOR_IB, "infiniband_verbs" };
		/* the dynamic regions beyond the fixed minors, when used */
		if (umads > UMAD_FIXED)
			lines[n++] = (struct major_line){ MAJOR_IB_MAD_DYN, "infiniband_mad" };
		if (max_uverbs >= UVERBS_FIXED)
			lines[n++] = (struct major_line){ MAJOR_IB_VERBS_DYN, "infiniband_verbs" };
	}
	if (b->n_gpus) {
		lines[n++] = (struct major_line){ MAJOR_NVIDIA, "nvidia-frontend" };
		lines[n++] = (struct major_line){ MAJOR_NVIDIA_UVM, "nvidia-uvm" };
		lines[n++] = (struct major_line){ MAJOR_NVIDIA_CAPS, "nvidia-caps" };
	}
	if (b->any_vfio)
		lines[n++] = (struct major_line){ MAJOR_VFIO, "vfio" };
	if (b->any_kfd)
		lines[n++] = (struct major_line){ MAJOR_KFD, "kfd" };
	if (b->any_nvme) {
		lines[n++] = (struct major_line){ MAJOR_NVME, "nvme" };
		lines[n++] = (struct major_line){ MAJOR_NVME_GENERIC, "nvme-generic" };
	}
	for (size_t i = 0; i < b->n_funcs; i++) {
		if (b->funcs[i]->dfl) {
			lines[n++] = (struct major_line){ MAJOR_DFL_FME, "dfl-fme" };
			lines[n++] = (struct major_line){ MAJOR_DFL_PORT, "dfl-port" };
			break;
		}
	}
	for (size_t i = 0; i < b->n_funcs; i++)
		for (size_t k = 0; k < b->funcs[i]->n_chardev && n < 120; k++) {
			const struct board_chardev *cd = &b->funcs[i]->chardev[k];
			bool seen = false;

			for (size_t j = 0; j < n && !seen; j++)
				seen = lines[j].major == (unsigned)cd->major;
			if (!seen)
				lines[n++] = (struct major_line){ (unsigned)cd->major, cd->class_name };
		}
	qsort(lines, n, sizeof(lines[0]), cmp_major);
	len += (size_t)snprintf(buf + len, sizeof(buf) - len, "Character devices:\n");
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%3u %s\n", lines[i].major,
					lines[i].name);
	len += (size_t)snprintf(buf + len, sizeof(buf) - len,
				"\nBlock devices:\n  7 loop\n  8 sd\n  9 md\n%s253 device-mapper\n"
				"254 mdp\n259 blkext\n", "");
	bw_write(w, w->proc, "devices", buf, len);
}

/* One /proc/net/route line, padded to 127 characters like the kernel. */
static size_t route_line(char *out, size_t size, const char *text)
{
	return (size_t)snprintf(out, size, "%-127s\n", text);
}

static uint32_t ipv4_of(const char *s, unsigned *ret_prefix)
{
	struct in_addr a = { 0 };
	char buf[64];
	char *slash;

	snprintf(buf, sizeof(buf), "%s", s);
	slash = strchr(buf, '/');
	if (slash) {
		*slash = '\0';
		if (ret_prefix)
			*ret_prefix = (unsigned)atoi(slash + 1);
	}
	inet_pton(AF_INET, buf, &a);
	return a.s_addr;	/* network order, printed as a host integer like the kernel */
}

static void write_routes(struct bw *w)
{
	const struct board *b = w->b;
	size_t cap = 256 + b->n_funcs * 4 * 130, len = 0;
	char *buf = malloc(cap), line[256];

	if (!buf) {
		bw_fail(w, ENOMEM, "out of memory", "");
		return;
	}
	len += route_line(buf + len, cap - len,
			  "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\t"
			  "Window\tIRTT");
	if (b->default_dev) {
		snprintf(line, sizeof(line), "%s\t%08X\t%08X\t%04X\t%d\t%u\t%d\t%08X\t%d\t%u\t%u",
			 b->default_dev, 0u, ipv4_of(b->default_via, NULL), 0x0003u, 0, 0u, 100, 0u,
			 0, 0u, 0u);
		len += route_line(buf + len, cap - len, line);
	}
	for (size_t i = 0; i < b->n_funcs; i++)
		for (size_t k = 0; k < b->tree[i]->n_net; k++) {
			const struct board_netdev *n = &b->tree[i]->net[k];
			unsigned prefix = 32;
			uint32_t addr, mask;

			if (!n->ipv4 || strcmp(n->operstate, "up"))
				continue;
			addr = ipv4_of(n->ipv4, &prefix);
			mask = prefix ? htonl(~0u << (32 - prefix)) : 0;
			snprintf(line, sizeof(line), "%s\t%08X\t%08X\t%04X\t%d\t%u\t%d\t%08X\t%d\t%u\t%u",
				 n->name, addr & mask, 0u, 0x0001u, 0, 0u, 100, mask, 0, 0u, 0u);
			len += route_line(buf + len, cap - len, line);
		}
	bw_write(w, w->proc, "net/route", buf, len);

	/* IPv6: the default route if any, link-local /64s, loopback */
	len = 0;
	if (b->default6_dev) {
		struct in6_addr a;
		char hex[33];

		memset(&a, 0, sizeof(a));
		inet_pton(AF_INET6, b->default6_via, &a);
		for (int i = 0; i < 16; i++)
			sprintf(hex + 2 * i, "%02x", a.s6_addr[i]);
		len += (size_t)snprintf(buf + len, cap - len,
					"%032x %02x %032x %02x %s %08x %08x %08x %08x %8s\n", 0u, 0u,
					0u, 0u, hex, 1024u, 1u, 0u, 0x00450003u, b->default6_dev);
	}
	for (size_t i = 0; i < b->n_funcs; i++)
		for (size_t k = 0; k < b->tree[i]->n_net; k++) {
			const struct board_netdev *n = &b->tree[i]->net[k];

			if (strcmp(n->operstate, "up") || len + 200 > cap)
				continue;
			len += (size_t)snprintf(buf + len, cap - len,
						"fe800000000000000000000000000000 40 %032x 00 %032x "
						"%08x %08x %08x %08x %8s\n", 0u, 0u, 256u, 1u, 0u,
						0x00000001u, n->name);
		}
	len += (size_t)snprintf(buf + len, cap - len,
				"00000000000000000000000000000001 80 %032x 00 %032x %08x %08x %08x "
				"%08x %8s\n", 0u, 0u, 0u, 2u, 0u, 0x80200001u, "lo");
	bw_write(w, w->proc, "net/ipv6_route", buf, len);
	free(buf);
}

static void write_mountinfo(struct bw *w)
{
	const struct board *b = w->b;
	char buf[16384], mounts[8192];
	size_t len = 0, mlen = 0;
	int id = 21, root_id = 1;
	static const struct {
		const char *target, *dev, *opts, *fstype, *source, *super;
	} virt[] = {
		{ "/sys", "0:21", "rw,nosuid,nodev,noexec,relatime", "sysfs", "sysfs", "rw" },
		{ "/proc", "0:22", "rw,nosuid,nodev,noexec,relatime", "proc", "proc", "rw" },
		{ "/dev", "0:5", "rw,nosuid,relatime", "devtmpfs", "udev", "rw,mode=755,inode64" },
		{ "/dev/pts", "0:23", "rw,nosuid,noexec,relatime", "devpts", "devpts",
		  "rw,gid=5,mode=620,ptmxmode=000" },
		{ "/run", "0:24", "rw,nosuid,nodev,noexec,relatime", "tmpfs", "tmpfs",
		  "rw,mode=755,inode64" },
		{ "/sys/fs/cgroup", "0:26", "rw,nosuid,nodev,noexec,relatime", "cgroup2", "cgroup2",
		  "rw,nsdelegate,memory_recursiveprot" },
	};

	/* the root filesystem first, then the kernel's, then the others */
	for (size_t i = 0; i < b->n_mounts; i++) {
		const struct board_mount *m = &b->mounts[i];

		if (strcmp(m->target, "/"))
			continue;
		root_id = id;
		len += (size_t)snprintf(buf + len, sizeof(buf) - len,
					"%d 1 %u:%u / / %s shared:1 - %s /dev/%s %s\n", id++,
					m->block->major, m->block->minor, m->options, m->fstype,
					m->source, "rw");
		mlen += (size_t)snprintf(mounts + mlen, sizeof(mounts) - mlen, "/dev/%s / %s %s 0 0\n",
					 m->source, m->fstype, m->options);
	}
	for (size_t i = 0; i < sizeof(virt) / sizeof(virt[0]) && len < sizeof(buf) - 256; i++) {
		len += (size_t)snprintf(buf + len, sizeof(buf) - len,
					"%d %d %s / %s %s shared:%zu - %s %s %s\n", id++, root_id,
					virt[i].dev, virt[i].target, virt[i].opts, i + 2, virt[i].fstype,
					virt[i].source, virt[i].super);
		mlen += (size_t)snprintf(mounts + mlen, sizeof(mounts) - mlen, "%s %s %s %s 0 0\n",
					 virt[i].source, virt[i].target, virt[i].fstype,
					 virt[i].opts);
	}
	for (size_t i = 0; i < b->n_mounts && len < sizeof(buf) - 512; i++) {
		const struct board_mount *m = &b->mounts[i];

		if (!strcmp(m->target, "/"))
			continue;
		len += (size_t)snprintf(buf + len, sizeof(buf) - len,
					"%d %d %u:%u / %s %s shared:%d - %s /dev/%s rw\n", id, root_id,
					m->block->major, m->block->minor, m->target, m->options, id,
					m->fstype, m->source);
		id++;
		if (mlen < sizeof(mounts) - 256)
			mlen += (size_t)snprintf(mounts + mlen, sizeof(mounts) - mlen,
						 "/dev/%s %s %s %s 0 0\n", m->source, m->target,
						 m->fstype, m->options);
	}
	bw_write(w, w->proc, "1/mountinfo", buf, len);
	bw_write(w, w->proc, "1/mounts", mounts, mlen);
	if (symlinkat("1", w->proc, "self") < 0)
		bw_fail(w, errno, "cannot create link", "proc/self");
	if (symlinkat("self/mounts", w->proc, "mounts") < 0)
		bw_fail(w, errno, "cannot create link", "proc/mounts");
}

void bw_system(struct bw *w)
{
	const struct board *b = w->b;

	write_numa(w);
	write_proc_devices(w);
	bw_printf(w, w->proc, "sys/kernel/random/boot_id", "%s\n", b->boot_id);
	bw_printf(w, w->proc, "sys/kernel/hostname", "%s\n", b->hostname);
	bw_printf(w, w->proc, "version", "Linux version %s (debian-kernel@lists.debian.org) "
		  "(gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) "
		  "#1 SMP PREEMPT_DYNAMIC Debian\n", b->kernel);
	write_routes(w);
	write_mountinfo(w);
}
