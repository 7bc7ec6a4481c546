/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/claims/config_select.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "agent/lib/err_msg.h"
#include "agent/lib/json_get.h"

int config_base_request(const char *request, char *buf, size_t size)
{
	size_t len = strcspn(request, "/");

	if (len >= size)
		return -ENAMETOOLONG;
	memcpy(buf, request, len);
	buf[len] = '\0';
	return 0;
}

/* 1 when @cfg applies to @request/@base, 0 when not, -EINVAL when malformed. */
static int applies(struct json_object *cfg, const char *request, const char *base)
{
	struct json_object *reqs = json_get(cfg, "requests");
	size_t n;

	if (!reqs)
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

/* What the two passes build up. */
struct selection {
	struct json_object *merged;	/* parameters, later wins */
	struct json_object *settable;	/* key -> true: claimSettable of the class configs */
	struct json_object *claim_set;	/* key -> true: set by a claim config */
};

static int add_flag(struct json_object *set, const char *key)
{
	struct json_object *t = json_object_new_boolean(1);

	if (!t || json_object_object_add(set, key, t) < 0) {
		json_object_put(t);
		return -ENOMEM;
	}
	return 0;
}

/* A class config's claimSettable: a list of key names. */
static int add_settable(struct selection *sel, struct json_object *list, size_t idx, char *err,
			size_t errlen)
{
	size_t n = json_object_is_type(list, json_type_array) ? json_object_array_length(list) : 0;

	if (!json_object_is_type(list, json_type_array))
		return err_printf(err, errlen, -EINVAL, "status.allocation.devices.config[%zu]: "
				  CONFIG_CLAIM_SETTABLE " must be a list of parameter names", idx);
	for (size_t i = 0; i < n; i++) {
		struct json_object *k = json_object_array_get_idx(list, i);

		if (!json_object_is_type(k, json_type_string))
			return err_printf(err, errlen, -EINVAL,
					  "status.allocation.devices.config[%zu]: "
					  CONFIG_CLAIM_SETTABLE "[%zu] must be a parameter name",
					  idx, i);
		if (add_flag(sel->settable, json_object_get_string(k)) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Merges the top-level keys of @params into the selection (later wins). */
static int merge(struct selection *sel, struct json_object *params, bool from_class, size_t idx,
		 char *err, size_t errlen)
{
	json_object_object_foreach(params, key, value) {
		if (!strcmp(key, CONFIG_CLAIM_SETTABLE)) {
			if (from_class) {
				int r = add_settable(sel, value, idx, err, errlen);
				if (r < 0)
					return r;
				continue;
			}
			return err_printf(err, errlen, -EINVAL,
					  "status.allocation.devices.config[%zu] (FromClaim): "
					  CONFIG_CLAIM_SETTABLE " is for DeviceClass configs only",
					  idx);
		}
		if (!from_class && add_flag(sel->claim_set, key) < 0)
			return -ENOMEM;
		if (json_object_object_add(sel->merged, key, json_object_get(value)) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Handles one config of the pass for @want_class; returns 1 when it applied. */
static int consider(struct json_object *cfg, size_t idx, bool want_class, const char *driver,
		    const char *request, const char *base, struct selection *sel,
		    char *err, size_t errlen)
{
	struct json_object *opaque, *params;
	const char *source, *d;
	bool from_class;
	int r;

	if (!(opaque = json_get_object(cfg, "opaque")))
		return 0;	/* not an opaque config: nothing for a driver */
	d = json_get_str(opaque, "driver");
	if (!d || strcmp(d, driver))
		return 0;
	source = json_get_str(cfg, "source");
	if (!source || !strcmp(source, "FromClaim"))
		from_class = false;
	else if (!strcmp(source, "FromClass"))
		from_class = true;
	else
		return err_printf(err, errlen, -EINVAL, "status.allocation.devices.config[%zu] has "
				  "unknown source \"%s\"", idx, source);
	if (from_class != want_class)
		return 0;
	r = applies(cfg, request, base);
	if (r < 0)
		return err_printf(err, errlen, r, "status.allocation.devices.config[%zu].requests "
				  "is not a list of request names", idx);
	if (!r)
		return 0;
	if (!(params = json_get_object(opaque, "parameters")))
		return err_printf(err, errlen, -EINVAL, "status.allocation.devices.config[%zu] "
				  "(%s, driver %s): opaque.parameters must be a JSON object", idx,
				  from_class ? "FromClass" : "FromClaim", driver);
	r = merge(sel, params, from_class, idx, err, errlen);
	return r < 0 ? r : 1;
}

/* The keys a claim set that no class config lets it set: an array, or NULL. */
static int unapproved_claim_keys(const struct selection *sel, struct json_object **ret)
{
	struct json_object *keys = NULL;

	json_object_object_foreach(sel->claim_set, key, v) {
		(void)v;
		if (json_object_object_get_ex(sel->settable, key, NULL))
			continue;
		if (!keys && !(keys = json_object_new_array()))
			return -ENOMEM;
		if (json_object_array_add(keys, json_object_new_string(key)) < 0) {
			json_object_put(keys);
			return -ENOMEM;
		}
	}
	*ret = keys;
	return 0;
}

const struct dralet_config_key *config_refused_key(const struct dralet_config_key *admin_keys,
						    char *const *claim_keys, size_t n,
						    bool admin_access)
{
	if (admin_access)
		return NULL;
	for (const struct dralet_config_key *k = admin_keys; k && k->name; k++)
		for (size_t i = 0; i < n; i++)
			if (!strcmp(k->name, claim_keys[i]))
				return k;
	return NULL;
}

int config_select(struct json_object *configs, const char *driver, const char *request,
		  struct json_object **ret_params, struct json_object **ret_claim_keys,
		  char *err, size_t errlen)
{
	struct selection sel;
	struct json_object *claim_keys = NULL;
	char base[256];
	size_t n;
	int applied = 0, r = 0;

	if (!driver || !request)
		return -EINVAL;
	if (config_base_request(request, base, sizeof(base)) < 0)
		return err_printf(err, errlen, -EINVAL, "request name \"%s\" is too long", request);
	if (configs && !json_object_is_type(configs, json_type_array))
		return err_printf(err, errlen, -EINVAL, "status.allocation.devices.config is not a "
				  "list");
	n = configs ? json_object_array_length(configs) : 0;
	sel.merged = json_object_new_object();
	sel.settable = json_object_new_object();
	sel.claim_set = json_object_new_object();
	if (!sel.merged || !sel.settable || !sel.claim_set)
		r = -ENOMEM;
	/* two passes: class configs first, then the claim's own */
	for (int pass = 0; r >= 0 && pass < 2; pass++)
		for (size_t i = 0; r >= 0 && i < n; i++) {
			r = consider(json_object_array_get_idx(configs, i), i, pass == 0, driver,
				     request, base, &sel, err, errlen);
			applied += r > 0 ? r : 0;
		}
	if (r >= 0 && ret_claim_keys)
		r = unapproved_claim_keys(&sel, &claim_keys);
	json_object_put(sel.settable);
	json_object_put(sel.claim_set);
	if (r < 0) {
		json_object_put(sel.merged);
		return r;
	}
	if (!applied) {
		json_object_put(sel.merged);
		sel.merged = NULL;
	}
	*ret_params = sel.merged;
	if (ret_claim_keys)
		*ret_claim_keys = claim_keys;
	return applied;
}
