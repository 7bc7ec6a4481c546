/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Discovery: scan the node, give every PCI function to the backend with the
 * best score (the rule in include/dralet/backend.h), let it probe, and group
 * the devices by DRA driver name.
 */
#include "agent/core/inventory.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/core/backend_call.h"
#include "agent/core/backend_ctx.h"
#include "agent/core/config.h"
#include "agent/core/registry.h"
#include "agent/lib/log.h"
#include "hal/hal.h"

struct instance {
	struct dralet_backend_ctx ctx;
	struct device_sink devices;
	bool initialised;
};

struct function_fate {
	const struct instance *owner;
	const char *note;	/* static, or in notes[] */
	char failure[96];
};

struct inventory {
	struct hal_scan *scan;
	struct function_fate *fates;	/* parallel to scan->funcs */
	struct instance *inst;		/* one per enabled backend, in registry order */
	size_t n_inst;
	const char **drivers;		/* sorted, unique */
	size_t n_drivers;
	struct dralet_device **all;	/* sorted by (driver, name) */
	size_t n_all;
};

static bool is_bridge(const struct dralet_pci_func *f)
{
	return (f->class_code >> 16) == 0x06;
}

static void assign_and_probe(struct inventory *inv, const struct config *cfg)
{
	for (size_t i = 0; i < inv->scan->n_funcs; i++) {
		const struct dralet_pci_func *f = inv->scan->funcs[i];
		struct instance *best = NULL;
		const struct dralet_pci_id *best_id = NULL;
		int best_score = 0;

		struct function_fate *fate = &inv->fates[i];

		if (is_bridge(f)) {
			fate->note = "bridge";
			continue;
		}
		for (size_t j = 0; j < inv->n_inst; j++) {
			const struct dralet_pci_id *id;
			int s;
			if (!inv->inst[j].initialised)
				continue;
			s = backend_call_score(&inv->inst[j].ctx, f, &id);
			if (s > best_score) {
				best_score = s;
				best = &inv->inst[j];
				best_id = id;
			}
		}
		if (!best) {
			fate->note = "no backend claims it";
			continue;
		}
		fate->owner = best;
		if (f->unsafe_reason && !cfg->publish_unsafe) {
			snprintf(fate->failure, sizeof(fate->failure), "unsafe: it %s",
				 f->unsafe_reason);
			fate->note = fate->failure;
			log_info("%s not published: it %s (set publishUnsafeDevices to override)",
				 f->address, f->unsafe_reason);
			continue;
		}
		size_t before = best->devices.n;
		int r = backend_call_probe(&best->ctx, &best->devices, f, best_id);
		if (r < 0) {
			log_warn("backend %s: probing %s failed: %s", best->ctx.backend->name,
				 f->address, strerror(-r));
			snprintf(fate->failure, sizeof(fate->failure), "probe failed: %s",
				 strerror(-r));
			fate->note = fate->failure;
		} else if (best->devices.n == before) {
			fate->note = "owned without devices of its own";
		}
	}
}

static int compare_devices(const void *a, const void *b)
{
	const struct dralet_device *da = *(struct dralet_device *const *)a;
	const struct dralet_device *db = *(struct dralet_device *const *)b;
	int r = strcmp(dralet_device_driver(da), dralet_device_driver(db));
	return r ? r : strcmp(dralet_device_name(da), dralet_device_name(db));
}

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int collect(struct inventory *inv)
{
	size_t total = 0, n = 0;

	for (size_t j = 0; j < inv->n_inst; j++)
		total += inv->inst[j].devices.n;
	inv->all = calloc(total + 1, sizeof(*inv->all));
	inv->drivers = calloc(inv->n_inst + 1, sizeof(*inv->drivers));
	if (!inv->all || !inv->drivers)
		return -ENOMEM;
	for (size_t j = 0; j < inv->n_inst; j++) {
		for (size_t k = 0; k < inv->inst[j].devices.n; k++)
			inv->all[n++] = inv->inst[j].devices.items[k];
		bool seen = false;
		for (size_t d = 0; d < inv->n_drivers; d++)
			seen |= !strcmp(inv->drivers[d], inv->inst[j].ctx.driver);
		if (!seen)
			inv->drivers[inv->n_drivers++] = inv->inst[j].ctx.driver;
	}
	qsort(inv->drivers, inv->n_drivers, sizeof(*inv->drivers), compare_strings);
	qsort(inv->all, n, sizeof(*inv->all), compare_devices);
	/* two backends under one driver may produce the same name: keep the first */
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		if (kept && !compare_devices(&inv->all[kept - 1], &inv->all[i])) {
			log_warn("driver %s: two devices named %s; the one from backend %s is not "
				 "published", dralet_device_driver(inv->all[i]),
				 dralet_device_name(inv->all[i]),
				 dralet_device_ctx(inv->all[i])->backend->name);
			continue;
		}
		inv->all[kept++] = inv->all[i];
	}
	inv->n_all = kept;
	return 0;
}

int inventory_discover(const struct hal_roots *roots, const struct config *cfg,
		       const struct registry *reg, struct inventory **ret_inv)
{
	return inventory_discover_node(roots, NULL, cfg, reg, ret_inv);
}

int inventory_discover_node(const struct hal_roots *roots, const struct node_ops *node,
			    const struct config *cfg, const struct registry *reg,
			    struct inventory **ret_inv)
{
	struct hal_scan_options opts = { .pci_ids = cfg->pci_ids };
	struct inventory *inv = calloc(1, sizeof(*inv));
	int r;

