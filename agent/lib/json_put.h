/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Building json-c objects with -errno returns: json_put() adds @v under @key
 * (taking it; NULL, an allocation that failed, is -ENOMEM), json_put_str()
 * a copy of @s. On failure nothing of @v is left behind.
 */
#ifndef DRALET_LIB_JSON_PUT_H
#define DRALET_LIB_JSON_PUT_H

#include <errno.h>
#include <json-c/json.h>

static inline int json_put(struct json_object *o, const char *key, struct json_object *v)
{
	if (!v)
		return -ENOMEM;
	if (json_object_object_add(o, key, v) < 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static inline int json_put_str(struct json_object *o, const char *key, const char *s)
{
	return json_put(o, key, json_object_new_string(s));
}

#endif
