/* SPDX-License-Identifier: Apache-2.0 */
/* Partitionable devices in slices: the layout planner through the builder
 * (counters_layout.h): 1.35+ separate counter slices, 1.34 inline groups,
 * the gate off, and the checks. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/slices/build.h"
#include "agent/slices/counters_layout.h"

struct warnings {
	int n;
	char all[16384];
};

static void on_warn(void *userdata, const char *backend, const char *device, const char *what,
		    const char *problem)
{
	struct warnings *w = userdata;
	size_t len = strlen(w->all);
	snprintf(w->all + len, sizeof(w->all) - len, "%s|%s|%s|%s\n", backend, device,
		 what ? what : "-", problem);
	w->n++;
}

/* A node of @n_gpus GPUs: each owns set "gpu-<g>" of @n_counters counters
 * ("c0".."c<n-1>", value 8) and is published whole (consuming all of it)
 * next to @n_parts partitions consuming counter c<p % n_counters> (1 each). */
struct node {
	struct slice_device_in devs[1024];
	struct dralet_counter counters[64];
	struct dralet_counter_list sets[64], whole_uses[64], part_uses[64][64];
	struct dralet_counter one[64];
	char names[1024][64], set_names[64][32], counter_names[64][8];
	size_t n;
};

static void node_init(struct node *nd, size_t n_gpus, size_t n_counters, size_t n_parts)
{
	memset(nd, 0, sizeof(*nd));
	for (size_t c = 0; c < n_counters; c++) {
		snprintf(nd->counter_names[c], sizeof(nd->counter_names[c]), "c%zu", c);
		nd->counters[c] = (struct dralet_counter){ nd->counter_names[c], "8" };
		nd->one[c] = (struct dralet_counter){ nd->counter_names[c], "1" };
	}
	for (size_t g = 0; g < n_gpus; g++) {
		snprintf(nd->set_names[g], sizeof(nd->set_names[g]), "gpu-%zu", g);
		nd->sets[g] = (struct dralet_counter_list){ nd->set_names[g], nd->counters, n_counters };
		nd->whole_uses[g] = nd->sets[g];
		size_t i = nd->n++;
		snprintf(nd->names[i], sizeof(nd->names[i]), "gpu-%zu", g);
		nd->devs[i] = (struct slice_device_in){ .name = nd->names[i], .backend = "t",
			.sets = &nd->sets[g], .n_sets = 1, .uses = &nd->whole_uses[g], .n_uses = 1 };
		for (size_t p = 0; p < n_parts; p++) {
			nd->part_uses[g][p] = (struct dralet_counter_list){ nd->set_names[g],
				&nd->one[p % n_counters], 1 };
			i = nd->n++;
			snprintf(nd->names[i], sizeof(nd->names[i]), "gpu-%zu-part-%02zu", g, p);
			nd->devs[i] = (struct slice_device_in){ .name = nd->names[i], .backend = "t",
				.uses = &nd->part_uses[g][p], .n_uses = 1, .partition = true };
		}
	}
}

static struct json_object *build(const struct node *nd, const struct slice_options *opts,
				 struct warnings *w)
{
	struct slice_list *list = NULL;
	struct json_object *arr = NULL;
	assert_int_equal(slice_build("gpu.dralet.dev", "node-a", NULL, nd->devs, nd->n, opts,
				     on_warn, w, &list), 0);
	assert_int_equal(slice_list_to_json(list, &arr), 0);
	slice_list_unref(list);
	return arr;
}

