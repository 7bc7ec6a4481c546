/* SPDX-License-Identifier: Apache-2.0 */
/* Sync decisions for one pool (see sync.h for the rules). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/slices/sync.h"

/* ---- JSON helpers ---- */

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;
	if (o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v))
		return v;
	return NULL;
}

static const char *get_str(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);
	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static bool is_empty(struct json_object *o)
{
	if (!o)
		return true;
	switch (json_object_get_type(o)) {
	case json_type_null:
		return true;
	case json_type_array:
		return json_object_array_length(o) == 0;
	case json_type_object:
		return json_object_object_length(o) == 0;
	case json_type_string:
		return json_object_get_string_len(o) == 0;
	case json_type_boolean:
		return !json_object_get_boolean(o);
	case json_type_int:
		return json_object_get_int64(o) == 0;
	default:
		return false;
	}
}

bool slice_json_equal(struct json_object *a, struct json_object *b)
{
	bool ea = is_empty(a), eb = is_empty(b);
	if (ea || eb)
		return ea && eb;
	if (json_object_get_type(a) != json_object_get_type(b))
		return false;
	if (json_object_is_type(a, json_type_object)) {
		json_object_object_foreach(a, key, va) {
			struct json_object *vb = get(b, key);
			if (!vb && !strcmp(key, "timeAdded"))
				continue;
			if (!slice_json_equal(va, vb))
				return false;
		}
		json_object_object_foreach(b, keyb, vb2) {
			if (!get(a, keyb) && !is_empty(vb2))
				return false;
		}
		return true;
	}
	if (json_object_is_type(a, json_type_array)) {
		size_t n = json_object_array_length(a);
		if (n != json_object_array_length(b))
			return false;
		for (size_t i = 0; i < n; i++)
			if (!slice_json_equal(json_object_array_get_idx(a, i),
					      json_object_array_get_idx(b, i)))
				return false;
		return true;
	}
	return json_object_equal(a, b);
}

static int64_t slice_generation(struct json_object *slice)
{
	struct json_object *g = get(get(get(slice, "spec"), "pool"), "generation");
	return g ? json_object_get_int64(g) : 0;
}

static const char *slice_pool(struct json_object *slice)
{
	return get_str(get(get(slice, "spec"), "pool"), "name");
}

static const char *slice_name(struct json_object *slice)
{
	return get_str(get(slice, "metadata"), "name");
}

static struct json_object *slice_devices(struct json_object *slice)
{
	struct json_object *d = get(get(slice, "spec"), "devices");
	return d && json_object_is_type(d, json_type_array) ? d : NULL;
}

static int cmp_str(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	return strcmp(x ? x : "", y ? y : "");
}

/* Sorted device names of the slices in @slices[0..n) (borrowed strings). */
static int device_names(struct json_object *const *slices, size_t n, const char ***ret,
			size_t *ret_n)
{
	size_t total = 0;
	for (size_t i = 0; i < n; i++) {
		struct json_object *d = slice_devices(slices[i]);
		total += d ? json_object_array_length(d) : 0;
	}
	const char **names = calloc(total + 1, sizeof(*names));
	if (!names)
		return -ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		struct json_object *d = slice_devices(slices[i]);
		for (size_t j = 0; d && j < json_object_array_length(d); j++)
			names[k++] = get_str(json_object_array_get_idx(d, j), "name");
	}
	qsort(names, k, sizeof(*names), cmp_str);
	size_t u = 0;	/* unique: a duplicated slice does not change the pool's device set */
	for (size_t i = 0; i < k; i++)
		if (!u || cmp_str(&names[u - 1], &names[i]))
			names[u++] = names[i];
	*ret = names;
	*ret_n = u;
	return 0;
}

static bool names_equal(const char **a, size_t na, const char **b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (cmp_str(&a[i], &b[i]))
			return false;
	return true;
}

/* ---- alpha fields ---- */

static const char *const device_fields_partitionable[] = { "consumesCounters", "nodeName",
							    "nodeSelector", "allNodes", NULL };
static const char *const device_fields_binding[] = { "bindsToNode", "bindingConditions",
						      "bindingFailureConditions", NULL };

const char *slice_gate_name(unsigned gate)
{
	switch (gate) {
	case SLICE_GATE_DEVICE_TAINTS:
		return "DRADeviceTaints";
	case SLICE_GATE_PARTITIONABLE:
		return "DRAPartitionableDevices";
	case SLICE_GATE_BINDING_CONDITIONS:
		return "DRADeviceBindingConditions";
	case SLICE_GATE_CONSUMABLE_CAPACITY:
		return "DRAConsumableCapacity";
	}
	return "unknown";
}

