/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Event recorder (agent/kube/event_recorder.h) and the Event objects
 * (agent/kube/event.h): client-go's EventCorrelator decisions with its
 * defaults — repeats counted as PATCHes of one Event, a token bucket of 25
 * per object and reason refilled one per 5 minutes, 10 distinct messages in
 * 10 minutes combined into one Event, least recently used keys forgotten —
 * and the Event and patch JSON.
 */
#include <stdarg.h>
#include <errno.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "agent/kube/event_recorder.h"

#define S 1000000000LL
#define T0 (1764664200LL * S)

static const struct kube_object_ref claim = {
	.api_version = "resource.k8s.io/v1", .kind = "ResourceClaim", .namespace_ = "ns",
	.name = "a", .uid = "u-1",
};

static int observe(struct event_recorder *r, const struct kube_object_ref *obj,
		   const char *reason, const char *message, int64_t now, struct kube_event *ev)
{
	return event_recorder_observe(r, obj, "Warning", reason, message, now, ev);
}

static void test_repeats_are_counted(void **state)
{
	(void)state;
	struct event_recorder *r;
	struct kube_event ev;
	char name[KUBE_EVENT_NAME_MAX];

	assert_int_equal(event_recorder_new("node-1", &r), 0);
	assert_int_equal(observe(r, &claim, "PrepareFailed", "m", T0, &ev), EVENT_CREATE);
	snprintf(name, sizeof(name), "a.%llx", (unsigned long long)T0);
	assert_string_equal(ev.name, name);
	assert_int_equal(ev.count, 1);
	assert_string_equal(ev.node, "node-1");
	assert_int_equal(observe(r, &claim, "PrepareFailed", "m", T0 + 5 * S, &ev), EVENT_PATCH);
	assert_string_equal(ev.name, name);
	assert_int_equal(ev.count, 2);
	assert_true(ev.first_ns == T0 && ev.last_ns == T0 + 5 * S);
	/* another message: another Event, with a distinct name at the same time */
	assert_int_equal(observe(r, &claim, "PrepareFailed", "other", T0 + 5 * S, &ev),
			 EVENT_CREATE);
	assert_string_not_equal(ev.name, name);
	assert_int_equal(ev.count, 1);
	assert_int_equal(observe(r, &claim, "PrepareFailed", "third", T0 + 5 * S, &ev),
			 EVENT_CREATE);
	assert_int_equal(event_recorder_observe(r, &claim, "Warning", "R", NULL, T0, &ev), -EINVAL);
	event_recorder_free(r);
}

static void test_spam_filter(void **state)
{
	(void)state;
	struct event_recorder *r;
	struct kube_event ev;
	int n_sent = 0;

	assert_int_equal(event_recorder_new("node-1", &r), 0);
	for (int i = 0; i < 40; i++)
		n_sent += observe(r, &claim, "PrepareFailed", "m", T0 + i, &ev) != EVENT_SKIP;
	assert_int_equal(n_sent, EVENT_SPAM_BURST);
	/* another reason about the same object has its own bucket */
	assert_int_equal(observe(r, &claim, "Other", "m", T0 + 50, &ev), EVENT_CREATE);
	/* 299 s later still no token; at 300 s one, carrying every occurrence */
	assert_int_equal(observe(r, &claim, "PrepareFailed", "m", T0 + 299 * S, &ev), EVENT_SKIP);
	assert_int_equal(observe(r, &claim, "PrepareFailed", "m", T0 + 301 * S, &ev), EVENT_PATCH);
	assert_int_equal(ev.count, 42);
	assert_int_equal(observe(r, &claim, "PrepareFailed", "m", T0 + 302 * S, &ev), EVENT_SKIP);
	/* a long quiet time refills to the burst, no more */
	n_sent = 0;
	for (int i = 0; i < 40; i++)
		n_sent += observe(r, &claim, "PrepareFailed", "m", T0 + 100000 * S + i, &ev) !=
			  EVENT_SKIP;
	assert_int_equal(n_sent, EVENT_SPAM_BURST);
	event_recorder_free(r);
}

