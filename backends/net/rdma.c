/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rdma: PCI functions with an RDMA device (class/infiniband): ConnectX and
 * other HCAs/RNICs, their RDMA-capable VFs, and NICs carrying a soft-RoCE
 * (rxe) or siw device over their netdev. One device of kind "rdma" per
 * function, named after the function.
 *
 * Shared mode (consumable capacity, docs/sharing.md): a physical function's
 * RDMA device is published with allowMultipleAllocations and a capacity
 * "shares" of RDMA_SHARES, requestPolicy validRange {1, RDMA_SHARES, step 1}
 * with the default all of them: a claim that asks for no shares holds the
 * device alone as before, one asking for "shares: 1" shares it with the
 * other pods, each getting the uverbs and rdma_cm nodes (what
 * k8s-rdma-shared-dev-plugin's shared mode gives). VFs stay exclusive (their
 * VfConfig changes the VF). Option sharing: "false" turns it off.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dralet/pci_ctl.h>

#include "net.h"
#include "../common/rdma_nodes.h"
#include "../common/pcidev.h"
#include "../common/vf.h"
#include "../common/vf_config.h"
#include "../common/sharing_option.h"

#include <dralet/sharing.h>

#define RDMA_SHARES 1000

static const struct dralet_option rdma_options[] = {
	SHARING_OPTION,
	{ NULL, 0 },
};

/* A PF's RDMA device shared by pods (the top of this file). */
static void publish_sharing(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			    const struct dralet_pci_func *func)
{
	struct dralet_capacity_policy p = { .default_value = "1k", .range_min = "1",
					    .range_max = "1k", .range_step = "1" };

	if (func->physfn || !sharing_enabled(ctx) || dralet_device_allow_multiple(dev) < 0)
		return;
	if (dralet_device_set_capacity_int(dev, "shares", RDMA_SHARES) == 0)
		dralet_device_set_capacity_policy(dev, "shares", &p);
}

/* Whatever its IDs, a function with an InfiniBand/RoCE device is ours. */
static const struct dralet_pci_id rdma_ids[] = {
	DRALET_PCI_ANY_FUNCTION,
	{ 0, 0, 0, 0 },
};

static int rdma_filter(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		       const struct dralet_pci_id *id, int score)
{
	(void)ctx;
	(void)id;
	(void)score;
	return func->n_ib ? RDMA_SCORE : 0;
}

/* The netdev of the RDMA device: the one its RoCE GID or soft-RoCE parent
 * names, else the function's first. */
static const struct dralet_netdev *rdma_netdev(const struct dralet_pci_func *func,
					    const struct dralet_ibdev *ib)
{
	for (size_t i = 0; ib->netdev && i < func->n_net; i++)
		if (!strcmp(func->net[i].ifname, ib->netdev))
			return &func->net[i];
	return func->n_net ? &func->net[0] : NULL;
}

static void add_attributes(struct dralet_device *dev, const struct dralet_pci_func *func,
			   const struct dralet_ibdev *ib)
{
	const struct dralet_ib_port *port = ib->n_ports ? &ib->ports[0] : NULL;
	const struct dralet_netdev *net = rdma_netdev(func, ib);

	dralet_device_set_string(dev, "ibDevice", ib->name);
	if (ib->node_guid)
		dralet_device_set_string(dev, "nodeGUID", ib->node_guid);
	if (ib->fw_ver)
		dralet_device_set_string(dev, "firmware", ib->fw_ver);
	if (ib->node_type)
		dralet_device_set_string(dev, "nodeType", ib->node_type);
	dralet_device_set_bool(dev, "softRoCE", ib->software);
	dralet_device_set_int(dev, "ports", (int64_t)ib->n_ports);
	if (port && port->link_layer)
		dralet_device_set_string(dev, "linkLayer", port->link_layer);
	if (port && port->state)
		dralet_device_set_string(dev, "portState", port->state);
	if (port && port->rate)
		dralet_device_set_string(dev, "rate", port->rate);
	if (port && port->rate_gbps)
		dralet_device_set_int(dev, "rateGbps", port->rate_gbps);
	if (net) {
		dralet_device_set_string(dev, "ifName", net->ifname);
		if (net->mac)
			dralet_device_set_string(dev, "mac", net->mac);
		if (net->mtu > 0)
			dralet_device_set_int(dev, "mtu", net->mtu);
		if (net->speed_mbps > 0)
			dralet_device_set_int(dev, "speedMbps", net->speed_mbps);
	}
	if (func->driver)
		dralet_device_set_string(dev, "driver", func->driver);
	dralet_device_set_bool(dev, "isVF", func->physfn != NULL);
	if (func->sriov)
		dralet_device_set_int(dev, "sriovVfs", func->sriov->num_vfs);
	if (func->physfn) {
		dralet_device_set_string(dev, "pfPciAddress", func->physfn->address);
		if (func->physfn->n_net)
			dralet_device_set_string(dev, "pfName", func->physfn->net[0].ifname);
		if (func->vf_index >= 0)
			dralet_device_set_int(dev, "vfID", func->vf_index);
	}
}