/* Gates whose fields device @dev carries. */
static unsigned device_gates(struct json_object *dev)
{
	unsigned m = 0;
	if (!is_empty(get(dev, "taints")))
		m |= SLICE_GATE_DEVICE_TAINTS;
	for (size_t i = 0; device_fields_partitionable[i]; i++)
		if (!is_empty(get(dev, device_fields_partitionable[i])))
			m |= SLICE_GATE_PARTITIONABLE;
	for (size_t i = 0; device_fields_binding[i]; i++)
		if (!is_empty(get(dev, device_fields_binding[i])))
			m |= SLICE_GATE_BINDING_CONDITIONS;
	if (!is_empty(get(dev, "allowMultipleAllocations")))
		m |= SLICE_GATE_CONSUMABLE_CAPACITY;
	struct json_object *caps = get(dev, "capacity");
	if (caps && json_object_is_type(caps, json_type_object)) {
		json_object_object_foreach(caps, k, c) {
			(void)k;
			if (!is_empty(get(c, "requestPolicy")))
				m |= SLICE_GATE_CONSUMABLE_CAPACITY;
		}
	}
	return m;
}

static unsigned spec_gates(struct json_object *spec)
{
	unsigned m = 0;
	if (!is_empty(get(spec, "sharedCounters")) || !is_empty(get(spec, "perDeviceNodeSelection")))
		m |= SLICE_GATE_PARTITIONABLE;
	return m;
}

unsigned slice_dropped_gates(struct json_object *sent, struct json_object *stored)
{
	unsigned dropped = spec_gates(get(sent, "spec")) & ~spec_gates(get(stored, "spec"));
	struct json_object *ds = slice_devices(sent), *dr = slice_devices(stored);
	for (size_t i = 0; ds && i < json_object_array_length(ds); i++) {
		struct json_object *d = json_object_array_get_idx(ds, i);
		const char *name = get_str(d, "name");
		struct json_object *match = NULL;
		for (size_t j = 0; dr && name && j < json_object_array_length(dr) && !match; j++) {
			struct json_object *e = json_object_array_get_idx(dr, j);
			const char *n2 = get_str(e, "name");
			if (n2 && !strcmp(n2, name))
				match = e;
		}
		if (match)
			dropped |= device_gates(d) & ~device_gates(match);
	}
	return dropped;
}

void slice_strip_gates(struct json_object *slice, unsigned mask)
{
	struct json_object *spec = get(slice, "spec"), *devs = slice_devices(slice);
	if (!mask || !spec)
		return;
	if (mask & SLICE_GATE_PARTITIONABLE) {
		json_object_object_del(spec, "sharedCounters");
		json_object_object_del(spec, "perDeviceNodeSelection");
	}
	for (size_t i = 0; devs && i < json_object_array_length(devs); i++) {
		struct json_object *d = json_object_array_get_idx(devs, i);
		if (!json_object_is_type(d, json_type_object))
			continue;
		if (mask & SLICE_GATE_DEVICE_TAINTS)
			json_object_object_del(d, "taints");
		for (size_t k = 0; (mask & SLICE_GATE_PARTITIONABLE) && device_fields_partitionable[k]; k++)
			json_object_object_del(d, device_fields_partitionable[k]);
		for (size_t k = 0; (mask & SLICE_GATE_BINDING_CONDITIONS) && device_fields_binding[k]; k++)
			json_object_object_del(d, device_fields_binding[k]);
		if (mask & SLICE_GATE_CONSUMABLE_CAPACITY) {
			json_object_object_del(d, "allowMultipleAllocations");
			struct json_object *caps = get(d, "capacity");
			if (caps && json_object_is_type(caps, json_type_object)) {
				json_object_object_foreach(caps, k, c) {
					(void)k;
					if (json_object_is_type(c, json_type_object))
						json_object_object_del(c, "requestPolicy");
				}
			}
		}
	}
}

/* ---- the plan ---- */

static int deep_copy(struct json_object *src, struct json_object **ret)
{
	struct json_object *dst = NULL;
	if (json_object_deep_copy(src, &dst, NULL) < 0)
		return -ENOMEM;
	*ret = dst;
	return 0;
}

static int set_key(struct json_object *obj, const char *key, struct json_object *val)
{
	if (!val)
		return -ENOMEM;
	if (json_object_object_add(obj, key, val) < 0) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}

