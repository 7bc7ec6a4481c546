/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Board file → model, part two: what hangs off one PCI function. SR-IOV,
 * netdevs, RDMA devices, DRM nodes, FPGA managers/regions, Intel DFL,
 * NVMe, NVIDIA (with MIG), generic char devices and the ROCm kfd node.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/board/board_parse.h"

struct named_int {
	const char *name;
	int value;
};

static const struct named_int port_states[] = {
	{ "NOP", 0 }, { "DOWN", 1 }, { "INIT", 2 }, { "ARMED", 3 }, { "ACTIVE", 4 },
	{ "ACTIVE_DEFER", 5 }, { NULL, 0 },
};
static const struct named_int phys_states[] = {
	{ "Sleep", 1 }, { "Polling", 2 }, { "Disabled", 3 }, { "PortConfigurationTraining", 4 },
	{ "LinkUp", 5 }, { "LinkErrorRecovery", 6 }, { "Phy Test", 7 }, { NULL, 0 },
};
static const struct named_int node_types[] = {
	{ "CA", 1 }, { "switch", 2 }, { "router", 3 }, { "RNIC", 4 }, { "usNIC", 5 },
	{ "usNIC UDP", 6 }, { "unspecified", 7 }, { NULL, 0 },
};

/* A name from @table, or its number, or the kernel's "N: NAME" form. */
static int p_enum(struct pctx *c, struct json_object *obj, const char *key,
		  const struct jpath *at, const struct named_int *table, int *ret)
{
	const char *s = NULL;
	struct jpath kp = JP_KEY(at, key);
	int r = p_text(c, obj, key, at, &s);

	if (r <= 0)
		return r;
	if (isdigit((unsigned char)s[0]) && strchr(s, ':'))
		s = strchr(s, ':') + 1 + (strchr(s, ':')[1] == ' ');
	for (const struct named_int *t = table; t->name; t++)
		if (!strcmp(t->name, s) ||
		    (isdigit((unsigned char)s[0]) && atoi(s) == t->value && !strchr(s, ' '))) {
			*ret = t->value;
			return 1;
		}
	{
		char names[256] = "";

		for (const struct named_int *t = table; t->name; t++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 names[0] ? ", " : "", t->name);
		return board_fail(c->d, &kp, "'%s' is '%s'; expected one of %s", key, s, names);
	}
}

