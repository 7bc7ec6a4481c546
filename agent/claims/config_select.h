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
 */
#ifndef DRALET_CONFIG_SELECT_H
#define DRALET_CONFIG_SELECT_H

#include <stddef.h>
#include <json-c/json.h>

/*
 * @configs: status.allocation.devices.config (an array, or NULL for none);
 * borrowed. On success returns the number of configs that applied and sets
 * *ret_params to a new object with the merged parameters (the caller owns
 * it; json_object_put), or to NULL when none applied. A malformed config of
 * our driver (parameters not an object, unknown source, requests not a list
 * of strings) is -EINVAL with the reason in @err; configs of other drivers
 * are skipped without a look.
 */
int config_select(struct json_object *configs, const char *driver, const char *request,
		  struct json_object **ret_params, char *err, size_t errlen);

/* "req" of "req/sub" into @buf (the whole name when there is no '/'). */
int config_base_request(const char *request, char *buf, size_t size);

#endif