static struct json_object *pool_json(const char *name, int64_t generation, size_t count)
{
	struct json_object *p = json_object_new_object();
	if (!p || set_key(p, "name", json_object_new_string(name)) < 0 ||
	    set_key(p, "generation", json_object_new_int64(generation)) < 0 ||
	    set_key(p, "resourceSliceCount", json_object_new_int64((int64_t)count)) < 0) {
		json_object_put(p);
		return NULL;
	}
	return p;
}

/* Copies taint timeAdded values of @old_devs into matching taints of @new_devs. */
static void copy_time_added(struct json_object *old_devs, struct json_object *new_devs)
{
	for (size_t i = 0; new_devs && old_devs && i < json_object_array_length(new_devs); i++) {
		struct json_object *nd = json_object_array_get_idx(new_devs, i);
		struct json_object *nt = get(nd, "taints");
		const char *name = get_str(nd, "name");
		if (!nt || !name || !json_object_is_type(nt, json_type_array))
			continue;
		struct json_object *od = NULL;
		for (size_t j = 0; j < json_object_array_length(old_devs) && !od; j++) {
			const char *n2 = get_str(json_object_array_get_idx(old_devs, j), "name");
			if (n2 && !strcmp(n2, name))
				od = json_object_array_get_idx(old_devs, j);
		}
		struct json_object *ot = get(od, "taints");
		if (!ot || !json_object_is_type(ot, json_type_array))
			continue;
		for (size_t a = 0; a < json_object_array_length(nt); a++) {
			struct json_object *t = json_object_array_get_idx(nt, a);
			if (get(t, "timeAdded"))
				continue;
			for (size_t b = 0; b < json_object_array_length(ot); b++) {
				struct json_object *o = json_object_array_get_idx(ot, b);
				struct json_object *when = get(o, "timeAdded");
				if (when && slice_json_equal(get(o, "key"), get(t, "key")) &&
				    slice_json_equal(get(o, "value"), get(t, "value")) &&
				    slice_json_equal(get(o, "effect"), get(t, "effect"))) {
					set_key(t, "timeAdded", json_object_get(when));
					break;
				}
			}
		}
	}
}


/*
 * Write bodies share the bulk (device lists) with the desired and existing
 * slices by reference (json-c counts references); only the small parts that
 * differ are new. Nothing here modifies a shared member.
 */
static struct json_object *shallow_copy(struct json_object *src, const char *const *skip)
{
	struct json_object *o = json_object_new_object();
	if (!o || !src)
		return o;
	json_object_object_foreach(src, key, val) {
		bool skipped = false;
		for (size_t i = 0; skip && skip[i]; i++)
			skipped |= !strcmp(key, skip[i]);
		if (skipped)
			continue;
		struct json_object *ref = json_object_get(val);
		if (json_object_object_add(o, key, ref) < 0) {
			json_object_put(ref);
			json_object_put(o);
			return NULL;
		}
	}
	return o;
}

/* @slice with a deep copy of its metadata, its spec's members shared except
 * @skip, and @pool. *ret_spec: the new spec (owned by the result). */
static int compose(struct json_object *slice, const char *const *skip, struct json_object *pool,
		   struct json_object **ret, struct json_object **ret_spec)
{
	static const char *const top_skip[] = { "metadata", "spec", NULL };
	struct json_object *obj = shallow_copy(slice, top_skip), *meta = NULL, *spec;
	int r = -ENOMEM;
	if (!obj)
		return r;
	if (get(slice, "metadata") && ((r = deep_copy(get(slice, "metadata"), &meta)) < 0 ||
				       (r = set_key(obj, "metadata", meta)) < 0))
		goto fail;
	r = -ENOMEM;
	spec = shallow_copy(get(slice, "spec"), skip);
	if (set_key(obj, "spec", spec) < 0 || set_key(spec, "pool", json_object_get(pool)) < 0)
		goto fail;
	*ret = obj;
	*ret_spec = spec;
	return 0;
fail:
	json_object_put(obj);
	return r;
}

static const char *const spec_copied_fields[] = { "devices", "sharedCounters",
						  "perDeviceNodeSelection", "nodeSelector",
						  "allNodes", "pool", NULL };

static bool any_taints(struct json_object *devices)
{
	for (size_t i = 0; devices && i < json_object_array_length(devices); i++)
		if (!is_empty(get(json_object_array_get_idx(devices, i), "taints")))
			return true;
	return false;
}

/* The POST body: @desired with the pool. */
static int create_object(struct json_object *desired, struct json_object *pool,
			 struct json_object **ret)
{
	static const char *const skip[] = { "pool", NULL };
	struct json_object *spec;
	return compose(desired, skip, pool, ret, &spec);
}

