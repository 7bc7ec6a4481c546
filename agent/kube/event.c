/* SPDX-License-Identifier: Apache-2.0 */
/* core/v1 Events (see event.h). */
#include "agent/kube/event.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

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

static void stamp(int64_t ns, char buf[32])
{
	time_t secs = (time_t)(ns / 1000000000);
	struct tm tm;

	gmtime_r(&secs, &tm);
	strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

struct kube_object_ref kube_node_ref(const char *node)
{
	return (struct kube_object_ref){ .api_version = "v1", .kind = "Node", .name = node,
					 .uid = node };
}

const char *kube_event_namespace(const struct kube_object_ref *obj)
{
	return obj->namespace_ && *obj->namespace_ ? obj->namespace_ : KUBE_EVENT_NAMESPACE;
}

int kube_event_name_for(const struct kube_object_ref *obj, int64_t now_ns, char *buf,
			size_t size)
{
	int n;

	if (!obj->name || !*obj->name)
		return -EINVAL;
	n = snprintf(buf, size, "%s.%llx", obj->name, (unsigned long long)now_ns);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

struct json_object *kube_event_object(const struct kube_event *ev)
{
	struct json_object *o, *meta, *ref, *src;
	const struct kube_object_ref *obj = &ev->obj;
	char first[32], last[32];

	if (!ev->node || !ev->name || !ev->type || !ev->reason || !ev->message ||
	    !obj->api_version || !obj->kind || !obj->name)
		return NULL;
	stamp(ev->first_ns, first);
	stamp(ev->last_ns, last);
	o = json_object_new_object();
	meta = json_object_new_object();
	ref = json_object_new_object();
	src = json_object_new_object();
	if (!o || !meta || !ref || !src) {
		json_object_put(o);
		json_object_put(meta);
		json_object_put(ref);
		json_object_put(src);
		return NULL;
	}
	add_str(o, "apiVersion", "v1");
	add_str(o, "kind", "Event");
	add_str(meta, "name", ev->name);
	add_str(meta, "namespace", kube_event_namespace(obj));
	json_object_object_add(o, "metadata", meta);
	add_str(ref, "apiVersion", obj->api_version);
	add_str(ref, "kind", obj->kind);
	if (obj->namespace_ && *obj->namespace_)
		add_str(ref, "namespace", obj->namespace_);
	add_str(ref, "name", obj->name);
	if (obj->uid && *obj->uid)
		add_str(ref, "uid", obj->uid);
	json_object_object_add(o, "involvedObject", ref);
	add_str(o, "type", ev->type);
	add_str(o, "reason", ev->reason);
	json_object_object_add(o, "message", message_text(ev->message));
	add_str(o, "firstTimestamp", first);
	add_str(o, "lastTimestamp", last);
	json_object_object_add(o, "count", json_object_new_int(ev->count));
	add_str(src, "component", KUBE_EVENT_COMPONENT);
	add_str(src, "host", ev->node);
	json_object_object_add(o, "source", src);
	add_str(o, "reportingComponent", KUBE_EVENT_COMPONENT);
	add_str(o, "reportingInstance", ev->node);
	return o;
}

struct json_object *kube_event_patch(const struct kube_event *ev)
{
	struct json_object *o;
	char last[32];

	if (!ev->message || !(o = json_object_new_object()))
		return NULL;
	stamp(ev->last_ns, last);
	json_object_object_add(o, "count", json_object_new_int(ev->count));
	add_str(o, "lastTimestamp", last);
	json_object_object_add(o, "message", message_text(ev->message));
	return o;
}
