/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The strict table-driven decoder (include/dralet/options.h, agent/core/options_json.h):
 * every value type, unknown keys, wrong types, ranges, enums, required keys, refused keys,
 * nested paths in the messages, and the opaque-config header of dralet_config_decode.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <dralet/options.h>

#include "agent/core/options_json.h"

struct sample {
	bool on;
	int flag;		/* BOOL into an int */
	uint16_t port;
	bool has_port;
	long long big;
	unsigned count;
	char name[8];
	int mode;
	bool has_inner;
	int depth;
	const char *ref;
	int items;		/* CUSTOM: the length of a list */
};

static const char *const modes[] = { "fast", "slow", NULL };

static int parse_even(const char *text, void *dst, char *why, size_t whylen)
{
	if (strlen(text) % 2) {
		snprintf(why, whylen, "\"%s\" has an odd length", text);
		return -EINVAL;
	}
	*(const char **)dst = "even";
	return 0;
}

static int decode_items(struct dralet_decoder *d, const struct dralet_value *v, void *dst)
{
	struct json_object *list = decoder_json(v);

	if (!json_object_is_type(list, json_type_array))
		return decoder_fail(d, -EINVAL, "must be a list");
	for (size_t i = 0; i < json_object_array_length(list); i++)
		if (!json_object_is_type(json_object_array_get_idx(list, i), json_type_int)) {
			decoder_push_index(d, i);
			return decoder_fail(d, -EINVAL, "must be an integer");
		}
	*(int *)dst = (int)json_object_array_length(list);
	return 0;
}

static const struct dralet_field inner_fields[] = {
	{ "depth", DRALET_FIELD_INT, DRALET_AT(struct sample, depth), .min = -3, .max = 3,
	  .required = true },
	DRALET_FIELDS_END,
};

static const struct dralet_field sample_fields[] = {
	{ "on", DRALET_FIELD_BOOL, DRALET_AT(struct sample, on) },
	{ "flag", DRALET_FIELD_BOOL, DRALET_AT(struct sample, flag) },
	{ "port", DRALET_FIELD_INT, DRALET_AT(struct sample, port), .min = 1, .max = 65535,
	  DRALET_SEEN(struct sample, has_port) },
	{ "big", DRALET_FIELD_INT, DRALET_AT(struct sample, big), .min = -1,
	  .max = 1LL << 40 },
	{ "count", DRALET_FIELD_INT, DRALET_AT(struct sample, count), .max = 10,
	  .required = true },
	{ "name", DRALET_FIELD_STRING, DRALET_AT(struct sample, name) },
	{ "mode", DRALET_FIELD_ENUM, DRALET_AT(struct sample, mode), .names = modes },
	{ "inner", DRALET_FIELD_OBJECT, .fields = inner_fields,
	  DRALET_SEEN(struct sample, has_inner) },
	{ "even", DRALET_FIELD_STRING, DRALET_AT(struct sample, ref), .parse = parse_even,
	  .help = "a string of even length" },
	{ "items", DRALET_FIELD_CUSTOM, DRALET_AT(struct sample, items),
	  .decode = decode_items },
	{ "legacy", DRALET_FIELD_REFUSED, .help = "was removed in v2; use mode" },
	DRALET_FIELDS_END,
};

/* Decodes @json below @root; the message must equal @msg exactly. */
static int decode(const char *json, const char *root, struct sample *s, char *err,
		  size_t errlen)
{
	struct json_object *obj = json_tokener_parse(json);
	struct dralet_decoder d;
	int r;

	assert_non_null(obj);
	memset(s, 0, sizeof(*s));
	s->mode = -1;
	err[0] = '\0';
	decoder_init(&d, root, err, errlen);
	r = decoder_object(&d, obj, sample_fields, s);
	json_object_put(obj);
	return r;
}

