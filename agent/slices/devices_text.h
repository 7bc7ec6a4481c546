/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A slice's devices apart from the rest of its text. The devices are the
 * bulk of a slice (128 of them); the rest is small. To change the rest
 * (pool, metadata) without a tree of every device, the rest is parsed with a
 * placeholder string where spec.devices was, changed, written, and the
 * devices' text put back in place of the placeholder. Pure.
 */
#ifndef DRALET_SLICES_DEVICES_TEXT_H
#define DRALET_SLICES_DEVICES_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "agent/slices/json_text.h"

/* A new json string that stands for spec.devices (put it). NULL: ENOMEM. */
struct json_object *slice_devices_placeholder(void);
bool slice_is_devices_placeholder(struct json_object *v);

/*
 * Takes the slice @text (@len bytes) apart: *ret_light is the slice parsed
 * with its spec.devices (a list) replaced by the placeholder (new; put it),
 * *ret_devices the list's span in @text. -ENOENT when @text has no
 * spec.devices list the parsed object would hold (parse it whole then),
 * -EINVAL when @text is not one JSON object, -ENOMEM.
 */
int slice_text_light(const char *text, size_t len, struct json_object **ret_light,
		     struct json_span *ret_devices);

/*
 * Writes @obj with json-c @flags, the placeholder in it replaced by the
 * list @devices (JSON text): re-laid out when @flags has
 * JSON_C_TO_STRING_PRETTY (the same text json-c would write for the tree),
 * else copied as is. *ret_text is new (free), NUL-terminated. -EINVAL when
 * @obj holds the placeholder not exactly once, -ENOMEM.
 */
int slice_text_join(struct json_object *obj, int flags, struct json_span devices, char **ret_text,
		    size_t *ret_len);

#endif
