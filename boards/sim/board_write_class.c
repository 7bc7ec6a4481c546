/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Class devices: net, infiniband (+ verbs and MAD nodes), drm, fpga_manager,
 * fpga_region, Intel DFL platform devices, NVMe controllers and their block
 * devices, generic char devices, and the virtual ones (lo, rxe, rdma_cm,
 * vfio, kfd). Formats: drivers/infiniband/core/sysfs.c, net/core/
 * net-sysfs.c, Documentation/ABI (see shared/reference/linux-devices.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fcntl.h>

#include "boards/sim/board_write.h"

static const char *const port_state_names[] = {
	"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER",
};
static const char *const phys_state_names[] = {
	"", "Sleep", "Polling", "Disabled", "PortConfigurationTraining", "LinkUp",
	"LinkErrorRecovery", "Phy Test",
};
static const char *const node_type_names[] = {
	"", "CA", "switch", "router", "RNIC", "usNIC", "usNIC UDP", "unspecified",
};

static const struct board_netdev *find_netdev(const struct board *b, const char *name)
{
	for (size_t i = 0; name && i < b->n_funcs; i++)
		for (size_t k = 0; k < b->tree[i]->n_net; k++)
			if (!strcmp(b->tree[i]->net[k].name, name))
				return &b->tree[i]->net[k];
	return NULL;
}

static void write_netdev(struct bw *w, const struct bw_dir *fn, const char *device_path,
			 const struct board_netdev *n)
{
	struct bw_dir d;
	char rel[64], uevent[64];
	bool up = !strcmp(n->operstate, "up");
	bool ib = n->type == 32;

	snprintf(rel, sizeof(rel), "net/%s", n->name);
	bw_open(w, &d, fn->fd, fn->path, rel);
	bw_printf(w, d.fd, "address", "%s\n", n->mac);
	bw_printf(w, d.fd, "addr_len", "%d\n", ib ? 20 : 6);
	bw_printf(w, d.fd, "broadcast", "%s\n",
		  ib ? "00:ff:ff:ff:ff:12:40:1b:ff:ff:00:00:00:00:00:00:ff:ff:ff:ff"
		     : "ff:ff:ff:ff:ff:ff");
	bw_printf(w, d.fd, "operstate", "%s\n", n->operstate);
	bw_printf(w, d.fd, "carrier", "%d\n", up ? 1 : 0);
	bw_printf(w, d.fd, "speed", "%ld\n", up ? n->speed : -1);
	bw_printf(w, d.fd, "duplex", "%s\n", up && n->speed > 0 ? "full" : "unknown");
	bw_printf(w, d.fd, "mtu", "%d\n", n->mtu);
	bw_printf(w, d.fd, "ifindex", "%d\n", n->ifindex);
	bw_printf(w, d.fd, "type", "%d\n", n->type);
	bw_printf(w, d.fd, "flags", "%s\n", up ? "0x1003" : "0x1002");
	/* iflink, dev_id, tx_queue_len ... left out for speed; dev_port
	 * only where it tells ports of one function apart */
	if (n->dev_port)
		bw_printf(w, d.fd, "dev_port", "%d\n", n->dev_port);
	if (n->phys_port_name)
		bw_printf(w, d.fd, "phys_port_name", "%s\n", n->phys_port_name);
	if (n->phys_switch_id)
		bw_printf(w, d.fd, "phys_switch_id", "%s\n", n->phys_switch_id);
	snprintf(uevent, sizeof(uevent), "INTERFACE=%s\nIFINDEX=%d\n", n->name, n->ifindex);
	bw_class_device(w, &d, "net", n->name, device_path, 0, 0, NULL, uevent);
	bw_close(&d);
}

/* GIDs in the %pI6 form: "fe80:0000:0000:0000:0202:c9ff:fe12:3456". */
static void gid_from_mac(char *out, size_t size, const char *mac)
{
	unsigned m[6] = { 0 };

	sscanf(mac, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]);
	snprintf(out, size, "fe80:0000:0000:0000:%02x%02x:%02xff:fe%02x:%02x%02x", m[0] ^ 2, m[1],
		 m[2], m[3], m[4], m[5]);
}

static void gid_from_ipv4(char *out, size_t size, const char *cidr)
{
	unsigned a = 0, b = 0, c = 0, d = 0;

	sscanf(cidr, "%u.%u.%u.%u", &a, &b, &c, &d);
	snprintf(out, size, "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", a, b, c, d);
}