static void test_every_type_decodes(void **state)
{
	struct sample s;
	char err[512];

	(void)state;
	assert_int_equal(decode("{\"on\": true, \"flag\": true, \"port\": 8080, \"big\": "
				"1099511627776, \"count\": 0, \"name\": \"abcdefg\", \"mode\": "
				"\"slow\", \"inner\": {\"depth\": -3}, \"even\": \"ab\", "
				"\"items\": [1, 2, 3]}", "", &s, err, sizeof(err)), 0);
	assert_true(s.on);
	assert_int_equal(s.flag, 1);
	assert_int_equal(s.port, 8080);
	assert_true(s.has_port);
	assert_true(s.big == 1LL << 40);
	assert_int_equal(s.count, 0);
	assert_string_equal(s.name, "abcdefg");
	assert_int_equal(s.mode, 1);
	assert_true(s.has_inner);
	assert_int_equal(s.depth, -3);
	assert_string_equal(s.ref, "even");
	assert_int_equal(s.items, 3);

	/* absent keys leave the struct alone; a null object is absent */
	assert_int_equal(decode("{\"count\": 10, \"inner\": null}", "", &s, err, sizeof(err)),
			 0);
	assert_false(s.has_port);
	assert_false(s.has_inner);
	assert_int_equal(s.mode, -1);
	assert_int_equal(s.count, 10);
}

static void test_errors_name_the_path(void **state)
{
	static const struct {
		const char *json, *root;
		int want;
		const char *msg;
	} cases[] = {
		/* unknown key, at the top and nested, with the known ones */
		{ "{\"count\": 1, \"colour\": 1}", "",  -EINVAL,
		  "unknown field \"colour\" (known: on, flag, port, big, count, name, mode, inner, "
		  "even, items, legacy)" },
		{ "{\"count\": 1, \"inner\": {\"depth\": 0, \"deep\": 1}}", "cfg", -EINVAL,
		  "cfg.inner: unknown field \"deep\" (known: depth)" },
		/* wrong types */
		{ "{\"count\": 1, \"on\": \"yes\"}", "cfg", -EINVAL, "cfg.on: must be true or false" },
		{ "{\"count\": 1, \"flag\": 1}", "", -EINVAL, "flag: must be true or false" },
		{ "{\"count\": 1.5}", "", -EINVAL, "count: must be an integer" },
		{ "{\"count\": \"1\"}", "", -EINVAL, "count: must be an integer" },
		{ "{\"count\": 1, \"name\": 7}", "", -EINVAL, "name: must be a string" },
		{ "{\"count\": 1, \"even\": 7}", "", -EINVAL, "even: must be a string of even length" },
		{ "{\"count\": 1, \"inner\": []}", "", -EINVAL, "inner: must be an object" },
		{ "{\"count\": 1, \"mode\": 2}", "", -EINVAL, "mode: must be one of fast, slow" },
		/* out of range, too long, not in the enum, refused by parse */
		{ "{\"count\": 11}", "sriov.policies[2]", -EINVAL,
		  "sriov.policies[2].count: must be between 0 and 10" },
		{ "{\"count\": -1}", "", -EINVAL, "count: must be between 0 and 10" },
		{ "{\"count\": 1, \"port\": 0}", "", -EINVAL, "port: must be between 1 and 65535" },
		{ "{\"count\": 1, \"inner\": {\"depth\": 4}}", "x", -EINVAL,
		  "x.inner.depth: must be between -3 and 3" },
		{ "{\"count\": 1, \"name\": \"abcdefgh\"}", "", -EINVAL,
		  "name: is longer than 7 characters" },
		{ "{\"count\": 1, \"mode\": \"medium\"}", "", -EINVAL,
		  "mode: \"medium\" is not one of fast, slow" },
		{ "{\"count\": 1, \"even\": \"abc\"}", "", -EINVAL, "even: \"abc\" has an odd length" },
		/* missing required, at the top and nested */
		{ "{}", "cfg", -EINVAL, "cfg.count: is required" },
		{ "{\"count\": 1, \"inner\": {}}", "cfg", -EINVAL, "cfg.inner.depth: is required" },
		/* a custom field's own message, with an index */
		{ "{\"count\": 1, \"items\": [1, \"2\"]}", "cfg", -EINVAL,
		  "cfg.items[1]: must be an integer" },
		/* a refused key */
		{ "{\"count\": 1, \"legacy\": true}", "cfg", -EOPNOTSUPP,
		  "cfg.legacy: was removed in v2; use mode" },
		/* not an object */
		{ "[1]", "cfg", -EINVAL, "cfg: must be an object" },
	};
	struct sample s;
	char err[512];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = decode(cases[i].json, cases[i].root, &s, err, sizeof(err));

		if (r != cases[i].want || strcmp(err, cases[i].msg))
			fail_msg("case %zu %s: got %d \"%s\", want %d \"%s\"", i, cases[i].json, r,
				 err, cases[i].want, cases[i].msg);
	}
}

