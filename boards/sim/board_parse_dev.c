/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Board file -> model, part two: what hangs off one PCI function. SR-IOV,
 * FPGA managers/regions, Intel DFL, NVMe and generic char devices here;
 * netdevs and RDMA devices in board_parse_rdma.c, GPUs in board_parse_gpu.c.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boards/sim/board_parse.h"

static int p_fpga(struct pctx *c, struct board_func *f, struct json_object *obj,
		  const struct jpath *at)
{
	static const char *const mgr_keys[] = {
		"name", "under", "driver_name", "state", "status", "firmware", NULL,
	};
	static const char *const region_keys[] = { "name", "under", "compat_id", NULL };
	static const char *const states[] = {
		"unknown", "power off", "power up", "reset", "firmware request",
		"firmware request error", "write init", "write init error", "write", "write error",
		"write complete", "write complete error", "operating", NULL,
	};
	struct json_object *list = NULL;
	bool single = false;
	size_t n;
	int r;

	r = p_list_of(c, obj, "fpga_managers", at, &list, &n, &single);
	if (r < 0)
		return r;
	f->n_fpga_mgr = n;
	f->fpga_mgr = arena_alloc(c->a, n * sizeof(*f->fpga_mgr) + 1);
	if (!f->fpga_mgr)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct jpath kp = JP_KEY(at, "fpga_managers");
		struct jpath ip = JP_INDEX(&kp, i);
		const struct jpath *here = single ? &kp : &ip;
		struct json_object *e = p_item(list, single, i);
		struct board_fpga_mgr *m = &f->fpga_mgr[i];
		bool ok = false;

		r = p_check_keys(c, e, here, "fpga manager", mgr_keys);
		if (r < 0)
			return r;
		if ((r = p_name(c, e, "name", here, &m->name)) < 0 ||
		    (r = p_subpath(c, e, "under", here, &m->under)) < 0 ||
		    (r = p_text(c, e, "driver_name", here, &m->driver_name)) < 0)
			return r;
		m->state = "operating";
		m->status = "";
		if ((r = p_str(c, e, "state", here, &m->state)) < 0 ||
		    (r = p_str(c, e, "status", here, &m->status)) < 0 ||
		    (r = p_bool(c, e, "firmware", here, &m->firmware)) < 0)
			return r;
		for (const char *const *s = states; *s; s++)
			ok |= !strcmp(*s, m->state);
		if (!ok) {
			struct jpath sp = JP_KEY(here, "state");

			return board_fail(c->d, &sp, "unknown fpga manager state '%s'", m->state);
		}
	}

	r = p_list_of(c, obj, "fpga_regions", at, &list, &n, &single);
	if (r < 0)
		return r;
	f->n_fpga_region = n;
	f->fpga_region = arena_alloc(c->a, n * sizeof(*f->fpga_region) + 1);
	if (!f->fpga_region)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct jpath kp = JP_KEY(at, "fpga_regions");
		struct jpath ip = JP_INDEX(&kp, i);
		const struct jpath *here = single ? &kp : &ip;
		struct json_object *e = p_item(list, single, i);
		struct board_fpga_region *g = &f->fpga_region[i];

		r = p_check_keys(c, e, here, "fpga region", region_keys);
		if (r < 0)
			return r;
		if ((r = p_name(c, e, "name", here, &g->name)) < 0 ||
		    (r = p_subpath(c, e, "under", here, &g->under)) < 0 ||
		    (r = p_hex128(c, e, "compat_id", here, &g->compat_id)) < 0)
			return r;
	}
	return 0;
}

