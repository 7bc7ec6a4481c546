/* SPDX-License-Identifier: Apache-2.0 */
/* Shared devices and capacity request policies (include/dralet/sharing.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <dralet/backend.h>
#include <dralet/sharing.h>

#include "agent/core/backend_ctx.h"
#include "agent/core/capacity_policy.h"
#include "agent/core/k8s_names.h"

/* One capacity's policy, every string owned. */
struct capacity_policy_entry {
	char *capacity;
	struct dralet_capacity_policy policy;
};

struct device_sharing {
	bool allow_multiple;
	struct capacity_policy_entry *entries;
	size_t n_entries;
};

static void policy_clear(struct dralet_capacity_policy *p)
{
	free((char *)p->default_value);
	for (size_t i = 0; i < p->n_valid_values; i++)
		free((char *)p->valid_values[i]);
	free((void *)p->valid_values);
	free((char *)p->range_min);
	free((char *)p->range_max);
	free((char *)p->range_step);
	memset(p, 0, sizeof(*p));
}

void device_sharing_free(struct device_sharing *sharing)
{
	if (!sharing)
		return;
	for (size_t i = 0; i < sharing->n_entries; i++) {
		free(sharing->entries[i].capacity);
		policy_clear(&sharing->entries[i].policy);
	}
	free(sharing->entries);
	free(sharing);
}

static struct device_sharing *sharing_of(struct dralet_device *dev)
{
	struct device_sharing **slot = device_sharing_slot(dev);

	if (!*slot)
		*slot = calloc(1, sizeof(**slot));
	return *slot;
}

int dralet_device_allow_multiple(struct dralet_device *dev)
{
	struct device_sharing *s = dev ? sharing_of(dev) : NULL;

	if (!dev)
		return -EINVAL;
	if (!s)
		return -ENOMEM;
	s->allow_multiple = true;
	return 0;
}

bool dralet_device_allows_multiple(const struct dralet_device *dev)
{
	const struct device_sharing *s = dev ? device_sharing_of(dev) : NULL;
	return s && s->allow_multiple;
}

const struct dralet_capacity_policy *dralet_device_capacity_policy(const struct dralet_device *dev,
								    const char *capacity)
{
	const struct device_sharing *s = dev ? device_sharing_of(dev) : NULL;

	for (size_t i = 0; s && capacity && i < s->n_entries; i++)
		if (!strcmp(s->entries[i].capacity, capacity))
			return &s->entries[i].policy;
	return NULL;
}

/* ---- checking a policy ---- */

struct checked {
	int64_t value;		/* the capacity's */
	const char *why;	/* the first broken rule */
};

/* Parses @q into *ret; false (and the reason) when it is no quantity >= 0. */
static bool parse(struct checked *c, const char *q, int64_t *ret)
{
	if (k8s_quantity_value(q, ret) < 0) {
		c->why = "a value is not a Kubernetes quantity within 64 bits";
		return false;
	}
	if (*ret < 0) {
		c->why = "a value is negative";
		return false;
	}
	return true;
}

static const char *check_values(struct checked *c, const struct dralet_capacity_policy *p,
				int64_t def)
{
	int64_t prev = -1, v;
	bool has_default = false;

	if (p->n_valid_values > DRALET_CAPACITY_VALID_VALUES_MAX)
		return "validValues has more than 10 entries";
	for (size_t i = 0; i < p->n_valid_values; i++) {
		if (!parse(c, p->valid_values[i], &v))
			return c->why;
		if (v <= prev)
			return "validValues are not sorted in ascending order (or repeat a value)";
		if (v > c->value)
			return "a validValues entry exceeds the capacity's value";
		has_default |= v == def;
		prev = v;
	}
	return has_default ? NULL : "the default is not one of validValues";
}

static const char *check_range(struct checked *c, const struct dralet_capacity_policy *p,
			       int64_t def)
{
	int64_t min, max = c->value, step = 0;

	if (!parse(c, p->range_min, &min) ||
	    (p->range_max && !parse(c, p->range_max, &max)) ||
	    (p->range_step && !parse(c, p->range_step, &step)))
		return c->why;
	if (min > c->value)
		return "validRange.min exceeds the capacity's value";
	if (max > c->value)
		return "validRange.max exceeds the capacity's value";
	if (min > max)
		return "validRange.min is greater than validRange.max";
	if (def < min || def > max)
		return "the default is outside validRange";
	if (p->range_step) {
		if (step <= 0)
			return "validRange.step is not greater than zero";
		if (min > c->value - step)
			return "validRange.min + step exceeds the capacity's value";
		if (p->range_max && max % step)
			return "validRange.max is not a multiple of step";
		if (def % step)
			return "the default is not a multiple of validRange.step";
	}
	return NULL;
}

/* The first rule of sharing.h that @p breaks for a capacity of @value, or NULL. */
static const char *policy_problem(const struct dralet_capacity_policy *p, int64_t value)
{
	struct checked c = { .value = value };
	bool values = p->n_valid_values > 0, range = p->range_min != NULL;
	int64_t def = 0;

	if (values && range)
		return "both validValues and validRange are set (at most one may be)";
	if ((p->range_max || p->range_step) && !range)
		return "validRange.max or step without validRange.min";
	if (!p->default_value)
		return values || range ? "validValues or validRange without a default" : NULL;
	if (!parse(&c, p->default_value, &def))
		return c.why;
	if (def > value)
		return "the default exceeds the capacity's value";
	if (values)
		return check_values(&c, p, def);
	if (range)
		return check_range(&c, p, def);
	return NULL;
}

