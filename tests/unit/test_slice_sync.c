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
static struct json_object *desired_range(size_t n, const char *model, const int *skip)
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
	struct json_object *out = NULL;
	assert_int_equal(slice_build("gpu.dralet.dev", POOL, "uid-n", devs, k, NULL, NULL, NULL, &out), 0);
	free(attrs);
	free(devs);
	free(names);
	return out;
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
			struct json_object *m2, *n2;
			json_object_object_get_ex(plan->ops[k].object, "metadata", &m2);
			if (!json_object_object_get_ex(m2, "name", &n2) ||
			    strcmp(json_object_get_string(n2), json_object_get_string(name)))
				continue;
			if (plan->ops[k].type == SLICE_OP_DELETE)
				gone = true;
			if (plan->ops[k].type == SLICE_OP_UPDATE) {
				struct json_object *copy = NULL;
				json_object_deep_copy(plan->ops[k].object, &copy, NULL);
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
		struct json_object *copy = NULL, *meta;
		json_object_deep_copy(plan->ops[k].object, &copy, NULL);
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

static struct slice_plan *plan_for(struct json_object *existing, struct json_object *desired)
{
	struct slice_plan *p = NULL;
	assert_int_equal(slice_plan_compute(existing, desired, POOL, 0, &p), 0);
	return p;
}

/* Applies a plan and checks the next plan is empty: one round converges. */
static void apply_and_converge(struct json_object **existing, struct slice_plan *plan,
			       struct json_object *desired)
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

static void test_first_publish_and_no_op(void **state)
{
	(void)state;
	struct json_object *desired = desired_range(300, "H100", NULL), *existing = NULL;
	struct slice_plan *p = plan_for(NULL, desired);
	assert_int_equal(p->n_create, 3);
	assert_int_equal(p->n_update + p->n_delete, 0);
	assert_int_equal(p->generation, 1);
	assert_true(p->bumped);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(p->ops[i].type, SLICE_OP_CREATE);
		assert_int_equal(gen_of(p->ops[i].object), 1);
	}
	apply_and_converge(&existing, p, desired);
	/* the same content again: no write at all */
	struct json_object *same = desired_range(300, "H100", NULL);
	p = plan_for(existing, same);
	assert_int_equal(p->n_ops, 0);
	assert_int_equal(p->generation, 1);
	slice_plan_free(p);
	json_object_put(same);
	json_object_put(desired);
	json_object_put(existing);
}

static void test_single_slice_device_set_change_bumps(void **state)
{
	(void)state;
	struct json_object *d1 = desired_range(4, "H100", NULL), *existing = NULL;
	apply_and_converge(&existing, plan_for(NULL, d1), d1);
	/* a device appears: one update, generation + 1 */
	struct json_object *d2 = desired_range(5, "H100", NULL);
	struct slice_plan *p = plan_for(existing, d2);
	assert_int_equal(p->n_update, 1);
	assert_int_equal(p->n_create + p->n_delete, 0);
	assert_int_equal(p->generation, 2);
	apply_and_converge(&existing, p, d2);
	/* one disappears: again one update, generation + 1 */
	int skip[] = { 2, -1 };
	struct json_object *d3 = desired_range(5, "H100", skip);
	p = plan_for(existing, d3);
	assert_int_equal(p->n_update, 1);
	assert_int_equal(p->generation, 3);
	apply_and_converge(&existing, p, d3);
	/* only an attribute changes: one update, generation kept (upstream rule) */
	struct json_object *d4 = desired_range(5, "H200", skip);
	p = plan_for(existing, d4);
	assert_int_equal(p->n_update, 1);
	assert_false(p->bumped);
	assert_int_equal(p->generation, 3);
	apply_and_converge(&existing, p, d4);
	json_object_put(d1);
	json_object_put(d2);
	json_object_put(d3);
	json_object_put(d4);
	json_object_put(existing);
}