int p_platform(struct pctx *c, struct json_object *top, const struct jpath *at)
{
	static const char *const keys[] = { "device", "driver", "fpga_managers", "fpga_regions",
					    NULL };
	struct board *b = c->b;
	struct json_object *list = NULL;
	struct jpath kp = JP_KEY(at, "platform");
	int r;

	if ((r = p_bool(c, top, "configfs_overlays", at, &b->configfs_overlays)) < 0)
		return r;
	if (!json_object_object_get_ex(top, "platform", &list) || !list)
		return 0;
	if ((r = p_expect_list(c, list, &kp, "'platform'", false, NULL)) < 0)
		return r;
	b->n_platform = json_object_array_length(list);
	b->platform = arena_alloc(c->a, b->n_platform * sizeof(*b->platform) + 1);
	if (!b->platform)
		return -ENOMEM;
	for (size_t i = 0; i < b->n_platform; i++) {
		struct json_object *e = json_object_array_get_idx(list, i);
		struct jpath ip = JP_INDEX(&kp, i);
		struct board_platform *p = &b->platform[i];
		struct board_func f = { 0 };

		if ((r = p_check_keys(c, e, &ip, "platform device", keys)) < 0)
			return r;
		p->at = p_keep_path(c, &ip);
		if ((r = p_subpath(c, e, "device", &ip, &p->device)) < 0 ||
		    (r = p_name(c, e, "driver", &ip, &p->driver)) < 0 ||
		    (r = p_fpga(c, &f, e, &ip)) < 0)
			return r;
		if (!p->device || !p->driver)
			return board_fail(c->d, &ip, "a platform device needs 'device' (its path "
					  "below devices/platform) and 'driver'");
		for (size_t k = 0; k < f.n_fpga_mgr; k++)
			if (!f.fpga_mgr[k].name || f.fpga_mgr[k].under)
				return board_fail(c->d, &ip, "a platform device's fpga managers need "
						  "a 'name' and take no 'under'");
		for (size_t k = 0; k < f.n_fpga_region; k++)
			if (!f.fpga_region[k].name || f.fpga_region[k].under)
				return board_fail(c->d, &ip, "a platform device's fpga regions need "
						  "a 'name' and take no 'under'");
		p->n_fpga_mgr = f.n_fpga_mgr;
		p->fpga_mgr = f.fpga_mgr;
		p->n_fpga_region = f.n_fpga_region;
		p->fpga_region = f.fpga_region;
	}
	return 0;
}

/* A 64-bit value the kernel prints as 0x%llx: an integer or a hex string. */
static int p_hex64_text(struct pctx *c, struct json_object *obj, const char *key,
			const struct jpath *at, const char **ret)
{
	struct json_object *v = NULL;
	struct jpath kp = JP_KEY(at, key);
	unsigned long long x;
	char *end;

	if (!json_object_object_get_ex(obj, key, &v) || !v)
		return 0;
	if (json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0) {
		x = (unsigned long long)json_object_get_int64(v);
	} else if (json_object_is_type(v, json_type_string)) {
		const char *s = json_object_get_string(v);

		errno = 0;
		x = strtoull(s, &end, 16);
		if (!s[0] || errno || *end)
			return board_fail(c->d, &kp, "'%s' must be a hex number", key);
	} else {
		return board_fail(c->d, &kp, "'%s' must be a hex number", key);
	}
	*ret = arena_printf(c->a, "0x%llx", x);
	return *ret ? 1 : -ENOMEM;
}

