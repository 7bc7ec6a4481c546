/* SPDX-License-Identifier: Apache-2.0 */
/* Slice records: canonical digests, what a record keeps, lists, List bodies. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/slices/canon.h"
#include "agent/slices/gates.h"
#include "agent/slices/list_body.h"
#include "agent/slices/record.h"

static void digests(const char *spec_text, struct slice_digest *stripped, struct slice_digest *full,
		    bool *time_added)
{
	struct json_object *spec = json_tokener_parse(spec_text);
	assert_non_null(spec);
	slice_canon_digest(spec, stripped, full, time_added);
	json_object_put(spec);
}

static bool same(const char *a, const char *b)
{
	struct slice_digest da, db;
	digests(a, &da, NULL, NULL);
	digests(b, &db, NULL, NULL);
	return slice_digest_equal(&da, &db);
}

static void test_canon_rules(void **state)
{
	(void)state;
	/* map keys in any order */
	assert_true(same("{\"devices\":[{\"name\":\"a\",\"attributes\":{\"x\":{\"int\":1},\"y\":{\"bool\":true}}}]}",
			 "{\"devices\":[{\"attributes\":{\"y\":{\"bool\":true},\"x\":{\"int\":1}},\"name\":\"a\"}]}"));
	/* missing, null, false, 0, "", [] and {} are all empty */
	assert_true(same("{\"devices\":[{\"name\":\"a\"}]}",
			 "{\"devices\":[{\"name\":\"a\",\"taints\":[],\"capacity\":{},\"bindsToNode\":false,"
			 "\"x\":null,\"y\":0,\"z\":\"\"}],\"nodeSelector\":null,\"sharedCounters\":[]}"));
	assert_true(same("{}", "{\"devices\":[]}"));
	assert_true(same("{\"devices\":[null]}", "{\"devices\":[{}]}"));
	/* fields the controller does not compare */
	assert_true(same("{\"devices\":[]}", "{\"driver\":\"x\",\"nodeName\":\"n\",\"pool\":{\"name\":\"p\"}}"));
	/* values, types, nesting and list order count */
	assert_false(same("{\"devices\":[{\"name\":\"a\"}]}", "{\"devices\":[{\"name\":\"b\"}]}"));
	assert_false(same("{\"devices\":[{\"name\":\"a\",\"v\":1}]}", "{\"devices\":[{\"name\":\"a\",\"v\":\"1\"}]}"));
	assert_false(same("{\"devices\":[{\"name\":\"a\",\"v\":1}]}", "{\"devices\":[{\"name\":\"a\",\"v\":1.0}]}"));
	assert_false(same("{\"devices\":[{\"name\":\"a\"},{\"name\":\"b\"}]}",
			  "{\"devices\":[{\"name\":\"b\"},{\"name\":\"a\"}]}"));
	assert_false(same("{\"devices\":[{\"name\":\"a\",\"o\":{\"p\":{}}}]}", "{\"devices\":[{\"name\":\"a\"}]}"));
	assert_false(same("{\"devices\":[{\"name\":\"ab\"}]}", "{\"devices\":[{\"name\":\"a\",\"b\":true}]}"));
	assert_false(same("{\"allNodes\":true}", "{\"perDeviceNodeSelection\":true}"));
	/* objects with many members (sorted another way) */
	char a[4096] = "{\"devices\":[{\"name\":\"d\",\"attributes\":{", b[4096];
	strcpy(b, a);
	for (int i = 0; i < 40; i++) {
		char m[32];
		snprintf(m, sizeof(m), "%s\"k%02d\":{\"int\":%d}", i ? "," : "", i, i);
		strcat(a, m);
		snprintf(m, sizeof(m), "%s\"k%02d\":{\"int\":%d}", i ? "," : "", 39 - i, 39 - i);
		strcat(b, m);
	}
	strcat(a, "}}]}");
	strcat(b, "}}]}");
	assert_true(same(a, b));
}

