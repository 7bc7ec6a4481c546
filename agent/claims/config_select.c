/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/claims/config_select.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

int config_base_request(const char *request, char *buf, size_t size)
{
	size_t len = strcspn(request, "/");

	if (len >= size)
		return -ENAMETOOLONG;
	memcpy(buf, request, len);
	buf[len] = '\0';
	return 0;
}

static const char *string_field(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* 1 when @cfg applies to @request/@base, 0 when not, -EINVAL when malformed. */
static int applies(struct json_object *cfg, const char *request, const char *base)
{
	struct json_object *reqs;
	size_t n;

	if (!json_object_object_get_ex(cfg, "requests", &reqs) || !reqs)
		return 1;
	if (!json_object_is_type(reqs, json_type_array))
		return -EINVAL;
	n = json_object_array_length(reqs);
	if (n == 0)
		return 1;
	for (size_t i = 0; i < n; i++) {
		struct json_object *r = json_object_array_get_idx(reqs, i);
		const char *name;

		if (!json_object_is_type(r, json_type_string))
			return -EINVAL;
		name = json_object_get_string(r);
		if (!strcmp(name, request) || !strcmp(name, base))
			return 1;
	}
	return 0;
}

/* Merges the top-level keys of @params into @into (later wins). */
static int merge(struct json_object *into, struct json_object *params)
{
	json_object_object_foreach(params, key, value) {
		if (json_object_object_add(into, key, json_object_get(value)) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Handles one config of the pass for @want_class; returns 1 when it applied. */
static int consider(struct json_object *cfg, size_t idx, bool want_class, const char *driver,
		    const char *request, const char *base, struct json_object *merged,
		    char *err, size_t errlen)
{
	struct json_object *opaque, *params;
	const char *source, *d;
	bool from_class;
	int r;

	if (!json_object_is_type(cfg, json_type_object) ||
	    !json_object_object_get_ex(cfg, "opaque", &opaque) ||
	    !json_object_is_type(opaque, json_type_object))
		return 0;	/* not an opaque config: nothing for a driver */
	d = string_field(opaque, "driver");
	if (!d || strcmp(d, driver))
		return 0;
	source = string_field(cfg, "source");
	if (!source || !strcmp(source, "FromClaim"))
		from_class = false;
	else if (!strcmp(source, "FromClass"))
		from_class = true;
	else {
		snprintf(err, errlen, "status.allocation.devices.config[%zu] has unknown source "
			 "\"%s\"", idx, source);
		return -EINVAL;
	}
	if (from_class != want_class)
		return 0;
	r = applies(cfg, request, base);
	if (r < 0) {
		snprintf(err, errlen, "status.allocation.devices.config[%zu].requests is not a "
			 "list of request names", idx);
		return r;
	}
	if (!r)
		return 0;
	if (!json_object_object_get_ex(opaque, "parameters", &params) ||
	    !json_object_is_type(params, json_type_object)) {
		snprintf(err, errlen, "status.allocation.devices.config[%zu] (%s, driver %s): "
			 "opaque.parameters must be a JSON object", idx,
			 from_class ? "FromClass" : "FromClaim", driver);
		return -EINVAL;
	}
	r = merge(merged, params);
	return r < 0 ? r : 1;
}

int config_select(struct json_object *configs, const char *driver, const char *request,
		  struct json_object **ret_params, char *err, size_t errlen)
{
	struct json_object *merged;
	char base[256];
	size_t n;
	int applied = 0, r;

	if (!driver || !request)
		return -EINVAL;
	if (config_base_request(request, base, sizeof(base)) < 0) {
		snprintf(err, errlen, "request name \"%s\" is too long", request);
		return -EINVAL;
	}
	if (configs && !json_object_is_type(configs, json_type_array)) {
		snprintf(err, errlen, "status.allocation.devices.config is not a list");
		return -EINVAL;
	}
	n = configs ? json_object_array_length(configs) : 0;
	if (!(merged = json_object_new_object()))
		return -ENOMEM;
	/* two passes: class configs first, then the claim's own */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++) {
			r = consider(json_object_array_get_idx(configs, i), i, pass == 0, driver,
				     request, base, merged, err, errlen);
			if (r < 0) {
				json_object_put(merged);
				return r;
			}
			applied += r;
		}
	if (!applied) {
		json_object_put(merged);
		merged = NULL;
	}
	*ret_params = merged;
	return applied;
}