static int p_dfl(struct pctx *c, struct board_func *f, struct json_object *obj,
		 const struct jpath *at)
{
	static const char *const keys[] = { "fme", "ports", NULL };
	static const char *const fme_keys[] = {
		"id", "bitstream_id", "bitstream_metadata", "compat_id", "ports_num", "socket_id",
		NULL,
	};
	static const char *const port_keys[] = { "id", "afu_id", NULL };
	struct json_object *v = NULL, *fme = NULL, *ports = NULL;
	struct jpath kp = JP_KEY(at, "dfl");
	struct jpath fp = JP_KEY(&kp, "fme");
	struct board_dfl *d;
	bool single = false;
	long long x;
	size_t n;
	int r;

	if (!json_object_object_get_ex(obj, "dfl", &v) || !v)
		return 0;
	r = p_check_keys(c, v, &kp, "'dfl'", keys);
	if (r < 0)
		return r;
	d = f->dfl = arena_alloc(c->a, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->fme_id = -1;
	d->ports_num = -1;
	if (!json_object_object_get_ex(v, "fme", &fme) || !fme)
		return board_fail(c->d, &kp, "'dfl' needs 'fme' (the FPGA management engine)");
	r = p_check_keys(c, fme, &fp, "dfl fme", fme_keys);
	if (r < 0)
		return r;
	if ((r = p_int(c, fme, "id", &fp, 0, 1023, &x)) < 0)
		return r;
	if (r > 0)
		d->fme_id = (int)x;
	if ((r = p_hex64_text(c, fme, "bitstream_id", &fp, &d->bitstream_id)) < 0 ||
	    (r = p_hex64_text(c, fme, "bitstream_metadata", &fp, &d->bitstream_metadata)) < 0 ||
	    (r = p_hex128(c, fme, "compat_id", &fp, &d->compat_id)) < 0)
		return r;
	if (!d->bitstream_id || !d->compat_id)
		return board_fail(c->d, &fp, "dfl fme needs 'bitstream_id' and 'compat_id' "
				  "(the PR interface id)");
	if (!d->bitstream_metadata)
		d->bitstream_metadata = "0x0";
	if ((r = p_int(c, fme, "ports_num", &fp, 0, 16, &x)) < 0)
		return r;
	if (r > 0)
		d->ports_num = (int)x;
	if ((r = p_int(c, fme, "socket_id", &fp, 0, 16, &x)) < 0)
		return r;
	if (r > 0)
		d->socket_id = (int)x;

	r = p_list_of(c, v, "ports", &kp, &ports, &n, &single);
	if (r < 0)
		return r;
	d->n_ports = n;
	d->ports = arena_alloc(c->a, n * sizeof(*d->ports) + 1);
	if (!d->ports)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct jpath pp = JP_KEY(&kp, "ports");
		struct jpath ip = JP_INDEX(&pp, i);
		const struct jpath *here = single ? &pp : &ip;
		struct json_object *e = p_item(ports, single, i);

		r = p_check_keys(c, e, here, "dfl port", port_keys);
		if (r < 0)
			return r;
		d->ports[i].id = -1;
		if ((r = p_int(c, e, "id", here, 0, 1023, &x)) < 0)
			return r;
		if (r > 0)
			d->ports[i].id = (int)x;
		if ((r = p_hex128(c, e, "afu_id", here, &d->ports[i].afu_id)) < 0)
			return r;
		if (!d->ports[i].afu_id)
			return board_fail(c->d, here, "a dfl port needs 'afu_id' (32 hex digits)");
	}
	if (d->ports_num < 0)
		d->ports_num = (int)n;
	return 0;
}

static int p_block(struct pctx *c, struct json_object *obj, const struct jpath *at,
		   struct board_block *blk, const char *what)
{
	static const char *const keys[] = { "name", "size", "partitions", NULL };
	static const char *const part_keys[] = { "name", "size", NULL };
	int r = p_check_keys(c, obj, at, what, blk->partition ? part_keys : keys);

	if (r < 0)
		return r;
	r = p_name(c, obj, "name", at, &blk->name);
	if (r < 0)
		return r;
	if (r == 0)
		return board_fail(c->d, at, "a %s needs a 'name'", what);
	r = p_size(c, obj, "size", at, &blk->size);
	if (r < 0)
		return r;
	if (r == 0)
		return board_fail(c->d, at, "a %s needs a 'size'", what);
	return 0;
}

