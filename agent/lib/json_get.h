/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading members of json-c trees with a type check, in one step.
 *
 * Every getter takes any @o (NULL, a non-object: no members) and returns
 * the member @key borrowed from @o, or NULL when @o is not an object, has no
 * such member, or the member has another type (a JSON null included). Pure.
 *
 *   const char *uid = json_get_str_at(obj, JSON_PATH("metadata", "uid"));
 *   struct json_object *items = json_get_array(list, "items");
 */
#ifndef DRALET_LIB_JSON_GET_H
#define DRALET_LIB_JSON_GET_H

#include <json-c/json.h>

/* The member @key of any type but null. */
struct json_object *json_get(struct json_object *o, const char *key);
/* The member @key when it has @type. */
struct json_object *json_get_typed(struct json_object *o, const char *key, enum json_type type);
/* The string member @key (its text, borrowed). */
const char *json_get_str(struct json_object *o, const char *key);
struct json_object *json_get_array(struct json_object *o, const char *key);
struct json_object *json_get_object(struct json_object *o, const char *key);

/* A NULL-terminated list of member names, for the *_at getters. */
#define JSON_PATH(...) ((const char *const[]){ __VA_ARGS__, NULL })
/* The value at @path (every step but the last an object): o.a.b... */
struct json_object *json_get_at(struct json_object *o, const char *const *path);
/* The same when it is a string (its text, borrowed). */
const char *json_get_str_at(struct json_object *o, const char *const *path);

#endif
