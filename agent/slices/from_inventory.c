/* SPDX-License-Identifier: Apache-2.0 */
/* Inventory -> builder input -> desired slices. */
#include <errno.h>
#include <stdlib.h>

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

int slices_build(const struct inventory *inv, const char *driver, const char *node_name,
		 const char *node_uid, const struct slice_options *opts,
		 struct slice_list **ret_slices)
{
	size_t n = inv ? inventory_n_devices(inv, driver) : 0;
	struct slice_device_in *devs = calloc(n + 1, sizeof(*devs));
	struct dralet_attr **attrs = calloc(n + 1, sizeof(*attrs));
	struct dralet_capacity **caps = calloc(n + 1, sizeof(*caps));
	int r = -ENOMEM;
	if (!devs || !attrs || !caps)
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct dralet_device *d = inventory_device(inv, driver, i);
		const struct dralet_backend *b = inventory_backend_of(inv, d);
		size_t na = dralet_device_n_attrs(d), nc = dralet_device_n_capacities(d);
		attrs[i] = calloc(na + 1, sizeof(**attrs));
		caps[i] = calloc(nc + 1, sizeof(**caps));
		if (!attrs[i] || !caps[i])
			goto out;
		for (size_t k = 0; k < na; k++)
			attrs[i][k] = *dralet_device_attr(d, k);
		for (size_t k = 0; k < nc; k++)
			caps[i][k] = *dralet_device_capacity(d, k);
		devs[i] = (struct slice_device_in){
			.name = dralet_device_name(d),
			.backend = b ? b->name : NULL,
			.attrs = attrs[i],
			.n_attrs = na,
			.caps = caps[i],
			.n_caps = nc,
			.unhealthy = dralet_device_health(d) == DRALET_HEALTH_UNHEALTHY,
		};
	}
	r = slice_build(driver, node_name, node_uid, devs, n, opts, log_dropped, (void *)driver,
			ret_slices);
out:
	for (size_t i = 0; i < n && attrs && caps; i++) {
		free(attrs[i]);
		free(caps[i]);
	}
	free(attrs);
	free(caps);
	free(devs);
	return r;
}