static int p_nvme(struct pctx *c, struct board_func *f, struct json_object *obj,
		  const struct jpath *at)
{
	static const char *const keys[] = {
		"controller", "model", "serial", "firmware", "namespaces", NULL,
	};
	struct json_object *v = NULL, *list = NULL;
	struct jpath kp = JP_KEY(at, "nvme");
	struct board_nvme *nv;
	bool single = false;
	size_t n;
	int r;

	if (!json_object_object_get_ex(obj, "nvme", &v) || !v)
		return 0;
	r = p_check_keys(c, v, &kp, "'nvme'", keys);
	if (r < 0)
		return r;
	nv = f->nvme = arena_alloc(c->a, sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	r = p_name(c, v, "controller", &kp, &nv->controller);
	if (r < 0)
		return r;
	if (r == 0 || strncmp(nv->controller, "nvme", 4) || !isdigit((unsigned char)nv->controller[4]))
		return board_fail(c->d, &kp, "'nvme' needs 'controller' (nvmeN)");
	nv->instance = (unsigned)atoi(nv->controller + 4);
	nv->model = "SAMSUNG MZQL23T8HCLS-00A07";
	if ((r = p_text(c, v, "model", &kp, &nv->model)) < 0 ||
	    (r = p_text(c, v, "serial", &kp, &nv->serial)) < 0)
		return r;
	nv->firmware = "GDC5602Q";
	if ((r = p_text(c, v, "firmware", &kp, &nv->firmware)) < 0)
		return r;
	r = p_list_of(c, v, "namespaces", &kp, &list, &n, &single);
	if (r < 0)
		return r;
	nv->n_ns = n;
	nv->ns = arena_alloc(c->a, n * sizeof(*nv->ns) + 1);
	if (!nv->ns)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct jpath lp = JP_KEY(&kp, "namespaces");
		struct jpath ip = JP_INDEX(&lp, i);
		const struct jpath *here = single ? &lp : &ip;
		struct json_object *e = p_item(list, single, i), *parts = NULL;
		struct board_nvme_ns *ns = &nv->ns[i];
		bool psingle = false;
		size_t np;

		r = p_block(c, e, here, &ns->disk, "namespace");
		if (r < 0)
			return r;
		r = p_list_of(c, e, "partitions", here, &parts, &np, &psingle);
		if (r < 0)
			return r;
		ns->n_parts = np;
		ns->parts = arena_alloc(c->a, np * sizeof(*ns->parts) + 1);
		if (!ns->parts)
			return -ENOMEM;
		for (size_t k = 0; k < np; k++) {
			struct jpath pp = JP_KEY(here, "partitions");
			struct jpath kk = JP_INDEX(&pp, k);

			ns->parts[k].partition = (int)k + 1;
			r = p_block(c, p_item(parts, psingle, k), psingle ? &pp : &kk, &ns->parts[k],
				    "partition");
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int p_chardevs(struct pctx *c, struct board_func *f, struct json_object *obj,
		      const struct jpath *at)
{
	static const char *const keys[] = { "name", "class", "devname", "dev", NULL };
	struct json_object *list = NULL;
	bool single = false;
	size_t n;
	int r = p_list_of(c, obj, "chardevs", at, &list, &n, &single);

	if (r < 0)
		return r;
	f->n_chardev = n;
	f->chardev = arena_alloc(c->a, n * sizeof(*f->chardev) + 1);
	if (!f->chardev)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct jpath kp = JP_KEY(at, "chardevs");
		struct jpath ip = JP_INDEX(&kp, i);
		const struct jpath *here = single ? &kp : &ip;
		struct json_object *e = p_item(list, single, i);
		struct board_chardev *cd = &f->chardev[i];
		const char *dev = NULL;

		r = p_check_keys(c, e, here, "char device", keys);
		if (r < 0)
			return r;
		if ((r = p_name(c, e, "name", here, &cd->name)) < 0 ||
		    (r = p_name(c, e, "class", here, &cd->class_name)) < 0 ||
		    (r = p_subpath(c, e, "devname", here, &cd->devname)) < 0 ||
		    (r = p_str(c, e, "dev", here, &dev)) < 0)
			return r;
		if (!cd->name || !cd->class_name)
			return board_fail(c->d, here, "a char device needs 'name' and 'class'");
		if (!cd->devname)
			cd->devname = cd->name;
		cd->major = cd->minor = -1;
		if (dev) {
			struct jpath dp = JP_KEY(here, "dev");
			unsigned ma, mi;
			char tail;

			if (sscanf(dev, "%u:%u%c", &ma, &mi, &tail) != 2 || ma == 0 || ma > 4095 ||
			    mi > 1048575)
				return board_fail(c->d, &dp, "'dev' must be \"major:minor\"");
			cd->major = (int)ma;
			cd->minor = (int)mi;
		}
	}
	return 0;
}

int p_function_devices(struct pctx *c, struct board_func *f, struct json_object *obj,
		       const struct jpath *at)
{
	struct json_object *list = NULL;
	bool single = false;
	size_t n;
	int r;

	r = p_list_of(c, obj, "net", at, &list, &n, &single);
	if (r < 0)
		return r;
	f->n_net = n;
	f->net = arena_alloc(c->a, n * sizeof(*f->net) + 1);
	if (!f->net)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct jpath kp = JP_KEY(at, "net");
		struct jpath ip = JP_INDEX(&kp, i);

		r = p_netdev(c, p_item(list, single, i), single ? &kp : &ip, &f->net[i]);
		if (r < 0)
			return r;
	}

	r = p_list_of(c, obj, "infiniband", at, &list, &n, &single);
	if (r < 0)
		return r;
	f->n_ib = n;
	f->ib = arena_alloc(c->a, n * sizeof(*f->ib) + 1);
	if (!f->ib)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct jpath kp = JP_KEY(at, "infiniband");
		struct jpath ip = JP_INDEX(&kp, i);

		r = p_ibdev(c, p_item(list, single, i), single ? &kp : &ip, &f->ib[i], false);
		if (r < 0)
			return r;
	}

	if ((r = p_drm(c, f, obj, at)) < 0 || (r = p_fpga(c, f, obj, at)) < 0 ||
	    (r = p_dfl(c, f, obj, at)) < 0 || (r = p_nvme(c, f, obj, at)) < 0 ||
	    (r = p_nvidia(c, f, obj, at)) < 0 || (r = p_chardevs(c, f, obj, at)) < 0 ||
	    (r = p_kfd(c, f, obj, at)) < 0)
		return r;
	return 0;
}

