/* SPDX-License-Identifier: Apache-2.0 */
/* Sync decisions: matching, generations, write order, gates, convergence. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/slices/build.h"
#include "agent/slices/sync.h"

#define POOL "node-1"

/* Desired slices for devices gpu-<first>..gpu-<first+n-1> (names zero-padded). */
static struct slice_list *desired_range(size_t n, const char *model, const int *skip)
{
	struct dralet_attr *attrs = calloc(n, sizeof(*attrs));
	struct slice_device_in *devs = calloc(n, sizeof(*devs));
	char(*names)[16] = calloc(n, sizeof(*names));
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		bool skipped = false;
		for (const int *s = skip; s && *s >= 0; s++)
			skipped |= (size_t)*s == i;
		if (skipped)
			continue;
		snprintf(names[k], sizeof(names[k]), "gpu-%04zu", i);
		attrs[k] = (struct dralet_attr){ .name = "model", .type = DRALET_ATTR_STRING,
						 .string_value = model };
		devs[k] = (struct slice_device_in){ .name = names[k], .attrs = &attrs[k], .n_attrs = 1 };
		k++;
	}
	struct slice_list *out = NULL;
	assert_int_equal(slice_build("gpu.dralet.dev", POOL, "uid-n", devs, k, NULL, NULL, NULL, &out), 0);
	free(attrs);
	free(devs);
	free(names);
	return out;
}

/* Desired records from JSON (a tree or text). */
static struct slice_list *desired_json(struct json_object *array)
{
	struct slice_list *l = NULL;
	assert_int_equal(slice_list_from_json(array, SLICE_RECORD_DESIRED, &l), 0);
	return l;
}

static struct slice_list *desired_text(const char *text)
{
	struct json_object *arr = json_tokener_parse(text);
	struct slice_list *l = desired_json(arr);
	json_object_put(arr);
	return l;
}

/* The published records the planner sees for @existing (a json array, the
 * server's state); kept until the next plan, as a store keeps its view. */
static struct slice_list *seen;

static struct slice_list *published(struct json_object *existing)
{
	slice_list_unref(seen);
	seen = NULL;
	if (!existing)
		return NULL;
	assert_int_equal(slice_list_from_json(existing, SLICE_RECORD_PUBLISHED, &seen), 0);
	return seen;
}

static int teardown(void **state)
{
	(void)state;
	slice_list_unref(seen);
	seen = NULL;
	return 0;
}

/* The object op @i writes. */
static struct json_object *op_object(const struct slice_plan *plan, size_t i)
{
	struct json_object *obj = NULL;
	assert_int_equal(slice_plan_op_object(plan, i, &obj), 0);
	return obj;
}

/* A tiny apiserver: applies a plan to @existing (array, replaced). */
static int counter = 0;
static void apply(struct json_object **existing, const struct slice_plan *plan)
{
	struct json_object *next = json_object_new_array();
	for (size_t i = 0; *existing && i < json_object_array_length(*existing); i++) {
		struct json_object *e = json_object_array_get_idx(*existing, i), *meta, *name;
		json_object_object_get_ex(e, "metadata", &meta);
		json_object_object_get_ex(meta, "name", &name);
		bool gone = false, replaced = false;
		for (size_t k = 0; k < plan->n_ops; k++) {
			if (!plan->ops[k].name || strcmp(plan->ops[k].name, json_object_get_string(name)))
				continue;
			if (plan->ops[k].type == SLICE_OP_DELETE)
				gone = true;
			if (plan->ops[k].type == SLICE_OP_UPDATE) {
				struct json_object *copy = op_object(plan, k), *m2;
				char rv[16];
				snprintf(rv, sizeof(rv), "%d", ++counter);
				json_object_object_get_ex(copy, "metadata", &m2);
				json_object_object_add(m2, "resourceVersion", json_object_new_string(rv));
				json_object_array_add(next, copy);
				replaced = true;
			}
		}
		if (!gone && !replaced)
			json_object_array_add(next, json_object_get(e));
	}
	for (size_t k = 0; k < plan->n_ops; k++) {
		if (plan->ops[k].type != SLICE_OP_CREATE)
			continue;
		struct json_object *copy = op_object(plan, k), *meta;
		json_object_object_get_ex(copy, "metadata", &meta);
		char buf[32];
		snprintf(buf, sizeof(buf), "s-%05d", ++counter);
		json_object_object_add(meta, "name", json_object_new_string(buf));
		json_object_object_add(meta, "uid", json_object_new_string(buf));
		snprintf(buf, sizeof(buf), "%d", counter);
		json_object_object_add(meta, "resourceVersion", json_object_new_string(buf));
		json_object_array_add(next, copy);
	}
	json_object_put(*existing);
	*existing = next;
}