static void write_ib_port(struct bw *w, const struct bw_dir *ibd, const struct board_ibdev *ib,
			  const struct board_ibport *p)
{
	const struct board_netdev *nd = find_netdev(w->b, p->netdev);
	bool roce = !strcmp(p->link_layer, "Ethernet");
	struct bw_dir d;
	char rel[32], gid[64];
	int n_gids = 0;

	snprintf(rel, sizeof(rel), "ports/%u", p->number);
	bw_open(w, &d, ibd->fd, ibd->path, rel);
	bw_printf(w, d.fd, "state", "%d: %s\n", p->state, port_state_names[p->state]);
	bw_printf(w, d.fd, "phys_state", "%d: %s\n", p->phys_state,
		  phys_state_names[p->phys_state]);
	bw_printf(w, d.fd, "link_layer", "%s\n", p->link_layer);
	bw_printf(w, d.fd, "rate", "%s\n", p->rate);
	bw_text(w, d.fd, "lid", "0x0\n");
	bw_text(w, d.fd, "sm_lid", "0x0\n");
	if (!roce)
		bw_text(w, d.fd, "pkeys/0", "0xffff\n");
	if (roce && nd) {
		/* link-local GID as RoCE v1 and v2, then the IPv4-mapped pair */
		gid_from_mac(gid, sizeof(gid), nd->mac);
		for (int i = 0; i < 2; i++) {
			char name[32];

			snprintf(name, sizeof(name), "gids/%d", n_gids);
			bw_printf(w, d.fd, name, "%s\n", gid);
			snprintf(name, sizeof(name), "gid_attrs/types/%d", n_gids);
			bw_printf(w, d.fd, name, "%s\n", i ? "RoCE v2" : "IB/RoCE v1");
			snprintf(name, sizeof(name), "gid_attrs/ndevs/%d", n_gids);
			bw_printf(w, d.fd, name, "%s\n", nd->name);
			n_gids++;
		}
		if (nd->ipv4) {
			gid_from_ipv4(gid, sizeof(gid), nd->ipv4);
			for (int i = 0; i < 2; i++) {
				char name[32];

				snprintf(name, sizeof(name), "gids/%d", n_gids);
				bw_printf(w, d.fd, name, "%s\n", gid);
				snprintf(name, sizeof(name), "gid_attrs/types/%d", n_gids);
				bw_printf(w, d.fd, name, "%s\n", i ? "RoCE v2" : "IB/RoCE v1");
				snprintf(name, sizeof(name), "gid_attrs/ndevs/%d", n_gids);
				bw_printf(w, d.fd, name, "%s\n", nd->name);
				n_gids++;
			}
		}
	} else {
		/* InfiniBand: subnet prefix + port GUID */
		unsigned g[4] = { 0 };

		sscanf(ib->node_guid, "%x:%x:%x:%x", &g[0], &g[1], &g[2], &g[3]);
		bw_printf(w, d.fd, "gids/0", "fe80:0000:0000:0000:%04x:%04x:%04x:%04x\n", g[0], g[1],
			  g[2], g[3]);
		bw_text(w, d.fd, "gid_attrs/types/0", "IB/RoCE v1\n");
	}
	bw_close(&d);
}

/* Device numbers of uverbsN and umadN/issmN: fixed minors of major 231
 * first (include/rdma/ib_user_verbs.h, user_mad.c), then dynamic majors. */
static void uverbs_devt(unsigned n, unsigned *major, unsigned *minor)
{
	*major = n < UVERBS_FIXED ? MAJOR_IB : MAJOR_IB_VERBS_DYN;
	*minor = n < UVERBS_FIXED ? MINOR_UVERBS_BASE + n : n - UVERBS_FIXED;
}

static void umad_devt(unsigned n, bool issm, unsigned *major, unsigned *minor)
{
	if (n < UMAD_FIXED) {
		*major = MAJOR_IB;
		*minor = issm ? MINOR_ISSM_BASE + n : n;
	} else {
		*major = MAJOR_IB_MAD_DYN;
		*minor = 2 * (n - UMAD_FIXED) + (issm ? 1 : 0);
	}
}

/* An RDMA device with its verbs and MAD nodes. @device_path: the PCI
 * function, or NULL for soft-RoCE (then under devices/virtual). */
