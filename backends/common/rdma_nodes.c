/* SPDX-License-Identifier: Apache-2.0 */
#include "rdma_nodes.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pcidev.h"

const struct dralet_ibdev *rdma_primary_ibdev(const struct dralet_pci_func *func)
{
	for (size_t i = 0; i < func->n_ib; i++)
		if (!func->ib[i].software)
			return &func->ib[i];
	return func->n_ib ? &func->ib[0] : NULL;
}

static const struct dralet_ib_port *first_port(const struct dralet_ibdev *ib)
{
	return ib && ib->n_ports ? &ib->ports[0] : NULL;
}

bool rdma_is_infiniband(const struct dralet_ibdev *ib)
{
	const struct dralet_ib_port *p = first_port(ib);
	return p && p->link_layer && !strcasecmp(p->link_layer, "InfiniBand");
}

const char *rdma_link_type(const struct dralet_ibdev *ib)
{
	const struct dralet_ib_port *p = first_port(ib);

	if (!p || !p->link_layer)
		return NULL;
	if (!strcasecmp(p->link_layer, "InfiniBand"))
		return "infiniband";
	if (!strcasecmp(p->link_layer, "Ethernet"))
		return "ethernet";
	return NULL;
}

int rdma_cm_node(struct dralet_backend_ctx *ctx, char *path, struct dralet_devnode *ret_node)
{
	return pcidev_misc_node(ctx, "rdma_cm", "infiniband/rdma_cm", 0, 0, path, ret_node);
}

int rdma_device_add_nodes(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			  const struct dralet_ibdev *ib)
{
	char cm_path[DRALET_DEVNODE_PATH_MAX];
	struct dralet_devnode cm;
	int r;

	if (!ib->uverbs.path)
		dralet_ctx_warn(ctx, "%s: no uverbs node for %s (ib_uverbs not loaded?)",
				dralet_device_name(dev), ib->name);
	else if ((r = dralet_device_add_node(dev, &ib->uverbs)) < 0)
		return r;
	r = rdma_cm_node(ctx, cm_path, &cm);
	if (r < 0)
		return r;
	if (cm.path && (r = dralet_device_add_node(dev, &cm)) < 0)
		return r;
	if (!rdma_is_infiniband(ib))
		return 0;
	for (size_t i = 0; i < ib->n_ports; i++) {
		if (ib->ports[i].umad.path && (r = dralet_device_add_node(dev, &ib->ports[i].umad)) < 0)
			return r;
		if (ib->ports[i].issm.path && (r = dralet_device_add_node(dev, &ib->ports[i].issm)) < 0)
			return r;
	}
	return 0;
}

int rdma_port_state_now(struct dralet_backend_ctx *ctx, const struct dralet_ibdev *ib,
			const struct dralet_ib_port *port, char *buf, size_t size)
{
	char rel[192], text[64];
	const char *state = port->state;
	int r;

	snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/%u/state", ib->name, port->number);
	r = dralet_read_file(ctx, DRALET_ROOT_SYS, rel, text, sizeof(text));
	if (r > 0) {
		/* "4: ACTIVE" */
		const char *colon = strchr(text, ':');
		state = colon ? colon + 1 : text;
		while (*state == ' ')
			state++;
	}
	if (!state)
		return -ENOENT;
	snprintf(buf, size, "%s", state);
	return (int)strlen(buf);
}

int rdma_ports_health(struct dralet_backend_ctx *ctx, const struct dralet_ibdev *ib)
{
	int health = ib->n_ports ? DRALET_HEALTH_HEALTHY : DRALET_HEALTH_UNKNOWN;
	char state[64];

	for (size_t i = 0; i < ib->n_ports; i++) {
		if (rdma_port_state_now(ctx, ib, &ib->ports[i], state, sizeof(state)) < 0)
			health = DRALET_HEALTH_UNKNOWN;	/* no state file: cannot tell */
		else if (strcmp(state, "ACTIVE")) {
			dralet_ctx_error(ctx, "RDMA device %s port %u is %s, not ACTIVE", ib->name,
					 ib->ports[i].number, state);
			return DRALET_HEALTH_UNHEALTHY;
		}
	}
	return health;
}

int rdma_link_flaps(struct dralet_backend_ctx *ctx, const struct dralet_ibdev *ib,
		    struct rdma_flaps *st, int64_t now)
{
	size_t n = ib->n_ports < RDMA_FLAP_PORTS_MAX ? ib->n_ports : RDMA_FLAP_PORTS_MAX;
	unsigned flapped = 0;

	for (size_t i = 0; i < n; i++) {
		char rel[192], text[32], *end;
		unsigned long long v;

		if (st->absent[i])
			continue;
		snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/%u/counters/link_downed",
			 ib->name, ib->ports[i].number);
		int len = dralet_read_file(ctx, DRALET_ROOT_SYS, rel, text, sizeof(text));
		if (len == -ENOENT && !st->known[i])
			st->absent[i] = true;
		if (len <= 0)
			continue;
		v = strtoull(text, &end, 10);
		if (*end)
			continue;
		if (st->known[i] && v > st->link_downed[i]) {
			st->last = now;
			flapped = ib->ports[i].number;
		}
		st->link_downed[i] = v;
		st->known[i] = true;
	}
	if (!st->last || now - st->last >= RDMA_LINK_FLAP_HOLD_S)
		return DRALET_HEALTH_HEALTHY;
	if (flapped)
		dralet_ctx_error(ctx, "RDMA device %s port %u: the link went down and came back "
				 "(link_downed rose); Unhealthy until %d s pass without that",
				 ib->name, flapped, RDMA_LINK_FLAP_HOLD_S);
	else
		dralet_ctx_error(ctx, "RDMA device %s: a link went down and came back %" PRId64
				 " s ago (link_downed rose); Unhealthy until %d s pass without that",
				 ib->name, now - st->last, RDMA_LINK_FLAP_HOLD_S);
	return DRALET_HEALTH_UNHEALTHY;
}
