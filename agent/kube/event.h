/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The core/v1 Event the agent records about its own Node (pure: no I/O, the
 * time is an argument). Made the way client-go's recorder makes one
 * (k8s.io/client-go tools/record/event.go, makeEvent/generateEvent) with the
 * node reference the kubelet uses (pkg/kubelet/kubelet.go, nodeRef):
 *
 *   metadata.name        "<node>.<nanoseconds since the epoch, hex>"
 *   metadata.namespace   "default" (a Node has no namespace)
 *   involvedObject       {apiVersion v1, kind Node, name <node>, uid <node>}:
 *                        the uid is the node's name, which is what
 *                        `kubectl describe node` searches for
 *   type, reason         @type ("Warning" or "Normal"), @reason
 *   message              @message, cut to KUBE_EVENT_MESSAGE_MAX bytes at a
 *                        character boundary
 *   first/lastTimestamp  @now (RFC 3339, seconds), count 1
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

/* @now_ns: nanoseconds since the epoch. Returns the Event (json_object_put)
 * or NULL (ENOMEM, or a NULL argument). */
struct json_object *kube_node_event(const char *node, const char *type, const char *reason,
				    const char *message, int64_t now_ns);

/* metadata.name of an Event made by kube_node_event (borrowed from it). */
const char *kube_event_name(struct json_object *event);

#endif