static void write_ibdev(struct bw *w, const struct bw_dir *fn, const char *device_path,
			const struct board_ibdev *ib)
{
	struct bw_dir d, v;
	char rel[PATH_MAX], uevent[64], devname[64];
	unsigned major, minor;

	snprintf(rel, sizeof(rel), "infiniband/%s", ib->name);
	bw_open(w, &d, fn->fd, fn->path, rel);
	bw_printf(w, d.fd, "node_type", "%d: %s\n", ib->node_type, node_type_names[ib->node_type]);
	bw_printf(w, d.fd, "node_guid", "%s\n", ib->node_guid);
	bw_printf(w, d.fd, "sys_image_guid", "%s\n", ib->sys_image_guid);
	bw_printf(w, d.fd, "fw_ver", "%s\n", ib->fw_ver);
	bw_printf(w, d.fd, "node_desc", "%s\n", ib->node_desc);
	if (ib->hca_type)
		bw_printf(w, d.fd, "hca_type", "%s\n", ib->hca_type);
	if (ib->hw_rev)
		bw_printf(w, d.fd, "hw_rev", "%s\n", ib->hw_rev);
	if (ib->board_id)
		bw_printf(w, d.fd, "board_id", "%s\n", ib->board_id);
	if (ib->parent_netdev)
		bw_printf(w, d.fd, "parent", "%s\n", ib->parent_netdev);
	for (size_t p = 0; p < ib->n_ports; p++)
		write_ib_port(w, &d, ib, &ib->ports[p]);
	snprintf(uevent, sizeof(uevent), "NAME=%s\n", ib->name);
	bw_class_device(w, &d, "infiniband", ib->name, device_path, 0, 0, NULL, uevent);
	bw_close(&d);

	snprintf(rel, sizeof(rel), "infiniband_verbs/uverbs%d", ib->uverbs);
	bw_open(w, &v, fn->fd, fn->path, rel);
	bw_printf(w, v.fd, "ibdev", "%s\n", ib->name);
	bw_text(w, v.fd, "abi_version", "1\n");
	snprintf(devname, sizeof(devname), "infiniband/uverbs%d", ib->uverbs);
	snprintf(rel, sizeof(rel), "uverbs%d", ib->uverbs);
	uverbs_devt((unsigned)ib->uverbs, &major, &minor);
	bw_class_device(w, &v, "infiniband_verbs", rel, device_path, major, minor, devname, NULL);
	bw_devnode(w, devname, major, minor);
	bw_close(&v);

	for (size_t p = 0; p < ib->n_ports; p++) {
		unsigned umad = ib->ports[p].umad;

		for (int issm = 0; issm < 2; issm++) {
			char name[32];
			unsigned ma, mi;

			umad_devt(umad, issm, &ma, &mi);

			snprintf(name, sizeof(name), "%s%u", issm ? "issm" : "umad", umad);
			snprintf(rel, sizeof(rel), "infiniband_mad/%s", name);
			bw_open(w, &v, fn->fd, fn->path, rel);
			bw_printf(w, v.fd, "ibdev", "%s\n", ib->name);
			bw_printf(w, v.fd, "port", "%u\n", ib->ports[p].number);
			snprintf(devname, sizeof(devname), "infiniband/%s", name);
			bw_class_device(w, &v, "infiniband_mad", name, device_path, ma, mi, devname,
					NULL);
			bw_devnode(w, devname, ma, mi);
			bw_close(&v);
		}
	}
}

static void write_drm(struct bw *w, const struct bw_dir *fn, const struct board_func *f)
{
	for (int i = 0; i < 2; i++) {
		int minor = i ? f->drm.render : f->drm.card;
		struct bw_dir d;
		char name[32], rel[48], devname[48];

		if (minor < 0)
			continue;
		snprintf(name, sizeof(name), "%s%d", i ? "renderD" : "card", minor);
		snprintf(rel, sizeof(rel), "drm/%s", name);
		snprintf(devname, sizeof(devname), "dri/%s", name);
		bw_open(w, &d, fn->fd, fn->path, rel);
		bw_class_device(w, &d, "drm", name, f->sysfs_path, MAJOR_DRM, (unsigned)minor,
				devname, "DEVTYPE=drm_minor\n");
		bw_devnode(w, devname, MAJOR_DRM, (unsigned)minor);
		bw_close(&d);
	}
}

static void write_fpga_mgr(struct bw *w, const struct bw_dir *parent, const char *name,
			   const char *driver_name, const char *state, const char *status)
{
	struct bw_dir d;
	char rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "fpga_manager/%s", name);
	bw_open(w, &d, parent->fd, parent->path, rel);
	bw_printf(w, d.fd, "name", "%s\n", driver_name);
	bw_printf(w, d.fd, "state", "%s\n", state);
	bw_printf(w, d.fd, "status", "%s%s", status, status[0] ? "\n" : "");
	bw_class_device(w, &d, "fpga_manager", name, parent->path, 0, 0, NULL, NULL);
	bw_close(&d);
}

static void write_fpga_region(struct bw *w, const struct bw_dir *parent, const char *name,
			      const char *compat_id)
{
	struct bw_dir d;
	char rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "fpga_region/%s", name);
	bw_open(w, &d, parent->fd, parent->path, rel);
	if (compat_id)
		bw_printf(w, d.fd, "compat_id", "%s\n", compat_id);
	bw_class_device(w, &d, "fpga_region", name, parent->path, 0, 0, NULL, NULL);
	bw_close(&d);
}