static void test_canon_time_added(void **state)
{
	(void)state;
	struct slice_digest s1, f1, s2, f2, s3, f3;
	bool t1, t2, t3;
	digests("{\"devices\":[{\"name\":\"a\",\"taints\":[{\"key\":\"k\",\"effect\":\"NoSchedule\"}]}]}",
		&s1, &f1, &t1);
	digests("{\"devices\":[{\"name\":\"a\",\"taints\":[{\"key\":\"k\",\"effect\":\"NoSchedule\","
		"\"timeAdded\":\"2026-01-01T00:00:00Z\"}]}]}", &s2, &f2, &t2);
	digests("{\"devices\":[{\"name\":\"a\",\"taints\":[{\"key\":\"k\",\"effect\":\"NoSchedule\","
		"\"timeAdded\":null}]}]}", &s3, &f3, &t3);
	assert_false(t1);
	assert_true(t2);
	assert_false(t3);	/* null is as good as missing */
	assert_true(slice_digest_equal(&s1, &s2));
	assert_false(slice_digest_equal(&f1, &f2));
	assert_true(slice_digest_equal(&s1, &s3));
	assert_true(slice_digest_equal(&f1, &f3));
	/* an object of only a timeAdded is not empty */
	digests("{\"devices\":[{\"name\":\"a\",\"x\":{\"timeAdded\":\"t\"}}]}", &s2, NULL, NULL);
	digests("{\"devices\":[{\"name\":\"a\"}]}", &s1, NULL, NULL);
	assert_false(slice_digest_equal(&s1, &s2));
	/* NULL and non-object specs have no compared fields */
	slice_canon_digest(NULL, &s1, &f1, &t1);
	digests("[]", &s2, &f2, &t2);
	assert_true(slice_digest_equal(&s1, &s2));
	assert_false(t1);
}

static const char PUBLISHED[] =
	"{\"kind\":\"ResourceSlice\",\"apiVersion\":\"resource.k8s.io/v1\",\"metadata\":{\"name\":\"s1\","
	"\"uid\":\"u1\",\"resourceVersion\":\"42\",\"labels\":{\"a\":\"b\"},\"ownerReferences\":[{\"kind\":"
	"\"Node\",\"name\":\"n\"}]},\"spec\":{\"driver\":\"gpu.dralet.dev\",\"nodeName\":\"n\",\"pool\":"
	"{\"name\":\"n\",\"generation\":3,\"resourceSliceCount\":2},\"nodeSelector\":null,\"devices\":["
	"{\"name\":\"gpu-2\",\"taints\":[{\"key\":\"k\",\"effect\":\"NoSchedule\",\"timeAdded\":\"T1\"},"
	"{\"key\":\"j\",\"effect\":\"NoExecute\"}]},{\"name\":\"gpu-0\"},{\"name\":\"gpu-2\",\"taints\":"
	"[{\"key\":\"k\",\"effect\":\"NoSchedule\",\"timeAdded\":\"T2\"}]},{\"attributes\":{}},"
	"{\"name\":\"gpu-1\",\"allowMultipleAllocations\":false,\"capacity\":{\"m\":{\"value\":\"1\","
	"\"requestPolicy\":{}}}}]},\"status\":{}}";

static void test_published_record(void **state)
{
	(void)state;
	struct slice_record *r = NULL;
	assert_int_equal(slice_record_from_text(PUBLISHED, strlen(PUBLISHED), SLICE_RECORD_PUBLISHED, &r), 0);
	assert_int_equal(r->kind, SLICE_RECORD_PUBLISHED);
	assert_string_equal(r->name, "s1");
	assert_string_equal(r->uid, "u1");
	assert_string_equal(r->resource_version, "42");
	assert_string_equal(r->pool, "n");
	assert_int_equal(r->generation, 3);
	assert_int_equal(r->slice_count, 2);
	assert_false(r->pool_odd);
	assert_true(r->has_spec);
	assert_true(r->time_added);
	/* names sorted and unique, a nameless device as "" */
	assert_int_equal(r->n_names, 4);
	const char *want[] = { "", "gpu-0", "gpu-1", "gpu-2" };
	const char *p = r->names;
	for (size_t i = 0; i < 4; i++, p += strlen(p) + 1)
		assert_string_equal(p, want[i]);
	assert_int_equal((size_t)(p - r->names), r->names_len);
	/* the text keeps what an update keeps, in its order; not the compared fields */
	assert_string_equal(r->text,
			    "{\"kind\":\"ResourceSlice\",\"apiVersion\":\"resource.k8s.io/v1\",\"metadata\":"
			    "{\"name\":\"s1\",\"uid\":\"u1\",\"resourceVersion\":\"42\",\"labels\":{\"a\":\"b\"},"
			    "\"ownerReferences\":[{\"kind\":\"Node\",\"name\":\"n\"}]},\"spec\":{\"driver\":"
			    "\"gpu.dralet.dev\",\"nodeName\":\"n\"},\"status\":{}}");
	assert_int_equal(strlen(r->text), r->text_len);
	/* the first device of a name, its taints with a timeAdded */
	assert_string_equal(r->time_added_devices,
			    "[{\"name\":\"gpu-2\",\"taints\":[{\"key\":\"k\",\"effect\":\"NoSchedule\","
			    "\"timeAdded\":\"T1\"}]}]");
	assert_int_equal(r->gates, SLICE_GATE_DEVICE_TAINTS);
	assert_int_equal(r->gate_keys, SLICE_GATE_DEVICE_TAINTS | SLICE_GATE_CONSUMABLE_CAPACITY);
	/* the same slice as a desired one keeps everything */
	struct slice_record *d = NULL;
	assert_int_equal(slice_record_from_text(PUBLISHED, strlen(PUBLISHED), SLICE_RECORD_DESIRED, &d), 0);
	assert_non_null(strstr(d->text, "\"devices\":["));
	assert_null(d->time_added_devices);
	assert_true(slice_digest_equal(&d->digest, &r->digest));
	assert_true(slice_record_same_names(d, r));
	struct json_object *obj = NULL;
	assert_int_equal(slice_record_parse(d, &obj), 0);
	struct json_object *orig = json_tokener_parse(PUBLISHED);
	assert_true(json_object_equal(obj, orig));
	json_object_put(obj);
	json_object_put(orig);
	slice_record_free(d);
	slice_record_free(r);
	slice_record_free(NULL);
	assert_int_equal(slice_record_from_text("[1]", 3, SLICE_RECORD_DESIRED, &r), -EINVAL);
	assert_int_equal(slice_record_from_text("{\"a\":", 5, SLICE_RECORD_DESIRED, &r), -EINVAL);
}

