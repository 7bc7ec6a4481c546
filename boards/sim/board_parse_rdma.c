/* SPDX-License-Identifier: Apache-2.0 */
/* Board file -> model: netdevs and RDMA devices (also soft-RoCE). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boards/sim/board_parse.h"

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

int p_netdev(struct pctx *c, struct json_object *obj, const struct jpath *at,
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
	r = p_name(c, obj, "netdev", at, &p->netdev);
	return r < 0 ? r : 0;
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
	r = p_list_of(c, obj, "ports", at, &ports, &n, &single);
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
			r = p_ibport(c, p_item(ports, single, i), single ? &kp : &ip, p);
			if (r < 0)
				return r;
		}
	}
	return 0;
}