/* The PUT body: @existing with the desired spec fields and pool. */
static int update_object(struct json_object *existing, struct json_object *desired,
			 struct json_object *pool, struct json_object **ret)
{
	struct json_object *obj, *spec, *dspec = get(desired, "spec");
	if (!get(existing, "spec"))
		return -EINVAL;
	int r = compose(existing, spec_copied_fields, pool, &obj, &spec);
	if (r < 0)
		return r;
	for (size_t i = 0; spec_copied_fields[i]; i++) {
		const char *key = spec_copied_fields[i];
		struct json_object *v = get(dspec, key), *val = NULL;
		if (!v || !strcmp(key, "pool") || !strcmp(key, "allNodes"))
			continue;
		if (!strcmp(key, "devices") && any_taints(v)) {
			/* the server's taint timeAdded is kept: these devices get their own copy */
			if ((r = deep_copy(v, &val)) < 0)
				goto fail;
			copy_time_added(slice_devices(existing), val);
		} else {
			val = json_object_get(v);
		}
		if ((r = set_key(spec, key, val)) < 0)
			goto fail;
	}
	*ret = obj;
	return 0;
fail:
	json_object_put(obj);
	return r;
}

static bool slice_changed(struct json_object *cur, struct json_object *des,
			  struct json_object *desired_pool)
{
	struct json_object *cs = get(cur, "spec"), *ds = get(des, "spec");
	return !slice_json_equal(get(cs, "pool"), desired_pool) ||
	       !slice_json_equal(get(cs, "nodeSelector"), get(ds, "nodeSelector")) ||
	       !slice_json_equal(get(cs, "allNodes"), get(ds, "allNodes")) ||
	       !slice_json_equal(get(cs, "devices"), get(ds, "devices")) ||
	       !slice_json_equal(get(cs, "sharedCounters"), get(ds, "sharedCounters")) ||
	       !slice_json_equal(get(cs, "perDeviceNodeSelection"), get(ds, "perDeviceNodeSelection"));
}

static int cmp_by_name(const void *a, const void *b)
{
	const char *x = slice_name(*(struct json_object *const *)a);
	const char *y = slice_name(*(struct json_object *const *)b);
	return strcmp(x ? x : "", y ? y : "");
}

void slice_plan_free(struct slice_plan *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->n_ops; i++)
		json_object_put(plan->ops[i].object);
	free(plan->ops);
	free(plan);
}

static int plan_add(struct slice_plan *plan, enum slice_op_type type, struct json_object *obj,
		    int desired_index)
{
	plan->ops[plan->n_ops++] = (struct slice_op){ type, obj, desired_index };
	switch (type) {
	case SLICE_OP_DELETE:
		plan->n_delete++;
		break;
	case SLICE_OP_UPDATE:
		plan->n_update++;
		break;
	case SLICE_OP_CREATE:
		plan->n_create++;
		break;
	}
	return 0;
}