static void test_multi_slice_changes(void **state)
{
	(void)state;
	struct json_object *d1 = desired_range(300, "H100", NULL), *existing = NULL;
	apply_and_converge(&existing, plan_for(NULL, d1), d1);
	/* a device appears at the end: one bump, every slice rewritten, by update */
	struct json_object *d2 = desired_range(301, "H100", NULL);
	struct slice_plan *p = plan_for(existing, d2);
	assert_int_equal(p->generation, 2);
	assert_int_equal(p->n_update, 3);
	assert_int_equal(p->n_create + p->n_delete, 0);
	apply_and_converge(&existing, p, d2);
	for (size_t i = 0; i < json_object_array_length(existing); i++)
		assert_int_equal(gen_of(json_object_array_get_idx(existing, i)), 2);
	/* growing past a slice boundary: updates + one create */
	struct json_object *d3 = desired_range(385, "H100", NULL);
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
	json_object_put(d1);
	json_object_put(d2);
	json_object_put(d3);
	json_object_put(existing);
}

static void test_matching_by_device_set_ignores_order(void **state)
{
	(void)state;
	struct json_object *d1 = desired_range(300, "H100", NULL), *existing = NULL;
	apply_and_converge(&existing, plan_for(NULL, d1), d1);
	/* the store lists them in any order */
	struct json_object *rev = json_object_new_array();
	for (size_t i = json_object_array_length(existing); i-- > 0;)
		json_object_array_add(rev, json_object_get(json_object_array_get_idx(existing, i)));
	struct slice_plan *p = plan_for(rev, d1);
	assert_int_equal(p->n_ops, 0);
	slice_plan_free(p);
	/* an attribute change in the middle slice: one update, no bump */
	struct json_object *d2 = desired_range(300, "H100", NULL);
	struct json_object *dev = json_object_array_get_idx(
		json_object_object_get(json_object_object_get(json_object_array_get_idx(d2, 1), "spec"),
				       "devices"), 5);
	json_object_object_add(json_object_object_get(dev, "attributes"), "extra",
			       json_tokener_parse("{\"bool\": true}"));
	p = plan_for(rev, d2);
	assert_int_equal(p->n_update, 1);
	assert_false(p->bumped);
	assert_int_equal(p->generation, 1);
	slice_plan_free(p);
	json_object_put(rev);
	json_object_put(d1);
	json_object_put(d2);
	json_object_put(existing);
}

static struct json_object *with_meta(struct json_object *slice, const char *name, const char *pool,
				     int64_t gen)
{
	struct json_object *c = NULL, *meta, *spec, *p;
	json_object_deep_copy(slice, &c, NULL);
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
	struct json_object *d1 = desired_range(4, "H100", NULL);
	struct json_object *s = json_object_array_get_idx(d1, 0);
	struct json_object *existing = json_object_new_array();
	json_object_array_add(existing, with_meta(s, "cur", POOL, 5));
	json_object_array_add(existing, with_meta(s, "dup", POOL, 5));	/* a lost create's twin */
	json_object_array_add(existing, with_meta(s, "old", POOL, 4));	/* lower generation */
	json_object_array_add(existing, with_meta(s, "other", "other-pool", 9));	/* other pool */
	struct slice_plan *p = plan_for(existing, d1);
	/* "cur" matches (first by name); everything else goes; no bump for a duplicate */
	assert_int_equal(p->n_delete, 3);
	assert_int_equal(p->n_update, 0);
	assert_int_equal(p->n_create, 0);
	assert_int_equal(p->generation, 5);
	const char *deleted[] = { "dup", "old", "other" };
	for (size_t i = 0; i < 3; i++) {
		struct json_object *meta, *v;
		assert_int_equal(p->ops[i].type, SLICE_OP_DELETE);
		json_object_object_get_ex(p->ops[i].object, "metadata", &meta);
		json_object_object_get_ex(meta, "name", &v);
		assert_string_equal(json_object_get_string(v), deleted[i]);
		/* preconditions come from the existing object */
		json_object_object_get_ex(meta, "resourceVersion", &v);
		assert_string_equal(json_object_get_string(v), "7");
	}
	slice_plan_free(p);
	/* nothing desired: everything is deleted */
	struct json_object *none = json_object_new_array();
	p = plan_for(existing, none);
	assert_int_equal(p->n_delete, 4);
	assert_int_equal(p->n_ops, 4);
	slice_plan_free(p);
	json_object_put(none);
	json_object_put(existing);
	json_object_put(d1);
}

