/* SPDX-License-Identifier: Apache-2.0 */
/* Slices as text: JSON spans and layout, devices apart, records and writes without trees. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/slices/devices_text.h"
#include "agent/slices/json_text.h"
#include "agent/slices/sync.h"

#define PRETTY (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)
#define PLAIN (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

static struct json_span span_of(const char *text)
{
	struct json_span s;
	assert_int_equal(json_text_value(text, strlen(text), &s), 0);
	return s;
}

static void test_pretty_like_json_c(void **state)
{
	(void)state;
	const char *docs[] = {
		"{\"a\":[],\"b\":{},\"c\":[1,{\"d\":[[]],\"e\":{\"f\":null}}],\"g\":\"x/y\",\"h\":1.5,"
		"\"i\":[[1,2],{}],\"j\":\"q\\\"uo\\\\te\\u0001\",\"k\":true,\"l\":-0.25e-3}",
		"[]", "{}", "\"s\"", "7", "[{\"a\":{\"b\":{\"c\":[true,false,null]}}}]",
	};
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		struct json_object *o = json_tokener_parse(docs[i]);
		char *want = strdup(json_object_to_json_string_ext(o, PRETTY));
		const char *compact = json_object_to_json_string_ext(o, PLAIN);
		struct json_text_buf b = { 0 };
		assert_int_equal(json_text_pretty(span_of(compact), 0, &b), 0);
		assert_string_equal(b.p, want);
		json_text_buf_free(&b);
		/* whatever whitespace the text had */
		assert_int_equal(json_text_pretty(span_of(want), 0, &b), 0);
		assert_string_equal(b.p, want);
		json_text_buf_free(&b);
		free(want);
		json_object_put(o);
	}
	struct json_text_buf b = { 0 };
	assert_int_equal(json_text_pretty(span_of("[1,2]"), 2, &b), 0);
	assert_string_equal(b.p, "[\n      1,\n      2\n    ]");
	json_text_buf_free(&b);
	struct json_span bad = { "[1,", 3 };
	assert_int_equal(json_text_pretty(bad, 0, &b), -EBADMSG);
	json_text_buf_free(&b);
}

static int count_elements(void *userdata, struct json_span element)
{
	(void)element;
	++*(int *)userdata;
	return 0;
}

