/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tree builders for the fpga/net/sriov/accel backend tests: PCI functions
 * with drivers, IOMMU groups, VFs, netdevs, RDMA devices, misc nodes, vfio,
 * FPGA class devices, DFL and XRT files, laid out like the kernel does
 * (linux-devices.md 1-5), all links relative. Header-only (static helpers)
 * so each test program stays one file.
 */
#ifndef DRALET_TEST_NET_TREE_H
#define DRALET_TEST_NET_TREE_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* Paths in these builders are short; truncation cannot happen in practice. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

/* "../" once per component of @path (a directory below sys/). */
static inline void t_ups(const char *path, char *buf, size_t size)
{
	size_t o = 0;

	buf[0] = '\0';
	for (const char *p = path; *p; p++)
		if (*p == '/' && o + 3 < size) {
			memcpy(buf + o, "../", 4);
			o += 3;
		}
	if (o + 3 < size)
		memcpy(buf + o, "../", 4);
}

/* sys path of a function below @parent ("pci0000:00/0000:00:01.0"). */
static inline void t_fn(const char *parent, const char *addr, char *buf, size_t size)
{
	snprintf(buf, size, "devices/%s/%s", parent, addr);
}

static inline void t_write(const char *d, const char *parent, const char *addr, const char *rel,
			   const char *content)
{
	char p[1024];
	snprintf(p, sizeof(p), "sys/devices/%s/%s/%s", parent, addr, rel);
	tree_write(d, p, content);
}

/* A link below sys/ at @rel pointing to sys/@target (both below sys/). */
static inline void t_syslink(const char *d, const char *rel, const char *target)
{
	char dir[1024], ups[512], t[2048], p[1024];
	const char *slash = strrchr(rel, '/');

	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - rel), rel);
	t_ups(dir, ups, sizeof(ups));
	snprintf(t, sizeof(t), "%s%s", ups, target);
	snprintf(p, sizeof(p), "sys/%s", rel);
	tree_link(d, p, t);
}

/* Binds the function to @driver (its driver link), or unbinds it (NULL). */
static inline void t_bind(const char *d, const char *parent, const char *addr,
			  const char *driver)
{
	char fn[512], rel[1024], drv[256], path[2048];

	t_fn(parent, addr, fn, sizeof(fn));
	snprintf(rel, sizeof(rel), "%s/driver", fn);
	snprintf(path, sizeof(path), "%s/sys/%s", d, rel);
	unlink(path);
	if (!driver)
		return;
	snprintf(drv, sizeof(drv), "sys/bus/pci/drivers/%s", driver);
	tree_mkdir(d, drv);
	snprintf(drv, sizeof(drv), "bus/pci/drivers/%s", driver);
	t_syslink(d, rel, drv);
}

static inline void t_pci(const char *d, const char *parent, const char *addr, unsigned vendor,
			 unsigned device, unsigned cls, const char *driver)
{
	tree_add_pci(d, parent, addr, vendor, device, cls);
	if (driver)
		t_bind(d, parent, addr, driver);
}

static inline void t_group(const char *d, const char *parent, const char *addr, int group)
{
	char fn[512], rel[1024], target[256];

	t_fn(parent, addr, fn, sizeof(fn));
	snprintf(target, sizeof(target), "kernel/iommu_groups/%d", group);
	snprintf(rel, sizeof(rel), "%s/iommu_group", fn);
	t_syslink(d, rel, target);
	snprintf(rel, sizeof(rel), "kernel/iommu_groups/%d/devices/%s", group, addr);
	t_syslink(d, rel, fn);
}

static inline void t_vf(const char *d, const char *parent, const char *pf, const char *vf,
			int index)
{
	char rel[1024], target[64];

	snprintf(rel, sizeof(rel), "sys/devices/%s/%s/virtfn%d", parent, pf, index);
	snprintf(target, sizeof(target), "../%s", vf);
	tree_link(d, rel, target);
	snprintf(rel, sizeof(rel), "sys/devices/%s/%s/physfn", parent, vf);
	snprintf(target, sizeof(target), "../%s", pf);
	tree_link(d, rel, target);
}

static inline void t_sriov(const char *d, const char *parent, const char *pf, int total,
			   int num)
{
	char v[16];

	snprintf(v, sizeof(v), "%d", total);
	t_write(d, parent, pf, "sriov_totalvfs", v);
	snprintf(v, sizeof(v), "%d", num);
	t_write(d, parent, pf, "sriov_numvfs", v);
}