int slice_plan_compute(struct json_object *existing, struct json_object *desired,
		       const char *pool_name, unsigned dropped, struct slice_plan **ret_plan)
{
	if (!pool_name || (existing && !json_object_is_type(existing, json_type_array)) ||
	    (desired && !json_object_is_type(desired, json_type_array)))
		return -EINVAL;
	size_t n_exist = existing ? json_object_array_length(existing) : 0;
	size_t n_des = desired ? json_object_array_length(desired) : 0;
	int r = -ENOMEM;

	struct slice_plan *plan = calloc(1, sizeof(*plan));
	struct json_object **cur = calloc(n_exist + 1, sizeof(*cur));
	struct json_object **obsolete = calloc(n_exist + 1, sizeof(*obsolete));
	struct json_object **des = calloc(n_des + 1, sizeof(*des));
	int *match = calloc(n_des + 1, sizeof(*match));
	bool *used = calloc(n_exist + 1, sizeof(*used));
	bool *changed = calloc(n_des + 1, sizeof(*changed));
	const char **cur_names = NULL, **des_names = NULL, **a = NULL, **b = NULL;
	size_t n_cur_names = 0, n_des_names = 0, na = 0, nb = 0;
	struct json_object *pool = NULL;
	if (!plan || !cur || !obsolete || !des || !match || !used || !changed)
		goto out;
	plan->ops = calloc(n_exist + n_des + 1, sizeof(*plan->ops));
	if (!plan->ops)
		goto out;

	/* 1. the pool's current generation; everything else is obsolete */
	int64_t gen = 0;
	for (size_t i = 0; i < n_exist; i++) {
		struct json_object *s = json_object_array_get_idx(existing, i);
		const char *p = slice_pool(s);
		if (p && !strcmp(p, pool_name) && slice_generation(s) > gen)
			gen = slice_generation(s);
	}
	size_t n_cur = 0, n_obsolete = 0;
	for (size_t i = 0; i < n_exist; i++) {
		struct json_object *s = json_object_array_get_idx(existing, i);
		const char *p = slice_pool(s);
		if (p && !strcmp(p, pool_name) && slice_generation(s) == gen)
			cur[n_cur++] = s;
		else
			obsolete[n_obsolete++] = s;
	}
	qsort(cur, n_cur, sizeof(*cur), cmp_by_name);

	for (size_t i = 0; i < n_des; i++) {
		struct json_object *d = json_object_array_get_idx(desired, i);
		if (!get(d, "spec")) {
			r = -EINVAL;
			goto out;
		}
		/* Borrowed unless fields must go: only the writes get copies. */
		if (dropped) {
			if ((r = deep_copy(d, &des[i])) < 0)
				goto out;
			r = -ENOMEM;
			slice_strip_gates(des[i], dropped);
		} else {
			des[i] = json_object_get(d);
		}
		match[i] = -1;
	}

	/* 2. matching */
	if (n_cur == 1 && n_des == 1) {
		match[0] = 0;
		used[0] = true;
	} else {
		for (size_t i = 0; i < n_des; i++) {
			free(a);
			a = NULL;
			if (device_names(&des[i], 1, &a, &na) < 0)
				goto out;
			for (size_t j = 0; j < n_cur && match[i] < 0; j++) {
				if (used[j])
					continue;
				free(b);
				b = NULL;
				if (device_names(&cur[j], 1, &b, &nb) < 0)
					goto out;
				if (names_equal(a, na, b, nb)) {
					match[i] = (int)j;
					used[j] = true;
				}
			}
		}
		size_t j = 0;
		for (size_t i = 0; i < n_des; i++) {
			if (match[i] >= 0)
				continue;
			while (j < n_cur && used[j])
				j++;
			if (j == n_cur)
				break;
			match[i] = (int)j;
			used[j] = true;
		}
	}
	for (size_t j = 0; j < n_cur; j++)
		if (!used[j])
			obsolete[n_obsolete++] = cur[j];

	/* 3. what changed */
	size_t n_new = 0, n_changed = 0;
	if (!(pool = pool_json(pool_name, gen, n_des)))
		goto out;
	for (size_t i = 0; i < n_des; i++) {
		if (match[i] < 0) {
			n_new++;
			continue;
		}
		changed[i] = slice_changed(cur[match[i]], des[i], pool);
		n_changed += changed[i];
	}
	if (device_names(cur, n_cur, &cur_names, &n_cur_names) < 0 ||
	    device_names(des, n_des, &des_names, &n_des_names) < 0)
		goto out;
	bool set_changed = n_cur && !names_equal(cur_names, n_cur_names, des_names, n_des_names);

	/* 4. generation */
	plan->bumped = n_new > 0 || n_changed > 1 || set_changed;
	plan->generation = plan->bumped ? gen + 1 : gen;
	json_object_put(pool);
	if (!(pool = pool_json(pool_name, plan->generation, n_des)))
		goto out;

	/* 5. the writes, in order */
	qsort(obsolete, n_obsolete, sizeof(*obsolete), cmp_by_name);
	for (size_t i = 0; i < n_obsolete; i++)
		plan_add(plan, SLICE_OP_DELETE, json_object_get(obsolete[i]), -1);
	for (size_t i = 0; i < n_des; i++) {
		if (match[i] < 0 || (!changed[i] && !plan->bumped))
			continue;
		struct json_object *obj = NULL;
		if ((r = update_object(cur[match[i]], des[i], pool, &obj)) < 0)
			goto out;
		plan_add(plan, SLICE_OP_UPDATE, obj, (int)i);
	}
	for (size_t i = 0; i < n_des; i++) {
		if (match[i] >= 0)
			continue;
		struct json_object *obj = NULL;
		if ((r = create_object(des[i], pool, &obj)) < 0)
			goto out;
		plan_add(plan, SLICE_OP_CREATE, obj, (int)i);
	}
	*ret_plan = plan;
	plan = NULL;
	r = 0;
out:
	for (size_t i = 0; des && i < n_des; i++)
		json_object_put(des[i]);
	json_object_put(pool);
	slice_plan_free(plan);
	free(cur);
	free(obsolete);
	free(des);
	free(match);
	free(used);
	free(changed);
	free(cur_names);
	free(des_names);
	free(a);
	free(b);
	return r;
}