/* A platform device below @parent, bound to @driver, optionally with a
 * char device. */
static void platform_device(struct bw *w, const struct bw_dir *parent, struct bw_dir *d,
			    const char *name, const char *driver, unsigned major, unsigned minor)
{
	char path[PATH_MAX], uevent[160];

	bw_open(w, d, parent->fd, parent->path, name);
	snprintf(uevent, sizeof(uevent), "DRIVER=%s\nMODALIAS=platform:%s\n", driver, driver);
	if (major) {
		char ev[256];

		bw_printf(w, d->fd, "dev", "%u:%u\n", major, minor);
		snprintf(ev, sizeof(ev), "MAJOR=%u\nMINOR=%u\nDEVNAME=%s\n%s", major, minor, name,
			 uevent);
		bw_printf(w, d->fd, "uevent", "%s", ev);
		snprintf(path, sizeof(path), "dev/char/%u:%u", major, minor);
		bw_link_at(w, path, d->path);
		bw_devnode(w, name, major, minor);
	} else {
		bw_printf(w, d->fd, "uevent", "%s", uevent);
	}
	bw_link(w, d, "subsystem", "bus/platform");
	snprintf(path, sizeof(path), "bus/platform/drivers/%s", driver);
	bw_link(w, d, "driver", path);
	bw_mkdirs(w, w->sys, path);
	snprintf(path, sizeof(path), "bus/platform/drivers/%s/%s", driver, name);
	bw_link_at(w, path, d->path);
	snprintf(path, sizeof(path), "bus/platform/devices/%s", name);
	bw_link_at(w, path, d->path);
}

static void write_dfl(struct bw *w, const struct bw_dir *fn, const struct board_dfl *dfl)
{
	struct bw_dir base, fme, sub, port;
	char rel[PATH_MAX], name[64];

	/* dfl-pci's base region holds the FME and the ports */
	snprintf(rel, sizeof(rel), "fpga_region/%s", dfl->base_region);
	bw_open(w, &base, fn->fd, fn->path, rel);
	bw_class_device(w, &base, "fpga_region", dfl->base_region, fn->path, 0, 0, NULL, NULL);

	snprintf(name, sizeof(name), "dfl-fme.%d", dfl->fme_id);
	platform_device(w, &base, &fme, name, "dfl-fme", MAJOR_DFL_FME, dfl->fme_minor);
	bw_printf(w, fme.fd, "ports_num", "%d\n", dfl->ports_num);
	bw_printf(w, fme.fd, "bitstream_id", "%s\n", dfl->bitstream_id);
	bw_printf(w, fme.fd, "bitstream_metadata", "%s\n", dfl->bitstream_metadata);
	bw_printf(w, fme.fd, "socket_id", "%d\n", dfl->socket_id);
	bw_text(w, fme.fd, "cache_size", "0\n");
	bw_text(w, fme.fd, "fabric_version", "0\n");

	snprintf(name, sizeof(name), "dfl-fme-region.%d", dfl->fme_id);
	platform_device(w, &fme, &sub, name, "dfl-fme-region", 0, 0);
	write_fpga_region(w, &sub, dfl->pr_region, dfl->compat_id);
	bw_close(&sub);
	snprintf(name, sizeof(name), "dfl-fme-mgr.%d", dfl->fme_id);
	platform_device(w, &fme, &sub, name, "dfl-fme-mgr", 0, 0);
	write_fpga_mgr(w, &sub, dfl->mgr_name, "DFL FME FPGA Manager", "operating", "");
	bw_close(&sub);
	snprintf(name, sizeof(name), "dfl-fme-br.%d", dfl->fme_id);
	platform_device(w, &fme, &sub, name, "dfl-fme-bridge", 0, 0);
	{
		struct bw_dir br;

		snprintf(rel, sizeof(rel), "fpga_bridge/%s", dfl->bridge_name);
		bw_open(w, &br, sub.fd, sub.path, rel);
		bw_printf(w, br.fd, "name", "%s\n", name);
		bw_text(w, br.fd, "state", "enabled\n");
		bw_class_device(w, &br, "fpga_bridge", dfl->bridge_name, sub.path, 0, 0, NULL, NULL);
		bw_close(&br);
	}
	bw_close(&sub);
	bw_close(&fme);

	for (size_t i = 0; i < dfl->n_ports; i++) {
		snprintf(name, sizeof(name), "dfl-port.%d", dfl->ports[i].id);
		platform_device(w, &base, &port, name, "dfl-port", MAJOR_DFL_PORT,
				dfl->ports[i].minor);
		bw_printf(w, port.fd, "id", "%d\n", dfl->ports[i].id);
		bw_printf(w, port.fd, "afu_id", "%s\n", dfl->ports[i].afu_id);
		bw_text(w, port.fd, "power_state", "0\n");
		bw_text(w, port.fd, "ltr", "0\n");
		bw_close(&port);
	}
	bw_close(&base);
}