static inline void t_netdev(const char *d, const char *parent, const char *addr,
			    const char *ifname, const char *mac, const char *operstate, int mtu,
			    int speed)
{
	char fn[512], rel[1024], v[32];

	t_fn(parent, addr, fn, sizeof(fn));
	snprintf(rel, sizeof(rel), "net/%s/address", ifname);
	t_write(d, parent, addr, rel, mac);
	snprintf(rel, sizeof(rel), "net/%s/operstate", ifname);
	t_write(d, parent, addr, rel, operstate);
	snprintf(v, sizeof(v), "%d", mtu);
	snprintf(rel, sizeof(rel), "net/%s/mtu", ifname);
	t_write(d, parent, addr, rel, v);
	if (speed > 0) {
		snprintf(v, sizeof(v), "%d", speed);
		snprintf(rel, sizeof(rel), "net/%s/speed", ifname);
		t_write(d, parent, addr, rel, v);
	}
	snprintf(rel, sizeof(rel), "class/net/%s", ifname);
	char target[1024];
	snprintf(target, sizeof(target), "%s/net/%s", fn, ifname);
	t_syslink(d, rel, target);
}

/* A device node placeholder in dev/ plus a "dev" file with its numbers. */
static inline void t_node(const char *d, const char *dev_path)
{
	char p[512];
	snprintf(p, sizeof(p), "dev/%s", dev_path);
	tree_write(d, p, "");
}

/* An RDMA device with one port, its uverbs node (and umad/issm for IB). */
static inline void t_ibdev(const char *d, const char *parent, const char *addr,
			   const char *ibname, const char *link_layer, const char *state,
			   const char *rate, int uverbs, const char *gid_netdev)
{
	char fn[512], base[1024], rel[1024], v[64], target[1024];

	t_fn(parent, addr, fn, sizeof(fn));
	snprintf(base, sizeof(base), "infiniband/%s", ibname);
	snprintf(rel, sizeof(rel), "%s/node_guid", base);
	t_write(d, parent, addr, rel, "1070:fd03:00ab:cdef");
	snprintf(rel, sizeof(rel), "%s/fw_ver", base);
	t_write(d, parent, addr, rel, "28.39.1002");
	snprintf(rel, sizeof(rel), "%s/node_type", base);
	t_write(d, parent, addr, rel, "1: CA");
	snprintf(rel, sizeof(rel), "%s/ports/1/state", base);
	t_write(d, parent, addr, rel, state);
	snprintf(rel, sizeof(rel), "%s/ports/1/phys_state", base);
	t_write(d, parent, addr, rel, "5: LinkUp");
	snprintf(rel, sizeof(rel), "%s/ports/1/link_layer", base);
	t_write(d, parent, addr, rel, link_layer);
	snprintf(rel, sizeof(rel), "%s/ports/1/rate", base);
	t_write(d, parent, addr, rel, rate);
	if (gid_netdev) {
		snprintf(rel, sizeof(rel), "%s/ports/1/gid_attrs/ndevs/0", base);
		t_write(d, parent, addr, rel, gid_netdev);
	}
	snprintf(rel, sizeof(rel), "class/infiniband/%s", ibname);
	snprintf(target, sizeof(target), "%s/%s", fn, base);
	t_syslink(d, rel, target);

	snprintf(rel, sizeof(rel), "infiniband_verbs/uverbs%d/ibdev", uverbs);
	t_write(d, parent, addr, rel, ibname);
	snprintf(v, sizeof(v), "231:%d", 192 + uverbs);
	snprintf(rel, sizeof(rel), "infiniband_verbs/uverbs%d/dev", uverbs);
	t_write(d, parent, addr, rel, v);
	snprintf(rel, sizeof(rel), "class/infiniband_verbs/uverbs%d", uverbs);
	snprintf(target, sizeof(target), "%s/infiniband_verbs/uverbs%d", fn, uverbs);
	t_syslink(d, rel, target);
	snprintf(v, sizeof(v), "infiniband/uverbs%d", uverbs);
	t_node(d, v);

	if (strcmp(link_layer, "InfiniBand"))
		return;
	static const char *const mads[] = { "umad", "issm" };
	for (int i = 0; i < 2; i++) {
		snprintf(rel, sizeof(rel), "infiniband_mad/%s%d/ibdev", mads[i], uverbs);
		t_write(d, parent, addr, rel, ibname);
		snprintf(rel, sizeof(rel), "infiniband_mad/%s%d/port", mads[i], uverbs);
		t_write(d, parent, addr, rel, "1");
		snprintf(v, sizeof(v), "231:%d", uverbs + 64 * i);
		snprintf(rel, sizeof(rel), "infiniband_mad/%s%d/dev", mads[i], uverbs);
		t_write(d, parent, addr, rel, v);
		snprintf(rel, sizeof(rel), "class/infiniband_mad/%s%d", mads[i], uverbs);
		snprintf(target, sizeof(target), "%s/infiniband_mad/%s%d", fn, mads[i], uverbs);
		t_syslink(d, rel, target);
		snprintf(v, sizeof(v), "infiniband/%s%d", mads[i], uverbs);
		t_node(d, v);
	}
}