int p_sriov(struct pctx *c, struct board_func *f, struct json_object *obj,
	    const struct jpath *at)
{
	static const char *const keys[] = {
		"total", "num", "offset", "stride", "vf_id", "vf_driver", "vf_class",
		"vf_subsystem", "vf_net", "vf_rdma", "vf_bars", "autoprobe", "vfs", NULL,
	};
	struct json_object *v = NULL, *over = NULL;
	struct jpath kp = JP_KEY(at, "sriov");
	uint16_t vendor = 0;
	long long x;
	int r;

	if (!json_object_object_get_ex(obj, "sriov", &v) || !v)
		return 0;
	r = p_check_keys(c, v, &kp, "'sriov'", keys);
	if (r < 0)
		return r;
	if (board_kind_is_bridge(f->kind))
		return board_fail(c->d, &kp, "bridges do not have SR-IOV");
	f->has_sriov = true;
	if ((r = p_int(c, v, "total", &kp, 1, 65535, &x)) <= 0)
		return r < 0 ? r : board_fail(c->d, &kp, "'sriov' needs 'total' (sriov_totalvfs)");
	f->total_vfs = (unsigned)x;
	f->num_vfs = f->total_vfs;
	if ((r = p_int(c, v, "num", &kp, 0, f->total_vfs, &x)) < 0)
		return r;
	if (r > 0)
		f->num_vfs = (unsigned)x;
	f->vf_offset = f->vf_stride = 1;
	if ((r = p_int(c, v, "offset", &kp, 1, 65535, &x)) < 0)
		return r;
	if (r > 0)
		f->vf_offset = (unsigned)x;
	if ((r = p_int(c, v, "stride", &kp, 1, 65535, &x)) < 0)
		return r;
	if (r > 0)
		f->vf_stride = (unsigned)x;
	if ((r = p_id_pair(c, v, "vf_id", &kp, &vendor, &f->vf_device)) < 0)
		return r;
	if (r == 0)
		return board_fail(c->d, &kp, "'sriov' needs 'vf_id' (\"vendor:device\" of the VFs)");
	if (vendor != f->vendor) {
		struct jpath ip = JP_KEY(&kp, "vf_id");

		return board_fail(c->d, &ip, "VFs carry their PF's vendor id %04x, not %04x",
				  f->vendor, vendor);
	}
	if ((r = p_name(c, v, "vf_driver", &kp, &f->vf_driver)) < 0)
		return r;
	f->vf_class = f->class_code;
	if ((r = p_int(c, v, "vf_class", &kp, 0, 0xffffff, &x)) < 0)
		return r;
	if (r > 0)
		f->vf_class = (uint32_t)x;
	f->vf_sub_vendor = f->sub_vendor;
	f->vf_sub_device = f->sub_device;
	if ((r = p_id_pair(c, v, "vf_subsystem", &kp, &f->vf_sub_vendor, &f->vf_sub_device)) < 0)
		return r;
	if ((r = p_str(c, v, "vf_net", &kp, &f->vf_net)) < 0 ||
	    (r = p_name(c, v, "vf_rdma", &kp, &f->vf_rdma)) < 0)
		return r;
	f->vf_bars[0] = (struct board_bar){ .size = 1u << 20, .is64 = true, .prefetch = true };
	if ((r = p_bars(c, v, "vf_bars", &kp, f->vf_bars)) < 0)
		return r;
	f->sriov_autoprobe = true;
	if ((r = p_bool(c, v, "autoprobe", &kp, &f->sriov_autoprobe)) < 0)
		return r;

	/* for every VF the PF can have: those beyond `num` appear when
	 * sriov_numvfs is written (the kernel model, board_node_ops.h) */
	f->vf_settings = arena_alloc(c->a, (f->total_vfs + 1) * sizeof(*f->vf_settings));
	if (!f->vf_settings)
		return -ENOMEM;
	for (unsigned i = 0; i <= f->total_vfs; i++)
		f->vf_settings[i] = (struct board_vf_setting){ .iommu_group = -1 };
	if (json_object_object_get_ex(v, "vfs", &over) && over) {
		struct jpath op = JP_KEY(&kp, "vfs");

		r = p_expect_object(c, over, &op, "'vfs' (VF number or range -> settings)");
		if (r < 0)
			return r;
		json_object_object_foreach(over, range, settings) {
			static const char *const vkeys[] = { "driver", "iommu_group", "net", "rdma",
							     NULL };
			struct jpath rp = JP_KEY(&op, range);
			unsigned lo, hi;
			char dash, tail;
			const char *drv = NULL;
			bool has_driver, net = true, rdma = true;
			long long group = -1;
			int k = sscanf(range, "%u%c%u%c", &lo, &dash, &hi, &tail);

			if (k == 1)
				hi = lo;
			else if (k != 3 || dash != '-')
				return board_fail(c->d, &rp, "'%s' is not a VF number or range (\"0-7\")",
						  range);
			if (lo > hi || hi >= f->total_vfs)
				return board_fail(c->d, &rp, "VF range %s is outside 0..%u", range,
						  f->total_vfs - 1);
			r = p_check_keys(c, settings, &rp, "VF settings", vkeys);
			if (r < 0)
				return r;
			has_driver = json_object_object_get_ex(settings, "driver", NULL);
			if ((has_driver && (r = p_name(c, settings, "driver", &rp, &drv)) < 0) ||
			    (r = p_int(c, settings, "iommu_group", &rp, 0, 65535, &group)) < 0 ||
			    (r = p_bool(c, settings, "net", &rp, &net)) < 0 ||
			    (r = p_bool(c, settings, "rdma", &rp, &rdma)) < 0)
				return r;
			for (unsigned i = lo; i <= hi; i++) {
				struct board_vf_setting *set = &f->vf_settings[i];

				if (has_driver)
					set->driver = drv ? drv : "";	/* "" = unbound */
				if (group >= 0)
					set->iommu_group = (int)group;
				set->no_net |= !net;
				set->no_rdma |= !rdma;
			}
		}
	}
	return 0;
}