static void block_node(struct bw *w, const char *name, unsigned major, unsigned minor)
{
	char node[PATH_MAX];

	bw_devnode(w, name, major, minor);
	/* umockdev reads the sticky bit as "block device" */
	if (!bw_failed(w)) {
		snprintf(node, sizeof(node), "%s", name);
		fchmodat(w->dev, node, 01666, 0);
	}
}

static void write_block(struct bw *w, const struct bw_dir *parent, const char *device_path,
			const struct board_block *blk, unsigned seq)
{
	struct bw_dir d;
	char path[PATH_MAX], uevent[160];

	bw_open(w, &d, parent->fd, parent->path, blk->name);
	bw_printf(w, d.fd, "dev", "%u:%u\n", blk->major, blk->minor);
	bw_printf(w, d.fd, "size", "%llu\n", (unsigned long long)(blk->size / 512));
	bw_text(w, d.fd, "ro", "0\n");
	if (blk->partition) {
		bw_printf(w, d.fd, "partition", "%d\n", blk->partition);
		bw_printf(w, d.fd, "start", "%llu\n", (unsigned long long)blk->start);
		snprintf(uevent, sizeof(uevent), "MAJOR=%u\nMINOR=%u\nDEVNAME=%s\nDEVTYPE=partition\n"
			 "DISKSEQ=%u\nPARTN=%d\n", blk->major, blk->minor, blk->name, seq,
			 blk->partition);
	} else {
		bw_text(w, d.fd, "removable", "0\n");
		bw_text(w, d.fd, "queue/logical_block_size", "512\n");
		snprintf(uevent, sizeof(uevent), "MAJOR=%u\nMINOR=%u\nDEVNAME=%s\nDEVTYPE=disk\n"
			 "DISKSEQ=%u\n", blk->major, blk->minor, blk->name, seq);
	}
	bw_printf(w, d.fd, "uevent", "%s", uevent);
	bw_link(w, &d, "subsystem", "class/block");
	if (device_path)
		bw_link(w, &d, "device", device_path);
	snprintf(path, sizeof(path), "class/block/%s", blk->name);
	bw_link_at(w, path, d.path);
	snprintf(path, sizeof(path), "dev/block/%u:%u", blk->major, blk->minor);
	bw_link_at(w, path, d.path);
	block_node(w, blk->name, blk->major, blk->minor);
	bw_close(&d);
}

static void write_nvme(struct bw *w, const struct bw_dir *fn, const struct board_func *f)
{
	const struct board_nvme *nv = f->nvme;
	struct bw_dir ctrl, disk;
	char rel[PATH_MAX], uevent[64];

	snprintf(rel, sizeof(rel), "nvme/%s", nv->controller);
	bw_open(w, &ctrl, fn->fd, fn->path, rel);
	bw_printf(w, ctrl.fd, "model", "%-40s\n", nv->model);
	bw_printf(w, ctrl.fd, "serial", "%-20s\n", nv->serial);
	bw_printf(w, ctrl.fd, "firmware_rev", "%-8s\n", nv->firmware);
	bw_text(w, ctrl.fd, "transport", "pcie\n");
	bw_printf(w, ctrl.fd, "address", "%s\n", f->bdf);
	bw_text(w, ctrl.fd, "state", "live\n");
	bw_printf(w, ctrl.fd, "cntlid", "%u\n", 1u);
	snprintf(uevent, sizeof(uevent), "NVME_TRTYPE=pcie\n");
	bw_class_device(w, &ctrl, "nvme", nv->controller, f->sysfs_path, MAJOR_NVME, nv->instance,
			nv->controller, uevent);
	bw_devnode(w, nv->controller, MAJOR_NVME, nv->instance);
	for (size_t k = 0; k < nv->n_ns; k++) {
		const struct board_nvme_ns *ns = &nv->ns[k];

		write_block(w, &ctrl, ctrl.path, &ns->disk, ns->disk.minor + 1);
		snprintf(rel, sizeof(rel), "%s", ns->disk.name);
		bw_open(w, &disk, ctrl.fd, ctrl.path, rel);
		for (size_t p = 0; p < ns->n_parts; p++)
			write_block(w, &disk, NULL, &ns->parts[p], ns->disk.minor + 1);
		bw_close(&disk);
	}
	bw_close(&ctrl);
}