static struct json_object *get(struct json_object *o, const char *k)
{
	struct json_object *v = NULL;
	return o && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

static size_t len(struct json_object *a)
{
	return a ? json_object_array_length(a) : 0;
}

static struct json_object *spec(struct json_object *arr, size_t i)
{
	return get(json_object_array_get_idx(arr, i), "spec");
}

/* Every slice names the pool's slice count; devices are counted. */
static size_t count_devices(struct json_object *arr, size_t *ret_with_uses)
{
	size_t n = 0, with = 0;
	for (size_t i = 0; i < len(arr); i++) {
		struct json_object *sp = spec(arr, i), *devs = get(sp, "devices");
		assert_int_equal(json_object_get_int64(get(get(sp, "pool"), "resourceSliceCount")),
				 (int64_t)len(arr));
		n += len(devs);
		for (size_t k = 0; k < len(devs); k++)
			with += get(json_object_array_get_idx(devs, k), "consumesCounters") != NULL;
	}
	if (ret_with_uses)
		*ret_with_uses = with;
	return n;
}

static void test_separate_layout(void **state)
{
	(void)state;
	static struct node nd;
	struct warnings w = { 0 };
	struct slice_options o = { .partitionable = true, .server_minor = 37 };
	node_init(&nd, 9, 15, 10);	/* 9 sets, 99 devices */
	struct json_object *arr = build(&nd, &o, &w);
	assert_int_equal(w.n, 0);
	/* 2 counter slices (8 + 1 sets, no devices key), then 64 + 35 devices */
	assert_int_equal(len(arr), 4);
	assert_int_equal(len(get(spec(arr, 0), "sharedCounters")), 8);
	assert_null(get(spec(arr, 0), "devices"));
	assert_int_equal(len(get(spec(arr, 1), "sharedCounters")), 1);
	assert_null(get(spec(arr, 1), "devices"));
	assert_int_equal(len(get(spec(arr, 2), "devices")), 64);
	assert_null(get(spec(arr, 2), "sharedCounters"));
	assert_int_equal(len(get(spec(arr, 3), "devices")), 35);
	size_t with = 0;
	assert_int_equal(count_devices(arr, &with), 99);
	assert_int_equal(with, 99);
	/* a set: name and its counters with values; a consumption names the set */
	struct json_object *set0 = json_object_array_get_idx(get(spec(arr, 0), "sharedCounters"), 0);
	assert_string_equal(json_object_get_string(get(set0, "name")), "gpu-0");
	assert_string_equal(json_object_get_string(get(get(get(set0, "counters"), "c14"), "value")),
			    "8");
	struct json_object *d1 = json_object_array_get_idx(get(spec(arr, 2), "devices"), 1);
	assert_string_equal(json_object_get_string(get(d1, "name")), "gpu-0-part-00");
	struct json_object *use = json_object_array_get_idx(get(d1, "consumesCounters"), 0);
	assert_string_equal(json_object_get_string(get(use, "counterSet")), "gpu-0");
	assert_string_equal(json_object_get_string(get(get(get(use, "counters"), "c0"), "value")),
			    "1");
	json_object_put(arr);

	/* no counters at all: the old shape, 128 a slice */
	node_init(&nd, 0, 0, 0);
	for (size_t i = 0; i < 130; i++) {
		snprintf(nd.names[i], sizeof(nd.names[i]), "dev-%03zu", i);
		nd.devs[i] = (struct slice_device_in){ .name = nd.names[i] };
	}
	nd.n = 130;
	arr = build(&nd, &o, &w);
	assert_int_equal(len(arr), 2);
	assert_int_equal(len(get(spec(arr, 0), "devices")), 128);
	json_object_put(arr);
}

static void test_gate_off_leaves_partitions_out(void **state)
{
	(void)state;
	static struct node nd;
	struct warnings w = { 0 };
	struct slice_options o = { .partitionable = false, .server_minor = 37 };
	node_init(&nd, 2, 4, 3);
	struct json_object *arr = build(&nd, &o, &w);
	assert_int_equal(w.n, 0);
	assert_int_equal(len(arr), 1);
	assert_null(get(spec(arr, 0), "sharedCounters"));
	size_t with = 9;
	assert_int_equal(count_devices(arr, &with), 2);	/* the whole GPUs only */
	assert_int_equal(with, 0);
	json_object_put(arr);
	/* the default for 1.34 and 1.35 is off too */
	slice_options_for_server(&o, 34);
	assert_int_equal(counters_layout_kind(&o), COUNTERS_LAYOUT_OFF);
	slice_options_for_server(&o, 36);
	assert_int_equal(counters_layout_kind(&o), COUNTERS_LAYOUT_SEPARATE);
}

/* Every consumption of a 1.34 slice names a set of that slice. */
static void assert_inline_consistent(struct json_object *arr)
{
	for (size_t i = 0; i < len(arr); i++) {
		struct json_object *sp = spec(arr, i), *sets = get(sp, "sharedCounters");
		struct json_object *devs = get(sp, "devices");
		size_t counters = 0;
		for (size_t s = 0; s < len(sets); s++)
			counters += json_object_object_length(
				get(json_object_array_get_idx(sets, s), "counters"));
		assert_true(counters <= 32);
		for (size_t k = 0; k < len(devs); k++) {
			struct json_object *uses =
				get(json_object_array_get_idx(devs, k), "consumesCounters");
			for (size_t u = 0; u < len(uses); u++) {
				const char *set = json_object_get_string(
					get(json_object_array_get_idx(uses, u), "counterSet"));
				bool found = false;
				for (size_t s = 0; s < len(sets) && !found; s++)
					found = !strcmp(set, json_object_get_string(get(
						json_object_array_get_idx(sets, s), "name")));
				assert_true(found);
			}
		}
	}
}

static void test_inline_layout(void **state)
{
	(void)state;
	static struct node nd;
	struct warnings w = { 0 };
	struct slice_options o = { .partitionable = true, .server_minor = 34 };
	assert_int_equal(counters_layout_kind(&o), COUNTERS_LAYOUT_INLINE);
	/* 3 sets of 15: two fit one slice (30 counters), the third gets its own */
	node_init(&nd, 3, 15, 5);
	nd.names[nd.n][0] = 0;
	snprintf(nd.names[nd.n], sizeof(nd.names[nd.n]), "nic-0");
	nd.devs[nd.n] = (struct slice_device_in){ .name = nd.names[nd.n] };
	nd.n++;
	struct json_object *arr = build(&nd, &o, &w);
	assert_int_equal(w.n, 0);
	assert_int_equal(len(arr), 3);
	assert_int_equal(len(get(spec(arr, 0), "sharedCounters")), 2);
	assert_int_equal(len(get(spec(arr, 0), "devices")), 12);
	assert_int_equal(len(get(spec(arr, 1), "sharedCounters")), 1);
	assert_int_equal(len(get(spec(arr, 1), "devices")), 6);
	/* devices without counters follow */
	assert_null(get(spec(arr, 2), "sharedCounters"));
	assert_int_equal(len(get(spec(arr, 2), "devices")), 1);
	size_t with = 0;
	assert_int_equal(count_devices(arr, &with), 19);
	assert_int_equal(with, 18);
	assert_inline_consistent(arr);
	json_object_put(arr);
}

static void test_inline_group_too_big(void **state)
{
	(void)state;
	static struct node nd;
	struct warnings w = { 0 };
	struct slice_options o = { .partitionable = true, .server_minor = 34 };
	/* one device consuming two sets of 20 counters: 40 > 32 in one slice */
	node_init(&nd, 2, 20, 1);
	struct dralet_counter_list both[2] = { nd.sets[0], nd.sets[1] };
	nd.devs[0].uses = both;
	nd.devs[0].n_uses = 2;
	struct json_object *arr = build(&nd, &o, &w);
	assert_int_equal(len(arr), 1);
	assert_null(get(spec(arr, 0), "sharedCounters"));
	size_t with = 9;
	assert_int_equal(count_devices(arr, &with), 2);	/* gpu-0 and gpu-1, plain */
	assert_int_equal(with, 0);
	assert_int_equal(w.n, 4);
	assert_non_null(strstr(w.all, "t|gpu-0-part-00|-|its counter sets"));
	assert_non_null(strstr(w.all, "t|gpu-0|-|its counter sets and their consumers exceed one "
				      "1.34 slice; published without consumesCounters"));
	json_object_put(arr);
}

static void test_bad_references_left_out(void **state)
{
	(void)state;
	static struct node nd;
	struct warnings w = { 0 };
	struct slice_options o = { .partitionable = true };
	node_init(&nd, 2, 2, 1);
	/* gpu-1 claims gpu-0's set too; a partition of gpu-1 names a missing
	 * counter, one of gpu-0 a missing set */
	struct dralet_counter_list dup[2] = { nd.sets[1], nd.sets[0] };
	nd.devs[2].sets = dup;
	nd.devs[2].n_sets = 2;
	struct dralet_counter missing = { "nope", "1" };
	nd.part_uses[1][0].counters = &missing;
	nd.part_uses[0][0].set = "gpu-9";
	struct json_object *arr = build(&nd, &o, &w);
	assert_int_equal(w.n, 3);
	assert_non_null(strstr(w.all, "t|gpu-1|gpu-0|counter set already owned by another device"));
	assert_non_null(strstr(w.all, "t|gpu-1-part-00|nope|consumes a counter its set does not "
				      "have; device not published"));
	assert_non_null(strstr(w.all, "t|gpu-0-part-00|gpu-9|consumes from a counter set no "
				      "device owns; device not published"));
	assert_int_equal(len(arr), 2);
	assert_int_equal(len(get(spec(arr, 0), "sharedCounters")), 2);
	assert_int_equal(count_devices(arr, NULL), 2);
	json_object_put(arr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_separate_layout),
		cmocka_unit_test(test_gate_off_leaves_partitions_out),
		cmocka_unit_test(test_inline_layout),
		cmocka_unit_test(test_inline_group_too_big),
		cmocka_unit_test(test_bad_references_left_out),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
