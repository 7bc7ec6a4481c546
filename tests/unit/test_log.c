/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The logger's line format (agent/lib/log.h, log_format): JSON lines parse
 * back with json-c and carry the fields; the klog text form quotes message and
 * values (quotes, backslashes, newlines escaped) so one message is one line;
 * cut lines stay valid; fields with a NULL value are left out.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "agent/lib/log.h"

static const struct timeval when = { .tv_sec = 1764664200, .tv_usec = 123456 };

static struct json_object *parse_line(const char *line)
{
	size_t n = strlen(line);
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o;

	assert_true(n > 0 && line[n - 1] == '\n');
	assert_null(memchr(line, '\n', n - 1));	/* one line */
	o = json_tokener_parse_ex(tok, line, (int)n - 1);
	assert_int_equal(json_tokener_get_error(tok), json_tokener_success);
	assert_int_equal(json_tokener_get_parse_end(tok), n - 1);
	json_tokener_free(tok);
	assert_true(json_object_is_type(o, json_type_object));
	return o;
}

static const char *str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return NULL;
	assert_true(json_object_is_type(v, json_type_string));
	return json_object_get_string(v);
}

static void test_json_fields(void **state)
{
	(void)state;
	char buf[LOG_LINE_MAX];
	const char *const *kv = LOG_KV("driver", "gpu.dralet.dev", "claim", "ns/a", "pod", NULL,
				       "device", "gpu-0000-3b-00-0", "err", "bad \"x\"\n\ttab\\");
	struct log_record rec = { .level = LOG_INFO, .json = true, .time = when, .pid = 7,
				  .msg = "prepared \"a\"\x01", .kv = kv };
	struct json_object *o, *v;

	log_format(&rec, buf, sizeof(buf));
	o = parse_line(buf);
	assert_true(json_object_object_get_ex(o, "ts", &v));
	assert_true(json_object_get_double(v) > 1764664200.12 &&
		    json_object_get_double(v) < 1764664200.13);
	assert_true(json_object_object_get_ex(o, "v", &v));
	assert_int_equal(json_object_get_int(v), 0);
	assert_string_equal(str(o, "msg"), "prepared \"a\"\x01");
	assert_string_equal(str(o, "driver"), "gpu.dralet.dev");
	assert_string_equal(str(o, "claim"), "ns/a");
	assert_string_equal(str(o, "device"), "gpu-0000-3b-00-0");
	assert_string_equal(str(o, "err"), "bad \"x\"\n\ttab\\");
	assert_null(str(o, "pod"));	/* NULL value: left out */
	assert_null(str(o, "level"));
	json_object_put(o);

	rec.level = LOG_ERROR;
	log_format(&rec, buf, sizeof(buf));
	o = parse_line(buf);
	assert_string_equal(str(o, "level"), "error");
	assert_false(json_object_object_get_ex(o, "v", NULL));
	json_object_put(o);

	rec.level = LOG_DEBUG;
	rec.kv = NULL;
	log_format(&rec, buf, sizeof(buf));
	o = parse_line(buf);
	assert_true(json_object_object_get_ex(o, "v", &v));
	assert_int_equal(json_object_get_int(v), 4);
	assert_int_equal(json_object_object_length(o), 3);	/* ts, v, msg */
	json_object_put(o);
}

static void test_text_structured(void **state)
{
	(void)state;
	char buf[LOG_LINE_MAX];
	struct log_record rec = {
		.level = LOG_WARNING, .json = false, .time = when, .pid = 1234,
		.msg = "prepare failed",
		.kv = LOG_KV("driver", "gpu.dralet.dev", "claim", "ns/a", "backend", NULL,
			     "err", "unknown field \"colour\"\nnext line \\ \x1b"),
	};
	const char *body;

	log_format(&rec, buf, sizeof(buf));
	assert_int_equal(buf[0], 'W');
	assert_non_null(strstr(buf, "    1234 dralet] "));
	body = strstr(buf, "] ") + 2;
	assert_string_equal(body, "\"prepare failed\" driver=\"gpu.dralet.dev\" claim=\"ns/a\" "
				  "err=\"unknown field \\\"colour\\\"\\nnext line \\\\ \\x1b\"\n");
}

static void test_text_plain(void **state)
{
	(void)state;
	char buf[LOG_LINE_MAX];
	struct log_record rec = { .level = LOG_INFO, .time = when, .pid = 1,
				  .msg = "kubelet: driver \"x\" serving", .kv = NULL };

	log_format(&rec, buf, sizeof(buf));
	assert_int_equal(buf[0], 'I');
	assert_string_equal(strstr(buf, "] ") + 2, "kubelet: driver \"x\" serving\n");
	/* only NULL values: klog's printf form too */
	rec.kv = LOG_KV("pod", NULL);
	log_format(&rec, buf, sizeof(buf));
	assert_string_equal(strstr(buf, "] ") + 2, "\"kubelet: driver \\\"x\\\" serving\"\n");
}

/* Messages and values longer than the buffer: cut, still one valid line. */
static void test_cut(void **state)
{
	(void)state;
	char *long_msg = malloc(20000), small[300];
	struct log_record rec = { .level = LOG_INFO, .json = true, .time = when, .pid = 1 };
	struct json_object *o;
	size_t n;

	assert_non_null(long_msg);
	memset(long_msg, '"', 19999);
	long_msg[19999] = '\0';
	rec.msg = "m";
	rec.kv = LOG_KV("driver", "d", "err", long_msg, "claim", "ns/a");
	for (size_t size = 128; size <= sizeof(small); size += 7) {
		n = log_format(&rec, small, size);
		assert_true(n < size);
		assert_int_equal(strlen(small), n);
		o = parse_line(small);
		assert_string_equal(str(o, "driver"), "d");
		json_object_put(o);
	}
	rec.msg = long_msg;
	rec.kv = NULL;
	n = log_format(&rec, small, sizeof(small));
	o = parse_line(small);
	assert_true(strlen(str(o, "msg")) > 100);
	json_object_put(o);
	rec.json = false;
	rec.kv = LOG_KV("err", long_msg);
	n = log_format(&rec, small, sizeof(small));
	assert_true(n < sizeof(small) && small[n - 1] == '\n');
	assert_null(memchr(small, '\n', n - 1));
	assert_int_equal(small[n - 2], '"');
	free(long_msg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_fields),
		cmocka_unit_test(test_text_structured),
		cmocka_unit_test(test_text_plain),
		cmocka_unit_test(test_cut),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