static struct slice_plan *plan_for(struct json_object *existing, struct slice_list *desired)
{
	struct slice_plan *p = NULL;
	assert_int_equal(slice_plan_compute(published(existing), desired, POOL, 0, &p), 0);
	return p;
}

/* Applies a plan and checks the next plan is empty: one round converges. */
static void apply_and_converge(struct json_object **existing, struct slice_plan *plan,
			       struct slice_list *desired)
{
	apply(existing, plan);
	slice_plan_free(plan);
	struct slice_plan *again = plan_for(*existing, desired);
	assert_int_equal(again->n_ops, 0);
	slice_plan_free(again);
}

static int64_t gen_of(struct json_object *slice)
{
	struct json_object *spec, *pool, *g;
	json_object_object_get_ex(slice, "spec", &spec);
	json_object_object_get_ex(spec, "pool", &pool);
	json_object_object_get_ex(pool, "generation", &g);
	return json_object_get_int64(g);
}

static int64_t gen_of_op(const struct slice_plan *plan, size_t i)
{
	struct json_object *obj = op_object(plan, i);
	int64_t g = gen_of(obj);
	json_object_put(obj);
	return g;
}

static void test_first_publish_and_no_op(void **state)
{
	(void)state;
	struct slice_list *desired = desired_range(300, "H100", NULL);
	struct json_object *existing = NULL;
	struct slice_plan *p = plan_for(NULL, desired);
	assert_int_equal(p->n_create, 3);
	assert_int_equal(p->n_update + p->n_delete, 0);
	assert_int_equal(p->generation, 1);
	assert_true(p->bumped);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(p->ops[i].type, SLICE_OP_CREATE);
		assert_int_equal(gen_of_op(p, i), 1);
	}
	apply_and_converge(&existing, p, desired);
	/* the same content again: no write at all */
	struct slice_list *same = desired_range(300, "H100", NULL);
	p = plan_for(existing, same);
	assert_int_equal(p->n_ops, 0);
	assert_int_equal(p->generation, 1);
	slice_plan_free(p);
	slice_list_unref(same);
	slice_list_unref(desired);
	json_object_put(existing);
}

static void test_single_slice_device_set_change_bumps(void **state)
{
	(void)state;
	struct slice_list *d1 = desired_range(4, "H100", NULL);
	struct json_object *existing = NULL;
	apply_and_converge(&existing, plan_for(NULL, d1), d1);
	/* a device appears: one update, generation + 1 */
	struct slice_list *d2 = desired_range(5, "H100", NULL);
	struct slice_plan *p = plan_for(existing, d2);
	assert_int_equal(p->n_update, 1);
	assert_int_equal(p->n_create + p->n_delete, 0);
	assert_int_equal(p->generation, 2);
	apply_and_converge(&existing, p, d2);
	/* one disappears: again one update, generation + 1 */
	int skip[] = { 2, -1 };
	struct slice_list *d3 = desired_range(5, "H100", skip);
	p = plan_for(existing, d3);
	assert_int_equal(p->n_update, 1);
	assert_int_equal(p->generation, 3);
	apply_and_converge(&existing, p, d3);
	/* only an attribute changes: one update, generation kept (upstream rule) */
	struct slice_list *d4 = desired_range(5, "H200", skip);
	p = plan_for(existing, d4);
	assert_int_equal(p->n_update, 1);
	assert_false(p->bumped);
	assert_int_equal(p->generation, 3);
	apply_and_converge(&existing, p, d4);
	slice_list_unref(d1);
	slice_list_unref(d2);
	slice_list_unref(d3);
	slice_list_unref(d4);
	json_object_put(existing);
}

