/* SPDX-License-Identifier: Apache-2.0 */
/* YAML loading (core schema types, errors) and emitting (round trip). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/lib/yaml_emit.h"
#include "agent/lib/yaml_load.h"

static struct json_object *load(const char *text)
{
	struct json_object *o = NULL;
	char err[256];
	assert_int_equal(yaml_load_buffer(text, strlen(text), &o, err, sizeof(err)), 0);
	return o;
}

static void test_scalar_types(void **state)
{
	struct json_object *o = load("a: 1\nb: 0x10de\nc: true\nd: ~\ne: \"1\"\nf: 1.5\n"
				     "g: text here\nh: 0o17\ni: -3\nj: 12:34\n");
	struct json_object *v;

	(void)state;
	json_object_object_get_ex(o, "a", &v);
	assert_int_equal(json_object_get_int64(v), 1);
	json_object_object_get_ex(o, "b", &v);
	assert_int_equal(json_object_get_int64(v), 0x10de);
	json_object_object_get_ex(o, "c", &v);
	assert_true(json_object_is_type(v, json_type_boolean));
	assert_true(json_object_object_get_ex(o, "d", &v));
	assert_null(v);
	json_object_object_get_ex(o, "e", &v);
	assert_string_equal(json_object_get_string(v), "1");
	json_object_object_get_ex(o, "f", &v);
	assert_true(json_object_is_type(v, json_type_double));
	json_object_object_get_ex(o, "g", &v);
	assert_string_equal(json_object_get_string(v), "text here");
	json_object_object_get_ex(o, "h", &v);
	assert_int_equal(json_object_get_int64(v), 15);
	json_object_object_get_ex(o, "i", &v);
	assert_int_equal(json_object_get_int64(v), -3);
	json_object_object_get_ex(o, "j", &v);
	assert_string_equal(json_object_get_string(v), "12:34");
	json_object_put(o);
}

static void test_anchors_and_json(void **state)
{
	struct json_object *o = load("base: &b {x: 1, y: [1, 2]}\ncopy: *b\n");
	struct json_object *v;

	(void)state;
	json_object_object_get_ex(o, "copy", &v);
	assert_int_equal(json_object_array_length(json_object_object_get(v, "y")), 2);
	json_object_put(o);
	o = load("{\"devices\": [{\"name\": \"gpu-0\"}]}");
	assert_int_equal(json_object_array_length(json_object_object_get(o, "devices")), 1);
	json_object_put(o);
}

static void test_errors(void **state)
{
	static const char *const bad[] = { "a: [1, 2\n", "a: 1\na: 2\n", "a: *nope\n",
					   "<<: {a: 1}\n", "a:\n\t- b\n" };
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct json_object *o = NULL;
		assert_int_equal(yaml_load_buffer(bad[i], strlen(bad[i]), &o, err, sizeof(err)),
				 -EINVAL);
		assert_non_null(strstr(err, "line "));
		assert_null(o);
	}
	assert_int_equal(yaml_load_file("/nonexistent/file.yaml", NULL, err, sizeof(err)), -ENOENT);
}

static void test_emit_round_trip(void **state)
{
	const char *text = "{\"s\": \"plain\", \"n\": \"123\", \"t\": \"true\", \"e\": \"\", "
			   "\"colon\": \"a: b\", \"nl\": \"x\\ny\", \"i\": 5, \"b\": false, "
			   "\"list\": [{\"k\": \"v\"}, 3, []], \"obj\": {}, "
			   "\"resource.kubernetes.io/pcieRoot\": {\"string\": \"pci0000:00\"}}";
	struct json_object *in = load(text), *out = NULL;
	char *buf = NULL, err[256];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_int_equal(yaml_emit(in, f), 0);
	fclose(f);
	assert_int_equal(yaml_load_buffer(buf, len, &out, err, sizeof(err)), 0);
	assert_true(json_object_equal(in, out));
	json_object_put(in);
	json_object_put(out);
	free(buf);
}

static void test_emit_hard_cases(void **state)
{
	char longkey[1500], *buf = NULL, err[256];
	size_t len = 0;
	struct json_object *in = json_object_new_object(), *out = NULL;
	FILE *f;

	(void)state;
	memset(longkey, 'k', sizeof(longkey) - 1);
	longkey[sizeof(longkey) - 1] = '\0';
	json_object_object_add(in, longkey, json_object_new_int(1));
	json_object_object_add(in, "sep", json_object_new_string("a\xe2\x80\xa8" "b\xc2\x85" "c"));
	json_object_object_add(in, "ctl", json_object_new_string("\x01\t\"\\"));
	f = open_memstream(&buf, &len);
	assert_int_equal(yaml_emit(in, f), 0);
	fclose(f);
	assert_int_equal(yaml_load_buffer(buf, len, &out, err, sizeof(err)), 0);
	assert_true(json_object_equal(in, out));
	json_object_put(in);
	json_object_put(out);
	free(buf);
}

static void test_alias_limits(void **state)
{
	struct json_object *o = NULL;
	char err[256];
	const char *cycle = "k: &x {a: *x}\n";
	/* each level multiplies by 10: 10^7 expanded nodes */
	const char *laughs = "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
			     "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
			     "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
			     "g: [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\n";

	(void)state;
	assert_int_equal(yaml_load_buffer(cycle, strlen(cycle), &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "recursive alias"));
	assert_int_equal(yaml_load_buffer(laughs, strlen(laughs), &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "too large"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scalar_types),
		cmocka_unit_test(test_anchors_and_json),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_emit_round_trip),
		cmocka_unit_test(test_emit_hard_cases),
		cmocka_unit_test(test_alias_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
