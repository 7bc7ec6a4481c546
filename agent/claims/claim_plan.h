/* SPDX-License-Identifier: Apache-2.0 */
/*
 * From a ResourceClaim object to what one DRA driver must prepare (pure).
 *
 * claim_plan_build checks the claim against what the kubelet asked for
 * (same UID, allocated), takes the allocation results of our driver, groups
 * them by device (a device serving several requests is prepared once and
 * answered with every base request name) and selects the opaque config of
 * each device (config_select.h). A result with a shareID (a shared device,
 * consumable capacity) is its own entry, keyed by (device, shareID), with
 * what it consumes; two shares of one device are prepared separately. Nothing here looks at the node: whether the
 * devices exist and are free is the engine's business.
 */
#ifndef DRALET_CLAIM_PLAN_H
#define DRALET_CLAIM_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include <dralet/device.h>

struct claim_plan_device {
	char *pool;
	char *device;
	char *share_id;		/* the result's shareID, NULL for an exclusive allocation */
	/* the result's consumedCapacity (names and quantities owned), by name */
	struct dralet_capacity *consumed;
	size_t n_consumed;
	char **requests;	/* allocated request names ("req" or "req/sub"), in result order */
	size_t n_requests;
	bool admin_access;	/* every result for this device has adminAccess */
	char *config;		/* merged opaque parameters (JSON object text), or NULL */
	/* top-level keys of config that claim configs set and no class config
	 * lists in claimSettable (config_select.h), for config_refused_key */
	char **claim_keys;
	size_t n_claim_keys;
};

struct claim_plan {
	char *uid;
	char *namespace_;
	char *name;
	/* annotation resource.kubernetes.io/pod-claim-name of a claim made from a
	 * template (the pod's resourceClaims entry), or NULL */
	char *pod_claim_name;
	struct claim_plan_device *devices;	/* in the order of the first result naming each */
	size_t n_devices;
};

/* True when @id is a shareID dralet accepts: 1 to 64 of [A-Za-z0-9-] (the
 * API's are UUIDs), so it fits CDI device names and file names. */
bool claim_plan_share_id_valid(const char *id);

/*
 * @claim: the ResourceClaim (borrowed). @namespace_/@name/@uid: what the
 * kubelet asked for. On success *ret_plan is a new plan (claim_plan_free);
 * zero devices is a valid plan (the claim has nothing for @driver).
 * Errors, with the cause in @err (the claim is not named there; callers
 * prefix it):
 *   -ESTALE   the claim got replaced (another UID)
 *   -ENODATA  not allocated (no status.allocation)
 *   -EINVAL   malformed allocation or config
 *   -ENOMEM
 */
int claim_plan_build(struct json_object *claim, const char *namespace_, const char *name,
		     const char *uid, const char *driver, struct claim_plan **ret_plan,
		     char *err, size_t errlen);
void claim_plan_free(struct claim_plan *plan);

#endif