static void test_multi_slice_changes(void **state)
{
	(void)state;
	struct slice_list *d1 = desired_range(300, "H100", NULL);
	struct json_object *existing = NULL;
	apply_and_converge(&existing, plan_for(NULL, d1), d1);
	/* a device appears at the end: one bump, every slice rewritten, by update */
	struct slice_list *d2 = desired_range(301, "H100", NULL);
	struct slice_plan *p = plan_for(existing, d2);
	assert_int_equal(p->generation, 2);
	assert_int_equal(p->n_update, 3);
	assert_int_equal(p->n_create + p->n_delete, 0);
	apply_and_converge(&existing, p, d2);
	for (size_t i = 0; i < json_object_array_length(existing); i++)
		assert_int_equal(gen_of(json_object_array_get_idx(existing, i)), 2);
	/* growing past a slice boundary: updates + one create */
	struct slice_list *d3 = desired_range(385, "H100", NULL);
	p = plan_for(existing, d3);
	assert_int_equal(p->generation, 3);
	assert_int_equal(p->n_update, 3);
	assert_int_equal(p->n_create, 1);
	assert_int_equal(p->n_delete, 0);
	apply_and_converge(&existing, p, d3);
	/* shrinking: one slice goes (deleted first), the others updated */
	p = plan_for(existing, d1);
	assert_int_equal(p->generation, 4);
	assert_int_equal(p->n_delete, 1);
	assert_int_equal(p->ops[0].type, SLICE_OP_DELETE);
	assert_int_equal(p->n_update, 3);
	apply_and_converge(&existing, p, d1);
	slice_list_unref(d1);
	slice_list_unref(d2);
	slice_list_unref(d3);
	json_object_put(existing);
}

static void test_matching_by_device_set_ignores_order(void **state)
{
	(void)state;
	struct slice_list *d1 = desired_range(300, "H100", NULL);
	struct json_object *existing = NULL;
	apply_and_converge(&existing, plan_for(NULL, d1), d1);
	/* the store lists them in any order */
	struct json_object *rev = json_object_new_array();
	for (size_t i = json_object_array_length(existing); i-- > 0;)
		json_object_array_add(rev, json_object_get(json_object_array_get_idx(existing, i)));
	struct slice_plan *p = plan_for(rev, d1);
	assert_int_equal(p->n_ops, 0);
	slice_plan_free(p);
	/* an attribute change in the middle slice: one update, no bump */
	struct slice_list *built = desired_range(300, "H100", NULL);
	struct json_object *arr = NULL;
	assert_int_equal(slice_list_to_json(built, &arr), 0);
	slice_list_unref(built);
	struct json_object *dev = json_object_array_get_idx(
		json_object_object_get(json_object_object_get(json_object_array_get_idx(arr, 1), "spec"),
				       "devices"), 5);
	json_object_object_add(json_object_object_get(dev, "attributes"), "extra",
			       json_tokener_parse("{\"bool\": true}"));
	struct slice_list *d2 = desired_json(arr);
	p = plan_for(rev, d2);
	assert_int_equal(p->n_update, 1);
	assert_false(p->bumped);
	assert_int_equal(p->generation, 1);
	assert_int_equal(p->ops[0].desired_index, 1);
	slice_plan_free(p);
	json_object_put(arr);
	json_object_put(rev);
	slice_list_unref(d1);
	slice_list_unref(d2);
	json_object_put(existing);
}

/*
 * The server answers with its own member order (struct fields, maps sorted)
 * and fills in empty fields; none of that is a change. A changed value, or
 * devices in another order, is one.
 */
