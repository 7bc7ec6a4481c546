/* SPDX-License-Identifier: Apache-2.0 */
/* The Event about the agent's Node (see event.h). */
#include "agent/kube/event.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "agent/lib/json_get.h"

static void add_str(struct json_object *o, const char *key, const char *value)
{
	json_object_object_add(o, key, json_object_new_string(value));
}

/* @message without a UTF-8 sequence cut in half when it is too long. */
static struct json_object *message_text(const char *message)
{
	size_t len = strlen(message);

	if (len <= KUBE_EVENT_MESSAGE_MAX)
		return json_object_new_string(message);
	len = KUBE_EVENT_MESSAGE_MAX;
	while (len > 0 && ((unsigned char)message[len] & 0xc0) == 0x80)
		len--;
	return json_object_new_string_len(message, (int)len);
}

struct json_object *kube_node_event(const char *node, const char *type, const char *reason,
				    const char *message, int64_t now_ns)
{
	struct json_object *ev, *meta, *ref, *src;
	char name[320], stamp[32];
	time_t secs = (time_t)(now_ns / 1000000000);
	struct tm tm;

	if (!node || !type || !reason || !message ||
	    snprintf(name, sizeof(name), "%s.%llx", node, (unsigned long long)now_ns) >=
		    (int)sizeof(name))
		return NULL;
	gmtime_r(&secs, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	ev = json_object_new_object();
	meta = json_object_new_object();
	ref = json_object_new_object();
	src = json_object_new_object();
	if (!ev || !meta || !ref || !src) {
		json_object_put(ev);
		json_object_put(meta);
		json_object_put(ref);
		json_object_put(src);
		return NULL;
	}
	add_str(ev, "apiVersion", "v1");
	add_str(ev, "kind", "Event");
	add_str(meta, "name", name);
	add_str(meta, "namespace", KUBE_EVENT_NAMESPACE);
	json_object_object_add(ev, "metadata", meta);
	add_str(ref, "apiVersion", "v1");
	add_str(ref, "kind", "Node");
	add_str(ref, "name", node);
	add_str(ref, "uid", node);
	json_object_object_add(ev, "involvedObject", ref);
	add_str(ev, "type", type);
	add_str(ev, "reason", reason);
	json_object_object_add(ev, "message", message_text(message));
	add_str(ev, "firstTimestamp", stamp);
	add_str(ev, "lastTimestamp", stamp);
	json_object_object_add(ev, "count", json_object_new_int(1));
	add_str(src, "component", KUBE_EVENT_COMPONENT);
	add_str(src, "host", node);
	json_object_object_add(ev, "source", src);
	add_str(ev, "reportingComponent", KUBE_EVENT_COMPONENT);
	add_str(ev, "reportingInstance", node);
	return ev;
}

const char *kube_event_name(struct json_object *event)
{
	return json_get_str_at(event, JSON_PATH("metadata", "name"));
}