static void test_aggregation(void **state)
{
	(void)state;
	struct event_recorder *r;
	struct kube_event ev;
	char msg[32], combined[KUBE_EVENT_NAME_MAX];
	struct kube_object_ref node = kube_node_ref("node-1");

	assert_int_equal(event_recorder_new("node-1", &r), 0);
	for (int i = 0; i < EVENT_AGGREGATE_MAX - 1; i++) {
		snprintf(msg, sizeof(msg), "device %d is unhealthy", i);
		assert_int_equal(observe(r, &node, "DeviceUnhealthy", msg, T0 + i * S, &ev),
				 EVENT_CREATE);
		assert_string_equal(ev.message, msg);
	}
	/* the 10th distinct message in 10 minutes: the combined Event */
	assert_int_equal(observe(r, &node, "DeviceUnhealthy", "device 9 is unhealthy",
				 T0 + 10 * S, &ev), EVENT_CREATE);
	assert_string_equal(ev.message, EVENT_COMBINED_PREFIX "device 9 is unhealthy");
	snprintf(combined, sizeof(combined), "%s", ev.name);
	assert_int_equal(observe(r, &node, "DeviceUnhealthy", "device 10 is unhealthy",
				 T0 + 11 * S, &ev), EVENT_PATCH);
	assert_string_equal(ev.name, combined);
	assert_int_equal(ev.count, 2);
	assert_string_equal(ev.message, EVENT_COMBINED_PREFIX "device 10 is unhealthy");
	/* a message seen before is not new: not combined */
	assert_int_equal(observe(r, &node, "DeviceUnhealthy", "device 0 is unhealthy",
				 T0 + 12 * S, &ev), EVENT_PATCH);
	assert_string_equal(ev.message, "device 0 is unhealthy");
	assert_int_equal(ev.count, 2);
	/* more than 10 minutes after the last one: a fresh window */
	assert_int_equal(observe(r, &node, "DeviceUnhealthy", "device 11 is unhealthy",
				 T0 + 12 * S + EVENT_AGGREGATE_WINDOW_S * S + S, &ev),
			 EVENT_CREATE);
	assert_string_equal(ev.message, "device 11 is unhealthy");
	event_recorder_free(r);
}

static void test_least_recently_used_forgotten(void **state)
{
	(void)state;
	struct event_recorder *r;
	struct kube_event ev;
	struct kube_object_ref obj = claim;
	char name[32], first[KUBE_EVENT_NAME_MAX];

	assert_int_equal(event_recorder_new("node-1", &r), 0);
	assert_int_equal(observe(r, &claim, "PrepareFailed", "m", T0, &ev), EVENT_CREATE);
	snprintf(first, sizeof(first), "%s", ev.name);
	for (int i = 0; i < EVENT_CACHE_MAX; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		obj.name = name;
		assert_int_equal(observe(r, &obj, "PrepareFailed", "m", T0 + S + i, &ev),
				 EVENT_CREATE);
	}
	/* the first key went: its repeat is a new Event */
	assert_int_equal(observe(r, &claim, "PrepareFailed", "m", T0 + 2 * S, &ev), EVENT_CREATE);
	assert_string_not_equal(ev.name, first);
	assert_int_equal(ev.count, 1);
	event_recorder_free(r);
}

static const char *str(struct json_object *o, const char *a, const char *b)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, a, &v) || (b && !json_object_object_get_ex(v, b, &v)))
		return NULL;
	return json_object_get_string(v);
}

static void test_event_objects(void **state)
{
	(void)state;
	struct kube_event ev = { .node = "node-1", .obj = claim, .name = "a.1", .type = "Warning",
				 .reason = "PrepareFailed", .message = "m", .count = 3,
				 .first_ns = T0, .last_ns = T0 + 61 * S };
	struct json_object *o = kube_event_object(&ev), *ref;

	assert_non_null(o);
	assert_string_equal(str(o, "metadata", "namespace"), "ns");
	assert_string_equal(str(o, "metadata", "name"), "a.1");
	assert_true(json_object_object_get_ex(o, "involvedObject", &ref));
	assert_int_equal(json_object_object_length(ref), 5);
	assert_string_equal(str(ref, "apiVersion", NULL), "resource.k8s.io/v1");
	assert_string_equal(str(ref, "kind", NULL), "ResourceClaim");
	assert_string_equal(str(ref, "namespace", NULL), "ns");
	assert_string_equal(str(ref, "name", NULL), "a");
	assert_string_equal(str(ref, "uid", NULL), "u-1");
	assert_string_equal(str(o, "firstTimestamp", NULL), "2025-12-02T08:30:00Z");
	assert_string_equal(str(o, "lastTimestamp", NULL), "2025-12-02T08:31:01Z");
	assert_int_equal(json_object_get_int(json_object_object_get(o, "count")), 3);
	assert_string_equal(str(o, "source", "host"), "node-1");
	assert_string_equal(str(o, "reportingComponent", NULL), "dralet");
	json_object_put(o);

	o = kube_event_patch(&ev);
	assert_int_equal(json_object_object_length(o), 3);
	assert_int_equal(json_object_get_int(json_object_object_get(o, "count")), 3);
	assert_string_equal(str(o, "lastTimestamp", NULL), "2025-12-02T08:31:01Z");
	assert_string_equal(str(o, "message", NULL), "m");
	json_object_put(o);

	/* the Node: namespace "default", no namespace in the reference */
	ev.obj = kube_node_ref("node-1");
	o = kube_event_object(&ev);
	assert_string_equal(str(o, "metadata", "namespace"), "default");
	assert_null(str(o, "involvedObject", "namespace"));
	assert_string_equal(str(o, "involvedObject", "uid"), "node-1");
	json_object_put(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_repeats_are_counted),
		cmocka_unit_test(test_spam_filter),
		cmocka_unit_test(test_aggregation),
		cmocka_unit_test(test_least_recently_used_forgotten),
		cmocka_unit_test(test_event_objects),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