static void test_canonical_comparison(void **state)
{
	(void)state;
	static const char desired_text_[] =
		"[{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":"
		"{\"generateName\":\"node-1-gpu.dralet.dev-\"},\"spec\":{\"driver\":\"gpu.dralet.dev\","
		"\"pool\":{\"name\":\"node-1\",\"generation\":0,\"resourceSliceCount\":1},"
		"\"nodeName\":\"node-1\",\"devices\":["
		"{\"name\":\"gpu-0\",\"attributes\":{\"z\":{\"int\":1},\"a\":{\"string\":\"x\"}},"
		"\"capacity\":{\"mem\":{\"value\":\"1Gi\"},\"cores\":{\"value\":\"2\"}}},"
		"{\"name\":\"gpu-1\",\"attributes\":{\"a\":{\"string\":\"y\"}}}]}}]";
	static const char server_text[] =
		"{\"kind\":\"ResourceSlice\",\"apiVersion\":\"resource.k8s.io/v1\",\"metadata\":"
		"{\"name\":\"s1\",\"uid\":\"u1\",\"resourceVersion\":\"5\",\"managedFields\":[]},"
		"\"spec\":{\"nodeName\":\"node-1\",\"driver\":\"gpu.dralet.dev\",\"nodeSelector\":null,"
		"\"pool\":{\"resourceSliceCount\":1,\"name\":\"node-1\",\"generation\":1},"
		"\"sharedCounters\":[],\"devices\":["
		"{\"attributes\":{\"a\":{\"string\":\"x\"},\"z\":{\"int\":1}},"
		"\"capacity\":{\"cores\":{\"value\":\"2\"},\"mem\":{\"value\":\"1Gi\"}},"
		"\"name\":\"gpu-0\",\"taints\":[],\"allowMultipleAllocations\":false},"
		"{\"name\":\"gpu-1\",\"attributes\":{\"a\":{\"string\":\"y\"}},\"capacity\":{}}]}}";
	struct slice_list *desired = desired_text(desired_text_);
	struct json_object *existing = json_object_new_array();
	json_object_array_add(existing, json_tokener_parse(server_text));
	struct slice_plan *p = plan_for(existing, desired);
	assert_int_equal(p->n_ops, 0);
	assert_int_equal(p->generation, 1);
	slice_plan_free(p);
	/* one value differs: one update, keeping the server's metadata */
	const char *changes[] = {
		"\"z\":{\"int\":1}", "\"z\":{\"int\":2}",		/* another value */
		"\"z\":{\"int\":1}", "\"z\":{\"string\":\"1\"}",	/* another type */
		"\"cores\":{\"value\":\"2\"}", "\"cores\":{\"value\":\"3\"}",
	};
	for (size_t c = 0; c < sizeof(changes) / sizeof(changes[0]); c += 2) {
		char text[2048];
		const char *at = strstr(desired_text_, changes[c]);
		assert_non_null(at);
		snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - desired_text_), desired_text_,
			 changes[c + 1], at + strlen(changes[c]));
		struct slice_list *d2 = desired_text(text);
		p = plan_for(existing, d2);
		assert_int_equal(p->n_update, 1);
		assert_int_equal(p->n_ops, 1);
		assert_string_equal(p->ops[0].name, "s1");
		struct json_object *o = op_object(p, 0), *meta;
		json_object_object_get_ex(o, "metadata", &meta);
		assert_string_equal(json_object_get_string(json_object_object_get(meta, "uid")), "u1");
		assert_non_null(json_object_object_get(meta, "managedFields"));
		assert_null(json_object_object_get(meta, "generateName"));
		json_object_put(o);
		slice_plan_free(p);
		slice_list_unref(d2);
	}
	/* the same devices in another order: a change (devices are a list) */
	struct json_object *arr = json_tokener_parse(desired_text_), *devs;
	devs = json_object_object_get(json_object_object_get(json_object_array_get_idx(arr, 0), "spec"),
				      "devices");
	struct json_object *first = json_object_get(json_object_array_get_idx(devs, 0));
	json_object_array_del_idx(devs, 0, 1);
	json_object_array_add(devs, first);
	struct slice_list *d3 = desired_json(arr);
	p = plan_for(existing, d3);
	assert_int_equal(p->n_update, 1);
	slice_plan_free(p);
	slice_list_unref(d3);
	json_object_put(arr);
	slice_list_unref(desired);
	json_object_put(existing);
}

