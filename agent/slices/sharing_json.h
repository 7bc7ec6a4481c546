/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A capacity's requestPolicy (include/dralet/sharing.h) as resource.k8s.io/v1
 * JSON and back (pure): {"default": q, "validValues": [q...]} or
 * {"default": q, "validRange": {"min": q, "max": q, "step": q}}.
 */
#ifndef DRALET_SLICES_SHARING_JSON_H
#define DRALET_SLICES_SHARING_JSON_H

#include <json-c/json.h>
#include <dralet/sharing.h>

struct json_writer;

/* A new object for @p (NULL on ENOMEM). */
struct json_object *capacity_policy_json(const struct dralet_capacity_policy *p);

/* Writes @p as the value of the key just written. */
void capacity_policy_write(struct json_writer *w, const struct dralet_capacity_policy *p);

/*
 * Reads a requestPolicy object @o into *ret, its strings borrowed from @o
 * and its validValues put in @values (room for
 * DRALET_CAPACITY_VALID_VALUES_MAX). -EINVAL when @o is no such object or
 * has more values; the rules themselves are the SDK setter's to check.
 */
int capacity_policy_from_json(struct json_object *o, struct dralet_capacity_policy *ret,
			      const char **values);

#endif
