/* SPDX-License-Identifier: Apache-2.0 */
/* Inventory or device set -> builder input -> desired slices. */
#include <errno.h>
#include <stdlib.h>

#include "agent/core/backend_ctx.h"
#include "agent/core/device_set.h"
#include "agent/core/inventory.h"
#include "agent/lib/log.h"
#include "agent/slices/slices.h"

static void log_dropped(void *userdata, const char *backend, const char *device, const char *what,
			const char *problem)
{
	const char *driver = userdata;
	if (what)
		log_warn("slices: driver %s, backend %s, device %s, attribute %s: %s; attribute "
			 "dropped", driver, backend, device, what, problem);
	else
		log_warn("slices: driver %s, backend %s, device %s: %s", driver, backend, device,
			 problem);
}

/* @device(@from, i) is device i of @n. */
static int build(const char *driver, size_t n,
		 struct dralet_device *(*device)(const void *from, const char *driver, size_t i),
		 const void *from, const char *node_name, const char *node_uid,
		 const struct slice_options *opts, struct slice_list **ret_slices)
{
	struct slice_device_in *devs = calloc(n + 1, sizeof(*devs));
	struct dralet_attr **attrs = calloc(n + 1, sizeof(*attrs));
	struct dralet_capacity **caps = calloc(n + 1, sizeof(*caps));
	const struct dralet_capacity_policy ***policies = calloc(n + 1, sizeof(*policies));
	int r = -ENOMEM;
	if (!devs || !attrs || !caps || !policies)
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct dralet_device *d = device(from, driver, i);
		const struct dralet_backend *b = dralet_device_ctx(d)->backend;
		size_t na = dralet_device_n_attrs(d), nc = dralet_device_n_capacities(d);
		attrs[i] = calloc(na + 1, sizeof(**attrs));
		caps[i] = calloc(nc + 1, sizeof(**caps));
		policies[i] = calloc(nc + 1, sizeof(**policies));
		if (!attrs[i] || !caps[i] || !policies[i])
			goto out;
		for (size_t k = 0; k < na; k++)
			attrs[i][k] = *dralet_device_attr(d, k);
		for (size_t k = 0; k < nc; k++) {
			caps[i][k] = *dralet_device_capacity(d, k);
			policies[i][k] = dralet_device_capacity_policy(d, caps[i][k].name);
		}
		devs[i] = (struct slice_device_in){
			.name = dralet_device_name(d),
			.backend = b ? b->name : NULL,
			.attrs = attrs[i],
			.n_attrs = na,
			.caps = caps[i],
			.n_caps = nc,
			.unhealthy = dralet_device_health(d) == DRALET_HEALTH_UNHEALTHY,
			.taint_key = device_health_taint(d),
			/* the getters' elements are one array each (counters.h) */
			.sets = dralet_device_counter_set(d, 0),
			.n_sets = dralet_device_n_counter_sets(d),
			.uses = dralet_device_consumption(d, 0),
			.n_uses = dralet_device_n_consumptions(d),
			.partition = dralet_device_is_partition(d),
			.allow_multiple = dralet_device_allows_multiple(d),
			.cap_policies = policies[i],
		};
	}
	r = slice_build(driver, node_name, node_uid, devs, n, opts, log_dropped, (void *)driver,
			ret_slices);
out:
	for (size_t i = 0; i < n && attrs && caps && policies; i++) {
		free(attrs[i]);
		free(caps[i]);
		free(policies[i]);
	}
	free(attrs);
	free(caps);
	free(policies);
	free(devs);
	return r;
}

static struct dralet_device *inventory_nth(const void *inv, const char *driver, size_t i)
{
	return inventory_device(inv, driver, i);
}

int slices_build(const struct inventory *inv, const char *driver, const char *node_name,
		 const char *node_uid, const struct slice_options *opts,
		 struct slice_list **ret_slices)
{
	return build(driver, inv ? inventory_n_devices(inv, driver) : 0, inventory_nth, inv,
		     node_name, node_uid, opts, ret_slices);
}

static struct dralet_device *set_nth(const void *set, const char *driver, size_t i)
{
	(void)driver;
	return device_set_devices(set)[i];
}

int slices_build_set(const struct device_set *set, const char *node_name, const char *node_uid,
		     const struct slice_options *opts, struct slice_list **ret_slices)
{
	return build(device_set_driver(set), device_set_n(set), set_nth, set, node_name, node_uid,
		     opts, ret_slices);
}
