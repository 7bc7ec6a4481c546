/* SPDX-License-Identifier: Apache-2.0 */
/* Counter sets and consumptions of a device (include/dralet/counters.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <dralet/counters.h>

#include "agent/core/backend_ctx.h"
#include "agent/core/k8s_names.h"

/* A list with owned strings (the public struct's pointers point into it). */
struct list {
	char *set;
	struct dralet_counter *counters;
	size_t n;
};

struct lists {
	struct dralet_counter_list *view;	/* what the getters return */
	struct list *items;
	size_t n;
};

struct device_counters {
	struct lists sets, uses;
	bool partition;
};

static void lists_free(struct lists *l)
{
	for (size_t i = 0; i < l->n; i++) {
		for (size_t k = 0; k < l->items[i].n; k++) {
			free((char *)l->items[i].counters[k].name);
			free((char *)l->items[i].counters[k].quantity);
		}
		free(l->items[i].counters);
		free(l->items[i].set);
	}
	free(l->items);
	free(l->view);
}

void device_counters_free(struct device_counters *c)
{
	if (!c)
		return;
	lists_free(&c->sets);
	lists_free(&c->uses);
	free(c);
}

static int reject(struct dralet_device *dev, const char *what, const char *set, const char *name,
		  const char *why)
{
	dralet_ctx_warn(dralet_device_ctx(dev), "device %s: %s %s/%s dropped: %s",
			dralet_device_name(dev), what, set ? set : "(null)", name ? name : "(null)",
			why);
	return -EINVAL;
}

static void refresh_view(struct lists *l)
{
	for (size_t i = 0; i < l->n; i++)
		l->view[i] = (struct dralet_counter_list){ .set = l->items[i].set,
							   .counters = l->items[i].counters,
							   .n = l->items[i].n };
}

/* Sets @name = @quantity in list @set of @l, which holds at most @max_lists
 * lists of at most @max_counters counters. */
static int lists_set(struct dralet_device *dev, struct lists *l, const char *what,
		     size_t max_lists, size_t max_counters, const char *set, const char *name,
		     const char *quantity)
{
	struct list *li = NULL;
	char *q;

	if (!set || !k8s_valid_dns_label(set))
		return reject(dev, what, set, name, "the set's name is not a DNS label");
	if (!name || !k8s_valid_dns_label(name))
		return reject(dev, what, set, name, "the counter's name is not a DNS label");
	if (!quantity || !k8s_valid_quantity(quantity))
		return reject(dev, what, set, name, "not a Kubernetes quantity");
	for (size_t i = 0; i < l->n && !li; i++)
		if (!strcmp(l->items[i].set, set))
			li = &l->items[i];
	if (!li) {
		if (l->n >= max_lists)
			return reject(dev, what, set, name, max_lists == DRALET_CONSUMPTIONS_PER_DEVICE_MAX
				      ? "a device consumes from at most 2 counter sets"
				      : "a device owns at most 8 counter sets");
		struct list *items = realloc(l->items, (l->n + 1) * sizeof(*items));
		if (!items)
			return -ENOMEM;
		l->items = items;
		struct dralet_counter_list *view = realloc(l->view, (l->n + 1) * sizeof(*view));
		if (!view)
			return -ENOMEM;
		l->view = view;
		li = &l->items[l->n];
		*li = (struct list){ .set = strdup(set) };
		if (!li->set)
			return -ENOMEM;
		l->n++;
	}
	if (!(q = strdup(quantity)))
		return -ENOMEM;
	for (size_t k = 0; k < li->n; k++)
		if (!strcmp(li->counters[k].name, name)) {
			free((char *)li->counters[k].quantity);
			li->counters[k].quantity = q;
			refresh_view(l);
			return 0;
		}
	if (li->n >= max_counters) {
		free(q);
		return reject(dev, what, set, name, "more than 32 counters");
	}
	struct dralet_counter *cs = realloc(li->counters, (li->n + 1) * sizeof(*cs));
	char *n = strdup(name);
	if (!cs || !n) {
		if (cs)
			li->counters = cs;
		free(n);
		free(q);
		return -ENOMEM;
	}
	li->counters = cs;
	cs[li->n++] = (struct dralet_counter){ .name = n, .quantity = q };
	refresh_view(l);
	return 0;
}

static struct device_counters *counters_of(struct dralet_device *dev)
{
	struct device_counters **slot = device_counters_slot(dev);

	if (!*slot)
		*slot = calloc(1, sizeof(**slot));
	return *slot;
}

int dralet_device_set_counter(struct dralet_device *dev, const char *set, const char *name,
			      const char *quantity)
{
	struct device_counters *c = counters_of(dev);

	if (!c)
		return -ENOMEM;
	return lists_set(dev, &c->sets, "counter", DRALET_COUNTER_SETS_PER_SLICE_MAX,
			 DRALET_COUNTERS_PER_SET_MAX, set, name, quantity);
}

int dralet_device_consume_counter(struct dralet_device *dev, const char *set, const char *name,
				  const char *quantity)
{
	struct device_counters *c = counters_of(dev);

	if (!c)
		return -ENOMEM;
	return lists_set(dev, &c->uses, "consumed counter", DRALET_CONSUMPTIONS_PER_DEVICE_MAX,
			 DRALET_COUNTERS_PER_CONSUMPTION_MAX, set, name, quantity);
}

int dralet_device_set_counter_int(struct dralet_device *dev, const char *set, const char *name,
				  int64_t value)
{
	char q[32];

	k8s_quantity_decimal(value, q, sizeof(q));
	return dralet_device_set_counter(dev, set, name, q);
}

int dralet_device_consume_counter_int(struct dralet_device *dev, const char *set,
				      const char *name, int64_t value)
{
	char q[32];

	k8s_quantity_decimal(value, q, sizeof(q));
	return dralet_device_consume_counter(dev, set, name, q);
}

void dralet_device_set_partition(struct dralet_device *dev, bool partition)
{
	struct device_counters *c = counters_of(dev);

	if (c)
		c->partition = partition;
}

size_t dralet_device_n_counter_sets(const struct dralet_device *dev)
{
	const struct device_counters *c = device_counters_of(dev);
	return c ? c->sets.n : 0;
}

const struct dralet_counter_list *dralet_device_counter_set(const struct dralet_device *dev,
							    size_t i)
{
	const struct device_counters *c = device_counters_of(dev);
	return c && i < c->sets.n ? &c->sets.view[i] : NULL;
}

size_t dralet_device_n_consumptions(const struct dralet_device *dev)
{
	const struct device_counters *c = device_counters_of(dev);
	return c ? c->uses.n : 0;
}

const struct dralet_counter_list *dralet_device_consumption(const struct dralet_device *dev,
							    size_t i)
{
	const struct device_counters *c = device_counters_of(dev);
	return c && i < c->uses.n ? &c->uses.view[i] : NULL;
}

bool dralet_device_is_partition(const struct dralet_device *dev)
{
	const struct device_counters *c = device_counters_of(dev);
	return c && c->partition;
}
