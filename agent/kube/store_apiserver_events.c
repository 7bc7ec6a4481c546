/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The apiserver store's Events (store.h record_event). The recorder
 * (event_recorder.h) decides; what it hands out waits in a queue of at most
 * EVENT_QUEUE_MAX requests and goes one at a time:
 *
 *   new     POST  /api/v1/namespaces/<ns>/events           the Event
 *   repeat  PATCH /api/v1/namespaces/<ns>/events/<name>    a JSON merge patch
 *                                                          {count, lastTimestamp, message}
 *
 * as client-go's recorder sends them (tools/record/event.go, recordToSink:
 * create, or patch for a repeat; a patch of an Event that is gone, 404,
 * becomes a create of the whole Event). RBAC: create and patch on core
 * "events" (deploy/rbac.yaml). Connection errors, 5xx and 429 are retried by
 * the client; a failure is logged and the next one goes. The caller never
 * waits: record_event only queues (a kubelet call that fails a prepare
 * answers at once); a full queue drops the Event, counted in the store's
 * stats and logged (the first drop, then every 100th).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/kube/event_recorder.h"
#include "agent/kube/store_apiserver_internal.h"
#include "agent/lib/err_msg.h"
#include "agent/lib/log.h"

#define EVENT_RETRIES 4

struct event_send {
	struct event_send *next;
	char *path, *body;	/* POST path or PATCH path, and its body */
	char *create_path, *create_body;	/* a PATCH's fallback: the whole Event */
	char *what;		/* "<reason> about <kind> <name>", for the log */
};

static void send_free(struct event_send *e)
{
	if (!e)
		return;
	free(e->path);
	free(e->body);
	free(e->create_path);
	free(e->create_body);
	free(e->what);
	free(e);
}

static void send_next(struct store_api *s);

static void event_done(void *ud, const struct kube_response *resp)
{
	struct store_api *s = ud;
	struct event_send *e = s->events.in_flight;
	struct err_msg why;

	s->events.req = NULL;
	s->events.in_flight = NULL;
	if (resp->status == 200 || resp->status == 201) {
		s->stats.events_sent++;
		log_debug("apiserver: recorded the Event %s", e->what);
	} else if (resp->status == 404 && e->create_path) {
		/* the Event the repeat counts is gone (expired): make it again */
		free(e->path);
		free(e->body);
		e->path = e->create_path;
		e->body = e->create_body;
		e->create_path = e->create_body = NULL;
		e->next = s->events.head;
		s->events.head = e;
		if (!s->events.tail)
			s->events.tail = e;
		s->events.n++;
		e = NULL;
	} else {
		api_describe_failure(resp, &why);
		log_error("apiserver: cannot record the Event %s: %s%s", e->what, why.text,
			  resp->status == 403 ? " (grant create and patch on events: deploy/rbac.yaml)"
					      : "");
	}
	send_free(e);
	send_next(s);
}

static void send_next(struct store_api *s)
{
	struct event_send *e;
	int r;

	while (!s->events.in_flight && (e = s->events.head)) {
		struct kube_request_opts o = {
			.method = e->create_path ? "PATCH" : "POST",
			.path = e->path,
			.body = e->body,
			.merge_patch = e->create_path != NULL,
			.timeout_ms = REQUEST_TIMEOUT_MS,
			.retries = EVENT_RETRIES,
		};
		s->events.head = e->next;
		if (!s->events.head)
			s->events.tail = NULL;
		s->events.n--;
		s->events.in_flight = e;
		log_debug("apiserver: %s %s", o.method, o.path);
		r = kube_request_start(s->client, &o, event_done, s, &s->events.req);
		if (r < 0) {
			log_error("apiserver: cannot record the Event %s: %s", e->what, strerror(-r));
			s->events.in_flight = NULL;
			send_free(e);
		}
	}
}

/* The request for the recorder's decision @ev (@patch: a repeat). */
static struct event_send *send_new(const struct kube_event *ev, bool patch)
{
	struct event_send *e = calloc(1, sizeof(*e));
	struct json_object *full = kube_event_object(ev), *delta = patch ? kube_event_patch(ev) : NULL;
	char *ns = kube_escape(kube_event_namespace(&ev->obj)), *name = kube_escape(ev->name);
	bool ok = e && full && (!patch || delta) && ns && name &&
		  asprintf(&e->create_path, "/api/v1/namespaces/%s/events", ns) >= 0 &&
		  (e->create_body = strdup(json_object_to_json_string_ext(
			   full, JSON_C_TO_STRING_PLAIN))) &&
		  asprintf(&e->what, "%s about %s %s", ev->reason, ev->obj.kind, ev->obj.name) >= 0;

	if (ok && patch)
		ok = asprintf(&e->path, "/api/v1/namespaces/%s/events/%s", ns, name) >= 0 &&
		     (e->body = strdup(json_object_to_json_string_ext(delta,
								      JSON_C_TO_STRING_PLAIN)));
	if (ok && !patch) {
		e->path = e->create_path;
		e->body = e->create_body;
		e->create_path = e->create_body = NULL;
	}
	json_object_put(full);
	json_object_put(delta);
	free(ns);
	free(name);
	if (!ok) {
		send_free(e);
		return NULL;
	}
	return e;
}

void api_record_event(struct store *st, const struct kube_object_ref *obj, const char *type,
		      const char *reason, const char *message)
{
	struct store_api *s = to_api(st);
	struct kube_object_ref node = kube_node_ref(s->node_name);
	struct event_send *e = NULL;
	struct kube_event ev;
	struct timespec ts;
	int r;

	if (s->destroying)
		return;
	if (!obj)
		obj = &node;
	clock_gettime(CLOCK_REALTIME, &ts);
	r = event_recorder_observe(s->events.recorder, obj, type, reason, message,
				   (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec, &ev);
	if (r == EVENT_SKIP) {
		s->stats.events_skipped++;
		log_debug("apiserver: Event %s about %s %s rate-limited", reason, obj->kind,
			  obj->name);
		return;
	}
	if (r >= 0 && s->events.n >= EVENT_QUEUE_MAX) {
		if (s->stats.events_dropped++ % 100 == 0)
			log_warn("apiserver: %zu Events wait to be sent; dropping the Event %s about "
				 "%s %s (%llu dropped so far)", s->events.n, reason, obj->kind,
				 obj->name, (unsigned long long)s->stats.events_dropped);
		return;
	}
	if (r < 0 || !(e = send_new(&ev, r == EVENT_PATCH))) {
		log_error("apiserver: cannot record the Event %s about %s %s: %s", reason,
			  obj->kind, obj->name, strerror(r < 0 ? -r : ENOMEM));
		return;
	}
	if (s->events.tail)
		s->events.tail->next = e;
	else
		s->events.head = e;
	s->events.tail = e;
	s->events.n++;
	send_next(s);
}

int api_events_init(struct store_api *s)
{
	return event_recorder_new(s->node_name, &s->events.recorder);
}

void api_events_free(struct store_api *s)
{
	struct event_send *e;

	while ((e = s->events.head)) {
		s->events.head = e->next;
		send_free(e);
	}
	send_free(s->events.in_flight);
	s->events.in_flight = NULL;
	s->events.tail = NULL;
	s->events.n = 0;
	event_recorder_free(s->events.recorder);
	s->events.recorder = NULL;
}
