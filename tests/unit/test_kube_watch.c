/* SPDX-License-Identifier: Apache-2.0 */
/* Watch-stream parser: events across arbitrary chunk boundaries, errors, caps. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/kube/watch.h"

static const char STREAM[] =
	"{\"type\":\"ADDED\",\"object\":{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"a\","
	"\"resourceVersion\":\"101\"},\"spec\":{\"driver\":\"gpu.dralet.dev\",\"devices\":"
	"[{\"name\":\"gpu-0\",\"attributes\":{\"model\":{\"string\":\"H\\u00e9 \\\"x\\\" {}\"}}}]}}}\n"
	"{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"102\"}}}\r\n"
	"\n"
	"{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ResourceSlice\",\"metadata\":{\"resourceVersion\":\"150\"}}}\n"
	"{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"151\"}}}\n"
	"{\n  \"type\": \"ERROR\",\n  \"object\": {\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\"}}\n";

struct seen {
	int n;
	enum kube_watch_type types[16];
	char rvs[16][16];
	int codes[16];
	char model[64];
	int stop_at;	/* return an error at this event (1-based), 0 never */
};

static int collect(void *userdata, const struct kube_watch_event *ev)
{
	struct seen *s = userdata;
	if (s->n < 16) {
		s->types[s->n] = ev->type;
		snprintf(s->rvs[s->n], sizeof(s->rvs[0]), "%s",
			 ev->resource_version ? ev->resource_version : "-");
		s->codes[s->n] = ev->code;
	}
	struct json_object *spec, *devs;
	if (json_object_object_get_ex(ev->object, "spec", &spec) &&
	    json_object_object_get_ex(spec, "devices", &devs)) {
		struct json_object *d = json_object_array_get_idx(devs, 0), *a, *m, *v;
		if (json_object_object_get_ex(d, "attributes", &a) &&
		    json_object_object_get_ex(a, "model", &m) &&
		    json_object_object_get_ex(m, "string", &v))
			snprintf(s->model, sizeof(s->model), "%s", json_object_get_string(v));
	}
	s->n++;
	return s->stop_at && s->n == s->stop_at ? -EINTR : 0;
}

static void check_stream(const struct seen *s)
{
	assert_int_equal(s->n, 5);
	assert_int_equal(s->types[0], KUBE_WATCH_ADDED);
	assert_int_equal(s->types[1], KUBE_WATCH_MODIFIED);
	assert_int_equal(s->types[2], KUBE_WATCH_BOOKMARK);
	assert_int_equal(s->types[3], KUBE_WATCH_DELETED);
	assert_int_equal(s->types[4], KUBE_WATCH_ERROR);
	assert_string_equal(s->rvs[0], "101");
	assert_string_equal(s->rvs[2], "150");
	assert_string_equal(s->rvs[4], "-");
	assert_int_equal(s->codes[4], 410);
	assert_string_equal(s->model, "H\xc3\xa9 \"x\" {}");
}

/* Every chunk size from 1 byte to the whole stream. */
static void test_every_chunk_size(void **state)
{
	(void)state;
	size_t len = strlen(STREAM);
	for (size_t chunk = 1; chunk <= len; chunk++) {
		struct kube_watch_parser *p;
		struct seen s = { 0 };
		assert_int_equal(kube_watch_parser_new(0, &p), 0);
		for (size_t off = 0; off < len; off += chunk) {
			size_t n = len - off < chunk ? len - off : chunk;
			assert_int_equal(kube_watch_parser_feed(p, STREAM + off, n, collect, &s), 0);
		}
		check_stream(&s);
		assert_true(kube_watch_parser_idle(p));
		assert_int_equal(kube_watch_parser_events(p), 5);
		kube_watch_parser_free(p);
	}
}