static void write_chardevs(struct bw *w, const struct bw_dir *fn, const struct board_func *f)
{
	for (size_t i = 0; i < f->n_chardev; i++) {
		const struct board_chardev *cd = &f->chardev[i];
		struct bw_dir d;
		char rel[PATH_MAX];

		snprintf(rel, sizeof(rel), "%s/%s", cd->class_name, cd->name);
		bw_open(w, &d, fn->fd, fn->path, rel);
		bw_class_device(w, &d, cd->class_name, cd->name, f->sysfs_path, (unsigned)cd->major,
				(unsigned)cd->minor, cd->devname, NULL);
		bw_devnode(w, cd->devname, (unsigned)cd->major, (unsigned)cd->minor);
		bw_close(&d);
	}
}

void bw_function_classes(struct bw *w, const struct board_func *f, const struct bw_dir *fn)
{
	for (size_t i = 0; i < f->n_net; i++)
		write_netdev(w, fn, f->sysfs_path, &f->net[i]);
	for (size_t i = 0; i < f->n_ib; i++)
		write_ibdev(w, fn, f->sysfs_path, &f->ib[i]);
	write_drm(w, fn, f);
	for (size_t i = 0; i < f->n_fpga_mgr; i++) {
		const struct board_fpga_mgr *m = &f->fpga_mgr[i];
		struct bw_dir parent = *fn;

		if (m->under)
			bw_open(w, &parent, fn->fd, fn->path, m->under);
		write_fpga_mgr(w, &parent, m->name, m->driver_name, m->state, m->status);
		if (m->under)
			bw_close(&parent);
	}
	for (size_t i = 0; i < f->n_fpga_region; i++) {
		const struct board_fpga_region *g = &f->fpga_region[i];
		struct bw_dir parent = *fn;

		if (g->under)
			bw_open(w, &parent, fn->fd, fn->path, g->under);
		write_fpga_region(w, &parent, g->name, g->compat_id);
		if (g->under)
			bw_close(&parent);
	}
	if (f->dfl)
		write_dfl(w, fn, f->dfl);
	if (f->nvme)
		write_nvme(w, fn, f);
	write_chardevs(w, fn, f);
}

void bw_vfio_container(struct bw *w)
{
	struct bw_dir d;

	bw_open(w, &d, w->sys, "", "devices/virtual/misc/vfio");
	bw_class_device(w, &d, "misc", "vfio", NULL, MAJOR_MISC, MINOR_VFIO, "vfio/vfio", NULL);
	bw_devnode(w, "vfio/vfio", MAJOR_MISC, MINOR_VFIO);
	bw_close(&d);
	bw_mkdirs(w, w->sys, "class/vfio");
}

void bw_vfio_group(struct bw *w, int group, unsigned minor)
{
	struct bw_dir d;
	char rel[64], name[16], devname[32];

	snprintf(name, sizeof(name), "%d", group);
	snprintf(rel, sizeof(rel), "devices/virtual/vfio/%s", name);
	snprintf(devname, sizeof(devname), "vfio/%s", name);
	bw_open(w, &d, w->sys, "", rel);
	bw_class_device(w, &d, "vfio", name, NULL, MAJOR_VFIO, minor, devname, NULL);
	bw_devnode(w, devname, MAJOR_VFIO, minor);
	bw_close(&d);
}

/* "num_xcc N" of a GPU's kfd properties; 8 (an MI300X) when not given. */
static unsigned kfd_num_xcc(const struct board_func *f)
{
	const char *p = f->kfd->properties ? strstr(f->kfd->properties, "num_xcc ") : NULL;
	unsigned n;

	return p && sscanf(p + 8, "%u", &n) == 1 && n > 0 && n <= 64 ? n : 8;
}

unsigned bw_kfd_xcp_render(const struct board *b, const struct board_func *gpu, unsigned k)
{
	int top = 127;
	unsigned ordinal = 0;

	/* the XCP render nodes come after the board's own, GPU by GPU */
	for (size_t i = 0; i < b->n_funcs; i++)
		if (b->funcs[i]->drm.render > top)
			top = b->funcs[i]->drm.render;
	for (size_t i = 0; i < b->n_funcs && b->funcs[i] != gpu; i++)
		if (b->funcs[i]->kfd)
			ordinal++;
	return (unsigned)top + 1 + ordinal * (kfd_num_xcc(gpu) - 1) + (k - 1);
}

static const char *rel_render(char *buf, size_t size, int minor)
{
	snprintf(buf, size, "dri/renderD%d", minor);
	return buf;
}

