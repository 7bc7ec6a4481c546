/* SPDX-License-Identifier: Apache-2.0 */
#include "opaque.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int opaque_parse(const char *text, const char *api_version, const char *const *kinds,
		 struct json_object **ret_obj, const char **ret_kind, char *err, size_t errlen)
{
	struct json_tokener *tok;
	struct json_object *obj, *v;
	const char *api, *kind;
	size_t len;

	if (!text) {
		snprintf(err, errlen, "no configuration");
		return -EINVAL;
	}
	len = strlen(text);
	tok = json_tokener_new();
	if (!tok)
		return -ENOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	/* the terminating NUL tells the tokener where a top-level literal ends */
	obj = json_tokener_parse_ex(tok, text, (int)len + 1);
	if (!obj && json_tokener_get_error(tok) == json_tokener_success) {
		snprintf(err, errlen, "must be a JSON object, not null");
		json_tokener_free(tok);
		return -EINVAL;
	}
	if (!obj || json_tokener_get_error(tok) != json_tokener_success) {
		snprintf(err, errlen, "not valid JSON: %s",
			 json_tokener_error_desc(json_tokener_get_error(tok)));
		json_object_put(obj);
		json_tokener_free(tok);
		return -EINVAL;
	}
	/* only whitespace may follow the object */
	for (size_t i = json_tokener_get_parse_end(tok); i < len; i++)
		if (!strchr(" \t\r\n", text[i])) {
			snprintf(err, errlen, "not valid JSON: text after the object");
			json_object_put(obj);
			json_tokener_free(tok);
			return -EINVAL;
		}
	json_tokener_free(tok);
	if (!json_object_is_type(obj, json_type_object)) {
		snprintf(err, errlen, "must be a JSON object");
		goto fail;
	}
	if (!json_object_object_get_ex(obj, "apiVersion", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		snprintf(err, errlen, "apiVersion is missing (want \"%s\")", api_version);
		goto fail;
	}
	api = json_object_get_string(v);
	if (strcmp(api, api_version)) {
		snprintf(err, errlen, "apiVersion \"%.64s\" is not supported (want \"%s\")", api,
			 api_version);
		goto fail;
	}
	if (!json_object_object_get_ex(obj, "kind", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		snprintf(err, errlen, "kind is missing (want \"%s\")", kinds[0]);
		goto fail;
	}
	kind = json_object_get_string(v);
	for (size_t i = 0; kinds[i]; i++)
		if (!strcmp(kind, kinds[i])) {
			*ret_obj = obj;
			*ret_kind = kinds[i];
			return 0;
		}
	snprintf(err, errlen, "kind \"%.64s\" is not known for %s (want \"%s\")", kind,
		 api_version, kinds[0]);
fail:
	json_object_put(obj);
	return -EINVAL;
}

bool opaque_header_key(const char *key)
{
	return !strcmp(key, "apiVersion") || !strcmp(key, "kind");
}

int opaque_string(const char *kind, const char *key, struct json_object *v, char *buf,
		  size_t size, char *err, size_t errlen)
{
	const char *s;

	if (!json_object_is_type(v, json_type_string)) {
		snprintf(err, errlen, "%s.%s must be a string", kind, key);
		return -EINVAL;
	}
	s = json_object_get_string(v);
	if (strlen(s) >= size) {
		snprintf(err, errlen, "%s.%s is longer than %zu characters", kind, key, size - 1);
		return -EINVAL;
	}
	memcpy(buf, s, strlen(s) + 1);
	return 0;
}

int opaque_bool(const char *kind, const char *key, struct json_object *v, bool *ret, char *err,
		size_t errlen)
{
	if (!json_object_is_type(v, json_type_boolean)) {
		snprintf(err, errlen, "%s.%s must be true or false", kind, key);
		return -EINVAL;
	}
	*ret = json_object_get_boolean(v);
	return 0;
}

int opaque_int(const char *kind, const char *key, struct json_object *v, long long min,
	       long long max, long long *ret, char *err, size_t errlen)
{
	long long n;

	if (!json_object_is_type(v, json_type_int)) {
		snprintf(err, errlen, "%s.%s must be an integer", kind, key);
		return -EINVAL;
	}
	n = (long long)json_object_get_int64(v);
	if (n < min || n > max) {
		snprintf(err, errlen, "%s.%s must be between %lld and %lld", kind, key, min, max);
		return -EINVAL;
	}
	*ret = n;
	return 0;
}
