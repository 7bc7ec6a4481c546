/* SPDX-License-Identifier: Apache-2.0 */
/* Sync decisions for one pool (see sync.h for the rules). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/slices/canon.h"
#include "agent/lib/json_get.h"
#include "agent/slices/devices_text.h"
#include "agent/slices/json_tree.h"
#include "agent/slices/sync.h"
#include "agent/lib/json_put.h"

/* ---- JSON helpers ---- */

bool slice_json_equal(struct json_object *a, struct json_object *b)
{
	bool ea = slice_json_is_empty(a), eb = slice_json_is_empty(b);
	if (ea || eb)
		return ea && eb;
	if (json_object_get_type(a) != json_object_get_type(b))
		return false;
	if (json_object_is_type(a, json_type_object)) {
		json_object_object_foreach(a, key, va) {
			struct json_object *vb = json_get(b, key);
			if (!vb && !strcmp(key, "timeAdded"))
				continue;
			if (!slice_json_equal(va, vb))
				return false;
		}
		json_object_object_foreach(b, keyb, vb2) {
			if (!json_get(a, keyb) && !slice_json_is_empty(vb2))
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

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The union of the device names of @recs[0..n): sorted, unique (borrowed strings). */
static int union_names(const struct slice_record *const *recs, size_t n, const char ***ret,
		       size_t *ret_n)
{
	size_t total = 0, k = 0;
	for (size_t i = 0; i < n; i++)
		total += recs[i]->n_names;
	const char **names = calloc(total + 1, sizeof(*names));
	if (!names)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const char *p = recs[i]->names;
		for (size_t j = 0; j < recs[i]->n_names; j++, p += strlen(p) + 1)
			names[k++] = p;
	}
	qsort(names, k, sizeof(*names), cmp_str);
	size_t u = 0;	/* a duplicated slice does not change the pool's device set */
	for (size_t i = 0; i < k; i++)
		if (!u || strcmp(names[u - 1], names[i]))
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
		if (strcmp(a[i], b[i]))
			return false;
	return true;
}

/* ---- the objects written ---- */

static struct json_object *pool_json(const char *name, int64_t generation, size_t count)
{
	struct json_object *p = json_object_new_object();
	if (!p || json_put(p, "name", json_object_new_string(name)) < 0 ||
	    json_put(p, "generation", json_object_new_int64(generation)) < 0 ||
	    json_put(p, "resourceSliceCount", json_object_new_int64((int64_t)count)) < 0) {
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
		struct json_object *nt = json_get(nd, "taints");
		const char *name = json_get_str(nd, "name");
		if (!nt || !name || !json_object_is_type(nt, json_type_array))
			continue;
		struct json_object *od = NULL;
		for (size_t j = 0; j < json_object_array_length(old_devs) && !od; j++) {
			const char *n2 = json_get_str(json_object_array_get_idx(old_devs, j), "name");
			if (n2 && !strcmp(n2, name))
				od = json_object_array_get_idx(old_devs, j);
		}
		struct json_object *ot = json_get(od, "taints");
		if (!ot || !json_object_is_type(ot, json_type_array))
			continue;
		for (size_t a = 0; a < json_object_array_length(nt); a++) {
			struct json_object *t = json_object_array_get_idx(nt, a);
			if (json_get(t, "timeAdded"))
				continue;
			for (size_t b = 0; b < json_object_array_length(ot); b++) {
				struct json_object *o = json_object_array_get_idx(ot, b);
				struct json_object *when = json_get(o, "timeAdded");
				if (when && slice_json_equal(json_get(o, "key"), json_get(t, "key")) &&
				    slice_json_equal(json_get(o, "value"), json_get(t, "value")) &&
				    slice_json_equal(json_get(o, "effect"), json_get(t, "effect"))) {
					json_put(t, "timeAdded", json_object_get(when));
					break;
				}
			}
		}
	}
}

/* @slice's other members, then its metadata, then its spec without @skip
 * plus @pool (taken). *ret_spec: the new spec (owned by the result). */
static int compose(struct json_object *slice, const char *const *skip, struct json_object *pool,
		   struct json_object **ret, struct json_object **ret_spec)
{
	static const char *const top_skip[] = { "metadata", "spec", NULL };
	struct json_object *obj = json_tree_shallow_copy(slice, top_skip), *spec, *meta = json_get(slice, "metadata");
	if (!obj) {
		json_object_put(pool);
		return -ENOMEM;
	}
	if (meta && json_put(obj, "metadata", json_object_get(meta)) < 0)
		goto fail;
	spec = json_tree_shallow_copy(json_get(slice, "spec"), skip);
	if (json_put(obj, "spec", spec) < 0)
		goto fail;
	int r = json_put(spec, "pool", pool);	/* takes @pool either way */
	pool = NULL;
	if (r < 0)
		goto fail;
	*ret = obj;
	*ret_spec = spec;
	return 0;
fail:
	json_object_put(pool);
	json_object_put(obj);
	return -ENOMEM;
}

static const char *const spec_copied_fields[] = { "devices", "sharedCounters",
						  "perDeviceNodeSelection", "nodeSelector",
						  "allNodes", "pool", NULL };

static bool any_taints(struct json_object *devices)
{
	if (!json_object_is_type(devices, json_type_array))
		return false;
	for (size_t i = 0; i < json_object_array_length(devices); i++)
		if (!slice_json_is_empty(json_get(json_object_array_get_idx(devices, i), "taints")))
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

/* The PUT body: @published with the desired spec fields and pool. */
static int update_object(const struct slice_record *published, struct json_object *desired,
			 struct json_object *pool, struct json_object **ret)
{
	struct json_object *existing = NULL, *obj = NULL, *spec, *dspec = json_get(desired, "spec");
	int r = slice_record_parse(published, &existing);
	if (r < 0 || !json_get(existing, "spec") ||
	    !json_object_is_type(json_get(existing, "spec"), json_type_object)) {
		json_object_put(pool);
		json_object_put(existing);
		return r < 0 ? r : -EINVAL;
	}
	if ((r = compose(existing, spec_copied_fields, pool, &obj, &spec)) < 0)
		goto out;
	for (size_t i = 0; spec_copied_fields[i]; i++) {
		const char *key = spec_copied_fields[i];
		struct json_object *v = json_get(dspec, key);
		if (!v || !strcmp(key, "pool") || !strcmp(key, "allNodes"))
			continue;
		if (!strcmp(key, "devices") && any_taints(v) && published->time_added_devices) {
			/* the server's taint timeAdded is kept (@desired is our own parse) */
			struct json_object *old = json_tokener_parse(published->time_added_devices);
			copy_time_added(old, v);
			json_object_put(old);
		}
		if ((r = json_put(spec, key, json_object_get(v))) < 0)
			goto out;
	}
	*ret = obj;
	obj = NULL;
out:
	json_object_put(obj);
	json_object_put(existing);
	return r;
}

int slice_plan_op_object(const struct slice_plan *plan, size_t i, struct json_object **ret_obj)
{
	if (!plan || i >= plan->n_ops || plan->ops[i].type == SLICE_OP_DELETE)
		return -EINVAL;
	const struct slice_op *op = &plan->ops[i];
	struct json_object *desired = NULL, *pool = NULL, *obj = NULL;
	int r = slice_record_parse(op->desired, &desired);
	if (r < 0)
		return r;
	if (!(pool = pool_json(plan->pool_name, plan->generation, plan->n_desired))) {
		json_object_put(desired);
		return -ENOMEM;
	}
	if (op->type == SLICE_OP_CREATE)
		r = create_object(desired, pool, &obj);
	else
		r = update_object(op->published, desired, pool, &obj);
	json_object_put(desired);
	if (r < 0)
		return r;
	*ret_obj = obj;
	return 0;
}

/*
 * The written text without a tree of the devices: the desired slice is parsed
 * with a placeholder for its devices, composed as above, written, and its
 * devices' text put back. Not when an update must carry the server's taint
 * timeAdded into the devices (rare: taints published and set by a server).
 */
static int op_text_light(const struct slice_plan *plan, const struct slice_op *op, int flags,
			 slice_edit_fn edit, void *userdata, char **ret_text, size_t *ret_len)
{
	struct json_object *light = NULL, *pool = NULL, *obj = NULL;
	struct json_span devices;
	if (op->type == SLICE_OP_UPDATE && (op->desired->gates & SLICE_GATE_DEVICE_TAINTS) &&
	    op->published->time_added_devices)
		return -ENOENT;
	int r = slice_text_light(op->desired->text, op->desired->text_len, &light, &devices);
	if (r < 0)
		return r;
	if (!(pool = pool_json(plan->pool_name, plan->generation, plan->n_desired))) {
		json_object_put(light);
		return -ENOMEM;
	}
	if (op->type == SLICE_OP_CREATE)
		r = create_object(light, pool, &obj);
	else
		r = update_object(op->published, light, pool, &obj);
	json_object_put(light);
	if (r < 0)
		return r;
	if (edit)
		edit(userdata, obj);
	r = slice_text_join(obj, flags, devices, ret_text, ret_len);
	json_object_put(obj);
	return r == -EINVAL ? -ENOENT : r;
}

int slice_plan_op_text(const struct slice_plan *plan, size_t i, int flags, slice_edit_fn edit,
		       void *userdata, char **ret_text, size_t *ret_len)
{
	if (!plan || i >= plan->n_ops || plan->ops[i].type == SLICE_OP_DELETE)
		return -EINVAL;
	int r = op_text_light(plan, &plan->ops[i], flags, edit, userdata, ret_text, ret_len);
	if (r != -ENOENT)
		return r;
	/* the whole tree */
	struct json_object *obj = NULL;
	if ((r = slice_plan_op_object(plan, i, &obj)) < 0)
		return r;
	if (edit)
		edit(userdata, obj);
	size_t len = 0;
	const char *t = json_object_to_json_string_length(obj, flags, &len);
	char *copy = t ? malloc(len + 1) : NULL;
	if (copy)
		memcpy(copy, t, len + 1);
	json_object_put(obj);
	if (!copy)
		return -ENOMEM;
	*ret_text = copy;
	if (ret_len)
		*ret_len = len;
	return 0;
}

/* ---- the plan ---- */

static bool slice_changed(const struct slice_record *cur, const struct slice_record *des,
			  const char *pool_name, int64_t generation, size_t count)
{
	if (cur->pool_odd || strcmp(cur->pool ? cur->pool : "", pool_name) ||
	    cur->generation != generation || cur->slice_count != (int64_t)count)
		return true;
	if (des->time_added)
		return !slice_digest_equal(&cur->digest_full, &des->digest_full);
	return !slice_digest_equal(&cur->digest, &des->digest);
}

static int cmp_by_name(const void *a, const void *b)
{
	const char *x = (*(const struct slice_record *const *)a)->name;
	const char *y = (*(const struct slice_record *const *)b)->name;
	return strcmp(x ? x : "", y ? y : "");
}

void slice_plan_free(struct slice_plan *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->n_ops; i++) {
		free(plan->ops[i].name);
		free(plan->ops[i].uid);
		free(plan->ops[i].resource_version);
	}
	for (size_t i = 0; i < plan->n_own; i++)
		slice_record_free(plan->own[i]);
	free(plan->own);
	free(plan->ops);
	free(plan->pool_name);
	free(plan);
}

static int plan_add(struct slice_plan *plan, enum slice_op_type type,
		    const struct slice_record *published, const struct slice_record *desired,
		    int desired_index)
{
	struct slice_op *op = &plan->ops[plan->n_ops];
	*op = (struct slice_op){ .type = type, .desired_index = desired_index,
				 .published = published, .desired = desired };
	if (published &&
	    ((published->name && !(op->name = strdup(published->name))) ||
	     (published->uid && !(op->uid = strdup(published->uid))) ||
	     (published->resource_version &&
	      !(op->resource_version = strdup(published->resource_version))))) {
		free(op->name);
		free(op->uid);
		free(op->resource_version);
		return -ENOMEM;
	}
	plan->n_ops++;
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

/* @rec without the fields of the gates in @dropped: a new record in *ret. */
static int strip_record(const struct slice_record *rec, unsigned dropped, struct slice_record **ret)
{
	struct json_object *obj = NULL;
	int r = slice_record_parse(rec, &obj);
	if (r < 0)
		return r;
	slice_strip_gates(obj, dropped);
	r = slice_record_from_json(obj, SLICE_RECORD_DESIRED, ret);
	json_object_put(obj);
	return r;
}

int slice_plan_compute(const struct slice_list *existing, const struct slice_list *desired,
		       const char *pool_name, unsigned dropped, struct slice_plan **ret_plan)
{
	if (!pool_name)
		return -EINVAL;
	size_t n_exist = existing ? existing->n : 0;
	size_t n_des = desired ? desired->n : 0;
	int r = -ENOMEM;

	struct slice_plan *plan = calloc(1, sizeof(*plan));
	const struct slice_record **cur = calloc(n_exist + 1, sizeof(*cur));
	const struct slice_record **obsolete = calloc(n_exist + 1, sizeof(*obsolete));
	const struct slice_record **des = calloc(n_des + 1, sizeof(*des));
	int *match = calloc(n_des + 1, sizeof(*match));
	bool *used = calloc(n_exist + 1, sizeof(*used));
	bool *changed = calloc(n_des + 1, sizeof(*changed));
	const char **cur_names = NULL, **des_names = NULL;
	size_t n_cur_names = 0, n_des_names = 0;
	if (!plan || !cur || !obsolete || !des || !match || !used || !changed)
		goto out;
	plan->ops = calloc(n_exist + n_des + 1, sizeof(*plan->ops));
	plan->own = calloc(n_des + 1, sizeof(*plan->own));
	if (!plan->ops || !plan->own || !(plan->pool_name = strdup(pool_name)))
		goto out;
	plan->n_desired = n_des;

	/* 1. the pool's current generation; everything else is obsolete */
	int64_t gen = 0;
	for (size_t i = 0; i < n_exist; i++) {
		const struct slice_record *s = existing->items[i];
		if (s->pool && !strcmp(s->pool, pool_name) && s->generation > gen)
			gen = s->generation;
	}
	size_t n_cur = 0, n_obsolete = 0;
	for (size_t i = 0; i < n_exist; i++) {
		const struct slice_record *s = existing->items[i];
		if (s->pool && !strcmp(s->pool, pool_name) && s->generation == gen)
			cur[n_cur++] = s;
		else
			obsolete[n_obsolete++] = s;
	}
	qsort(cur, n_cur, sizeof(*cur), cmp_by_name);

	for (size_t i = 0; i < n_des; i++) {
		const struct slice_record *d = desired->items[i];
		if (!d->has_spec) {
			r = -EINVAL;
			goto out;
		}
		/* Borrowed unless fields must go: only those get a copy. */
		if (d->gate_keys & dropped) {
			if ((r = strip_record(d, dropped, &plan->own[plan->n_own])) < 0)
				goto out;
			r = -ENOMEM;
			d = plan->own[plan->n_own++];
		}
		des[i] = d;
		match[i] = -1;
	}

	/* 2. matching */
	if (n_cur == 1 && n_des == 1) {
		match[0] = 0;
		used[0] = true;
	} else {
		for (size_t i = 0; i < n_des; i++) {
			for (size_t j = 0; j < n_cur && match[i] < 0; j++) {
				if (!used[j] && slice_record_same_names(des[i], cur[j])) {
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
	for (size_t i = 0; i < n_des; i++) {
		if (match[i] < 0) {
			n_new++;
			continue;
		}
		changed[i] = slice_changed(cur[match[i]], des[i], pool_name, gen, n_des);
		n_changed += changed[i];
	}
	if (union_names(cur, n_cur, &cur_names, &n_cur_names) < 0 ||
	    union_names(des, n_des, &des_names, &n_des_names) < 0)
		goto out;
	bool set_changed = n_cur && !names_equal(cur_names, n_cur_names, des_names, n_des_names);

	/* 4. generation. Not for the rest of a round that wrote only some slices
	 * (resumed): the current generation already holds exactly what is
	 * desired, only fewer slices than its resourceSliceCount, which consumers
	 * treat as a pool being updated; the missing slices complete it. A bump
	 * would turn every slice written into one to write again, so under
	 * failing writes a round would only converge when all its writes work. */
	size_t n_matched = n_des - n_new;
	bool resumed = n_cur > 0 && n_cur < n_des && n_matched == n_cur && n_changed == 0;
	plan->bumped = !resumed && (n_new > 0 || n_changed > 1 || set_changed);
	plan->generation = plan->bumped && gen < INT64_MAX ? gen + 1 : gen;	/* saturates */

	/* 5. the writes, in order */
	qsort(obsolete, n_obsolete, sizeof(*obsolete), cmp_by_name);
	for (size_t i = 0; i < n_obsolete; i++)
		if (plan_add(plan, SLICE_OP_DELETE, obsolete[i], NULL, -1) < 0)
			goto out;
	for (size_t i = 0; i < n_des; i++) {
		if (match[i] < 0 || (!changed[i] && !plan->bumped))
			continue;
		if (plan_add(plan, SLICE_OP_UPDATE, cur[match[i]], des[i], (int)i) < 0)
			goto out;
	}
	for (size_t i = 0; i < n_des; i++) {
		if (match[i] >= 0)
			continue;
		if (plan_add(plan, SLICE_OP_CREATE, NULL, des[i], (int)i) < 0)
			goto out;
	}
	*ret_plan = plan;
	plan = NULL;
	r = 0;
out:
	slice_plan_free(plan);
	free(cur);
	free(obsolete);
	free(des);
	free(match);
	free(used);
	free(changed);
	free(cur_names);
	free(des_names);
	return r;
}