void bw_kfd_nodes(struct bw *w, const unsigned *partitions)
{
	const struct board *b = w->b;
	struct bw_dir d, node;
	unsigned n = 0, gpu = 0;

	bw_open(w, &d, w->sys, "", "devices/virtual/kfd/kfd");
	bw_printf(w, d.fd, "topology/generation_id", "%u\n", partitions ? 2 : 1);
	bw_text(w, d.fd, "topology/system_properties", "platform_oem 0\nplatform_id 0\n"
		 "platform_rev 0\n");
	/* CPU nodes first, then GPUs in PCI order (amdkfd's CRAT order) */
	for (size_t i = 0; i < b->n_numa; i++, n++) {
		char rel[64];

		snprintf(rel, sizeof(rel), "topology/nodes/%u", n);
		bw_open(w, &node, d.fd, d.path, rel);
		bw_text(w, node.fd, "gpu_id", "0\n");
		bw_text(w, node.fd, "name", "\n");
		bw_printf(w, node.fd, "properties", "cpu_cores_count %u\nsimd_count 0\n"
			  "mem_banks_count 1\nlocation_id 0\ndomain 0\ndrm_render_minor 0\n",
			  b->nr_cpus / (unsigned)b->n_numa);
		bw_close(&node);
	}
	for (size_t i = 0; i < b->n_funcs; i++) {
		const struct board_func *f = b->funcs[i];
		unsigned parts, xcc;

		if (!f->kfd)
			continue;
		/* a compute partition is a node of its own (kfd_topology.c) with
		 * its share of the SIMDs and XCCs and an XCP render node */
		parts = partitions && partitions[gpu] ? partitions[gpu] : 1;
		gpu++;
		xcc = kfd_num_xcc(f);
		char props[2048] = "";
		const char *at = f->kfd->properties ? f->kfd->properties : "";
		/* the board's properties but num_xcc, which is the partition's */
		for (const char *line = at; *line;) {
			const char *end = strchr(line, '\n');
			size_t len = end ? (size_t)(end - line + 1) : strlen(line);
			if (strncmp(line, "num_xcc ", 8) && strlen(props) + len < sizeof(props))
				strncat(props, line, len);
			line += len;
		}
		for (unsigned k = 0; k < parts; k++) {
			char rel[64];
			int render = k ? (int)bw_kfd_xcp_render(b, f, k) : f->drm.render;

			snprintf(rel, sizeof(rel), "topology/nodes/%u", n++);
			bw_open(w, &node, d.fd, d.path, rel);
			bw_printf(w, node.fd, "gpu_id", "%u\n", f->kfd->gpu_id + k);
			bw_text(w, node.fd, "name", "\n");
			bw_printf(w, node.fd, "properties",
				  "cpu_cores_count 0\nsimd_count %u\nmem_banks_count 1\nlocation_id %u\n"
				  "domain %u\ndrm_render_minor %d\nvendor_id %u\ndevice_id %u\n"
				  "num_xcc %u\n%s",
				  1216 / parts, f->bus << 8 | f->dev << 3 | f->fn, f->domain, render,
				  f->vendor, f->device, xcc / parts, props);
			if (k)
				bw_devnode(w, rel_render(rel, sizeof(rel), render), MAJOR_DRM, (unsigned)render);
			bw_close(&node);
		}
	}
	bw_close(&d);
}

static void write_kfd(struct bw *w)
{
	struct bw_dir d;

	bw_open(w, &d, w->sys, "", "devices/virtual/kfd/kfd");
	bw_class_device(w, &d, "kfd", "kfd", NULL, MAJOR_KFD, 0, "kfd", NULL);
	bw_devnode(w, "kfd", MAJOR_KFD, 0);
	bw_close(&d);
	bw_kfd_nodes(w, NULL);
}

/* An SoC's platform devices with FPGA managers and regions (no PCI
 * function), the Xilinx kernel's firmware/flags attributes where the board
 * says so, configfs's overlay directory and firmware_class's path parameter. */