static bool odd(const char *pool)
{
	char text[512];
	struct slice_record *r = NULL;
	snprintf(text, sizeof(text), "{\"spec\":{\"pool\":%s}}", pool);
	assert_int_equal(slice_record_from_text(text, strlen(text), SLICE_RECORD_PUBLISHED, &r), 0);
	bool o = r->pool_odd;
	slice_record_free(r);
	return o;
}

static void test_pool_odd(void **state)
{
	(void)state;
	assert_false(odd("{\"name\":\"n\",\"generation\":1,\"resourceSliceCount\":1}"));
	assert_false(odd("{\"name\":\"n\",\"generation\":null,\"x\":[],\"timeAdded\":\"t\"}"));
	assert_false(odd("null"));
	assert_true(odd("{\"name\":\"n\",\"generation\":\"1\"}"));
	assert_true(odd("{\"name\":\"n\",\"resourceSliceCount\":1.0}"));
	assert_true(odd("{\"name\":7}"));
	assert_true(odd("{\"name\":\"n\",\"extra\":1}"));
	assert_true(odd("\"n\""));
}

static void test_lists(void **state)
{
	(void)state;
	struct slice_list *l = NULL;
	assert_int_equal(slice_list_new(&l), 0);
	for (int i = 0; i < 10; i++) {
		char text[128];
		struct slice_record *r = NULL;
		snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"s%d\",\"resourceVersion\":\"%d\"}}",
			 i % 5, i);
		assert_int_equal(slice_record_from_text(text, strlen(text), SLICE_RECORD_PUBLISHED, &r), 0);
		assert_int_equal(slice_list_put(l, r), 0);
	}
	assert_int_equal(l->n, 5);	/* one per name, the latest */
	long i = slice_list_find(l, "s3");
	assert_true(i >= 0);
	assert_string_equal(l->items[i]->resource_version, "8");
	assert_int_equal(slice_list_find(l, "nope"), -1);
	assert_int_equal(slice_list_find(NULL, "s3"), -1);
	slice_list_remove(l, (size_t)i);
	assert_int_equal(slice_list_find(l, "s3"), -1);
	assert_int_equal(l->n, 4);
	slice_list_remove(l, 99);
	struct slice_record *anon = NULL;
	assert_int_equal(slice_record_from_text("{}", 2, SLICE_RECORD_PUBLISHED, &anon), 0);
	assert_int_equal(slice_list_put(l, anon), -EINVAL);	/* taken anyway */
	assert_true(slice_list_text_bytes(l) > 0);
	assert_ptr_equal(slice_list_ref(l), l);
	slice_list_unref(l);
	struct json_object *arr = NULL;
	assert_int_equal(slice_list_to_json(l, &arr), 0);
	assert_int_equal(json_object_array_length(arr), 4);
	json_object_put(arr);
	slice_list_unref(l);
	slice_list_unref(NULL);

	struct slice_by_driver bd = { 0 };
	assert_int_equal(slice_list_new(&l), 0);
	assert_int_equal(slice_by_driver_add(&bd, "a.dralet.dev", l), 0);
	assert_ptr_equal(slice_by_driver_get(&bd, "a.dralet.dev"), l);
	assert_null(slice_by_driver_get(&bd, "b.dralet.dev"));
	slice_by_driver_clear(&bd);
	assert_int_equal(bd.n, 0);
}

