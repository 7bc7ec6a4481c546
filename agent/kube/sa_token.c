/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "agent/kube/config.h"
#include "agent/kube/sa_token.h"
#include "agent/lib/json_get.h"

/* The JWT's middle segment, base64url turned into base64 (padding is
 * optional for kube_base64_decode), malloc'd; NULL with *err set. */
static char *payload_base64(const char *jwt, int *err)
{
	const char *start = strchr(jwt, '.');
	const char *end = start ? strchr(start + 1, '.') : NULL;
	*err = -ENOENT;
	if (!end || end == start + 1)
		return NULL;
	size_t n = (size_t)(end - start - 1);
	char *b64 = malloc(n + 1);
	if (!b64) {
		*err = -ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		char c = start[1 + i];
		b64[i] = c == '-' ? '+' : c == '_' ? '/' : c;
	}
	b64[n] = '\0';
	return b64;
}

int sa_token_bound_node(const char *jwt, char **ret_name, char **ret_uid)
{
	int r;
	char *b64 = payload_base64(jwt, &r), *json = NULL;
	size_t len = 0;
	if (!b64)
		return r;
	r = kube_base64_decode(b64, &json, &len);
	free(b64);
	if (r < 0)
		return r == -ENOMEM ? r : -ENOENT;
	struct json_object *claims = json_tokener_parse(json);
	free(json);
	const char *name = json_get_str_at(claims, JSON_PATH("kubernetes.io", "node", "name"));
	const char *uid = json_get_str_at(claims, JSON_PATH("kubernetes.io", "node", "uid"));
	r = -ENOENT;
	if (name && *name && uid && *uid) {
		*ret_name = strdup(name);
		*ret_uid = strdup(uid);
		r = 0;
		if (!*ret_name || !*ret_uid) {
			free(*ret_name);
			free(*ret_uid);
			r = -ENOMEM;
		}
	}
	json_object_put(claims);
	return r;
}
