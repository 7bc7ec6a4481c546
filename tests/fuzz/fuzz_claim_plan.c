/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes claim validation and config selection: any JSON a store could hand
 * over as a ResourceClaim. The UID the kubelet "asks for" is the claim's own
 * when it has one, so allocations are reached. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "agent/claims/claim_plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *claim, *md, *uid;
	struct claim_plan *plan = NULL;
	const char *want = "00000000-0000-4000-8000-000000000000";
	char err[1024];

	if (!tok)
		return 0;
	claim = json_tokener_parse_ex(tok, (const char *)data, (int)size);
	json_tokener_free(tok);
	if (!claim)
		return 0;
	if (json_object_object_get_ex(claim, "metadata", &md) &&
	    json_object_object_get_ex(md, "uid", &uid) && json_object_is_type(uid, json_type_string))
		want = json_object_get_string(uid);
	if (claim_plan_build(claim, "ns", "name", want, "gpu.dralet.dev", &plan, err,
			     sizeof(err)) == 0) {
		for (size_t i = 0; i < plan->n_devices; i++) {
			if (!plan->devices[i].n_requests || !plan->devices[i].pool[0])
				abort();
			struct json_object *cfg;

			if (!plan->devices[i].config)
				continue;
			/* the merged config handed to backends is a JSON object */
			cfg = json_tokener_parse(plan->devices[i].config);
			if (!cfg || !json_object_is_type(cfg, json_type_object))
				abort();
			json_object_put(cfg);
		}
		claim_plan_free(plan);
	}
	json_object_put(claim);
	return 0;
}