static struct json_object *with_meta(struct slice_list *list, size_t i, const char *name,
				     const char *pool, int64_t gen)
{
	struct json_object *arr = NULL, *c, *meta, *spec, *p;
	assert_int_equal(slice_list_to_json(list, &arr), 0);
	c = json_object_get(json_object_array_get_idx(arr, i));
	json_object_put(arr);
	json_object_object_get_ex(c, "metadata", &meta);
	json_object_object_add(meta, "name", json_object_new_string(name));
	json_object_object_add(meta, "uid", json_object_new_string(name));
	json_object_object_add(meta, "resourceVersion", json_object_new_string("7"));
	json_object_object_get_ex(c, "spec", &spec);
	json_object_object_get_ex(spec, "pool", &p);
	json_object_object_add(p, "name", json_object_new_string(pool));
	json_object_object_add(p, "generation", json_object_new_int64(gen));
	return c;
}

static void test_obsolete_slices(void **state)
{
	(void)state;
	struct slice_list *d1 = desired_range(4, "H100", NULL);
	struct json_object *existing = json_object_new_array();
	json_object_array_add(existing, with_meta(d1, 0, "cur", POOL, 5));
	json_object_array_add(existing, with_meta(d1, 0, "dup", POOL, 5));	/* a lost create's twin */
	json_object_array_add(existing, with_meta(d1, 0, "old", POOL, 4));	/* lower generation */
	json_object_array_add(existing, with_meta(d1, 0, "other", "other-pool", 9));	/* other pool */
	struct slice_plan *p = plan_for(existing, d1);
	/* "cur" matches (first by name); everything else goes; no bump for a duplicate */
	assert_int_equal(p->n_delete, 3);
	assert_int_equal(p->n_update, 0);
	assert_int_equal(p->n_create, 0);
	assert_int_equal(p->generation, 5);
	const char *deleted[] = { "dup", "old", "other" };
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(p->ops[i].type, SLICE_OP_DELETE);
		assert_string_equal(p->ops[i].name, deleted[i]);
		/* preconditions come from the existing object */
		assert_string_equal(p->ops[i].uid, deleted[i]);
		assert_string_equal(p->ops[i].resource_version, "7");
		struct json_object *none = NULL;
		assert_int_equal(slice_plan_op_object(p, i, &none), -EINVAL);
	}
	slice_plan_free(p);
	/* nothing desired: everything is deleted */
	struct slice_list *none = NULL;
	assert_int_equal(slice_list_new(&none), 0);
	p = plan_for(existing, none);
	assert_int_equal(p->n_delete, 4);
	assert_int_equal(p->n_ops, 4);
	slice_plan_free(p);
	slice_list_unref(none);
	json_object_put(existing);
	slice_list_unref(d1);
}

/* @p bumps to @generation, updating the pool's 2 slices and creating its
 * third; applies it and drops @existing. */
static void bumped_to(struct json_object **existing, struct slice_plan *p,
		      struct slice_list *d, int64_t generation)
{
	assert_true(p->bumped);
	assert_int_equal(p->generation, generation);
	assert_int_equal(p->n_update, 2);
	assert_int_equal(p->n_create, 1);
	apply_and_converge(existing, p, d);
	json_object_put(*existing);
}

/*
 * A round that wrote only some of its slices (the others failed) is resumed
 * at its generation: what it wrote stays written. Only the missing slices
 * are written; an incomplete pool whose slices differ, or were written for
 * another slice count, is bumped as usual.
 */