static const struct dralet_field port_only[] = {
	{ "port", DRALET_FIELD_INT, DRALET_AT(struct sample, port), .min = 1, .max = 9 },
	DRALET_FIELDS_END,
};

static void test_config_header(void **state)
{
	static const char *const apis[] = { "x.dralet.dev/v1alpha1", "x.example.com/v1alpha1",
					    NULL };
	static const char *const kinds[] = { "ThingConfig", "OtherConfig", NULL };
	static const struct dralet_config_type type = { apis, kinds, port_only };
	static const struct {
		const char *json;
		const char *msg;
	} bad[] = {
		{ "{\"kind\": \"ThingConfig\"}",
		  "apiVersion: is required (want \"x.dralet.dev/v1alpha1\")" },
		{ "{\"apiVersion\": 1, \"kind\": \"ThingConfig\"}",
		  "apiVersion: must be a string (want \"x.dralet.dev/v1alpha1\")" },
		{ "{\"apiVersion\": \"x.dralet.dev/v2\", \"kind\": \"ThingConfig\"}",
		  "apiVersion: \"x.dralet.dev/v2\" is not supported (want \"x.dralet.dev/v1alpha1\")" },
		{ "{\"apiVersion\": \"x.dralet.dev/v1alpha1\"}",
		  "kind: is required (one of ThingConfig, OtherConfig)" },
		{ "{\"apiVersion\": \"x.dralet.dev/v1alpha1\", \"kind\": \"Thing\"}",
		  "kind: \"Thing\" is not one of ThingConfig, OtherConfig" },
		{ "{\"apiVersion\": \"x.dralet.dev/v1alpha1\", \"kind\": \"OtherConfig\", "
		  "\"port\": 10}", "OtherConfig.port: must be between 1 and 9" },
		{ "{\"apiVersion\": \"x.dralet.dev/v1alpha1\", \"kind\": \"ThingConfig\", "
		  "\"prot\": 1}", "ThingConfig: unknown field \"prot\" (known: port)" },
		{ "[]", "must be a JSON object" },
		{ "null", "must be a JSON object, not null" },
		{ "{\"apiVersion\": ", "not valid JSON: unexpected end of data" },
		{ "{\"port\": 1,}", "not valid JSON: unexpected character" },
		{ "{} {}", "not valid JSON: unexpected character" },
	};
	struct sample s = { 0 };
	char err[512];
	int kind = -1;

	(void)state;
	assert_int_equal(dralet_config_decode("{\"apiVersion\": \"x.example.com/v1alpha1\", "
					      "\"kind\": \"OtherConfig\", \"port\": 3} \n",
					      &type, &s, &kind, err, sizeof(err)), 0);
	assert_int_equal(kind, 1);
	assert_int_equal(s.port, 3);
	assert_int_equal(dralet_config_decode(NULL, &type, &s, &kind, err, sizeof(err)), -EINVAL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = dralet_config_decode(bad[i].json, &type, &s, &kind, err, sizeof(err));

		if (r != -EINVAL || strcmp(err, bad[i].msg))
			fail_msg("case %zu %s: got %d \"%s\", want \"%s\"", i, bad[i].json, r, err,
				 bad[i].msg);
	}
}

/* A path longer than the decoder's buffer is cut, never overrun. */
static void test_long_path_is_cut(void **state)
{
	char root[400], err[1024];
	struct dralet_decoder d;
	struct sample s;

	(void)state;
	memset(root, 'a', sizeof(root) - 1);
	root[sizeof(root) - 1] = '\0';
	assert_int_equal(decode("{}", root, &s, err, sizeof(err)), -EINVAL);
	assert_int_equal(strlen(err), sizeof(d.path) - 1 + strlen(": is required"));
	assert_string_equal(err + sizeof(d.path) - 1, ": is required");
	/* and a short message buffer is cut too */
	assert_int_equal(decode("{}", root, &s, err, 64), -EINVAL);
	assert_int_equal(strlen(err), 63);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_type_decodes),
		cmocka_unit_test(test_errors_name_the_path),
		cmocka_unit_test(test_config_header),
		cmocka_unit_test(test_long_path_is_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