static bool is_hex_string(const char *s, size_t len)
{
	if (strlen(s) != len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* 32 hex digits (a UUID written without dashes, as DFL and FPGA regions do). */
static int p_hex128(struct pctx *c, struct json_object *obj, const char *key,
		    const struct jpath *at, const char **ret)
{
	struct jpath kp = JP_KEY(at, key);
	int r = p_str(c, obj, key, at, ret);

	if (r > 0 && !is_hex_string(*ret, 32))
		return board_fail(c->d, &kp, "'%s' must be 32 hex digits", key);
	return r;
}

/* A relative sub-path inside a device directory ("fmgr.m.0"). */
static int p_subpath(struct pctx *c, struct json_object *obj, const char *key,
		     const struct jpath *at, const char **ret)
{
	struct jpath kp = JP_KEY(at, key);
	int r = p_str(c, obj, key, at, ret);

	if (r <= 0)
		return r;
	if (!(*ret)[0] || (*ret)[0] == '/' || strstr(*ret, "..") || strstr(*ret, "//") ||
	    (*ret)[strlen(*ret) - 1] == '/')
		return board_fail(c->d, &kp, "'%s' must be a relative path inside the device", key);
	return 1;
}

/* Items of a list-valued key (a single mapping counts as a list of one). */
static int list_of(struct pctx *c, struct json_object *obj, const char *key,
		   const struct jpath *at, struct json_object **ret_list, size_t *ret_n,
		   bool *ret_single)
{
	struct json_object *v = NULL;
	struct jpath kp = JP_KEY(at, key);
	int r;

	*ret_n = 0;
	if (!json_object_object_get_ex(obj, key, &v) || !v)
		return 0;
	r = p_expect_list(c, v, &kp, key, true, ret_single);
	if (r < 0)
		return r;
	*ret_list = v;
	*ret_n = *ret_single ? 1 : json_object_array_length(v);
	return 1;
}

static struct json_object *item(struct json_object *list, bool single, size_t i)
{
	return single ? list : json_object_array_get_idx(list, i);
}

static int p_mac(struct pctx *c, struct json_object *obj, const struct jpath *at,
		 const char **ret)
{
	struct jpath kp = JP_KEY(at, "mac");
	const char *s = NULL;
	int r = p_str(c, obj, "mac", at, &s);
	size_t len;

	if (r <= 0)
		return r;
	len = strlen(s);
	if (len != 17 && len != 59)
		goto bad;
	for (size_t i = 0; i < len; i++)
		if ((i % 3 == 2) ? s[i] != ':' : !isxdigit((unsigned char)s[i]))
			goto bad;
	{
		char *lower = arena_strdup(c->a, s);

		if (!lower)
			return -ENOMEM;
		for (char *p = lower; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		*ret = lower;
	}
	return 1;
bad:
	return board_fail(c->d, &kp, "'mac' must be 6 (or 20, for IPoIB) colon-separated hex "
			  "bytes");
}

static bool valid_ipv4_cidr(const char *s)
{
	unsigned a, b, c, d, n;
	char tail;

	return sscanf(s, "%u.%u.%u.%u/%u%c", &a, &b, &c, &d, &n, &tail) == 5 && a < 256 &&
	       b < 256 && c < 256 && d < 256 && n <= 32;
}

static int p_netdev(struct pctx *c, struct json_object *obj, const struct jpath *at,
		    struct board_netdev *n)
{
	static const char *const keys[] = {
		"name", "mac", "operstate", "speed", "mtu", "ifindex", "type", "ipv4",
		"phys_port_name", "phys_switch_id", "dev_port", NULL,
	};
	static const char *const states[] = {
		"up", "down", "unknown", "dormant", "lowerlayerdown", "notpresent", "testing", NULL,
	};
	long long x;
	const char *s = NULL;
	int r = p_check_keys(c, obj, at, "netdev", keys);

	if (r < 0)
		return r;
	n->at = p_keep_path(c, at);
	r = p_name(c, obj, "name", at, &n->name);
	if (r < 0)
		return r;
	if (r == 0 || strlen(n->name) > 15) {
		struct jpath kp = JP_KEY(at, "name");

		return board_fail(c->d, r ? &kp : at, "a netdev needs a 'name' of 1 to 15 characters");
	}
	if ((r = p_mac(c, obj, at, &n->mac)) < 0)
		return r;
	n->operstate = "up";
	if ((r = p_str(c, obj, "operstate", at, &n->operstate)) < 0)
		return r;
	for (const char *const *p = states; *p; p++)
		if (!strcmp(*p, n->operstate))
			goto state_ok;
	{
		struct jpath kp = JP_KEY(at, "operstate");

		return board_fail(c->d, &kp, "unknown operstate '%s' (up, down, unknown, dormant, "
				  "lowerlayerdown, notpresent, testing)", n->operstate);
	}
state_ok:
	n->speed = -1;
	if ((r = p_int(c, obj, "speed", at, -1, 10000000, &x)) < 0)
		return r;
	if (r > 0)
		n->speed = (long)x;
	n->mtu = 1500;
	if ((r = p_int(c, obj, "mtu", at, 68, 65535, &x)) < 0)
		return r;
	if (r > 0)
		n->mtu = (int)x;
	if ((r = p_int(c, obj, "ifindex", at, 2, 0x7fffffff, &x)) < 0)
		return r;
	if (r > 0)
		n->ifindex = (int)x;
	n->type = 1;
	if ((r = p_str(c, obj, "type", at, &s)) < 0)
		return r;
	if (r > 0) {
		struct jpath kp = JP_KEY(at, "type");

		if (!strcmp(s, "ether") || !strcmp(s, "ethernet"))
			n->type = 1;
		else if (!strcmp(s, "infiniband"))
			n->type = 32;
		else
			return board_fail(c->d, &kp, "netdev type is 'ethernet' or 'infiniband'");
	}
	if (n->mac && (strlen(n->mac) == 59) != (n->type == 32)) {
		struct jpath kp = JP_KEY(at, "mac");

		return board_fail(c->d, &kp, "an %s netdev has a %d-byte address",
				  n->type == 32 ? "infiniband" : "ethernet", n->type == 32 ? 20 : 6);
	}
	if ((r = p_str(c, obj, "ipv4", at, &n->ipv4)) < 0)
		return r;
	if (n->ipv4 && !valid_ipv4_cidr(n->ipv4)) {
		struct jpath kp = JP_KEY(at, "ipv4");

		return board_fail(c->d, &kp, "'ipv4' must be like \"10.0.0.5/24\"");
	}
	if ((r = p_name(c, obj, "phys_port_name", at, &n->phys_port_name)) < 0)
		return r;
	if ((r = p_name(c, obj, "phys_switch_id", at, &n->phys_switch_id)) < 0)
		return r;
	if ((r = p_int(c, obj, "dev_port", at, 0, 255, &x)) < 0)
		return r;
	if (r > 0)
		n->dev_port = (int)x;
	return 0;
}

static bool valid_guid(const char *s)
{
	if (strlen(s) != 19)
		return false;
	for (int i = 0; i < 19; i++)
		if ((i % 5 == 4) ? s[i] != ':' : !isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

static int p_ibport(struct pctx *c, struct json_object *obj, const struct jpath *at,
		    struct board_ibport *p)
{
	static const char *const keys[] = {
		"state", "phys_state", "link_layer", "rate", "netdev", NULL,
	};
	int r = p_check_keys(c, obj, at, "infiniband port", keys);

	if (r < 0)
		return r;
	if ((r = p_enum(c, obj, "state", at, port_states, &p->state)) < 0)
		return r;
	if ((r = p_enum(c, obj, "phys_state", at, phys_states, &p->phys_state)) < 0)
		return r;
	if ((r = p_str(c, obj, "link_layer", at, &p->link_layer)) < 0)
		return r;
	if (p->link_layer && strcmp(p->link_layer, "InfiniBand") &&
	    strcmp(p->link_layer, "Ethernet") && strcmp(p->link_layer, "Unknown")) {
		struct jpath kp = JP_KEY(at, "link_layer");

		return board_fail(c->d, &kp, "link_layer is InfiniBand, Ethernet or Unknown");
	}
	if ((r = p_str(c, obj, "rate", at, &p->rate)) < 0)
		return r;
	if (p->rate && !strstr(p->rate, " Gb/sec")) {
		struct jpath kp = JP_KEY(at, "rate");

		return board_fail(c->d, &kp, "rate must read like the kernel's: "
				  "\"400 Gb/sec (4X NDR)\"");
	}
	return p_name(c, obj, "netdev", at, &p->netdev) < 0 ? -EINVAL : 0;
}

int p_ibdev(struct pctx *c, struct json_object *obj, const struct jpath *at,
	    struct board_ibdev *ib, bool soft)
{
	static const char *const keys[] = {
		"name", "node_guid", "sys_image_guid", "fw_ver", "hca_type", "hw_rev", "board_id",
		"node_desc", "node_type", "ports", "uverbs", NULL,
	};
	static const char *const soft_keys[] = {
		"name", "node_guid", "sys_image_guid", "fw_ver", "hca_type", "hw_rev", "board_id",
		"node_desc", "node_type", "ports", "uverbs", "netdev", NULL,
	};
	struct json_object *ports = NULL;
	size_t n = 0;
	bool single = false;
	long long x;
	int r = p_check_keys(c, obj, at, soft ? "rxe device" : "infiniband device",
			     soft ? soft_keys : keys);

	if (r < 0)
		return r;
	ib->at = p_keep_path(c, at);
	r = p_name(c, obj, "name", at, &ib->name);
	if (r < 0)
		return r;
	if (r == 0)
		return board_fail(c->d, at, "an RDMA device needs a 'name' (e.g. mlx5_0)");
	for (int i = 0; i < 2; i++) {
		const char *key = i ? "sys_image_guid" : "node_guid";
		const char **dst = i ? &ib->sys_image_guid : &ib->node_guid;
		struct jpath kp = JP_KEY(at, key);

		if ((r = p_str(c, obj, key, at, dst)) < 0)
			return r;
		if (*dst && !valid_guid(*dst))
			return board_fail(c->d, &kp, "'%s' must be like \"b83f:d203:00a1:b2c4\"", key);
	}
	if ((r = p_text(c, obj, "fw_ver", at, &ib->fw_ver)) < 0 ||
	    (r = p_text(c, obj, "hca_type", at, &ib->hca_type)) < 0 ||
	    (r = p_text(c, obj, "hw_rev", at, &ib->hw_rev)) < 0 ||
	    (r = p_text(c, obj, "board_id", at, &ib->board_id)) < 0 ||
	    (r = p_text(c, obj, "node_desc", at, &ib->node_desc)) < 0)
		return r;
	ib->node_type = 1;
	if ((r = p_enum(c, obj, "node_type", at, node_types, &ib->node_type)) < 0)
		return r;
	ib->uverbs = -1;
	if ((r = p_int(c, obj, "uverbs", at, 0, 1023, &x)) < 0)
		return r;
	if (r > 0)
		ib->uverbs = (int)x;
	if (soft) {
		r = p_name(c, obj, "netdev", at, &ib->parent_netdev);
		if (r < 0)
			return r;
		if (r == 0)
			return board_fail(c->d, at, "an rxe device needs 'netdev' (its parent)");
	}
	r = list_of(c, obj, "ports", at, &ports, &n, &single);
	if (r < 0)
		return r;
	ib->n_ports = n ? n : 1;
	ib->ports = arena_alloc(c->a, ib->n_ports * sizeof(*ib->ports));
	if (!ib->ports)
		return -ENOMEM;
	for (size_t i = 0; i < ib->n_ports; i++) {
		struct board_ibport *p = &ib->ports[i];
		struct jpath kp = JP_KEY(at, "ports");
		struct jpath ip = JP_INDEX(&kp, i);

		p->number = (unsigned)i + 1;
		p->state = 4;
		p->phys_state = 5;
		if (n) {
			r = p_ibport(c, item(ports, single, i), single ? &kp : &ip, p);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int p_drm(struct pctx *c, struct board_func *f, struct json_object *obj,
		 const struct jpath *at)
{
	static const char *const keys[] = { "card", "render", NULL };
	struct json_object *v = NULL;
	struct jpath kp = JP_KEY(at, "drm");
	int r;

	f->drm.card = f->drm.render = -1;
	if (!json_object_object_get_ex(obj, "drm", &v) || !v)
		return 0;
	if (json_object_is_type(v, json_type_boolean)) {
		if (json_object_get_boolean(v))
			f->drm.card = f->drm.render = -2;
		return 0;
	}
	r = p_check_keys(c, v, &kp, "'drm' (or true)", keys);
	if (r < 0)
		return r;
	f->drm.card = f->drm.render = -2;
	for (int i = 0; i < 2; i++) {
		const char *key = i ? "render" : "card";
		int *dst = i ? &f->drm.render : &f->drm.card;
		struct json_object *e = NULL;
		struct jpath ep = JP_KEY(&kp, key);
		long long x;

		if (!json_object_object_get_ex(v, key, &e))
			continue;
		if (!e || json_object_is_type(e, json_type_boolean)) {
			*dst = e && json_object_get_boolean(e) ? -2 : -1;
			continue;
		}
		r = p_int(c, v, key, &kp, i ? 128 : 0, i ? 255 : 127, &x);
		if (r < 0)
			return r;
		*dst = (int)x;
		(void)ep;
	}
	return 0;
}

static int p_fpga(struct pctx *c, struct board_func *f, struct json_object *obj,
		  const struct jpath *at)
{
	static const char *const mgr_keys[] = {
		"name", "under", "driver_name", "state", "status", NULL,
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

	r = list_of(c, obj, "fpga_managers", at, &list, &n, &single);
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
		struct json_object *e = item(list, single, i);
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
		    (r = p_str(c, e, "status", here, &m->status)) < 0)
			return r;
		for (const char *const *s = states; *s; s++)
			ok |= !strcmp(*s, m->state);
		if (!ok) {
			struct jpath sp = JP_KEY(here, "state");

			return board_fail(c->d, &sp, "unknown fpga manager state '%s'", m->state);
		}
	}

	r = list_of(c, obj, "fpga_regions", at, &list, &n, &single);
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
		struct json_object *e = item(list, single, i);
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

	r = list_of(c, v, "ports", &kp, &ports, &n, &single);
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
		struct json_object *e = item(ports, single, i);

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
	r = list_of(c, v, "namespaces", &kp, &list, &n, &single);
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
		struct json_object *e = item(list, single, i), *parts = NULL;
		struct board_nvme_ns *ns = &nv->ns[i];
		bool psingle = false;
		size_t np;

		r = p_block(c, e, here, &ns->disk, "namespace");
		if (r < 0)
			return r;
		r = list_of(c, e, "partitions", here, &parts, &np, &psingle);
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
			r = p_block(c, item(parts, psingle, k), psingle ? &pp : &kk, &ns->parts[k],
				    "partition");
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int p_mig(struct pctx *c, struct board_func *f, struct json_object *obj,
		 const struct jpath *at, struct board_mig *m)
{
	static const char *const keys[] = {
		"profile", "gi", "ci", "placement", "gi_profile_id", "ci_profile_id", "memory",
		"multiprocessors", "copy_engines", "decoders", "encoders", "jpeg_engines",
		"ofa_engines", "uuid", NULL,
	};
	const struct board_mig_profile *prof;
	long long x;
	int r = p_check_keys(c, obj, at, "MIG device", keys);
	struct {
		const char *key;
		int *dst;
		int def;
	} counts[] = {
		{ "gi_profile_id", &m->gi_profile_id, 0 },
		{ "ci_profile_id", &m->ci_profile_id, 0 },
		{ "multiprocessors", &m->multiprocessors, 0 },
		{ "copy_engines", &m->copy_engines, 0 },
		{ "decoders", &m->decoders, 0 },
		{ "encoders", &m->encoders, 0 },
		{ "jpeg_engines", &m->jpeg_engines, 0 },
		{ "ofa_engines", &m->ofa_engines, 0 },
	};

	if (r < 0)
		return r;
	m->at = p_keep_path(c, at);
	r = p_str(c, obj, "profile", at, &m->profile);
	if (r < 0)
		return r;
	if (r == 0)
		return board_fail(c->d, at, "a MIG device needs 'profile' (e.g. 1g.10gb)");
	prof = board_mig_profile(f->device, m->profile);
	if (prof) {
		counts[0].def = prof->gi_profile_id;
		/* the default compute instance spans the whole GPU instance;
		 * compute-instance profile ids follow the slice naming */
		counts[1].def = prof->slices == 1 ? 0 : prof->slices == 2 ? 1 : prof->slices == 3 ? 2
			      : prof->slices == 4 ? 3 : 4;
		counts[2].def = prof->multiprocessors;
		counts[3].def = prof->copy_engines;
		counts[4].def = prof->decoders;
		counts[5].def = prof->encoders;
		counts[6].def = prof->jpeg_engines;
		counts[7].def = prof->ofa_engines;
		m->memory_bytes = prof->memory_mib << 20;
		m->placement_size = prof->slices == 7 && f->device >= 0x20b0 && f->device <= 0x20f3
					    ? 8 : prof->slices;
	}
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		*counts[i].dst = counts[i].def;
		r = p_int(c, obj, counts[i].key, at, 0, 1024, &x);
		if (r < 0)
			return r;
		if (r > 0)
			*counts[i].dst = (int)x;
		else if (!prof && i >= 2 && i != 5 && i != 6 && i != 7)
			return board_fail(c->d, at, "MIG profile '%s' is not in the built-in tables "
					  "for %04x:%04x; give '%s' and the other counts", m->profile,
					  f->vendor, f->device, counts[i].key);
	}
	if ((r = p_size(c, obj, "memory", at, &m->memory_bytes)) < 0)
		return r;
	if (!m->memory_bytes)
		return board_fail(c->d, at, "MIG device needs 'memory'");
	m->gi = -1;
	if ((r = p_int(c, obj, "gi", at, 0, 14, &x)) < 0)
		return r;
	if (r > 0)
		m->gi = (int)x;
	if ((r = p_int(c, obj, "ci", at, 0, 7, &x)) < 0)
		return r;
	m->ci = r > 0 ? (int)x : 0;
	{
		struct json_object *pl = NULL;
		struct jpath pp = JP_KEY(at, "placement");

		if (!json_object_object_get_ex(obj, "placement", &pl) || !pl)
			return board_fail(c->d, at, "MIG device needs 'placement' (the first memory "
					  "slice, or {start, size})");
		if (json_object_is_type(pl, json_type_object)) {
			static const char *const pkeys[] = { "start", "size", NULL };

			r = p_check_keys(c, pl, &pp, "placement", pkeys);
			if (r < 0)
				return r;
			if ((r = p_int(c, pl, "start", &pp, 0, 7, &x)) <= 0)
				return r < 0 ? r : board_fail(c->d, &pp, "placement needs 'start'");
			m->placement_start = (int)x;
			if ((r = p_int(c, pl, "size", &pp, 1, 8, &x)) < 0)
				return r;
			if (r > 0)
				m->placement_size = (int)x;
		} else {
			if ((r = p_int(c, obj, "placement", at, 0, 7, &x)) < 0)
				return r;
			m->placement_start = (int)x;
		}
		if (prof && prof->slices < 7 &&
		    (prof->slices == 1 ? m->placement_start > 6
		     : prof->slices == 3 ? m->placement_start % 4 != 0
					 : m->placement_start % prof->slices != 0 ||
					   m->placement_start + prof->slices > 6 + (prof->slices == 4)))
			return board_fail(c->d, &pp, "profile %s cannot start at memory slice %d",
					  m->profile, m->placement_start);
		if (prof && prof->slices == 7 && m->placement_start != 0)
			return board_fail(c->d, &pp, "profile %s starts at slice 0", m->profile);
		if (m->placement_size < 1 || m->placement_start + m->placement_size > 8)
			return board_fail(c->d, &pp, "placement %d+%d does not fit the GPU's 8 memory "
					  "slices", m->placement_start, m->placement_size);
	}
	return p_str(c, obj, "uuid", at, &m->uuid) < 0 ? -EINVAL : 0;
}

static bool valid_uuid(const char *s)
{
	static const int dash[] = { 8, 13, 18, 23 };

	if (strlen(s) != 36)
		return false;
	for (int i = 0, d = 0; i < 36; i++) {
		if (d < 4 && i == dash[d]) {
			if (s[i] != '-')
				return false;
			d++;
		} else if (!isxdigit((unsigned char)s[i])) {
			return false;
		}
	}
	return true;
}

/* NVML identity defaults of common data-centre GPUs (NVML's names; the
 * compute capability of each architecture). */
static const struct {
	uint16_t device;
	const char *name, *architecture, *cuda_cc;
} nvidia_defaults[] = {
	{ 0x20b0, "NVIDIA A100-SXM4-40GB", "Ampere", "8.0" },
	{ 0x20b2, "NVIDIA A100-SXM4-80GB", "Ampere", "8.0" },
	{ 0x20b5, "NVIDIA A100 80GB PCIe", "Ampere", "8.0" },
	{ 0x20f1, "NVIDIA A100-PCIE-40GB", "Ampere", "8.0" },
	{ 0x2330, "NVIDIA H100 80GB HBM3", "Hopper", "9.0" },
	{ 0x2331, "NVIDIA H100 PCIe", "Hopper", "9.0" },
	{ 0x2321, "NVIDIA H100 NVL", "Hopper", "9.0" },
	{ 0x2335, "NVIDIA H200", "Hopper", "9.0" },
	{ 0x233b, "NVIDIA H200 NVL", "Hopper", "9.0" },
	{ 0x26b5, "NVIDIA L40", "Ada Lovelace", "8.9" },
	{ 0x26b9, "NVIDIA L40S", "Ada Lovelace", "8.9" },
	{ 0x2901, "NVIDIA B200", "Blackwell", "10.0" },
};

static int p_nvidia(struct pctx *c, struct board_func *f, struct json_object *obj,
		    const struct jpath *at)
{
	static const char *const keys[] = {
		"minor", "uuid", "model", "vbios", "gsp_firmware", "irq", "dma_bits", "excluded",
		"nvml", "mig", NULL,
	};
	static const char *const nvml_keys[] = {
		"name", "brand", "architecture", "cuda_compute_capability", "memory", "mig_mode",
		NULL,
	};
	struct json_object *v = NULL, *nvml = NULL, *migs = NULL;
	struct jpath kp = JP_KEY(at, "nvidia");
	struct board_nvidia *nv;
	bool single = false;
	long long x;
	size_t n;
	int r;

	if (!json_object_object_get_ex(obj, "nvidia", &v) || !v)
		return 0;
	r = p_check_keys(c, v, &kp, "'nvidia'", keys);
	if (r < 0)
		return r;
	nv = f->nvidia = arena_alloc(c->a, sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	nv->at = p_keep_path(c, &kp);
	nv->minor = -1;
	if ((r = p_int(c, v, "minor", &kp, 0, 253, &x)) < 0)
		return r;
	if (r > 0)
		nv->minor = (int)x;
	if ((r = p_str(c, v, "uuid", &kp, &nv->uuid)) < 0)
		return r;
	if (nv->uuid && (strncmp(nv->uuid, "GPU-", 4) || !valid_uuid(nv->uuid + 4))) {
		struct jpath up = JP_KEY(&kp, "uuid");

		return board_fail(c->d, &up, "'uuid' must be GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx");
	}
	nv->model = "NVIDIA GPU";
	nv->architecture = "Unknown";
	nv->cuda_cc = "0.0";
	for (size_t i = 0; i < sizeof(nvidia_defaults) / sizeof(nvidia_defaults[0]); i++)
		if (nvidia_defaults[i].device == f->device) {
			nv->model = nvidia_defaults[i].name;
			nv->architecture = nvidia_defaults[i].architecture;
			nv->cuda_cc = nvidia_defaults[i].cuda_cc;
		}
	nv->vbios = "96.00.00.00.01";
	if ((r = p_text(c, v, "model", &kp, &nv->model)) < 0 ||
	    (r = p_text(c, v, "vbios", &kp, &nv->vbios)) < 0 ||
	    (r = p_text(c, v, "gsp_firmware", &kp, &nv->gsp_firmware)) < 0)
		return r;
	nv->irq = -1;
	if ((r = p_int(c, v, "irq", &kp, 0, 65535, &x)) < 0)
		return r;
	if (r > 0)
		nv->irq = (int)x;
	nv->dma_bits = 52;
	if ((r = p_int(c, v, "dma_bits", &kp, 32, 64, &x)) < 0)
		return r;
	if (r > 0)
		nv->dma_bits = (int)x;
	if ((r = p_bool(c, v, "excluded", &kp, &nv->excluded)) < 0)
		return r;

	if (json_object_object_get_ex(v, "nvml", &nvml) && nvml) {
		struct jpath np = JP_KEY(&kp, "nvml");
		struct json_object *mode = NULL;

		r = p_check_keys(c, nvml, &np, "'nvml'", nvml_keys);
		if (r < 0)
			return r;
		nv->has_nvml = true;
		nv->nvml_name = nv->model;
		nv->brand = "NVIDIA";
		if ((r = p_text(c, nvml, "name", &np, &nv->nvml_name)) < 0 ||
		    (r = p_text(c, nvml, "brand", &np, &nv->brand)) < 0 ||
		    (r = p_text(c, nvml, "architecture", &np, &nv->architecture)) < 0 ||
		    (r = p_text(c, nvml, "cuda_compute_capability", &np, &nv->cuda_cc)) < 0)
			return r;
		r = p_size(c, nvml, "memory", &np, &nv->memory_total);
		if (r < 0)
			return r;
		if (r == 0)
			return board_fail(c->d, &np, "'nvml' needs 'memory' (total bytes)");
		if (json_object_object_get_ex(nvml, "mig_mode", &mode) && mode) {
			struct jpath mp = JP_KEY(&np, "mig_mode");

			if (json_object_is_type(mode, json_type_boolean)) {
				nv->mig_current = nv->mig_pending = json_object_get_boolean(mode);
			} else {
				static const char *const mkeys[] = { "current", "pending", NULL };

				r = p_check_keys(c, mode, &mp, "'mig_mode' (or true/false)", mkeys);
				if (r < 0)
					return r;
				if ((r = p_int(c, mode, "current", &mp, 0, 1, &x)) < 0)
					return r;
				nv->mig_current = r > 0 ? (int)x : 0;
				nv->mig_pending = nv->mig_current;
				if ((r = p_int(c, mode, "pending", &mp, 0, 1, &x)) < 0)
					return r;
				if (r > 0)
					nv->mig_pending = (int)x;
			}
		}
	}

	r = list_of(c, v, "mig", &kp, &migs, &n, &single);
	if (r < 0)
		return r;
	nv->n_mig = n;
	nv->mig = arena_alloc(c->a, n * sizeof(*nv->mig) + 1);
	if (!nv->mig)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct jpath mp = JP_KEY(&kp, "mig");
		struct jpath ip = JP_INDEX(&mp, i);

		r = p_mig(c, f, item(migs, single, i), single ? &mp : &ip, &nv->mig[i]);
		if (r < 0)
			return r;
	}
	if (n && nv->has_nvml && !nv->mig_current)
		return board_fail(c->d, &kp, "MIG devices need 'nvml: {mig_mode: true}'");
	if (n && !nv->has_nvml)
		nv->mig_current = nv->mig_pending = 1;
	return 0;
}

static int p_chardevs(struct pctx *c, struct board_func *f, struct json_object *obj,
		      const struct jpath *at)
{
	static const char *const keys[] = { "name", "class", "devname", "dev", NULL };
	struct json_object *list = NULL;
	bool single = false;
	size_t n;
	int r = list_of(c, obj, "chardevs", at, &list, &n, &single);

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
		struct json_object *e = item(list, single, i);
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

static int p_kfd(struct pctx *c, struct board_func *f, struct json_object *obj,
		 const struct jpath *at)
{
	static const char *const keys[] = { "gpu_id", "properties", NULL };
	struct json_object *v = NULL;
	struct jpath kp = JP_KEY(at, "kfd");
	long long x;
	int r;

	if (!json_object_object_get_ex(obj, "kfd", &v) || !v)
		return 0;
	if (json_object_is_type(v, json_type_boolean) && !json_object_get_boolean(v))
		return 0;
	f->kfd = arena_alloc(c->a, sizeof(*f->kfd));
	if (!f->kfd)
		return -ENOMEM;
	/* kfd's gpu_id is a hash of the device; any stable 16-bit value does */
	f->kfd->gpu_id = 0;
	if (json_object_is_type(v, json_type_boolean))
		return 0;
	r = p_check_keys(c, v, &kp, "'kfd' (or true)", keys);
	if (r < 0)
		return r;
	if ((r = p_int(c, v, "gpu_id", &kp, 1, 65535, &x)) < 0)
		return r;
	if (r > 0)
		f->kfd->gpu_id = (unsigned)x;
	return p_str(c, v, "properties", &kp, &f->kfd->properties) < 0 ? -EINVAL : 0;
}

int p_function_devices(struct pctx *c, struct board_func *f, struct json_object *obj,
		       const struct jpath *at)
{
	struct json_object *list = NULL;
	bool single = false;
	size_t n;
	int r;

	r = list_of(c, obj, "net", at, &list, &n, &single);
	if (r < 0)
		return r;
	f->n_net = n;
	f->net = arena_alloc(c->a, n * sizeof(*f->net) + 1);
	if (!f->net)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct jpath kp = JP_KEY(at, "net");
		struct jpath ip = JP_INDEX(&kp, i);

		r = p_netdev(c, item(list, single, i), single ? &kp : &ip, &f->net[i]);
		if (r < 0)
			return r;
	}

	r = list_of(c, obj, "infiniband", at, &list, &n, &single);
	if (r < 0)
		return r;
	f->n_ib = n;
	f->ib = arena_alloc(c->a, n * sizeof(*f->ib) + 1);
	if (!f->ib)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct jpath kp = JP_KEY(at, "infiniband");
		struct jpath ip = JP_INDEX(&kp, i);

		r = p_ibdev(c, item(list, single, i), single ? &kp : &ip, &f->ib[i], false);
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

	f->vf_driver_override = arena_alloc(c->a, (f->num_vfs + 1) * sizeof(char *));
	if (!f->vf_driver_override)
		return -ENOMEM;
	if (json_object_object_get_ex(v, "vfs", &over) && over) {
		struct jpath op = JP_KEY(&kp, "vfs");

		r = p_expect_object(c, over, &op, "'vfs' (VF number or range -> settings)");
		if (r < 0)
			return r;
		json_object_object_foreach(over, range, settings) {
			static const char *const vkeys[] = { "driver", NULL };
			struct jpath rp = JP_KEY(&op, range);
			unsigned lo, hi;
			char dash, tail;
			const char *drv = NULL;
			int k = sscanf(range, "%u%c%u%c", &lo, &dash, &hi, &tail);

			if (k == 1)
				hi = lo;
			else if (k != 3 || dash != '-')
				return board_fail(c->d, &rp, "'%s' is not a VF number or range (\"0-7\")",
						  range);
			if (lo > hi || hi >= f->num_vfs)
				return board_fail(c->d, &rp, "VF range %s is outside 0..%u", range,
						  f->num_vfs ? f->num_vfs - 1 : 0);
			r = p_check_keys(c, settings, &rp, "VF settings", vkeys);
			if (r < 0)
				return r;
			if (!json_object_object_get_ex(settings, "driver", NULL))
				continue;
			if ((r = p_name(c, settings, "driver", &rp, &drv)) < 0)
				return r;
			for (unsigned i = lo; i <= hi; i++)
				f->vf_driver_override[i] = drv ? drv : "";	/* "" = unbound */
		}
	}
	return 0;
}