static void test_interrupted_round_resumes(void **state)
{
	(void)state;
	struct slice_list *d = desired_range(300, "H100", NULL);	/* 3 slices */
	/* a bump to 2 updated slice 0 and created slice 1; slice 2's update and
	 * the delete of an obsolete one failed */
	struct json_object *existing = json_object_new_array();
	json_object_array_add(existing, with_meta(d, 0, "a", POOL, 2));
	json_object_array_add(existing, with_meta(d, 1, "b", POOL, 2));
	json_object_array_add(existing, with_meta(d, 2, "c", POOL, 1));
	json_object_array_add(existing, with_meta(d, 2, "gone", POOL, 1));
	struct slice_plan *p = plan_for(existing, d);
	assert_false(p->bumped);
	assert_int_equal(p->generation, 2);
	assert_int_equal(p->n_update, 0);
	assert_int_equal(p->n_delete, 2);
	assert_int_equal(p->n_create, 1);
	assert_int_equal(p->ops[2].type, SLICE_OP_CREATE);
	assert_int_equal(p->ops[2].desired_index, 2);
	assert_int_equal(gen_of_op(p, 2), 2);
	apply_and_converge(&existing, p, d);
	json_object_put(existing);

	/* a slice of the incomplete generation differs from what is desired: bump */
	struct slice_list *other = desired_range(300, "H200", NULL);
	existing = json_object_new_array();
	json_object_array_add(existing, with_meta(d, 0, "a", POOL, 2));
	json_object_array_add(existing, with_meta(other, 1, "b", POOL, 2));
	p = plan_for(existing, d);
	bumped_to(&existing, p, d, 3);

	/* slices of a complete pool of 2 (resourceSliceCount 2): a third is new, bump */
	struct slice_list *two = desired_range(200, "H100", NULL);
	existing = NULL;
	apply_and_converge(&existing, plan_for(NULL, two), two);
	p = plan_for(existing, d);
	bumped_to(&existing, p, d, 2);
	slice_list_unref(two);
	slice_list_unref(other);
	slice_list_unref(d);
}

static void test_update_keeps_metadata(void **state)
{
	(void)state;
	struct slice_list *d1 = desired_range(2, "H100", NULL);
	struct json_object *existing = json_object_new_array();
	json_object_array_add(existing, with_meta(d1, 0, "x", POOL, 3));
	struct slice_list *d2 = desired_range(2, "B200", NULL);
	struct slice_plan *p = plan_for(existing, d2);
	assert_int_equal(p->n_update, 1);
	struct json_object *o = op_object(p, 0), *meta, *v;
	json_object_object_get_ex(o, "metadata", &meta);
	json_object_object_get_ex(meta, "name", &v);
	assert_string_equal(json_object_get_string(v), "x");
	json_object_object_get_ex(meta, "resourceVersion", &v);
	assert_string_equal(json_object_get_string(v), "7");
	assert_int_equal(gen_of(o), 3);
	assert_non_null(strstr(json_object_to_json_string(o), "B200"));
	assert_int_equal(p->ops[0].desired_index, 0);
	json_object_put(o);
	slice_plan_free(p);
	json_object_put(existing);
	slice_list_unref(d1);
	slice_list_unref(d2);
}

static const char TAINTED[] =
	"{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"t\","
	"\"uid\":\"u\",\"resourceVersion\":\"9\"},\"spec\":{\"driver\":\"gpu.dralet.dev\",\"nodeName\":"
	"\"node-1\",\"pool\":{\"name\":\"node-1\",\"generation\":1,\"resourceSliceCount\":1},"
	"\"devices\":[{\"name\":\"gpu-0\",\"taints\":[{\"key\":\"dralet.dev/unhealthy\",\"value\":"
	"\"true\",\"effect\":\"NoSchedule\",\"timeAdded\":\"2026-01-01T00:00:00Z\"}]}]}}";
static const char TAINTED_DESIRED[] =
	"[{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":"
	"{\"generateName\":\"node-1-gpu.dralet.dev-\"},\"spec\":{\"driver\":\"gpu.dralet.dev\","
	"\"nodeName\":\"node-1\",\"pool\":{\"name\":\"node-1\",\"generation\":0,"
	"\"resourceSliceCount\":1},\"devices\":[{\"name\":\"gpu-0\",\"attributes\":{\"a\":{\"int\":1}},"
	"\"taints\":[{\"key\":\"dralet.dev/unhealthy\",\"value\":\"true\",\"effect\":\"NoSchedule\"}]}]}}]";

