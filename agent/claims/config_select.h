/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which opaque configs of a claim's allocation apply to one allocation
 * result, and their merged parameters (pure; kubelet-contract.md 4.2).
 *
 * A config applies to a result when its opaque.driver is ours and its
 * "requests" list is empty, names the result's request ("req/sub") or the
 * result's base request ("req"). Configs from the class (source FromClass)
 * come before configs from the claim (FromClaim), each group in allocation
 * order; later configs override earlier ones key by key at the top level of
 * the parameters object, so a claim can replace one setting of its class
 * and keep the others.
 *
 * Who set what (include/dralet/backend.h, struct dralet_config_key): the
 * agent's own parameter "claimSettable" (a list of key names) is accepted
 * from class configs only and never reaches the backend; the selection
 * reports the keys a claim config set that no class config lists there, and
 * config_refused_key tells which of them the owning backend keeps for the
 * cluster admin.
 */
#ifndef DRALET_CONFIG_SELECT_H
#define DRALET_CONFIG_SELECT_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include <dralet/backend.h>

/* The agent's key in class configs: the admin-only keys claims may set too. */
#define CONFIG_CLAIM_SETTABLE "claimSettable"

/*
 * @configs: status.allocation.devices.config (an array, or NULL for none);
 * borrowed. On success returns the number of configs that applied and sets
 * *ret_params to a new object with the merged parameters (the caller owns
 * it; json_object_put), or to NULL when none applied, and *ret_claim_keys
 * (when not NULL) to a new array of the top-level keys claim configs set
 * that no class config lists in claimSettable, or to NULL when there are
 * none. A malformed config of our driver (parameters not an object, unknown
 * source, requests not a list of strings, claimSettable not a list of
 * strings or set by a claim) is -EINVAL with the reason in @err; configs of
 * other drivers are skipped without a look.
 */
int config_select(struct json_object *configs, const char *driver, const char *request,
		  struct json_object **ret_params, struct json_object **ret_claim_keys,
		  char *err, size_t errlen);

/*
 * The first of @admin_keys (a backend's admin_config_keys, may be NULL)
 * that a claim set (@claim_keys, @n) although the device's requests lack
 * adminAccess, or NULL when nothing is refused.
 */
const struct dralet_config_key *config_refused_key(const struct dralet_config_key *admin_keys,
						    char *const *claim_keys, size_t n,
						    bool admin_access);

/* "req" of "req/sub" into @buf (the whole name when there is no '/'). */
int config_base_request(const char *request, char *buf, size_t size);

#endif
