/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Opaque claim/class configuration of the fpga, net and sriov backends:
 * strict JSON parsing and the apiVersion/kind header every config carries.
 */
#ifndef DRALET_BACKENDS_OPAQUE_H
#define DRALET_BACKENDS_OPAQUE_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

/*
 * Parses @text as one JSON object (strict JSON, nothing after it) whose
 * "apiVersion" is @api_version and whose "kind" is one of @kinds
 * (NULL-terminated). On success *ret_obj is the object (the caller releases
 * it with json_object_put) and *ret_kind points into @kinds. On failure
 * returns -EINVAL with the reason in @err.
 */
int opaque_parse(const char *text, const char *api_version, const char *const *kinds,
		 struct json_object **ret_obj, const char **ret_kind, char *err, size_t errlen);

/* True for the header keys opaque_parse already checked. */
bool opaque_header_key(const char *key);

/* Typed field readers: -EINVAL with "<kind>.<key>: must be ..." in @err. */
int opaque_string(const char *kind, const char *key, struct json_object *v, char *buf,
		  size_t size, char *err, size_t errlen);
int opaque_bool(const char *kind, const char *key, struct json_object *v, bool *ret, char *err,
		size_t errlen);
int opaque_int(const char *kind, const char *key, struct json_object *v, long long min,
	       long long max, long long *ret, char *err, size_t errlen);

#endif