static void test_taint_time_added(void **state)
{
	(void)state;
	struct json_object *existing = json_object_new_array();
	json_object_array_add(existing, json_tokener_parse(TAINTED));
	struct json_object *desired = json_tokener_parse(TAINTED_DESIRED);
	/* the same taint without timeAdded is no change */
	struct json_object *dev0 = json_object_array_get_idx(json_object_object_get(
		json_object_object_get(json_object_array_get_idx(desired, 0), "spec"), "devices"), 0);
	struct json_object *attrs = json_object_get(json_object_object_get(dev0, "attributes"));
	json_object_object_del(dev0, "attributes");
	struct slice_list *dl = desired_json(desired);
	struct slice_plan *p = plan_for(existing, dl);
	assert_int_equal(p->n_ops, 0);
	slice_plan_free(p);
	slice_list_unref(dl);
	/* with another change, the update carries the server's timeAdded along */
	json_object_object_add(dev0, "attributes", attrs);
	dl = desired_json(desired);
	p = plan_for(existing, dl);
	assert_int_equal(p->n_update, 1);
	struct json_object *o = op_object(p, 0);
	assert_non_null(strstr(json_object_to_json_string(o), "2026-01-01T00:00:00Z"));
	json_object_put(o);
	slice_plan_free(p);
	/* a desired timeAdded of its own is compared: another time is a change */
	struct json_object *timed = json_tokener_parse(TAINTED), *tl = json_object_new_array();
	json_object_object_add(json_object_object_get(timed, "metadata"), "generateName",
			       json_object_new_string("x-"));
	json_object_array_add(tl, timed);
	struct slice_list *own = desired_json(tl);
	p = plan_for(existing, own);
	assert_int_equal(p->n_ops, 0);
	slice_plan_free(p);
	slice_list_unref(own);
	json_object_object_add(json_object_array_get_idx(json_object_object_get(
		json_object_array_get_idx(json_object_object_get(json_object_object_get(timed, "spec"),
								 "devices"), 0), "taints"), 0),
		"timeAdded", json_object_new_string("2026-02-02T00:00:00Z"));
	own = desired_json(tl);
	p = plan_for(existing, own);
	assert_int_equal(p->n_update, 1);
	slice_plan_free(p);
	slice_list_unref(own);
	json_object_put(tl);
	/* a server without DRADeviceTaints drops the taints: no update loop */
	struct json_object *untainted = json_tokener_parse(TAINTED);
	json_object_object_del(json_object_array_get_idx(json_object_object_get(
		json_object_object_get(untainted, "spec"), "devices"), 0), "taints");
	json_object_object_add(json_object_array_get_idx(json_object_object_get(
		json_object_object_get(untainted, "spec"), "devices"), 0), "attributes",
		json_tokener_parse("{\"a\":{\"int\":1}}"));
	assert_int_equal(slice_dropped_gates(json_object_array_get_idx(desired, 0), untainted),
			 SLICE_GATE_DEVICE_TAINTS);
	struct json_object *ex2 = json_object_new_array();
	json_object_array_add(ex2, untainted);
	p = NULL;
	assert_int_equal(slice_plan_compute(published(ex2), dl, POOL, SLICE_GATE_DEVICE_TAINTS, &p), 0);
	assert_int_equal(p->n_ops, 0);
	slice_plan_free(p);
	assert_int_equal(slice_plan_compute(published(ex2), dl, POOL, 0, &p), 0);
	assert_int_equal(p->n_update, 1);
	slice_plan_free(p);
	/* written without the dropped fields */
	assert_int_equal(slice_plan_compute(published(NULL), dl, POOL, SLICE_GATE_DEVICE_TAINTS, &p), 0);
	assert_int_equal(p->n_create, 1);
	o = op_object(p, 0);
	assert_null(strstr(json_object_to_json_string(o), "taints"));
	json_object_put(o);
	slice_plan_free(p);
	assert_string_equal(slice_gate_name(SLICE_GATE_DEVICE_TAINTS), "DRADeviceTaints");
	assert_string_equal(slice_gate_name(SLICE_GATE_PARTITIONABLE), "DRAPartitionableDevices");
	slice_list_unref(dl);
	json_object_put(ex2);
	json_object_put(existing);
	json_object_put(desired);
}

