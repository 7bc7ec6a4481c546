/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kubernetes error bodies: the metav1 Status object ({"kind": "Status",
 * "reason": ..., "message": ..., "code": ..., "details": {"causes": [...]}}).
 * Pure helpers that turn one into words for a log line.
 */
#ifndef DRALET_KUBE_STATUS_H
#define DRALET_KUBE_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

/*
 * Writes "reason: message" and, for 422, every cause as
 * "; field: message" into @buf (always NUL-terminated, truncated to
 * @size). A body that is not a Status is quoted, shortened to 200 bytes.
 */
void kube_status_describe(const char *body, size_t len, char *buf, size_t size);

/* True when @body is a NotFound Status about the object named @name (as
 * opposed to a path the server does not serve at all). */
bool kube_status_is_object_not_found(const char *body, size_t len, const char *name);

/* Parses @body as one JSON object; NULL when it is not one. */
struct json_object *kube_json_parse(const char *body, size_t len);

#endif
