/* SPDX-License-Identifier: Apache-2.0 */
#include <json-c/json.h>
#include <string.h>

#include "agent/slices/json_tree.h"

struct json_object *json_tree_parse(const char *text, size_t len, bool *ret_ok)
{
	struct json_tokener *tok = json_tokener_new();
	*ret_ok = false;
	if (!tok)
		return NULL;
	struct json_object *obj = json_tokener_parse_ex(tok, text, (int)len);
	if (!obj && json_tokener_get_error(tok) == json_tokener_continue)
		obj = json_tokener_parse_ex(tok, "", 1);
	*ret_ok = json_tokener_get_error(tok) == json_tokener_success;
	json_tokener_free(tok);
	return obj;
}

struct json_object *json_tree_parse_object(const char *text, size_t len)
{
	bool ok;
	if (!text || len == 0 || len > (1u << 30))
		return NULL;
	struct json_object *obj = json_tree_parse(text, len, &ok);
	if (obj && (!ok || !json_object_is_type(obj, json_type_object))) {
		json_object_put(obj);
		obj = NULL;
	}
	return obj;
}

struct json_object *json_tree_shallow_copy(struct json_object *src, const char *const *skip)
{
	struct json_object *o = json_object_new_object();
	if (!o || !src || !json_object_is_type(src, json_type_object))
		return o;
	json_object_object_foreach(src, key, val) {
		bool skipped = false;
		for (size_t i = 0; skip && skip[i]; i++)
			skipped |= !strcmp(key, skip[i]);
		if (skipped)
			continue;
		struct json_object *ref = json_object_get(val);
		if (json_object_object_add(o, key, ref) < 0) {
			json_object_put(ref);
			json_object_put(o);
			return NULL;
		}
	}
	return o;
}

void json_tree_set_node_owner(struct json_object *slice, const char *node, const char *uid)
{
	struct json_object *meta = NULL, *refs, *ref;
	if (!uid || !json_object_object_get_ex(slice, "metadata", &meta) ||
	    !json_object_is_type(meta, json_type_object) ||
	    json_object_object_get_ex(meta, "ownerReferences", NULL))
		return;
	refs = json_object_new_array();
	ref = json_object_new_object();
	json_object_object_add(ref, "apiVersion", json_object_new_string("v1"));
	json_object_object_add(ref, "kind", json_object_new_string("Node"));
	json_object_object_add(ref, "name", json_object_new_string(node));
	json_object_object_add(ref, "uid", json_object_new_string(uid));
	json_object_object_add(ref, "controller", json_object_new_boolean(1));
	json_object_array_add(refs, ref);
	json_object_object_add(meta, "ownerReferences", refs);
}
