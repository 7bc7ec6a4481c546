/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The core/v1 Events the agent records (pure: no I/O, the time is an
 * argument). Made the way client-go's recorder makes one
 * (k8s.io/client-go tools/record/event.go, makeEvent/generateEvent):
 *
 *   metadata.name        given: "<object name>.<nanoseconds since the epoch, hex>"
 *                        (kube_event_name_for) for a new one, the first
 *                        one's name for a repeat (event_recorder.h)
 *   metadata.namespace   the object's namespace, "default" for an object
 *                        without one (a Node)
 *   involvedObject       the object: {apiVersion, kind, [namespace], name, uid};
 *                        the agent's Node is {v1, Node, <node>, uid <node>},
 *                        the node reference the kubelet uses
 *                        (pkg/kubelet/kubelet.go, nodeRef): the uid is the
 *                        node's name, which `kubectl describe node` searches for
 *   type, reason         "Warning" or "Normal"; one UpperCamelCase word
 *   message              cut to KUBE_EVENT_MESSAGE_MAX bytes at a character boundary
 *   first/lastTimestamp  RFC 3339, seconds; count
 *   source               {component "dralet", host <node>}
 *   reportingComponent "dralet", reportingInstance <node>
 */
#ifndef DRALET_KUBE_EVENT_H
#define DRALET_KUBE_EVENT_H

#include <stdint.h>
#include <json-c/json.h>

#define KUBE_EVENT_NAMESPACE "default"
#define KUBE_EVENT_COMPONENT "dralet"
#define KUBE_EVENT_MESSAGE_MAX 1024	/* the apiserver's limit for an Event's note */
#define KUBE_EVENT_NAME_MAX 320

/* What an Event is about (strings borrowed). namespace_ NULL or "": a
 * cluster-scoped object. */
struct kube_object_ref {
	const char *api_version, *kind, *namespace_, *name, *uid;
};

/* The reference to the agent's own Node @node (kubelet's nodeRef). */
struct kube_object_ref kube_node_ref(const char *node);

/* One Event as it is sent. */
struct kube_event {
	const char *node;		/* source.host, reportingInstance */
	struct kube_object_ref obj;
	const char *name;		/* metadata.name */
	const char *type, *reason, *message;
	int count;
	int64_t first_ns, last_ns;	/* nanoseconds since the epoch */
};

/* The namespace an Event about @obj lives in. */
const char *kube_event_namespace(const struct kube_object_ref *obj);

/* "<obj name>.<now_ns, hex>" into @buf. 0, or -ENAMETOOLONG / -EINVAL. */
int kube_event_name_for(const struct kube_object_ref *obj, int64_t now_ns, char *buf,
			size_t size);

/* The Event object (caller owns: json_object_put), or NULL (ENOMEM, or a
 * missing field). */
struct json_object *kube_event_object(const struct kube_event *ev);

/* The JSON merge patch (RFC 7386) that makes the stored Event @ev's repeat:
 * {"count", "lastTimestamp", "message"} (caller owns), or NULL. */
struct json_object *kube_event_patch(const struct kube_event *ev);

#endif
