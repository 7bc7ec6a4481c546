/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node's inventory: one discovery (HAL scan + every enabled backend's
 * probe) turned into devices grouped by DRA driver name, each group sorted by
 * device name. Read-only once built; a new discovery builds a new inventory.
 */
#ifndef DRALET_INVENTORY_H
#define DRALET_INVENTORY_H

#include <stddef.h>
#include <dralet/backend.h>

struct config;
struct hal_roots;
struct hal_scan;
struct node_ops;
struct registry;
struct inventory;

/* Warnings (bad sysfs files, rejected attributes, skipped unsafe functions)
 * are logged by inventory_discover itself, once, with their context. The
 * inventory borrows @roots, @cfg and @reg: they must outlive it. */
int inventory_discover(const struct hal_roots *roots, const struct config *cfg,
		       const struct registry *reg, struct inventory **ret_inv);
/* The same, with @node (borrowed, may be NULL: the real node below @roots)
 * as the seam every backend's changes to the node go through (the backend
 * contexts' node: a simulated board's kernel model, agent/cli/setup.h). */
int inventory_discover_node(const struct hal_roots *roots, const struct node_ops *node,
			    const struct config *cfg, const struct registry *reg,
			    struct inventory **ret_inv);
void inventory_free(struct inventory *inv);

/* DRA driver names with at least one device or enabled backend, sorted. */
size_t inventory_n_drivers(const struct inventory *inv);
const char *inventory_driver(const struct inventory *inv, size_t i);

/* Devices of one driver, sorted by name (0 / NULL for unknown drivers). */
size_t inventory_n_devices(const struct inventory *inv, const char *driver);
struct dralet_device *inventory_device(const struct inventory *inv, const char *driver, size_t i);
struct dralet_device *inventory_find(const struct inventory *inv, const char *driver,
				     const char *device_name);

/* All devices of all drivers in (driver, name) order. */
size_t inventory_n_all(const struct inventory *inv);
struct dralet_device *inventory_all(const struct inventory *inv, size_t i);

/* The backend that owns @dev and a context to call its operations with. */
const struct dralet_backend *inventory_backend_of(const struct inventory *inv,
						  const struct dralet_device *dev);
struct dralet_backend_ctx *inventory_ctx_of(const struct inventory *inv,
					    const struct dralet_device *dev);

/* What discovery did with function @i of inventory_scan(): the backend that
 * owns it (NULL: none) and, when it yielded no devices, why ("bridge", "no
 * backend", "unsafe: ...", "probe failed: ..."; NULL when it did). Strings
 * live as long as the inventory. */
const char *inventory_function_owner(const struct inventory *inv, size_t i,
				     const char **ret_note);

/* The HAL scan the inventory was built from (every PCI function). */
const struct hal_scan *inventory_scan(const struct inventory *inv);

#endif