	if (!inv)
		return -ENOMEM;
	r = hal_scan(roots, &opts, &inv->scan);
	if (r < 0) {
		log_error("cannot read the node below %s: %s", roots->sys, strerror(-r));
		free(inv);
		return r;
	}
	for (size_t i = 0; i < inv->scan->n_warnings; i++)
		log_warn("%s", inv->scan->warnings[i]);
	if (inv->scan->host_net_problem && !cfg->publish_unsafe)
		log_error("network devices (RDMA NICs, SR-IOV PFs and VFs) are not published: %s",
			  inv->scan->host_net_problem);
	else if (inv->scan->host_net_problem)
		log_warn("publishing network devices although %s (publishUnsafeDevices)",
			 inv->scan->host_net_problem);
	inv->fates = calloc(inv->scan->n_funcs + 1, sizeof(*inv->fates));
	if (!inv->fates) {
		inventory_free(inv);
		return -ENOMEM;
	}

	inv->inst = calloc(registry_count(reg) + 1, sizeof(*inv->inst));
	if (!inv->inst) {
		inventory_free(inv);
		return -ENOMEM;
	}
	for (size_t i = 0; i < registry_count(reg); i++) {
		const struct dralet_backend *b = registry_get(reg, i);
		const struct config_backend *cb = config_backend(cfg, b->name);
		struct instance *in;

		if (cb && !cb->enabled)
			continue;
		in = &inv->inst[inv->n_inst++];
		in->ctx.backend = b;
		in->ctx.driver = cb && cb->driver ? cb->driver : b->default_driver;
		in->ctx.options = cb ? cb->options : NULL;
		if (cfg->state_root &&
		    asprintf(&in->ctx.state_dir, "%s/%s", cfg->state_root, in->ctx.driver) < 0) {
			in->ctx.state_dir = NULL;
			inventory_free(inv);
			return -ENOMEM;
		}
		in->ctx.roots = roots;
		in->ctx.node = node;
		in->ctx.sriov = cfg->sriov;
		in->ctx.scan = inv->scan;
		in->ctx.sink = &in->devices;	/* init may make devices without a PCI function */
		r = backend_call_init(&in->ctx);
		in->ctx.sink = NULL;
		if (r < 0) {
			log_error("backend %s: cannot start: %s%s%s", b->name, strerror(-r),
				  in->ctx.error[0] ? ": " : "", in->ctx.error);
			continue;
		}
		in->initialised = true;
	}
	assign_and_probe(inv, cfg);
	r = collect(inv);
	if (r < 0) {
		inventory_free(inv);
		return r;
	}
	*ret_inv = inv;
	return 0;
}

void inventory_free(struct inventory *inv)
{
	if (!inv)
		return;
	for (size_t j = 0; j < inv->n_inst; j++) {
		struct instance *in = &inv->inst[j];
		device_sink_clear(&in->devices, &in->ctx);
		if (in->initialised)
			backend_call_fini(&in->ctx);
		free(in->ctx.state_dir);
	}
	free(inv->inst);
	free(inv->fates);
	free(inv->all);
	free(inv->drivers);
	hal_scan_free(inv->scan);
	free(inv);
}

size_t inventory_n_drivers(const struct inventory *inv) { return inv->n_drivers; }

const char *inventory_driver(const struct inventory *inv, size_t i)
{
	return i < inv->n_drivers ? inv->drivers[i] : NULL;
}

/* First index in inv->all whose (driver, name) is not below the key
 * (@name NULL: the first device of @driver). */
static size_t lower_bound(const struct inventory *inv, const char *driver, const char *name)
{
	size_t lo = 0, hi = inv->n_all;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = strcmp(dralet_device_driver(inv->all[mid]), driver);
		if (r == 0 && name)
			r = strcmp(dralet_device_name(inv->all[mid]), name);
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The [start, end) range of @driver's devices in inv->all. */
static size_t driver_range(const struct inventory *inv, const char *driver, size_t *end)
{
	size_t start = lower_bound(inv, driver, NULL), lo = start, hi = inv->n_all;

	while (lo < hi) {	/* first device of a later driver */
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(dralet_device_driver(inv->all[mid]), driver) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*end = lo;
	return start;
}

size_t inventory_n_devices(const struct inventory *inv, const char *driver)
{
	size_t end, start = driver_range(inv, driver, &end);
	return end - start;
}

struct dralet_device *inventory_device(const struct inventory *inv, const char *driver, size_t i)
{
	size_t end, start = driver_range(inv, driver, &end);
	return start + i < end ? inv->all[start + i] : NULL;
}

struct dralet_device *inventory_find(const struct inventory *inv, const char *driver,
				     const char *device_name)
{
	size_t i = lower_bound(inv, driver, device_name);

	if (i < inv->n_all && !strcmp(dralet_device_driver(inv->all[i]), driver) &&
	    !strcmp(dralet_device_name(inv->all[i]), device_name))
		return inv->all[i];
	return NULL;
}

size_t inventory_n_all(const struct inventory *inv) { return inv->n_all; }

struct dralet_device *inventory_all(const struct inventory *inv, size_t i)
{
	return i < inv->n_all ? inv->all[i] : NULL;
}

const struct dralet_backend *inventory_backend_of(const struct inventory *inv,
						  const struct dralet_device *dev)
{
	(void)inv;
	return dralet_device_ctx(dev)->backend;
}

struct dralet_backend_ctx *inventory_ctx_of(const struct inventory *inv,
					    const struct dralet_device *dev)
{
	(void)inv;
	return dralet_device_ctx(dev);
}

const struct hal_scan *inventory_scan(const struct inventory *inv) { return inv->scan; }

const char *inventory_function_owner(const struct inventory *inv, size_t i,
				     const char **ret_note)
{
	if (i >= inv->scan->n_funcs)
		return NULL;
	if (ret_note)
		*ret_note = inv->fates[i].note;
	return inv->fates[i].owner ? inv->fates[i].owner->ctx.backend->name : NULL;
}
