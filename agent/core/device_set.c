/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/core/device_set.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <dralet/device.h>

#include "agent/core/backend_ctx.h"
#include "agent/core/inventory.h"

/* One discovery's inventory, shared by the sets made from it. */
struct discovery {
	atomic_size_t refs;		/* one per set */
	struct inventory *inv;
};

struct device_set {
	atomic_size_t refs;
	char *driver;
	struct dralet_device **devices;	/* NULL-terminated */
	size_t n;
	struct discovery *source;	/* NULL: the devices are borrowed */
};

static void discovery_unref(struct discovery *disc)
{
	if (disc && atomic_fetch_sub(&disc->refs, 1) == 1) {
		inventory_free(disc->inv);
		free(disc);
	}
}

static void set_free(struct device_set *set)
{
	discovery_unref(set->source);
	free(set->devices);
	free(set->driver);
	free(set);
}

/* A set over a copy of @devices, without any reference to a discovery yet. */
static struct device_set *set_alloc(const char *driver, size_t n)
{
	struct device_set *set = calloc(1, sizeof(*set));

	if (!set)
		return NULL;
	atomic_init(&set->refs, 1);
	set->n = n;
	set->driver = strdup(driver);
	set->devices = calloc(n + 1, sizeof(*set->devices));
	if (!set->driver || !set->devices) {
		set_free(set);
		return NULL;
	}
	return set;
}

int device_set_new(const char *driver, struct dralet_device *const *devices, size_t n,
		   struct device_set **ret_set)
{
	struct device_set *set;

	for (size_t i = 1; i < n; i++)
		if (strcmp(dralet_device_name(devices[i - 1]), dralet_device_name(devices[i])) >= 0)
			return -EINVAL;
	if (!(set = set_alloc(driver, n)))
		return -ENOMEM;
	if (n)
		memcpy(set->devices, devices, n * sizeof(*devices));
	*ret_set = set;
	return 0;
}

int device_sets_from_inventory(struct inventory *inv, const char *const *drivers, size_t n,
			       struct device_set **ret_sets)
{
	struct discovery *disc;
	size_t made = 0;

	if (!n) {
		inventory_free(inv);
		return 0;
	}
	if (!(disc = calloc(1, sizeof(*disc)))) {
		inventory_free(inv);
		return -ENOMEM;
	}
	atomic_init(&disc->refs, 0);
	disc->inv = inv;
	for (; made < n; made++) {
		size_t k = inventory_n_devices(inv, drivers[made]);
		struct device_set *set = set_alloc(drivers[made], k);
		if (!set)
			break;
		/* the inventory keeps each driver's devices sorted by name */
		for (size_t j = 0; j < k; j++)
			set->devices[j] = inventory_device(inv, drivers[made], j);
		atomic_fetch_add(&disc->refs, 1);
		set->source = disc;
		ret_sets[made] = set;
	}
	if (made == n)
		return 0;
	/* keep the inventory until the last partial set is gone */
	atomic_fetch_add(&disc->refs, 1);
	for (size_t i = 0; i < made; i++)
		device_set_unref(ret_sets[i]);
	discovery_unref(disc);
	return -ENOMEM;
}

struct device_set *device_set_ref(struct device_set *set)
{
	if (set)
		atomic_fetch_add(&set->refs, 1);
	return set;
}

void device_set_unref(struct device_set *set)
{
	if (set && atomic_fetch_sub(&set->refs, 1) == 1)
		set_free(set);
}

const char *device_set_driver(const struct device_set *set)
{
	return set->driver;
}

size_t device_set_n(const struct device_set *set)
{
	return set->n;
}

struct dralet_device *const *device_set_devices(const struct device_set *set)
{
	return set->devices;
}

static int compare_name(const void *key, const void *elem)
{
	return strcmp(key, dralet_device_name(*(struct dralet_device *const *)elem));
}

struct dralet_device *device_set_find(const struct device_set *set, const char *name)
{
	struct dralet_device *const *hit;

	if (!set->n)
		return NULL;
	hit = bsearch(name, set->devices, set->n, sizeof(*set->devices), compare_name);
	return hit ? *hit : NULL;
}

bool device_set_take_node_changed(struct device_set *set)
{
	bool any = false;

	for (size_t i = 0; set && i < set->n; i++)
		any |= device_take_node_changed(set->devices[i]);
	return any;
}