static void test_members_and_elements(void **state)
{
	(void)state;
	struct json_span obj = span_of(" {\"a\":1, \"b\" : [1, {\"a\":2}], \"a\":\"last\"} tail");
	struct json_span v;
	assert_int_equal(json_text_member(obj, "a", &v), 0);
	assert_int_equal(v.len, 6);
	assert_memory_equal(v.p, "\"last\"", 6);
	assert_int_equal(json_text_member(obj, "b", &v), 0);
	int n = 0;
	assert_int_equal(json_text_elements(v, count_elements, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(json_text_member(obj, "zz", &v), -ENOENT);
	assert_int_equal(json_text_member(span_of("[1]"), "a", &v), -EBADMSG);
	assert_int_equal(json_text_elements(obj, count_elements, &n), -EBADMSG);
	assert_int_equal(json_text_value("  ", 2, &v), -EBADMSG);
	assert_int_equal(json_text_value(NULL, 0, &v), -EBADMSG);
}

static const char SLICE[] =
	"{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"s\","
	"\"uid\":\"u\",\"resourceVersion\":\"3\",\"generateName\":\"node-1-gpu.dralet.dev-\"},"
	"\"spec\":{\"driver\":\"gpu.dralet.dev\",\"nodeName\":\"node-1\",\"pool\":{\"name\":\"node-1\","
	"\"generation\":1,\"resourceSliceCount\":1},\"devices\":[{\"name\":\"gpu-1\",\"attributes\":"
	"{\"z\":{\"int\":1},\"a/b\":{\"string\":\"x/y\"}},\"taints\":[{\"key\":\"k\",\"value\":\"v\","
	"\"effect\":\"NoSchedule\",\"timeAdded\":\"T\"}]},{\"name\":\"gpu-0\"},7,null],"
	"\"sharedCounters\":[{\"name\":\"c\",\"counters\":{}}]}}";

static void test_light_and_join(void **state)
{
	(void)state;
	struct json_object *light = NULL, *spec, *devices;
	struct json_span d;
	assert_int_equal(slice_text_light(SLICE, strlen(SLICE), &light, &d), 0);
	spec = json_object_object_get(light, "spec");
	assert_true(slice_is_devices_placeholder(json_object_object_get(spec, "devices")));
	assert_non_null(json_object_object_get(spec, "sharedCounters"));
	assert_int_equal(d.p[0], '[');
	assert_int_equal(d.p[d.len - 1], ']');
	/* joined back: what json-c writes for the whole tree, both layouts */
	struct json_object *whole = json_tokener_parse(SLICE);
	for (int k = 0; k < 2; k++) {
		int flags = k ? PRETTY : PLAIN;
		char *text = NULL;
		size_t len = 0;
		assert_int_equal(slice_text_join(light, flags, d, &text, &len), 0);
		assert_string_equal(text, json_object_to_json_string_ext(whole, flags));
		assert_int_equal(strlen(text), len);
		free(text);
	}
	/* the placeholder must be there exactly once */
	char *text = NULL;
	assert_int_equal(slice_text_join(whole, PLAIN, d, &text, NULL), -EINVAL);
	json_object_object_add(json_object_object_get(light, "metadata"), "x",
			       slice_devices_placeholder());
	assert_int_equal(slice_text_join(light, PLAIN, d, &text, NULL), -EINVAL);
	json_object_put(light);
	json_object_put(whole);
	/* nothing to take apart */
	const char *none[] = { "{\"spec\":{}}", "{\"spec\":{\"devices\":{}}}", "{\"spec\":[]}", "{}",
			       "{\"spec\":{\"devices\":[]},\"spe\\u0063\":{\"devices\":[1]}}" };
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
		assert_int_equal(slice_text_light(none[i], strlen(none[i]), &light, &d), -ENOENT);
	assert_int_equal(slice_text_light("[]", 2, &light, &d), -EINVAL);
	assert_int_equal(slice_text_light("{\"a\":", 5, &light, &d), -EINVAL);
	/* the one json-c keeps counts: the last */
	const char *twice = "{\"spec\":{\"devices\":[1]},\"spec\":{\"devices\":[2,3]}}";
	assert_int_equal(slice_text_light(twice, strlen(twice), &light, &d), 0);
	assert_int_equal(d.len, 5);
	json_object_put(light);
	(void)devices;
}

static void same_record(const struct slice_record *a, const struct slice_record *b)
{
	assert_string_equal(a->text, b->text);
	assert_int_equal(a->text_len, b->text_len);
	assert_true(slice_digest_equal(&a->digest, &b->digest));
	assert_true(slice_digest_equal(&a->digest_full, &b->digest_full));
	assert_true(slice_record_same_names(a, b));
	assert_int_equal(a->time_added, b->time_added);
	assert_int_equal(a->gates, b->gates);
	assert_int_equal(a->gate_keys, b->gate_keys);
	assert_int_equal(a->generation, b->generation);
	assert_int_equal(a->pool_odd, b->pool_odd);
	if (a->time_added_devices || b->time_added_devices)
		assert_string_equal(a->time_added_devices, b->time_added_devices);
	assert_string_equal(a->driver, b->driver);
	assert_string_equal(a->node_name, b->node_name);
}

/* From text (one device at a time) or from the tree: the same record. */
static void test_record_from_text_or_tree(void **state)
{
	(void)state;
	const char *texts[] = {
		SLICE,
		"{\"spec\":{\"driver\":\"d\",\"nodeName\":\"n\",\"devices\":[]}}",
		"{\"spec\":{\"driver\":\"d\",\"nodeName\":\"n\",\"devices\":{\"x\":1}}}",
		"{\"spec\":{\"driver\":\"d\",\"nodeName\":\"n\"}}",
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct json_object *tree = json_tokener_parse(texts[i]);
		char *pretty = strdup(json_object_to_json_string_ext(tree, PRETTY));
		for (int kind = 0; kind < 2; kind++) {
			struct slice_record *a = NULL, *b = NULL, *c = NULL;
			assert_int_equal(slice_record_from_json(tree, kind, &a), 0);
			assert_int_equal(slice_record_from_text(texts[i], strlen(texts[i]), kind, &b), 0);
			assert_int_equal(slice_record_from_text(pretty, strlen(pretty), kind, &c), 0);
			same_record(a, b);
			same_record(a, c);
			slice_record_free(a);
			slice_record_free(b);
			slice_record_free(c);
		}
		free(pretty);
		json_object_put(tree);
	}
	struct slice_record *r = NULL;
	assert_int_equal(slice_record_from_text("{\"spec\":{\"devices\":[1,]}}", 25, 0, &r), -EINVAL);
}

/* A builder fed by hand makes the record of the whole slice. */
static void test_builder(void **state)
{
	(void)state;
	struct json_object *tree = json_tokener_parse(SLICE), *light = NULL;
	json_object_deep_copy(tree, &light, NULL);
	struct json_object *spec = json_object_object_get(light, "spec");
	json_object_object_add(spec, "devices", slice_devices_placeholder());
	struct json_object *devices = json_object_object_get(json_object_object_get(tree, "spec"), "devices");
	struct slice_record_builder *b = NULL;
	struct slice_record *built = NULL, *whole = NULL;
	assert_int_equal(slice_record_builder_new(SLICE_RECORD_DESIRED, light, &b), 0);
	json_object_put(light);	/* the builder holds it */
	for (size_t i = 0; i < json_object_array_length(devices); i++)
		assert_int_equal(slice_record_builder_device(b, json_object_array_get_idx(devices, i)), 0);
	assert_int_equal(slice_record_builder_finish(b, &built), 0);
	assert_int_equal(slice_record_from_json(tree, SLICE_RECORD_DESIRED, &whole), 0);
	same_record(built, whole);
	slice_record_free(built);
	slice_record_free(whole);
	assert_int_equal(slice_record_builder_new(SLICE_RECORD_DESIRED, devices, &b), -EINVAL);
	assert_int_equal(slice_record_builder_new(SLICE_RECORD_DESIRED, tree, &b), 0);
	slice_record_builder_free(b);
	slice_record_builder_free(NULL);
	json_object_put(tree);
}

static void count_edits(void *userdata, struct json_object *obj)
{
	struct json_object *meta = NULL;
	++*(int *)userdata;
	if (json_object_object_get_ex(obj, "metadata", &meta))
		json_object_object_add(meta, "edited", json_object_new_boolean(1));
}

/* What a plan writes: the same text with or without a tree of the devices. */
static void test_op_text(void **state)
{
	(void)state;
	struct json_object *desired_arr = json_tokener_parse("[]"), *pub_arr = json_tokener_parse("[]");
	struct json_object *d = json_tokener_parse(SLICE), *p = json_tokener_parse(SLICE);
	/* desired: another attribute, its taint without timeAdded; published: with */
	json_object_object_add(json_object_array_get_idx(json_object_object_get(
		json_object_object_get(d, "spec"), "devices"), 1), "attributes",
		json_tokener_parse("{\"n\":{\"int\":5}}"));
	json_object_object_del(json_object_array_get_idx(json_object_object_get(
		json_object_array_get_idx(json_object_object_get(json_object_object_get(d, "spec"),
								 "devices"), 0), "taints"), 0), "timeAdded");
	json_object_array_add(desired_arr, d);
	json_object_array_add(pub_arr, p);
	for (int taint_copy = 1; taint_copy >= 0; taint_copy--) {
		if (!taint_copy) {
			/* no timeAdded to carry over: the way without trees */
			struct json_object *t = json_object_array_get_idx(json_object_object_get(
				json_object_array_get_idx(json_object_object_get(json_object_object_get(
					p, "spec"), "devices"), 0), "taints"), 0);
			json_object_object_del(t, "timeAdded");
		}
		struct slice_list *des = NULL, *pub = NULL;
		struct slice_plan *plan = NULL;
		assert_int_equal(slice_list_from_json(desired_arr, SLICE_RECORD_DESIRED, &des), 0);
		assert_int_equal(slice_list_from_json(pub_arr, SLICE_RECORD_PUBLISHED, &pub), 0);
		assert_int_equal(slice_plan_compute(pub, des, "node-1", 0, &plan), 0);
		assert_int_equal(plan->n_update, 1);
		struct slice_plan *create = NULL;
		assert_int_equal(slice_plan_compute(NULL, des, "node-1", 0, &create), 0);
		assert_int_equal(create->n_create, 1);
		const struct slice_plan *plans[] = { plan, create };
		for (int k = 0; k < 2; k++) {
			for (int f = 0; f < 2; f++) {
				int flags = f ? PRETTY : PLAIN, edits = 0;
				struct json_object *obj = NULL;
				char *text = NULL;
				size_t len = 0;
				assert_int_equal(slice_plan_op_object(plans[k], 0, &obj), 0);
				count_edits(&edits, obj);
				assert_int_equal(slice_plan_op_text(plans[k], 0, flags, count_edits, &edits,
								    &text, &len), 0);
				assert_string_equal(text, json_object_to_json_string_ext(obj, flags));
				assert_int_equal(len, strlen(text));
				assert_true(edits >= 2);
				/* the server's time is kept */
				assert_true(!strstr(text, "\"timeAdded\"") == !(taint_copy && k == 0));
				free(text);
				json_object_put(obj);
			}
		}
		slice_plan_free(plan);
		slice_plan_free(create);
		slice_list_unref(des);
		slice_list_unref(pub);
	}
	json_object_put(desired_arr);
	json_object_put(pub_arr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pretty_like_json_c),
		cmocka_unit_test(test_members_and_elements),
		cmocka_unit_test(test_light_and_join),
		cmocka_unit_test(test_record_from_text_or_tree),
		cmocka_unit_test(test_builder),
		cmocka_unit_test(test_op_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
