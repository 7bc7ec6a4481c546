/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The watch-stream parser: the body of a Kubernetes watch (HTTP 200,
 * chunked) is a sequence of JSON objects {"type": ..., "object": {...}},
 * normally one per line. Sans-I/O: feed it bytes as they arrive, in chunks
 * of any size and split anywhere; it calls back once per complete event.
 * Built on json-c's incremental tokener (strict mode): events end with a
 * newline, as the apiserver writes them; one event may span several lines
 * (pretty-printed), two may not share one. Memory is bounded by the
 * per-event byte cap.
 */
#ifndef DRALET_KUBE_WATCH_H
#define DRALET_KUBE_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

enum kube_watch_type {
	KUBE_WATCH_ADDED,
	KUBE_WATCH_MODIFIED,
	KUBE_WATCH_DELETED,
	KUBE_WATCH_BOOKMARK,
	KUBE_WATCH_ERROR,	/* object is a Status; code 410 means "list again" */
};

struct kube_watch_event {
	enum kube_watch_type type;
	struct json_object *object;	/* borrowed, valid during the callback */
	const char *resource_version;	/* object's metadata.resourceVersion or NULL */
	int code;			/* ERROR: the Status code (0 when absent) */
};

/* Return 0 to go on, a negative errno to stop feeding (returned by feed). */
typedef int (*kube_watch_cb)(void *userdata, const struct kube_watch_event *ev);

struct kube_watch_parser;

#define KUBE_WATCH_DEFAULT_MAX_EVENT (16u << 20)

/* @max_event_bytes: cap on one event's size (0: 16 MiB). */
int kube_watch_parser_new(size_t max_event_bytes, struct kube_watch_parser **ret_parser);
void kube_watch_parser_free(struct kube_watch_parser *p);

/*
 * Parses @len bytes, calling @cb for every event completed by them. Returns
 * 0, -EBADMSG (not JSON, or not a watch event), -E2BIG (an event over the
 * cap) or the callback's error. After an error the parser must be reset
 * before it is fed again.
 */
int kube_watch_parser_feed(struct kube_watch_parser *p, const char *buf, size_t len,
			   kube_watch_cb cb, void *userdata);
void kube_watch_parser_reset(struct kube_watch_parser *p);
/* True when no partial event is buffered: the stream may end here. */
bool kube_watch_parser_idle(const struct kube_watch_parser *p);
/* Events delivered since creation or reset. */
size_t kube_watch_parser_events(const struct kube_watch_parser *p);

/*
 * True when @ev ends the initial events of a streaming list (a watch with
 * sendInitialEvents=true): a BOOKMARK whose object's metadata.annotations
 * carry "k8s.io/initial-events-end": "true" (k8s.io/apimachinery
 * pkg/apis/meta/v1/types.go, InitialEventsAnnotationKey). Its
 * resource_version is the revision of the state those events showed.
 */
bool kube_watch_event_is_initial_end(const struct kube_watch_event *ev);

/* "ADDED" ... "ERROR" -> type; -EINVAL for anything else. */
int kube_watch_type_from_string(const char *s);
const char *kube_watch_type_name(enum kube_watch_type type);

#endif