static int health_now(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		      const struct dralet_ibdev *ib)
{
	char driver[64];

	if (dralet_pci_driver(ctx, func->address, driver, sizeof(driver)) <= 0)
		return DRALET_HEALTH_UNHEALTHY;	/* gone or unbound: the ibdev is gone too */
	return rdma_ports_health(ctx, ib);
}

static int rdma_probe(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		      const struct dralet_pci_id *id)
{
	const struct dralet_ibdev *ib = rdma_primary_ibdev(func);
	struct dralet_device *dev;
	int r;

	(void)id;
	if (!ib)
		return 0;
	if (func->n_ib > 1)
		dralet_ctx_warn(ctx, "%s has %zu RDMA devices; publishing %s", func->address,
				func->n_ib, ib->name);
	r = dralet_device_new(ctx, func, "rdma", NULL, &dev);
	if (r < 0)
		return r;
	struct rdma_flaps *flaps = calloc(1, sizeof(*flaps));
	if (!flaps)
		return -ENOMEM;
	dralet_device_set_private(dev, flaps, free);
	add_attributes(dev, func, ib);
	publish_sharing(ctx, dev, func);
	r = rdma_device_add_nodes(ctx, dev, ib);
	dralet_device_set_health(dev, health_now(ctx, func, ib));
	return r;
}

static int rdma_health(struct dralet_backend_ctx *ctx, struct dralet_device *dev)
{
	const struct dralet_pci_func *func = dralet_device_pci(dev);
	const struct dralet_ibdev *ib = rdma_primary_ibdev(func);

	int h = ib ? health_now(ctx, func, ib) : DRALET_HEALTH_UNHEALTHY;

	/* under the device lock: the flap memory is this device's alone */
	if (h == DRALET_HEALTH_HEALTHY)
		h = rdma_link_flaps(ctx, ib, dralet_device_private(dev), (int64_t)time(NULL));
	return h;
}

static int rdma_validate_config(struct dralet_backend_ctx *ctx, const char *config)
{
	/* RDMA devices take no settings of their own; an RDMA-capable VF takes
	 * the VfConfig of net.dralet.dev like any VF. */
	return vf_validate_config(ctx, config, NET_API_VERSION);
}

static int rdma_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			struct dralet_prepare_req *req)
{
	const struct dralet_pci_func *func = dralet_device_pci(dev);
	const struct dralet_ibdev *ib = rdma_primary_ibdev(func);
	const struct dralet_netdev *net = ib ? rdma_netdev(func, ib) : NULL;
	struct dralet_edits *e = req->edits;
	char driver[64], cm_path[DRALET_DEVNODE_PATH_MAX];
	struct dralet_devnode cm = { 0 };
	int r = dralet_pci_driver(ctx, func->address, driver, sizeof(driver));

	if (r <= 0 || !ib) {
		dralet_ctx_error(ctx, "%s is %s; its RDMA device is gone", func->address,
				 r == -ENODEV ? "gone" : "not bound to a driver");
		return r < 0 ? r : -ENODEV;
	}
	if (!ib->uverbs.path) {
		dralet_ctx_error(ctx, "%s: %s has no /dev/infiniband/uverbs node (is ib_uverbs "
				 "loaded?)", func->address, ib->name);
		return -ENODEV;
	}
	r = pcidev_edit_device_nodes(e, dev);
	/* rdma_cm may have been loaded since discovery */
	if (r >= 0)
		r = rdma_cm_node(ctx, cm_path, &cm);
	if (r >= 0 && cm.path)
		r = dralet_edits_add_node(e, &cm, NULL);
	else if (r >= 0)
		dralet_ctx_warn(ctx, "%s: /dev/infiniband/rdma_cm does not exist (rdma_ucm not "
				"loaded?); RDMA CM applications will fail", dralet_device_name(dev));
	if (r >= 0)
		r = pcidev_env(e, dev, "PCI_ADDRESS", func->address);
	if (r >= 0)
		r = pcidev_env(e, dev, "RDMA_DEVICE", ib->name);
	if (r >= 0 && net)
		r = pcidev_env(e, dev, "NETDEV", net->ifname);
	if (r >= 0 && ib->n_ports && ib->ports[0].link_layer)
		r = pcidev_env(e, dev, "LINK_LAYER", ib->ports[0].link_layer);
	if (r >= 0 && req->share_id)
		r = pcidev_env(e, dev, "SHARE_ID", req->share_id);
	if (r < 0) {
		dralet_ctx_error(ctx, "%s: preparing the container edits failed: %s",
				 func->address, strerror(-r));
		return r;
	}
	/* last: the VF settings it asks for are the only change, undone on failure */
	return vf_prepare_config(ctx, func, req->config, NET_API_VERSION, false, req->undo,
				 driver, sizeof(driver));
}

const struct dralet_backend backend_rdma = {
	.abi = DRALET_BACKEND_ABI,
	.name = "rdma",
	.family = "net",
	.default_driver = NET_DRIVER,
	.ids = rdma_ids,
	.filter = rdma_filter,
	.probe = rdma_probe,
	.validate_config = rdma_validate_config,
	.admin_config_keys = vf_config_admin_keys,
	.prepare = rdma_prepare,
	.unprepare = vf_unprepare,
	.health = rdma_health,
	.options = rdma_options,
};