/* A soft-RoCE device (no PCI parent; "parent" names the netdev). */
static inline void t_rxe(const char *d, const char *name, const char *netdev, int uverbs)
{
	char rel[512], v[64], target[512];

	snprintf(rel, sizeof(rel), "sys/devices/virtual/infiniband/%s/parent", name);
	tree_write(d, rel, netdev);
	snprintf(rel, sizeof(rel), "sys/devices/virtual/infiniband/%s/node_type", name);
	tree_write(d, rel, "1: CA");
	snprintf(rel, sizeof(rel), "sys/devices/virtual/infiniband/%s/ports/1/state", name);
	tree_write(d, rel, "4: ACTIVE");
	snprintf(rel, sizeof(rel), "sys/devices/virtual/infiniband/%s/ports/1/link_layer", name);
	tree_write(d, rel, "Ethernet");
	snprintf(rel, sizeof(rel), "class/infiniband/%s", name);
	snprintf(target, sizeof(target), "devices/virtual/infiniband/%s", name);
	t_syslink(d, rel, target);
	snprintf(rel, sizeof(rel), "sys/devices/virtual/infiniband_verbs/uverbs%d/ibdev", uverbs);
	tree_write(d, rel, name);
	snprintf(v, sizeof(v), "231:%d", 192 + uverbs);
	snprintf(rel, sizeof(rel), "sys/devices/virtual/infiniband_verbs/uverbs%d/dev", uverbs);
	tree_write(d, rel, v);
	snprintf(rel, sizeof(rel), "class/infiniband_verbs/uverbs%d", uverbs);
	snprintf(target, sizeof(target), "devices/virtual/infiniband_verbs/uverbs%d", uverbs);
	t_syslink(d, rel, target);
	snprintf(v, sizeof(v), "infiniband/uverbs%d", uverbs);
	t_node(d, v);
}

/* A misc device (rdma_cm, vfio) with its node. */
static inline void t_misc(const char *d, const char *name, const char *devnum,
			  const char *dev_path)
{
	char rel[512], target[512];

	snprintf(rel, sizeof(rel), "sys/devices/virtual/misc/%s/dev", name);
	tree_write(d, rel, devnum);
	snprintf(rel, sizeof(rel), "class/misc/%s", name);
	snprintf(target, sizeof(target), "devices/virtual/misc/%s", name);
	t_syslink(d, rel, target);
	t_node(d, dev_path);
}

/* vfio group node of a function bound to vfio-pci. */
static inline void t_vfio_group(const char *d, int group)
{
	char rel[512], target[512], v[32];

	snprintf(rel, sizeof(rel), "sys/devices/virtual/vfio/%d/dev", group);
	snprintf(v, sizeof(v), "511:%d", group);
	tree_write(d, rel, v);
	snprintf(rel, sizeof(rel), "class/vfio/%d", group);
	snprintf(target, sizeof(target), "devices/virtual/vfio/%d", group);
	t_syslink(d, rel, target);
	snprintf(v, sizeof(v), "vfio/%d", group);
	t_node(d, v);
}

/* A character class device below a function: <fn>/<sub>/<name>/dev, the
 * class/<cls>/<name> link and the /dev/<dev_path> placeholder. */
static inline void t_classdev(const char *d, const char *parent, const char *addr,
			      const char *cls, const char *sub, const char *name,
			      const char *devnum, const char *dev_path)
{
	char fn[512], rel[1024], target[1024];

	t_fn(parent, addr, fn, sizeof(fn));
	snprintf(rel, sizeof(rel), "%s/%s/dev", sub, name);
	t_write(d, parent, addr, rel, devnum);
	snprintf(rel, sizeof(rel), "class/%s/%s", cls, name);
	snprintf(target, sizeof(target), "%s/%s/%s", fn, sub, name);
	t_syslink(d, rel, target);
	t_node(d, dev_path);
}

/* A dralet_prepare_req with its edits and undo (release with t_req_clear). */
struct t_req {
	struct dralet_edits edits;
	struct dralet_undo undo;
	struct dralet_prepare_req req;
};

static inline void t_req_init(struct t_req *t, const char *config)
{
	memset(t, 0, sizeof(*t));
	t->req.claim = (struct dralet_claim_ref){ "uid-1", "default", "claim" };
	t->req.request = "req";
	t->req.config = config;
	t->req.edits = &t->edits;
	t->req.undo = &t->undo;
}

static inline void t_req_clear(struct t_req *t)
{
	edits_clear(&t->edits);
	undo_clear(&t->undo);
}

static inline const char *t_env(const struct t_req *t, const char *name)
{
	size_t len = strlen(name);
	for (size_t i = 0; i < t->edits.n_env; i++)
		if (!strncmp(t->edits.env[i], name, len) && t->edits.env[i][len] == '=')
			return t->edits.env[i] + len + 1;
	return NULL;
}

