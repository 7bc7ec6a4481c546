/* SPDX-License-Identifier: Apache-2.0 */
/* The slice builder: devices of one driver -> desired ResourceSlice objects. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/slices/build.h"
#include "agent/slices/counters_json.h"
#include "agent/slices/counters_layout.h"
#include "agent/slices/devices_text.h"
#include "agent/slices/device_json.h"
#include "agent/core/capacity_policy.h"
#include "agent/core/k8s_names.h"
#include "agent/slices/sharing_json.h"
#include "agent/lib/json_put.h"

#define SLICE_DEVICES_MAX 128		/* ResourceSliceMaxDevices */
#define SLICE_DEVICES_MAX_WITH_TAINTS 64	/* the 1.35 limit; harmless on 1.34 */
#define SLICE_ATTRS_AND_CAPS_MAX 32	/* ResourceSliceMaxAttributesAndCapacitiesPerDevice */
#define SLICE_VALUE_MAX 64		/* DeviceAttributeMaxValueLength */
#define SLICE_POOL_NAME_MAX 253		/* PoolNameMaxLength */

struct build_ctx {
	slice_warn_fn warn;
	void *userdata;
};

static void warn(const struct build_ctx *ctx, const struct slice_device_in *dev, const char *what,
		 const char *problem)
{
	if (ctx->warn)
		ctx->warn(ctx->userdata, dev->backend ? dev->backend : "unknown",
			  dev->name ? dev->name : "(unnamed)", what, problem);
}

unsigned slice_max_devices(const struct slice_options *opts, bool any_taints)
{
	unsigned max = any_taints ? SLICE_DEVICES_MAX_WITH_TAINTS : SLICE_DEVICES_MAX;
	if (opts && opts->max_devices && opts->max_devices < max)
		max = opts->max_devices;
	return max;
}

static int cmp_devices(const void *a, const void *b)
{
	const struct slice_device_in *da = *(const struct slice_device_in *const *)a;
	const struct slice_device_in *db = *(const struct slice_device_in *const *)b;
	int r = strcmp(da->name, db->name);
	if (r)
		return r;
	return da < db ? -1 : da > db;	/* stable: the first one wins on duplicates */
}

