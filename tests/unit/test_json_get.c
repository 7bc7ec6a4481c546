/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_get (agent/lib/json_get.h): members read with a type check; NULL for
 * a missing member, another type, a JSON null, or a parent that is no object.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "agent/lib/json_get.h"

static struct json_object *doc(void)
{
	struct json_object *o = json_tokener_parse(
		"{\"s\": \"text\", \"n\": 7, \"z\": null, \"a\": [1, 2], \"o\": {\"k\": \"v\"},"
		" \"metadata\": {\"uid\": \"u-1\", \"labels\": {\"x\": \"y\"}, \"gen\": 3}}");
	assert_non_null(o);
	return o;
}

static void test_members_by_type(void **state)
{
	(void)state;
	struct json_object *o = doc();

	assert_string_equal(json_get_str(o, "s"), "text");
	assert_null(json_get_str(o, "n"));	/* a number is no string */
	assert_null(json_get_str(o, "missing"));
	assert_null(json_get_str(o, "z"));	/* JSON null */
	assert_non_null(json_get_array(o, "a"));
	assert_int_equal(json_object_array_length(json_get_array(o, "a")), 2);
	assert_null(json_get_array(o, "o"));
	assert_non_null(json_get_object(o, "o"));
	assert_null(json_get_object(o, "a"));
	assert_non_null(json_get_typed(o, "n", json_type_int));
	assert_null(json_get_typed(o, "n", json_type_string));
	assert_null(json_get(o, "z"));
	assert_ptr_equal(json_get(o, "n"), json_get_typed(o, "n", json_type_int));
	json_object_put(o);
}

static void test_no_object(void **state)
{
	(void)state;
	struct json_object *o = doc();
	struct json_object *arr = json_get(o, "a"), *str = json_get(o, "s");

	assert_null(json_get(NULL, "s"));
	assert_null(json_get_str(NULL, "s"));
	assert_null(json_get(arr, "s"));
	assert_null(json_get_str(str, "s"));
	assert_null(json_get(o, NULL));
	json_object_put(o);
}

static void test_paths(void **state)
{
	(void)state;
	struct json_object *o = doc();

	assert_string_equal(json_get_str_at(o, JSON_PATH("metadata", "uid")), "u-1");
	assert_string_equal(json_get_str_at(o, JSON_PATH("metadata", "labels", "x")), "y");
	assert_null(json_get_str_at(o, JSON_PATH("metadata", "gen")));	/* a number */
	assert_non_null(json_get_at(o, JSON_PATH("metadata", "gen")));
	assert_null(json_get_at(o, JSON_PATH("metadata", "nope", "x")));
	assert_null(json_get_at(o, JSON_PATH("s", "x")));	/* through a string */
	assert_null(json_get_at(o, JSON_PATH("z", "x")));	/* through a null */
	assert_null(json_get_str_at(NULL, JSON_PATH("metadata", "uid")));
	json_object_put(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_members_by_type),
		cmocka_unit_test(test_no_object),
		cmocka_unit_test(test_paths),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
