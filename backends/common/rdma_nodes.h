/* SPDX-License-Identifier: Apache-2.0 */
/*
 * RDMA device facts and nodes shared by the rdma backend and the VF backends
 * (an RDMA-capable VF carries its own ibdev): which ibdev represents a
 * function, its device nodes (linux-devices.md 3.2) and its port states now.
 */
#ifndef DRALET_BACKENDS_RDMA_NODES_H
#define DRALET_BACKENDS_RDMA_NODES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dralet/backend.h>

/* The ibdev of @func: the first hardware one, else the first software one
 * (soft-RoCE over its netdev); NULL when it has none. Owned by the scan. */
const struct dralet_ibdev *rdma_primary_ibdev(const struct dralet_pci_func *func);

/* True when the first port's link layer is InfiniBand (umad/issm apply). */
bool rdma_is_infiniband(const struct dralet_ibdev *ib);

/* "infiniband" or "ethernet" from the first port's link layer, NULL when
 * unknown. */
const char *rdma_link_type(const struct dralet_ibdev *ib);

/* The node of /dev/infiniband/rdma_cm (a misc device with a dynamic minor),
 * its path in @path (DRALET_DEVNODE_PATH_MAX bytes). ret_node->path is NULL
 * when rdma_ucm is not loaded. */
int rdma_cm_node(struct dralet_backend_ctx *ctx, char *path, struct dralet_devnode *ret_node);

/* Adds the nodes a verbs application needs to @dev: uverbs, rdma_cm, and for
 * InfiniBand umad and issm of every port. Missing nodes are warnings. */
int rdma_device_add_nodes(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			  const struct dralet_ibdev *ib);

/*
 * The state of port @port now ("ACTIVE", "DOWN" ...), re-read from
 * class/infiniband/<ibdev>/ports/<n>/state; the scan's fact when that file
 * cannot be read. Copies into @buf; returns its length or -errno.
 */
int rdma_port_state_now(struct dralet_backend_ctx *ctx, const struct dralet_ibdev *ib,
			const struct dralet_ib_port *port, char *buf, size_t size);

/* DRALET_HEALTH_UNHEALTHY when a port is not ACTIVE (DOWN, INIT, ARMED ...),
 * HEALTHY when every port is ACTIVE, UNKNOWN without ports or states. */
int rdma_ports_health(struct dralet_backend_ctx *ctx, const struct dralet_ibdev *ib);

/* A link that went down and came back between two health rounds leaves the
 * port ACTIVE; its counter ports/<n>/counters/link_downed (the IB PortCounters
 * LinkDownedCounter, Linux drivers/infiniband/core/sysfs.c) says it did. */
#define RDMA_LINK_FLAP_HOLD_S 300
#define RDMA_FLAP_PORTS_MAX 8

/* What rdma_link_flaps() remembers of one device (zeroed: nothing read yet). */
struct rdma_flaps {
	bool known[RDMA_FLAP_PORTS_MAX];	/* link_downed[i] holds a count read */
	bool absent[RDMA_FLAP_PORTS_MAX];	/* the port has no counter: not read again */
	uint64_t link_downed[RDMA_FLAP_PORTS_MAX];
	int64_t last;		/* Unix seconds of the last round that saw a rise */
};

/* HEALTHY, or UNHEALTHY (with the reason as the ctx error) from a round that
 * saw a port's link_downed rise (the first counts read are history) until
 * RDMA_LINK_FLAP_HOLD_S seconds pass without another: a flapping link is not
 * handed to a job between two flaps. A port without the counter (the kernel
 * makes a port's counters when it registers the device; many VFs have none)
 * is skipped and not looked for again: the device registered anew is a new
 * device, probed with fresh state. A counter that goes down (a reset) is a
 * new baseline. @now: Unix seconds. */
int rdma_link_flaps(struct dralet_backend_ctx *ctx, const struct dralet_ibdev *ib,
		    struct rdma_flaps *st, int64_t now);

#endif