static int cmp_strings(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Why @a cannot be published, or NULL when it can. */
static const char *attr_problem(const struct dralet_attr *a)
{
	if (!k8s_valid_qualified_name(a->name))
		return "invalid attribute name (want a C identifier of at most 32 characters, "
		       "optionally prefixed by a DNS domain and '/')";
	switch (a->type) {
	case DRALET_ATTR_INT:
	case DRALET_ATTR_BOOL:
		return NULL;
	case DRALET_ATTR_STRING:
		if (!a->string_value)
			return "string attribute without a value";
		if (strlen(a->string_value) > SLICE_VALUE_MAX)
			return "string value longer than 64 characters";
		return NULL;
	case DRALET_ATTR_VERSION:
		if (!k8s_valid_semver(a->string_value))
			return "version is not semantic versioning 2.0.0 (or longer than 64 characters)";
		return NULL;
	}
	return "unknown attribute type";
}

static int arr_add(struct json_object *arr, struct json_object *val)
{
	if (!val)
		return -ENOMEM;
	if (json_object_array_add(arr, val) < 0) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}

/* True when an earlier entry of @names[0..n) equals @name. */
static bool seen_before(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

/* Adds capacity @c's requestPolicy to its object @v when it has a valid one
 * and the device is shared (the API allows it only then). */
static int add_request_policy(const struct build_ctx *ctx, const struct slice_device_in *dev,
			      const struct slice_options *opts, const struct dralet_capacity *c,
			      struct json_object *v)
{
	const struct dralet_capacity_policy *p =
		dev->cap_policies ? dev->cap_policies[c - dev->caps] : NULL;
	const char *problem;

	if (!p || !opts->consumable_capacity || !dev->allow_multiple)
		return 0;
	if ((problem = capacity_policy_problem(p, c->quantity))) {
		warn(ctx, dev, c->name, problem);
		return 0;
	}
	return json_put(v, "requestPolicy", capacity_policy_json(p));
}

/*
 * Renders one device; *ret_dev NULL when the device itself is left out.
 * Attributes and capacities are checked, the valid ones kept up to the
 * 32-per-device budget (capacities first: selectors on memory matter most),
 * and written in name order like the apiserver returns maps.
 */
/* What @dev consumes (counters_layout.h decides whether it is published). */
static int device_uses_json(struct json_object *obj, const struct slice_device_in *dev)
{
	const struct dralet_counter_list *uses[DRALET_CONSUMPTIONS_PER_DEVICE_MAX];
	size_t n = 0;
	for (; n < dev->n_uses && n < DRALET_CONSUMPTIONS_PER_DEVICE_MAX; n++)
		uses[n] = &dev->uses[n];
	return counters_json_add(obj, "consumesCounters", "counterSet", uses, n);
}

static int device_json(const struct build_ctx *ctx, const struct slice_device_in *dev,
		       const struct slice_options *opts, bool with_uses,
		       struct json_object **ret_dev)
{
	size_t n_attrs = dev->n_attrs, n_caps = dev->n_caps;
	const char **attr_names = calloc(n_attrs + 1, sizeof(*attr_names));
	const struct dralet_attr **attrs = calloc(n_attrs + 1, sizeof(*attrs));
	const char **cap_names = calloc(n_caps + 1, sizeof(*cap_names));
	const struct dralet_capacity **caps = calloc(n_caps + 1, sizeof(*caps));
	struct json_object *obj = NULL;
	int r = -ENOMEM;
	if (!attr_names || !attrs || !cap_names || !caps)
		goto out;

	size_t budget = SLICE_ATTRS_AND_CAPS_MAX, kept_caps = 0, kept_attrs = 0;
	for (size_t i = 0; i < n_caps; i++) {
		const struct dralet_capacity *c = &dev->caps[i];
		const char *problem = NULL;
		if (!k8s_valid_qualified_name(c->name))
			problem = "invalid capacity name (want a C identifier of at most 32 "
				  "characters, optionally prefixed by a DNS domain and '/')";
		else if (!k8s_valid_quantity(c->quantity))
			problem = "capacity value is not a Kubernetes quantity";
		else if (seen_before(cap_names, kept_caps, c->name))
			problem = "duplicate capacity name";
		else if (kept_caps >= budget)
			problem = "more than 32 attributes and capacities on one device";
		if (problem) {
			warn(ctx, dev, c->name ? c->name : "(unnamed)", problem);
			continue;
		}
		cap_names[kept_caps] = c->name;
		caps[kept_caps++] = c;
	}
	budget -= kept_caps;
	for (size_t i = 0; i < n_attrs; i++) {
		const struct dralet_attr *a = &dev->attrs[i];
		const char *problem = attr_problem(a);
		if (!problem && seen_before(attr_names, kept_attrs, a->name))
			problem = "duplicate attribute name";
		if (!problem && kept_attrs >= budget)
			problem = "more than 32 attributes and capacities on one device";
		if (problem) {
			warn(ctx, dev, a->name ? a->name : "(unnamed)", problem);
			continue;
		}
		attr_names[kept_attrs] = a->name;
		attrs[kept_attrs++] = a;
	}

	obj = json_object_new_object();
	if (!obj || json_put(obj, "name", json_object_new_string(dev->name)) < 0)
		goto out;
	if (kept_attrs) {
		struct json_object *map = json_object_new_object();
		if ((r = json_put(obj, "attributes", map)) < 0)
			goto out;
		r = -ENOMEM;
		qsort(attr_names, kept_attrs, sizeof(*attr_names), cmp_strings);
		for (size_t i = 0; i < kept_attrs; i++) {
			const struct dralet_attr *a = NULL;
			for (size_t k = 0; k < kept_attrs && !a; k++)
				if (!strcmp(attrs[k]->name, attr_names[i]))
					a = attrs[k];
			if (json_put(map, attr_names[i], device_attr_value_json(a)) < 0)
				goto out;
		}
	}
	if (kept_caps) {
		struct json_object *map = json_object_new_object();
		if ((r = json_put(obj, "capacity", map)) < 0)
			goto out;
		r = -ENOMEM;
		qsort(cap_names, kept_caps, sizeof(*cap_names), cmp_strings);
		for (size_t i = 0; i < kept_caps; i++) {
			const struct dralet_capacity *c = NULL;
			for (size_t k = 0; k < kept_caps && !c; k++)
				if (!strcmp(caps[k]->name, cap_names[i]))
					c = caps[k];
			struct json_object *v = json_object_new_object();
			if (json_put(map, cap_names[i], v) < 0 ||
			    json_put(v, "value", json_object_new_string(c->quantity)) < 0 ||
			    (r = add_request_policy(ctx, dev, opts, c, v)) < 0)
				goto out;
			r = -ENOMEM;
		}
	}
	if (with_uses && (r = device_uses_json(obj, dev)) < 0)
		goto out;
	r = -ENOMEM;
	if (opts->consumable_capacity && dev->allow_multiple &&
	    json_put(obj, "allowMultipleAllocations", json_object_new_boolean(1)) < 0)
		goto out;
	if (opts->device_taints && dev->unhealthy) {
		struct json_object *taints = json_object_new_array(), *t = NULL;
		if (json_put(obj, "taints", taints) < 0 ||
		    arr_add(taints, t = json_object_new_object()) < 0 ||
		    json_put(t, "key", json_object_new_string(dev->taint_key ? dev->taint_key
										: SLICE_TAINT_UNHEALTHY_KEY)) < 0 ||
		    json_put(t, "value", json_object_new_string("true")) < 0 ||
		    json_put(t, "effect", json_object_new_string("NoSchedule")) < 0)
			goto out;
	}
	*ret_dev = obj;
	obj = NULL;
	r = 0;
out:
	json_object_put(obj);
	free(attr_names);
	free(attrs);
	free(cap_names);
	free(caps);
	return r;
}

/* The slice without its devices: spec.devices holds the placeholder
 * (devices_text.h), or spec.sharedCounters @sets (a slice of counters only,
 * 1.35 and later: it may not carry devices). */
static struct json_object *slice_skeleton(const char *driver, const char *node_name,
					  const char *node_uid, size_t n_slices,
					  const struct counters_slice *plan, bool counters_only)
{
	struct json_object *s = json_object_new_object(), *meta = NULL, *spec = NULL, *pool = NULL;
	char gen[512];
	snprintf(gen, sizeof(gen), "%s-%s-", node_name, driver);
	if (!s || json_put(s, "apiVersion", json_object_new_string("resource.k8s.io/v1")) < 0 ||
	    json_put(s, "kind", json_object_new_string("ResourceSlice")) < 0 ||
	    json_put(s, "metadata", meta = json_object_new_object()) < 0 ||
	    json_put(meta, "generateName", json_object_new_string(gen)) < 0)
		goto fail;
	if (node_uid && *node_uid) {
		struct json_object *refs = json_object_new_array(), *ref = NULL;
		if (json_put(meta, "ownerReferences", refs) < 0 ||
		    arr_add(refs, ref = json_object_new_object()) < 0)
			goto fail;
		if (json_put(ref, "apiVersion", json_object_new_string("v1")) < 0 ||
		    json_put(ref, "kind", json_object_new_string("Node")) < 0 ||
		    json_put(ref, "name", json_object_new_string(node_name)) < 0 ||
		    json_put(ref, "uid", json_object_new_string(node_uid)) < 0 ||
		    json_put(ref, "controller", json_object_new_boolean(1)) < 0)
			goto fail;
	}
	if (json_put(s, "spec", spec = json_object_new_object()) < 0 ||
	    json_put(spec, "driver", json_object_new_string(driver)) < 0 ||
	    json_put(spec, "pool", pool = json_object_new_object()) < 0 ||
	    json_put(pool, "name", json_object_new_string(node_name)) < 0 ||
	    json_put(pool, "generation", json_object_new_int64(0)) < 0 ||
	    json_put(pool, "resourceSliceCount", json_object_new_int64((int64_t)n_slices)) < 0 ||
	    json_put(spec, "nodeName", json_object_new_string(node_name)) < 0 ||
	    counters_json_add(spec, "sharedCounters", "name", plan->sets, plan->n_sets) < 0 ||
	    (!counters_only && json_put(spec, "devices", slice_devices_placeholder()) < 0))
		goto fail;
	return s;
fail:
	json_object_put(s);
	return NULL;
}

/* Gives @b the devices @plan names (indexes into @unique); one device's
 * tree at a time. */
static int fill_slice(const struct build_ctx *ctx, const struct slice_device_in *const *unique,
		      const struct counters_slice *plan, const struct counters_layout *layout,
		      const struct slice_options *opts, struct slice_record_builder *b)
{
	for (size_t k = 0; k < plan->n_devices; k++) {
		size_t i = plan->devices[k];
		struct json_object *obj = NULL;
		int r = device_json(ctx, unique[i], opts, layout->with_uses[i], &obj);
		if (r == 0)
			r = slice_record_builder_device(b, obj);
		json_object_put(obj);
		if (r < 0)
			return r;
	}
	return 0;
}

int slice_build(const char *driver, const char *node_name, const char *node_uid,
		const struct slice_device_in *devs, size_t n_devs, const struct slice_options *opts,
		slice_warn_fn warn_fn, void *userdata, struct slice_list **ret_slices)
{
	static const struct slice_options defaults;
	struct build_ctx ctx = { .warn = warn_fn, .userdata = userdata };
	if (!opts)
		opts = &defaults;
	if (!k8s_valid_driver_name(driver) ||
	    !k8s_valid_dns_subdomain(node_name, SLICE_POOL_NAME_MAX))
		return -EINVAL;
	if (n_devs && !devs)
		return -EINVAL;

	const struct slice_device_in **order = calloc(n_devs + 1, sizeof(*order));
	const struct slice_device_in **unique = calloc(n_devs + 1, sizeof(*unique));
	struct counters_layout *layout = NULL;
	struct slice_list *slices = NULL;
	int r = -ENOMEM;
	size_t n_ok = 0, n_order = 0;
	bool any_taints = false;
	if (!order || !unique || slice_list_new(&slices) < 0)
		goto out;

	for (size_t i = 0; i < n_devs; i++) {
		if (!devs[i].name || !k8s_valid_dns_label(devs[i].name)) {
			warn(&ctx, &devs[i], NULL,
			     "invalid device name (want a DNS label: lower-case alphanumerics and "
			     "'-', at most 63 characters); device not published");
			continue;
		}
		order[n_order++] = &devs[i];
	}
	qsort(order, n_order, sizeof(*order), cmp_devices);
	/* The devices published (the first of each name) and whether any gets a taint. */
	for (size_t i = 0; i < n_order; i++) {
		if (i && !strcmp(order[i]->name, order[i - 1]->name)) {
			warn(&ctx, order[i], NULL, "duplicate device name; only the first is published");
			continue;
		}
		unique[n_ok++] = order[i];
		any_taints |= opts->device_taints && order[i]->unhealthy;
	}

	/* Which devices and counter sets go into which slice (counters_layout.h). */
	enum counters_layout_kind kind = counters_layout_kind(opts);
	r = counters_layout_plan(unique, n_ok, kind, slice_max_devices(opts, any_taints), warn_fn,
				 userdata, &layout);
	if (r < 0)
		goto out;

	/* One device's tree at a time: the slice's text grows device by device. */
	size_t n_slices = layout->n_slices;
	for (size_t s = 0; s < n_slices; s++) {
		const struct counters_slice *plan = &layout->slices[s];
		bool counters_only = kind == COUNTERS_LAYOUT_SEPARATE && plan->n_sets;
		struct json_object *slice = slice_skeleton(driver, node_name, node_uid, n_slices,
							   plan, counters_only);
		struct slice_record_builder *b = NULL;
		struct slice_record *rec = NULL;
		r = slice ? slice_record_builder_new(SLICE_RECORD_DESIRED, slice, &b) : -ENOMEM;
		json_object_put(slice);	/* the builder holds it */
		if (r == 0 && (r = fill_slice(&ctx, unique, plan, layout, opts, b)) < 0)
			slice_record_builder_free(b);
		else if (r == 0)
			r = slice_record_builder_finish(b, &rec);
		if (r < 0 || (r = slice_list_append(slices, rec)) < 0)
			goto out;
	}
	*ret_slices = slices;
	slices = NULL;
	r = 0;
out:
	counters_layout_free(layout);
	slice_list_unref(slices);
	free(order);
	free(unique);
	return r;
}

void slice_options_for_server(struct slice_options *opts, unsigned minor)
{
	opts->server_minor = minor;
	if (!opts->partitionable_explicit)
		opts->partitionable = minor == 0 || minor >= 36;	/* beta, on, since 1.36 */
}

/* "1.34", "v1.34.2" -> 34; -EINVAL for anything else. */
static int minor_of(const char *text)
{
	unsigned major, minor;
	int end = 0;
	if (!text || sscanf(text + (*text == 'v'), "%u.%u%n", &major, &minor, &end) != 2 ||
	    major != 1 || minor == 0 || minor > 999)
		return -EINVAL;
	return (int)minor;
}

int slice_options_from_config(struct json_object *config, struct slice_options *ret_opts)
{
	struct slice_options o = { .device_taints = true, .consumable_capacity = true };
	struct json_object *gates = NULL, *v;
	unsigned minor = 0;
	if (config && json_object_object_get_ex(config, "kubernetesVersion", &v)) {
		int m = json_object_is_type(v, json_type_string) ? minor_of(json_object_get_string(v))
								 : -EINVAL;
		if (m < 0)
			return -EINVAL;
		minor = (unsigned)m;
	}
	if (config && json_object_object_get_ex(config, "featureGates", &gates) && gates) {
		if (!json_object_is_type(gates, json_type_object))
			return -EINVAL;
		if (json_object_object_get_ex(gates, "DRADeviceTaints", &v)) {
			if (!json_object_is_type(v, json_type_boolean))
				return -EINVAL;
			o.device_taints = json_object_get_boolean(v);
		}
		if (json_object_object_get_ex(gates, "DRAPartitionableDevices", &v)) {
			if (!json_object_is_type(v, json_type_boolean))
				return -EINVAL;
			o.partitionable = json_object_get_boolean(v);
			o.partitionable_explicit = true;
		}
		if (json_object_object_get_ex(gates, "DRAConsumableCapacity", &v)) {
			if (!json_object_is_type(v, json_type_boolean))
				return -EINVAL;
			o.consumable_capacity = json_object_get_boolean(v);
		}
	}
	slice_options_for_server(&o, minor);
	*ret_opts = o;
	return 0;
}
