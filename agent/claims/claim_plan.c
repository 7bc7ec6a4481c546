/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/claims/claim_plan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/claims/config_select.h"
#include "agent/lib/err_msg.h"
#include "agent/lib/json_get.h"

static void free_device(struct claim_plan_device *d)
{
	free(d->pool);
	free(d->device);
	free(d->share_id);
	for (size_t i = 0; i < d->n_consumed; i++) {
		free((char *)d->consumed[i].name);
		free((char *)d->consumed[i].quantity);
	}
	free(d->consumed);
	for (size_t i = 0; i < d->n_requests; i++)
		free(d->requests[i]);
	free(d->requests);
	free(d->config);
	for (size_t i = 0; i < d->n_claim_keys; i++)
		free(d->claim_keys[i]);
	free(d->claim_keys);
}

void claim_plan_free(struct claim_plan *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->n_devices; i++)
		free_device(&plan->devices[i]);
	free(plan->devices);
	free(plan->uid);
	free(plan->namespace_);
	free(plan->name);
	free(plan->pod_claim_name);
	free(plan);
}

static bool same_share(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static struct claim_plan_device *find_device(struct claim_plan *p, const char *pool,
					     const char *device, const char *share_id)
{
	for (size_t i = 0; i < p->n_devices; i++)
		if (!strcmp(p->devices[i].pool, pool) && !strcmp(p->devices[i].device, device) &&
		    same_share(p->devices[i].share_id, share_id))
			return &p->devices[i];
	return NULL;
}

bool claim_plan_share_id_valid(const char *id)
{
	size_t n = 0;

	if (!id)
		return false;
	for (; id[n]; n++)
		if (n >= 64 || !((id[n] >= 'a' && id[n] <= 'z') || (id[n] >= 'A' && id[n] <= 'Z') ||
				 (id[n] >= '0' && id[n] <= '9') || id[n] == '-'))
			return false;
	return n > 0;
}

/* Reads result @i's shareID and consumedCapacity into @d (new, empty). */
static int add_share(struct claim_plan_device *d, struct json_object *result, size_t i,
		     char *err, size_t errlen)
{
	struct json_object *share = json_get(result, "shareID");
	struct json_object *consumed = json_get(result, "consumedCapacity");
	size_t n;

	if (share && !json_object_is_type(share, json_type_null)) {
		const char *id = json_object_is_type(share, json_type_string)
					 ? json_object_get_string(share) : NULL;
		if (!claim_plan_share_id_valid(id))
			return err_printf(err, errlen, -EINVAL, "status.allocation.devices.results"
					  "[%zu].shareID is not 1 to 64 letters, digits and '-'", i);
		if (!(d->share_id = strdup(id)))
			return -ENOMEM;
	}
	if (!consumed || json_object_is_type(consumed, json_type_null))
		return 0;
	if (!json_object_is_type(consumed, json_type_object))
		return err_printf(err, errlen, -EINVAL, "status.allocation.devices.results[%zu]."
				  "consumedCapacity is not a map", i);
	n = (size_t)json_object_object_length(consumed);
	if (!(d->consumed = calloc(n + 1, sizeof(*d->consumed))))
		return -ENOMEM;
	json_object_object_foreach(consumed, name, q) {
		const char *text = json_object_is_type(q, json_type_string)
					   ? json_object_get_string(q) : NULL;
		struct dralet_capacity *c = &d->consumed[d->n_consumed];
		if (!text || !dralet_quantity_valid(text))
			return err_printf(err, errlen, -EINVAL, "status.allocation.devices.results"
					  "[%zu].consumedCapacity[%s] is not a quantity", i, name);
		c->name = strdup(name);
		c->quantity = strdup(text);
		d->n_consumed++;
		if (!c->name || !c->quantity)
			return -ENOMEM;
	}
	return 0;
}

static int add_request(struct claim_plan_device *d, const char *request)
{
	char **reqs, *copy;

	for (size_t i = 0; i < d->n_requests; i++)
		if (!strcmp(d->requests[i], request))
			return 0;
	reqs = realloc(d->requests, (d->n_requests + 1) * sizeof(*reqs));
	if (!reqs)
		return -ENOMEM;
	d->requests = reqs;
	if (!(copy = strdup(request)))
		return -ENOMEM;
	d->requests[d->n_requests++] = copy;
	return 0;
}

/* Adds the claim-set keys of one result (a JSON array, may be NULL). */
static int add_claim_keys(struct claim_plan_device *d, struct json_object *keys)
{
	size_t n = keys ? json_object_array_length(keys) : 0;

	for (size_t i = 0; i < n; i++) {
		const char *key = json_object_get_string(json_object_array_get_idx(keys, i));
		bool seen = false;
		char **grown;

		for (size_t j = 0; j < d->n_claim_keys; j++)
			seen |= !strcmp(d->claim_keys[j], key);
		if (seen)
			continue;
		grown = realloc(d->claim_keys, (d->n_claim_keys + 1) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		d->claim_keys = grown;
		if (!(d->claim_keys[d->n_claim_keys] = strdup(key)))
			return -ENOMEM;
		d->n_claim_keys++;
	}
	return 0;
}

static bool same_config(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Adds result @i (already checked to be ours) to the plan. */
static int add_result(struct claim_plan *p, struct json_object *result, size_t i,
		      struct json_object *configs, const char *driver, char *err, size_t errlen)
{
	const char *request = json_get_str(result, "request");
	const char *pool = json_get_str(result, "pool");
	const char *device = json_get_str(result, "device");
	struct json_object *admin, *params = NULL, *claim_keys = NULL;
	bool is_admin = false;
	char *config = NULL;
	struct claim_plan_device *d;
	int r;

	if (!request || !*request || !pool || !*pool || !device || !*device)
		return err_printf(err, errlen, -EINVAL, "status.allocation.devices.results[%zu] "
				  "lacks request, pool or device", i);
	if ((admin = json_get(result, "adminAccess"))) {
		if (!json_object_is_type(admin, json_type_boolean))
			return err_printf(err, errlen, -EINVAL,
					  "status.allocation.devices.results[%zu].adminAccess is "
					  "not a boolean", i);
		is_admin = json_object_get_boolean(admin);
	}
	r = config_select(configs, driver, request, &params, &claim_keys, err, errlen);
	if (r < 0)
		return r;
	if (params) {
		const char *text = json_object_to_json_string_ext(params, JSON_C_TO_STRING_PLAIN |
								  JSON_C_TO_STRING_NOSLASHESCAPE);
		config = text ? strdup(text) : NULL;
		json_object_put(params);
		if (!config) {
			json_object_put(claim_keys);
			return -ENOMEM;
		}
	}

	const char *share = json_get_str(result, "shareID");
	d = find_device(p, pool, device, share);
	if (d && share) {
		free(config);
		json_object_put(claim_keys);
		return err_printf(err, errlen, -EINVAL, "device %s/%s share %s is allocated twice "
				  "(results of requests %s and %s)", pool, device, share,
				  d->requests[0], request);
	}
	if (d) {
		if (!same_config(d->config, config)) {
			free(config);
			json_object_put(claim_keys);
			return err_printf(err, errlen, -EINVAL, "device %s/%s is allocated for "
					  "requests %s and %s with different configs", pool, device,
					  d->requests[0], request);
		}
		free(config);
		d->admin_access = d->admin_access && is_admin;
	} else {
		d = realloc(p->devices, (p->n_devices + 1) * sizeof(*d));
		if (!d) {
			free(config);
			json_object_put(claim_keys);
			return -ENOMEM;
		}
		p->devices = d;
		d = &p->devices[p->n_devices++];
		memset(d, 0, sizeof(*d));
		d->config = config;
		d->admin_access = is_admin;
		d->pool = strdup(pool);
		d->device = strdup(device);
		if (d->pool && d->device && (r = add_share(d, result, i, err, errlen)) < 0) {
			json_object_put(claim_keys);
			return r;
		}
	}
	r = d->pool && d->device ? add_claim_keys(d, claim_keys) : -ENOMEM;
	json_object_put(claim_keys);
	return r < 0 ? r : add_request(d, request);
}

int claim_plan_build(struct json_object *claim, const char *namespace_, const char *name,
		     const char *uid, const char *driver, struct claim_plan **ret_plan,
		     char *err, size_t errlen)
{
	static const char *const alloc_path[] = { "status", "allocation", NULL };
	static const char *const results_path[] = { "devices", "results", NULL };
	static const char *const config_path[] = { "devices", "config", NULL };
	struct json_object *alloc, *results, *configs;
	struct claim_plan *p;
	const char *have_uid, *pod_claim;
	int r = 0;

	if (!claim || !namespace_ || !name || !uid || !driver)
		return -EINVAL;
	have_uid = json_get_str_at(claim, JSON_PATH("metadata", "uid"));
	if (!have_uid || strcmp(have_uid, uid))
		return err_printf(err, errlen, -ESTALE, "got replaced: its UID is %s, the kubelet "
				  "asked for %s", have_uid ? have_uid : "(none)", uid);
	alloc = json_get_at(claim, alloc_path);
	if (!alloc || json_object_is_type(alloc, json_type_null))
		return err_printf(err, errlen, -ENODATA, "not allocated (it has no "
				  "status.allocation)");
	if (!json_object_is_type(alloc, json_type_object))
		return err_printf(err, errlen, -EINVAL, "status.allocation is not an object");
	results = json_get_at(alloc, results_path);
	configs = json_get_at(alloc, config_path);
	if (configs && json_object_is_type(configs, json_type_null))
		configs = NULL;
	if (results && !json_object_is_type(results, json_type_array) &&
	    !json_object_is_type(results, json_type_null))
		return err_printf(err, errlen, -EINVAL, "status.allocation.devices.results is not "
				  "a list");

	if (!(p = calloc(1, sizeof(*p))))
		return -ENOMEM;
	p->uid = strdup(uid);
	p->namespace_ = strdup(namespace_);
	p->name = strdup(name);
	if (!p->uid || !p->namespace_ || !p->name)
		r = -ENOMEM;
	/* a claim made from a template names the pod's entry (device metadata paths) */
	pod_claim = json_get_str_at(claim, JSON_PATH("metadata", "annotations",
						     "resource.kubernetes.io/pod-claim-name"));
	if (!r && pod_claim && !(p->pod_claim_name = strdup(pod_claim)))
		r = -ENOMEM;
	for (size_t i = 0; !r && results && json_object_is_type(results, json_type_array) &&
			   i < json_object_array_length(results); i++) {
		struct json_object *res = json_object_array_get_idx(results, i);
		const char *d;

		if (!json_object_is_type(res, json_type_object)) {
			r = err_printf(err, errlen, -EINVAL,
				       "status.allocation.devices.results[%zu] is not an object",
				       i);
			break;
		}
		d = json_get_str(res, "driver");
		if (!d) {
			r = err_printf(err, errlen, -EINVAL,
				       "status.allocation.devices.results[%zu] has no driver", i);
			break;
		}
		if (strcmp(d, driver))
			continue;	/* another driver's device */
		r = add_result(p, res, i, configs, driver, err, errlen);
	}
	if (r < 0) {
		if (r == -ENOMEM)
			err_printf(err, errlen, r, "out of memory");
		claim_plan_free(p);
		return r;
	}
	*ret_plan = p;
	return 0;
}