static void test_update_keeps_metadata(void **state)
{
	(void)state;
	struct json_object *d1 = desired_range(2, "H100", NULL);
	struct json_object *existing = json_object_new_array();
	json_object_array_add(existing, with_meta(json_object_array_get_idx(d1, 0), "x", POOL, 3));
	struct json_object *d2 = desired_range(2, "B200", NULL);
	struct slice_plan *p = plan_for(existing, d2);
	assert_int_equal(p->n_update, 1);
	struct json_object *o = p->ops[0].object, *meta, *v;
	json_object_object_get_ex(o, "metadata", &meta);
	json_object_object_get_ex(meta, "name", &v);
	assert_string_equal(json_object_get_string(v), "x");
	json_object_object_get_ex(meta, "resourceVersion", &v);
	assert_string_equal(json_object_get_string(v), "7");
	assert_int_equal(gen_of(o), 3);
	assert_int_equal(p->ops[0].desired_index, 0);
	slice_plan_free(p);
	json_object_put(existing);
	json_object_put(d1);
	json_object_put(d2);
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
	struct slice_plan *p = plan_for(existing, desired);
	assert_int_equal(p->n_ops, 0);
	slice_plan_free(p);
	/* with another change, the update carries the server's timeAdded along */
	json_object_object_add(dev0, "attributes", attrs);
	p = plan_for(existing, desired);
	assert_int_equal(p->n_update, 1);
	const char *text = json_object_to_json_string(p->ops[0].object);
	assert_non_null(strstr(text, "2026-01-01T00:00:00Z"));
	slice_plan_free(p);
	/* a server without DRADeviceTaints drops the taints: no update loop */
	struct json_object *untainted = json_tokener_parse(TAINTED);
	json_object_object_del(json_object_array_get_idx(json_object_object_get(
		json_object_object_get(untainted, "spec"), "devices"), 0), "taints");
	json_object_object_add(json_object_array_get_idx(json_object_object_get(
		json_object_object_get(untainted, "spec"), "devices"), 0), "attributes",
		json_tokener_parse("{\"a\":{\"int\":1}}"));
	assert_int_equal(slice_dropped_gates(p ? json_object_array_get_idx(desired, 0) : NULL, untainted),
			 SLICE_GATE_DEVICE_TAINTS);
	struct json_object *ex2 = json_object_new_array();
	json_object_array_add(ex2, untainted);
	p = NULL;
	assert_int_equal(slice_plan_compute(ex2, desired, POOL, SLICE_GATE_DEVICE_TAINTS, &p), 0);
	assert_int_equal(p->n_ops, 0);
	slice_plan_free(p);
	assert_int_equal(slice_plan_compute(ex2, desired, POOL, 0, &p), 0);
	assert_int_equal(p->n_update, 1);
	slice_plan_free(p);
	assert_string_equal(slice_gate_name(SLICE_GATE_DEVICE_TAINTS), "DRADeviceTaints");
	assert_string_equal(slice_gate_name(SLICE_GATE_PARTITIONABLE), "DRAPartitionableDevices");
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
	assert_int_equal(slice_plan_compute(obj, NULL, POOL, 0, &p), -EINVAL);
	assert_int_equal(slice_plan_compute(NULL, arr, POOL, 0, &p), -EINVAL);	/* no spec */
	assert_int_equal(slice_plan_compute(NULL, NULL, NULL, 0, &p), -EINVAL);
	assert_ptr_equal(p, (struct slice_plan *)0x1);
	assert_int_equal(slice_plan_compute(NULL, NULL, POOL, 0, &p), 0);
	assert_int_equal(p->n_ops, 0);
	slice_plan_free(p);
	slice_plan_free(NULL);
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
		cmocka_unit_test(test_obsolete_slices),
		cmocka_unit_test(test_update_keeps_metadata),
		cmocka_unit_test(test_taint_time_added),
		cmocka_unit_test(test_dropped_gates_detection),
		cmocka_unit_test(test_json_equal_rules),
		cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