/* Random cut points, many rounds (deterministic seed). */
static void test_random_chunks(void **state)
{
	(void)state;
	size_t len = strlen(STREAM);
	srand(42);
	for (int round = 0; round < 2000; round++) {
		struct kube_watch_parser *p;
		struct seen s = { 0 };
		assert_int_equal(kube_watch_parser_new(0, &p), 0);
		size_t off = 0;
		while (off < len) {
			size_t n = 1 + (size_t)rand() % 40;
			if (n > len - off)
				n = len - off;
			assert_int_equal(kube_watch_parser_feed(p, STREAM + off, n, collect, &s), 0);
			off += n;
		}
		check_stream(&s);
		kube_watch_parser_free(p);
	}
}

static void test_partial_is_not_idle(void **state)
{
	(void)state;
	struct kube_watch_parser *p;
	struct seen s = { 0 };
	assert_int_equal(kube_watch_parser_new(0, &p), 0);
	assert_true(kube_watch_parser_idle(p));
	assert_int_equal(kube_watch_parser_feed(p, "  \n", 3, collect, &s), 0);
	assert_true(kube_watch_parser_idle(p));
	assert_int_equal(kube_watch_parser_feed(p, "{\"type\":\"ADD", 12, collect, &s), 0);
	assert_false(kube_watch_parser_idle(p));
	assert_int_equal(s.n, 0);
	kube_watch_parser_free(p);
}

static void test_malformed(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"{\"type\":\"ADDED\",\"object\":{}}}\n",	/* stray brace */
		"[1,2]\n",					/* not an object */
		"{\"type\":\"EXPLODED\",\"object\":{}}\n",	/* unknown type */
		"{\"type\":\"ADDED\"}\n",			/* no object */
		"{\"type\":\"ADDED\",\"object\":[]}\n",		/* object not an object */
		"{'type':'ADDED'}\n",				/* not strict JSON */
		"{\"type\":\"ADDED\",\"object\":{},}\n",	/* trailing comma */
		"{\"type\":\"ADDED\",\"object\":{}}{\"type\":\"ADDED\",\"object\":{}}\n",	/* two on a line */
		"garbage\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct kube_watch_parser *p;
		struct seen s = { 0 };
		assert_int_equal(kube_watch_parser_new(0, &p), 0);
		assert_int_equal(kube_watch_parser_feed(p, bad[i], strlen(bad[i]), collect, &s), -EBADMSG);
		/* broken until reset */
		assert_int_equal(kube_watch_parser_feed(p, "\n", 1, collect, &s), -EBADMSG);
		kube_watch_parser_reset(p);
		const char *good = "{\"type\":\"ADDED\",\"object\":{}}\n";
		assert_int_equal(kube_watch_parser_feed(p, good, strlen(good), collect, &s), 0);
		assert_int_equal(kube_watch_parser_events(p), 1);
		kube_watch_parser_free(p);
	}
}

static void test_size_cap(void **state)
{
	(void)state;
	struct kube_watch_parser *p;
	struct seen s = { 0 };
	assert_int_equal(kube_watch_parser_new(64, &p), 0);
	const char *small = "{\"type\":\"ADDED\",\"object\":{\"a\":1}}\n";
	assert_int_equal(kube_watch_parser_feed(p, small, strlen(small), collect, &s), 0);
	char big[200];
	snprintf(big, sizeof(big), "{\"type\":\"ADDED\",\"object\":{\"a\":\"%0120d\"}}\n", 0);
	int r = 0;
	for (size_t i = 0; i < strlen(big) && r == 0; i += 7)
		r = kube_watch_parser_feed(p, big + i, strlen(big) - i < 7 ? strlen(big) - i : 7, collect, &s);
	assert_int_equal(r, -E2BIG);
	assert_int_equal(s.n, 1);
	kube_watch_parser_free(p);
}

static void test_callback_stops(void **state)
{
	(void)state;
	struct kube_watch_parser *p;
	struct seen s = { .stop_at = 2 };
	assert_int_equal(kube_watch_parser_new(0, &p), 0);
	assert_int_equal(kube_watch_parser_feed(p, STREAM, strlen(STREAM), collect, &s), -EINTR);
	assert_int_equal(s.n, 2);
	kube_watch_parser_free(p);
}