void bw_platform(struct bw *w)
{
	const struct board *b = w->b;

	if (b->configfs_overlays)
		bw_mkdirs(w, w->sys, "kernel/config/device-tree/overlays");
	if (b->n_platform) {
		bw_mkdirs(w, w->sys, "class/fpga_manager");
		bw_mkdirs(w, w->sys, "class/fpga_region");
		bw_text(w, w->sys, "module/firmware_class/parameters/path", "\n");
	}
	for (size_t i = 0; i < b->n_platform; i++) {
		const struct board_platform *p = &b->platform[i];
		const char *slash = strrchr(p->device, '/');
		char parent[PATH_MAX];
		struct bw_dir up, d;

		snprintf(parent, sizeof(parent), "devices/platform%s%.*s", slash ? "/" : "",
			 slash ? (int)(slash - p->device) : 0, p->device);
		bw_open(w, &up, w->sys, "", parent);
		platform_device(w, &up, &d, slash ? slash + 1 : p->device, p->driver, 0, 0);
		for (size_t k = 0; k < p->n_fpga_mgr; k++) {
			const struct board_fpga_mgr *m = &p->fpga_mgr[k];
			char rel[PATH_MAX];

			write_fpga_mgr(w, &d, m->name, m->driver_name ? m->driver_name : p->driver,
				       m->state, m->status);
			if (!m->firmware)
				continue;
			/* the Xilinx kernel's manager is a misc device too (its DMA-buf
			 * ioctl; fpga_mgr_create's misc_register), minors handed out
			 * downward from MINOR_FPGA_MGR */
			struct bw_dir misc;
			unsigned minor = MINOR_FPGA_MGR - (unsigned)k;
			snprintf(rel, sizeof(rel), "devices/virtual/misc/%s", m->name);
			bw_open(w, &misc, w->sys, "", rel);
			bw_class_device(w, &misc, "misc", m->name, NULL, MAJOR_MISC, minor, m->name, NULL);
			bw_devnode(w, m->name, MAJOR_MISC, minor);
			bw_close(&misc);
			snprintf(rel, sizeof(rel), "fpga_manager/%s/flags", m->name);
			bw_text(w, d.fd, rel, "0\n");
			snprintf(rel, sizeof(rel), "fpga_manager/%s/firmware", m->name);
			bw_writeonly(w, d.fd, rel);
		}
		for (size_t k = 0; k < p->n_fpga_region; k++)
			write_fpga_region(w, &d, p->fpga_region[k].name, p->fpga_region[k].compat_id);
		bw_close(&d);
		bw_close(&up);
	}
}

void bw_virtual_classes(struct bw *w)
{
	const struct board *b = w->b;
	struct bw_dir d, fn;

	bw_mkdirs(w, w->sys, "class/net");
	bw_mkdirs(w, w->sys, "class/block");
	bw_mkdirs(w, w->sys, "class/misc");
	bw_mkdirs(w, w->sys, "dev/char");
	bw_mkdirs(w, w->sys, "dev/block");
	bw_mkdirs(w, w->sys, "bus/platform/devices");

	/* loopback */
	bw_open(w, &d, w->sys, "", "devices/virtual/net/lo");
	bw_text(w, d.fd, "address", "00:00:00:00:00:00\n");
	bw_text(w, d.fd, "addr_len", "6\n");
	bw_text(w, d.fd, "operstate", "unknown\n");
	bw_text(w, d.fd, "carrier", "1\n");
	bw_text(w, d.fd, "mtu", "65536\n");
	bw_text(w, d.fd, "ifindex", "1\n");
	bw_text(w, d.fd, "iflink", "1\n");
	bw_text(w, d.fd, "type", "772\n");
	bw_text(w, d.fd, "flags", "0x9\n");
	bw_class_device(w, &d, "net", "lo", NULL, 0, 0, NULL, "INTERFACE=lo\nIFINDEX=1\n");
	bw_close(&d);

	if (b->any_ib) {
		bw_text(w, w->sys, "class/infiniband_verbs/abi_version", "6\n");
		bw_text(w, w->sys, "class/infiniband_mad/abi_version", "5\n");
		bw_mkdirs(w, w->sys, "class/infiniband");
		bw_open(w, &d, w->sys, "", "devices/virtual/misc/rdma_cm");
		bw_class_device(w, &d, "misc", "rdma_cm", NULL, MAJOR_MISC, MINOR_RDMA_CM,
				"infiniband/rdma_cm", NULL);
		bw_devnode(w, "infiniband/rdma_cm", MAJOR_MISC, MINOR_RDMA_CM);
		bw_close(&d);
	}
	if (b->n_rxe) {
		/* soft-RoCE has no parent device: everything under devices/virtual */
		bw_open(w, &fn, w->sys, "", "devices/virtual");
		for (size_t i = 0; i < b->n_rxe; i++)
			write_ibdev(w, &fn, NULL, &b->rxe[i].ib);
		bw_close(&fn);
	}
	if (b->any_vfio) {
		unsigned minor = 0;

		bw_vfio_container(w);
		for (size_t i = 0; i < b->n_funcs; i++) {
			const struct board_func *f = b->funcs[i];
			bool seen = false;

			if (!f->driver || strcmp(f->driver, "vfio-pci") || f->iommu_group < 0)
				continue;
			for (size_t k = 0; k < i && !seen; k++)
				seen = b->funcs[k]->driver && !strcmp(b->funcs[k]->driver, "vfio-pci") &&
				       b->funcs[k]->iommu_group == f->iommu_group;
			if (!seen)
				bw_vfio_group(w, f->iommu_group, minor++);
		}
	}
	if (b->any_kfd)
		write_kfd(w);
	for (size_t i = 0; i < b->n_funcs; i++)
		if (b->funcs[i]->drm.card >= 0 || b->funcs[i]->drm.render >= 0) {
			bw_text(w, w->sys, "class/drm/version", "drm 1.1.0 20060810\n");
			break;
		}
}
