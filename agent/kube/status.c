/* SPDX-License-Identifier: Apache-2.0 */
/* Kubernetes Status bodies, described for log lines. */
#include <stdio.h>
#include <string.h>

#include "agent/kube/status.h"
#include "agent/lib/json_get.h"

struct json_object *kube_json_parse(const char *body, size_t len)
{
	if (!body || len == 0 || len > (1u << 30))
		return NULL;
	struct json_tokener *tok = json_tokener_new();
	if (!tok)
		return NULL;
	struct json_object *obj = json_tokener_parse_ex(tok, body, (int)len);
	if (obj && (json_tokener_get_error(tok) != json_tokener_success ||
		    !json_object_is_type(obj, json_type_object))) {
		json_object_put(obj);
		obj = NULL;
	}
	if (!obj && json_tokener_get_error(tok) == json_tokener_continue) {
		obj = json_tokener_parse_ex(tok, "", 1);	/* end of input */
		if (obj && !json_object_is_type(obj, json_type_object)) {
			json_object_put(obj);
			obj = NULL;
		}
	}
	json_tokener_free(tok);
	return obj;
}

static void append(char *buf, size_t size, size_t *pos, const char *s)
{
	while (*s && *pos + 1 < size)
		buf[(*pos)++] = *s++;
	buf[*pos] = '\0';
}

void kube_status_describe(const char *body, size_t len, char *buf, size_t size)
{
	if (!size)
		return;
	buf[0] = '\0';
	size_t pos = 0;
	struct json_object *st = kube_json_parse(body, len);
	const char *kind = json_get_str(st, "kind");
	if (!st || !kind || strcmp(kind, "Status")) {
		char quoted[210];
		size_t n = len < 200 ? len : 200;
		size_t k = 0;
		for (size_t i = 0; i < n && k + 1 < sizeof(quoted); i++) {
			char c = body[i];
			quoted[k++] = (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
		}
		quoted[k] = '\0';
		append(buf, size, &pos, n ? quoted : "(empty body)");
		json_object_put(st);
		return;
	}
	const char *reason = json_get_str(st, "reason"), *message = json_get_str(st, "message");
	if (reason) {
		append(buf, size, &pos, reason);
		append(buf, size, &pos, ": ");
	}
	append(buf, size, &pos, message ? message : "(no message)");
	struct json_object *causes = json_get_array(json_get(st, "details"), "causes");
	if (causes) {
		for (size_t i = 0; i < json_object_array_length(causes); i++) {
			struct json_object *c = json_object_array_get_idx(causes, i);
			append(buf, size, &pos, i ? "; " : " [causes: ");
			const char *field = json_get_str(c, "field"), *msg = json_get_str(c, "message");
			if (field) {
				append(buf, size, &pos, field);
				append(buf, size, &pos, ": ");
			}
			const char *why = json_get_str(c, "reason");
			append(buf, size, &pos, msg ? msg : why ? why : "?");
		}
		if (json_object_array_length(causes))
			append(buf, size, &pos, "]");
	}
	json_object_put(st);
}

bool kube_status_is_object_not_found(const char *body, size_t len, const char *name)
{
	struct json_object *st = kube_json_parse(body, len);
	const char *kind = json_get_str(st, "kind"), *reason = json_get_str(st, "reason");
	const char *n = json_get_str_at(st, JSON_PATH("details", "name"));
	bool yes = kind && !strcmp(kind, "Status") && reason && !strcmp(reason, "NotFound") && n &&
		   name && !strcmp(n, name);
	json_object_put(st);
	return yes;
}