static inline const struct hal_devnode *t_edit_node(const struct t_req *t, const char *path)
{
	for (size_t i = 0; i < t->edits.n_nodes; i++)
		if (!strcmp(t->edits.nodes[i].node.path, path))
			return &t->edits.nodes[i].node;
	return NULL;
}

static inline bool t_dev_node(const struct dralet_device *dev, const char *path)
{
	for (size_t i = 0; i < dralet_device_n_nodes(dev); i++)
		if (!strcmp(dralet_device_node(dev, i)->path, path))
			return true;
	return false;
}

static inline int attr_bool(const struct dralet_device *dev, const char *name)
{
	const struct dralet_attr *a = dralet_device_find_attr(dev, name);
	return a && a->type == DRALET_ATTR_BOOL ? a->bool_value : -1;
}

#endif

/* ---- a whole discovery (every in-tree backend, the ownership rule) ---- */

#include <stdlib.h>
#include <unistd.h>

#include "agent/core/config.h"
#include "agent/core/inventory.h"
#include "agent/core/registry.h"

struct t_inv {
	char sys[4096], dev[4096], proc[4096], cfgpath[4200];
	struct hal_roots roots;
	struct config *cfg;
	struct registry *reg;
	struct inventory *inv;
};

/* Discovers the tree at @d with the agent's config @yaml (NULL: defaults). */
static inline int t_inv_open(struct t_inv *t, const char *d, const char *yaml)
{
	char err[512];
	int r;

	memset(t, 0, sizeof(*t));
	snprintf(t->sys, sizeof(t->sys), "%s/sys", d);
	snprintf(t->dev, sizeof(t->dev), "%s/dev", d);
	snprintf(t->proc, sizeof(t->proc), "%s/proc", d);
	t->roots = (struct hal_roots){ t->sys, t->dev, t->proc };
	if (yaml) {
		snprintf(t->cfgpath, sizeof(t->cfgpath), "%s/config.yaml", d);
		FILE *f = fopen(t->cfgpath, "w");
		if (!f)
			return -1;
		fputs(yaml, f);
		fclose(f);
	}
	r = config_load(yaml ? t->cfgpath : NULL, &t->cfg, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "config: %s\n", err);
		return r;
	}
	r = registry_new(NULL, NULL, NULL, &t->reg);
	if (r < 0)
		return r;
	return inventory_discover(&t->roots, t->cfg, t->reg, &t->inv);
}

static inline void t_inv_close(struct t_inv *t)
{
	inventory_free(t->inv);
	registry_free(t->reg);
	config_free(t->cfg);
}

static inline struct dralet_device *t_find(const struct t_inv *t, const char *driver,
					   const char *name)
{
	return inventory_find(t->inv, driver, name);
}

/* ---- simulated boards (boards/<name>.yaml) ---- */

#include <sys/stat.h>

#include "boards/sim/board.h"

/*
 * A materialized tree of board @name: $DRALET_TEST_BOARDS_DIR/<name> when that
 * holds one already, else boards/<name>.yaml materialized into a temporary
 * directory (*ret_temp true: remove it with board_remove_tree). NULL when
 * the board or the materializer is not there (the test is skipped).
 */
static inline char *t_board(const char *name, bool *ret_temp)
{
	char path[4096], err[512];
	const char *dir = getenv("DRALET_TEST_BOARDS_DIR");
	struct stat st;
	char *tree = NULL;

	*ret_temp = false;
	if (dir) {
		snprintf(path, sizeof(path), "%s/%s/sys", dir, name);
		if (stat(path, &st) == 0) {
			snprintf(path, sizeof(path), "%s/%s", dir, name);
			return strdup(path);
		}
	}
	snprintf(path, sizeof(path), "boards/%s.yaml", name);
	if (stat(path, &st) < 0) {
		print_message("board %s not found; skipped\n", path);
		return NULL;
	}
	if (board_materialize_temp(path, &tree, err, sizeof(err)) < 0) {
		print_message("board %s cannot be materialized (%s); skipped\n", path, err);
		return NULL;
	}
	*ret_temp = true;
	return tree;
}

static inline void t_board_free(char *tree, bool temp)
{
	if (tree && temp)
		board_remove_tree(tree);
	free(tree);
}

/* "rdma" + "0000:04:00.1" -> "rdma-0000-04-00-1" */
static inline void t_name(const char *kind, const char *address, char *buf, size_t size)
{
	size_t o = (size_t)snprintf(buf, size, "%s-", kind);
	for (const char *p = address; *p && o + 1 < size; p++)
		buf[o++] = (*p == ':' || *p == '.') ? '-' : *p;
	buf[o] = '\0';
}
