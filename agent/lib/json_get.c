/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/lib/json_get.h"

struct json_object *json_get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;
	if (!o || !key || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

struct json_object *json_get_typed(struct json_object *o, const char *key, enum json_type type)
{
	struct json_object *v = json_get(o, key);
	return v && json_object_is_type(v, type) ? v : NULL;
}

const char *json_get_str(struct json_object *o, const char *key)
{
	struct json_object *v = json_get_typed(o, key, json_type_string);
	return v ? json_object_get_string(v) : NULL;
}

struct json_object *json_get_array(struct json_object *o, const char *key)
{
	return json_get_typed(o, key, json_type_array);
}

struct json_object *json_get_object(struct json_object *o, const char *key)
{
	return json_get_typed(o, key, json_type_object);
}

struct json_object *json_get_at(struct json_object *o, const char *const *path)
{
	for (; o && *path; path++)
		o = json_get(o, *path);
	return o;
}

const char *json_get_str_at(struct json_object *o, const char *const *path)
{
	struct json_object *v = json_get_at(o, path);
	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}