static void test_dropped_gates_detection(void **state)
{
	(void)state;
	struct json_object *sent = json_tokener_parse(
		"{\"spec\":{\"sharedCounters\":[{\"name\":\"c\",\"counters\":{}}],\"devices\":["
		"{\"name\":\"a\",\"consumesCounters\":[{}],\"allowMultipleAllocations\":true,"
		"\"capacity\":{\"bw\":{\"value\":\"1\",\"requestPolicy\":{\"default\":\"1\"}}}},"
		"{\"name\":\"b\",\"bindsToNode\":true}]}}");
	struct json_object *same = json_object_get(sent);
	assert_int_equal(slice_dropped_gates(sent, same), 0);
	struct json_object *stripped = NULL;
	json_object_deep_copy(sent, &stripped, NULL);
	slice_strip_gates(stripped, SLICE_GATE_ALL);
	assert_int_equal(slice_dropped_gates(sent, stripped),
			 SLICE_GATE_PARTITIONABLE | SLICE_GATE_CONSUMABLE_CAPACITY |
				 SLICE_GATE_BINDING_CONDITIONS);
	assert_null(strstr(json_object_to_json_string(stripped), "requestPolicy"));
	json_object_put(stripped);
	json_object_put(same);
	json_object_put(sent);
}

static void test_json_equal_rules(void **state)
{
	(void)state;
	struct json_object *a = json_tokener_parse("{\"x\":[],\"y\":{},\"z\":null,\"v\":1,\"s\":\"\"}");
	struct json_object *b = json_tokener_parse("{\"v\":1}");
	assert_true(slice_json_equal(a, b));
	assert_true(slice_json_equal(b, a));
	struct json_object *c = json_tokener_parse("{\"v\":2}");
	assert_false(slice_json_equal(b, c));
	struct json_object *d = json_tokener_parse("[1,2]"), *e = json_tokener_parse("[2,1]");
	assert_false(slice_json_equal(d, e));	/* order matters in arrays */
	json_object_put(a);
	json_object_put(b);
	json_object_put(c);
	json_object_put(d);
	json_object_put(e);
}

static void test_bad_input(void **state)
{
	(void)state;
	struct slice_plan *p = (struct slice_plan *)0x1;
	struct json_object *obj = json_tokener_parse("{}"), *arr = json_tokener_parse("[{}]");
	struct slice_list *l = (struct slice_list *)0x1;
	assert_int_equal(slice_list_from_json(obj, SLICE_RECORD_PUBLISHED, &l), -EINVAL);
	assert_ptr_equal(l, (struct slice_list *)0x1);
	struct slice_list *nospec = desired_json(arr);
	assert_int_equal(slice_plan_compute(NULL, nospec, POOL, 0, &p), -EINVAL);	/* no spec */
	assert_int_equal(slice_plan_compute(NULL, NULL, NULL, 0, &p), -EINVAL);
	assert_ptr_equal(p, (struct slice_plan *)0x1);
	assert_int_equal(slice_plan_compute(NULL, NULL, POOL, 0, &p), 0);
	assert_int_equal(p->n_ops, 0);
	assert_int_equal(slice_plan_op_object(p, 0, &obj), -EINVAL);
	slice_plan_free(p);
	slice_plan_free(NULL);
	slice_list_unref(nospec);
	json_object_put(obj);
	json_object_put(arr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_publish_and_no_op),
		cmocka_unit_test(test_single_slice_device_set_change_bumps),
		cmocka_unit_test(test_multi_slice_changes),
		cmocka_unit_test(test_matching_by_device_set_ignores_order),
		cmocka_unit_test(test_canonical_comparison),
		cmocka_unit_test(test_obsolete_slices),
		cmocka_unit_test(test_interrupted_round_resumes),
		cmocka_unit_test(test_update_keeps_metadata),
		cmocka_unit_test(test_taint_time_added),
		cmocka_unit_test(test_dropped_gates_detection),
		cmocka_unit_test(test_json_equal_rules),
		cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