struct items {
	int n;
	char all[1024];
	int stop_at;
};

static int on_item(void *userdata, const char *text, size_t len)
{
	struct items *it = userdata;
	if (it->n == it->stop_at)
		return -ECANCELED;
	it->n++;
	size_t used = strlen(it->all);
	snprintf(it->all + used, sizeof(it->all) - used, "%.*s|", (int)len, text);
	return 0;
}

static int scan(const char *body, struct items *it, struct json_object **meta)
{
	memset(it, 0, sizeof(*it));
	it->stop_at = -1;
	return slice_list_body_scan(body, strlen(body), on_item, it, meta);
}

static void test_list_body(void **state)
{
	(void)state;
	struct items it;
	struct json_object *meta = NULL;
	const char *body =
		" {\"kind\":\"ResourceSliceList\",\"metadata\":{\"resourceVersion\":\"12\",\"continue\":"
		"\"abc\"},\"x\":[1,-2.5e+3,true,false,null,{\"}\":\"]\\\"\\u00e9\"}],\"items\":[{\"a\":"
		"[1,{\"b\":\"]}\"}]} , 7 ,\"s\",[]]}\n trailing";
	assert_int_equal(scan(body, &it, &meta), 0);
	assert_int_equal(it.n, 4);
	assert_string_equal(it.all, "{\"a\":[1,{\"b\":\"]}\"}]}|7|\"s\"|[]|");
	assert_non_null(meta);
	assert_string_equal(json_object_get_string(json_object_object_get(meta, "resourceVersion")), "12");
	assert_string_equal(json_object_get_string(json_object_object_get(meta, "continue")), "abc");
	json_object_put(meta);
	/* the last "items" counts; null and empty are no items; no metadata is fine */
	assert_int_equal(scan("{\"items\":[1],\"items\":[2,3]}", &it, &meta), 0);
	assert_string_equal(it.all, "2|3|");
	assert_null(meta);
	assert_int_equal(scan("{\"items\":null}", &it, NULL), 0);
	assert_int_equal(it.n, 0);
	assert_int_equal(scan("{\"items\":[ ]}", &it, NULL), 0);
	assert_int_equal(it.n, 0);
	/* not a list */
	const char *bad[] = {
		"", "[]", "{\"kind\":\"List\"}", "{\"items\":{}}", "{\"items\":\"x\"}", "{\"items\":[1,]}",
		"{\"items\":[1 2]}", "{\"items\":[01]}", "{\"items\":[-]}", "{\"items\":[1.]}",
		"{\"items\":[1e]}", "{\"items\":[tru]}", "{\"items\":[\"\\x\"]}", "{\"items\":[\"\\u12g4\"]}",
		"{\"items\":[\"a\nb\"]}", "{\"items\":[]", "{\"items\" []}", "{items:[]}", "{\"a\":1,}",
		"{\"items\":[\"abc", "{\"items\":[{\"a\"}]}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (scan(bad[i], &it, NULL) != -EBADMSG)
			fail_msg("accepted: %s", bad[i]);
	assert_int_equal(slice_list_body_scan(NULL, 0, on_item, &it, NULL), -EBADMSG);
	/* too deep */
	char deep[300] = "{\"items\":[";
	for (int i = 0; i < 70; i++)
		strcat(deep, "[");
	for (int i = 0; i < 70; i++)
		strcat(deep, "]");
	strcat(deep, "]}");
	assert_int_equal(scan(deep, &it, NULL), -EBADMSG);
	/* the callback stops the scan */
	memset(&it, 0, sizeof(it));
	it.stop_at = 1;
	meta = (struct json_object *)0x1;
	assert_int_equal(slice_list_body_scan("{\"metadata\":{},\"items\":[1,2,3]}", 31, on_item, &it,
					      &meta), -ECANCELED);
	assert_int_equal(it.n, 1);
	assert_ptr_equal(meta, (struct json_object *)0x1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_canon_rules),
		cmocka_unit_test(test_canon_time_added),
		cmocka_unit_test(test_published_record),
		cmocka_unit_test(test_pool_odd),
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_list_body),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