static void test_type_names(void **state)
{
	(void)state;
	assert_int_equal(kube_watch_type_from_string("BOOKMARK"), KUBE_WATCH_BOOKMARK);
	assert_int_equal(kube_watch_type_from_string("added"), -EINVAL);
	assert_int_equal(kube_watch_type_from_string(NULL), -EINVAL);
	assert_string_equal(kube_watch_type_name(KUBE_WATCH_DELETED), "DELETED");
}

/* The end of a streaming list's initial events: a BOOKMARK with the
 * annotation "k8s.io/initial-events-end": "true", nothing else. */
static bool initial_end(const char *type, const char *object)
{
	char text[512];
	snprintf(text, sizeof(text), "{\"type\":\"%s\",\"object\":%s}", type, object);
	struct json_object *o = json_tokener_parse(text);
	assert_non_null(o);
	struct kube_watch_event ev = { .type = kube_watch_type_from_string(type),
				       .object = json_object_object_get(o, "object") };
	bool r = kube_watch_event_is_initial_end(&ev);
	json_object_put(o);
	return r;
}

static void test_initial_end(void **state)
{
	(void)state;
	static const char END[] =
		"{\"kind\":\"ResourceSlice\",\"metadata\":{\"resourceVersion\":\"150\","
		"\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}}}";
	assert_true(initial_end("BOOKMARK", END));
	/* the same object in another event type is no end */
	assert_false(initial_end("ADDED", END));
	assert_false(initial_end("MODIFIED", END));
	/* a plain bookmark, other annotations, other values */
	assert_false(initial_end("BOOKMARK", "{\"metadata\":{\"resourceVersion\":\"150\"}}"));
	assert_false(initial_end("BOOKMARK", "{\"metadata\":{\"annotations\":{\"a\":\"true\"}}}"));
	assert_false(initial_end("BOOKMARK", "{\"metadata\":{\"annotations\":"
					     "{\"k8s.io/initial-events-end\":\"false\"}}}"));
	assert_false(initial_end("BOOKMARK", "{\"metadata\":{\"annotations\":"
					     "{\"k8s.io/initial-events-end\":true}}}"));
	assert_false(initial_end("BOOKMARK", "{\"metadata\":{\"annotations\":null}}"));
	assert_false(initial_end("BOOKMARK", "{}"));
}

/* Events larger than the line buffer the parser keeps, in small chunks, one
 * after another and after a small one: each arrives whole (the buffer is
 * freed after a large event and grown again). */
static void test_large_events_in_chunks(void **state)
{
	(void)state;
	enum { BIG = 40 << 10 };
	char *fill = malloc(BIG + 1), *stream = malloc(3 * (BIG + 256));
	assert_non_null(fill);
	assert_non_null(stream);
	memset(fill, 'x', BIG);
	fill[BIG] = '\0';
	size_t len = 0;
	for (int i = 0; i < 3; i++)
		len += (size_t)sprintf(stream + len,
				       "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":"
				       "{\"name\":\"s\",\"resourceVersion\":\"%d\"},\"pad\":\"%s\"}}\n",
				       200 + i, i == 1 ? "small" : fill);
	struct kube_watch_parser *p;
	assert_int_equal(kube_watch_parser_new(0, &p), 0);
	struct seen s = { 0 };
	for (size_t off = 0; off < len; off += 4096) {
		size_t n = len - off < 4096 ? len - off : 4096;
		assert_int_equal(kube_watch_parser_feed(p, stream + off, n, collect, &s), 0);
	}
	assert_int_equal(s.n, 3);
	assert_string_equal(s.rvs[0], "200");
	assert_string_equal(s.rvs[1], "201");
	assert_string_equal(s.rvs[2], "202");
	assert_true(kube_watch_parser_idle(p));
	kube_watch_parser_free(p);
	free(fill);
	free(stream);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_chunk_size),
		cmocka_unit_test(test_random_chunks),
		cmocka_unit_test(test_partial_is_not_idle),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_size_cap),
		cmocka_unit_test(test_callback_stops),
		cmocka_unit_test(test_type_names),
		cmocka_unit_test(test_initial_end),
		cmocka_unit_test(test_large_events_in_chunks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