const char *capacity_policy_problem(const struct dralet_capacity_policy *p, const char *capacity)
{
	int64_t value;

	if (k8s_quantity_value(capacity, &value) < 0 || value < 0)
		return "the capacity's value is not a quantity >= 0 within 64 bits";
	return policy_problem(p, value);
}

/* ---- storing it ---- */

/* The canonical text of quantity @q (valid, whole): binary suffixes stay
 * binary ("1024Mi" -> "1Gi"), the rest decimal ("2000" -> "2k"). */
static char *canonical(const char *q)
{
	char buf[48];
	int64_t v;

	if (!q)
		return NULL;
	if (k8s_quantity_value(q, &v) < 0)
		return strdup(q);
	if (strchr(q, 'i'))
		k8s_quantity_binary((uint64_t)v, buf, sizeof(buf));
	else
		k8s_quantity_decimal(v, buf, sizeof(buf));
	return strdup(buf);
}

static int policy_copy(struct dralet_capacity_policy *dst, const struct dralet_capacity_policy *src)
{
	const char **values = NULL;
	bool fail = false;

	memset(dst, 0, sizeof(*dst));
	if (src->n_valid_values) {
		if (!(values = calloc(src->n_valid_values, sizeof(*values))))
			return -ENOMEM;
		for (size_t i = 0; i < src->n_valid_values; i++)
			fail |= !(values[i] = canonical(src->valid_values[i]));
		dst->valid_values = values;
		dst->n_valid_values = src->n_valid_values;
	}
	fail |= src->default_value && !(dst->default_value = canonical(src->default_value));
	fail |= src->range_min && !(dst->range_min = canonical(src->range_min));
	fail |= src->range_max && !(dst->range_max = canonical(src->range_max));
	fail |= src->range_step && !(dst->range_step = canonical(src->range_step));
	if (fail) {
		policy_clear(dst);
		return -ENOMEM;
	}
	return 0;
}

static const char *capacity_value(const struct dralet_device *dev, const char *name)
{
	for (size_t i = 0; i < dralet_device_n_capacities(dev); i++) {
		const struct dralet_capacity *c = dralet_device_capacity(dev, i);
		if (!strcmp(c->name, name))
			return c->quantity;
	}
	return NULL;
}

int dralet_device_set_capacity_policy(struct dralet_device *dev, const char *capacity,
				      const struct dralet_capacity_policy *policy)
{
	struct device_sharing *s;
	struct capacity_policy_entry *e = NULL;
	struct dralet_capacity_policy copy;
	const char *quantity, *why;
	int r;

	if (!dev || !capacity || !policy)
		return -EINVAL;
	if (!(quantity = capacity_value(dev, capacity))) {
		dralet_ctx_warn(dralet_device_ctx(dev), "device %s: request policy of capacity %s "
				"dropped: the device has no such capacity", dralet_device_name(dev),
				capacity);
		return -ENOENT;
	}
	if (!dralet_device_allows_multiple(dev)) {
		dralet_ctx_warn(dralet_device_ctx(dev), "device %s: request policy of capacity %s "
				"dropped: the device does not allow multiple allocations",
				dralet_device_name(dev), capacity);
		return -EPERM;
	}
	if ((why = capacity_policy_problem(policy, quantity))) {
		dralet_ctx_warn(dralet_device_ctx(dev), "device %s: request policy of capacity %s "
				"dropped: %s", dralet_device_name(dev), capacity, why);
		return -EINVAL;
	}
	if ((r = policy_copy(&copy, policy)) < 0)
		return r;
	s = sharing_of(dev);
	for (size_t i = 0; s && i < s->n_entries; i++)
		if (!strcmp(s->entries[i].capacity, capacity))
			e = &s->entries[i];
	if (!e && s) {
		struct capacity_policy_entry *grown = realloc(s->entries,
							      (s->n_entries + 1) * sizeof(*grown));
		char *name = strdup(capacity);
		if (grown)
			s->entries = grown;
		if (grown && name) {
			e = &s->entries[s->n_entries++];
			e->capacity = name;
			memset(&e->policy, 0, sizeof(e->policy));
		} else {
			free(name);
		}
	}
	if (!e) {
		policy_clear(&copy);
		return -ENOMEM;
	}
	policy_clear(&e->policy);
	e->policy = copy;
	return 0;
}

int dralet_quantity_value(const char *q, int64_t *ret_value)
{
	return k8s_quantity_value(q, ret_value);
}

/* True when capacity name @have is @name, or @name in @driver's domain. */
static bool same_capacity(const char *have, const char *driver, const char *name)
{
	size_t n = driver ? strlen(driver) : 0;

	if (!strcmp(have, name))
		return true;
	return n && !strncmp(have, driver, n) && have[n] == '/' && !strcmp(have + n + 1, name);
}

int dralet_prepare_consumed(const struct dralet_prepare_req *req, const char *driver,
			    const char *name, int64_t *ret_value)
{
	for (size_t i = 0; req && name && i < req->n_consumed; i++)
		if (same_capacity(req->consumed[i].name, driver, name))
			return k8s_quantity_value(req->consumed[i].quantity, ret_value);
	return -ENOENT;
}
