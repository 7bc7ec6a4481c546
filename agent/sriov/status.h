/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What `dralet sriov status` shows: every SR-IOV PF with the policy that
 * manages it, wanted and actual VF counts, what the policy would do now (or
 * why it may not), and each VF's driver and the claim it is prepared for;
 * then the policies that select no PF. Built as JSON (-o json), printed as
 * text from the same object.
 *
 *   {"pfs": [{"address", "interface", "driver", "policy", "alsoSelectedBy",
 *             "wantedVfs", "actualVfs", "totalVfs", "autoprobe", "vfDriver",
 *             "pending", "vfs": [{"index", "address", "driver",
 *             "driverOverride", "claim", "claimDriver", "inFlight"}]}],
 *    "unusedPolicies": ["name", ...]}
 */
#ifndef DRALET_SRIOV_STATUS_H
#define DRALET_SRIOV_STATUS_H

#include <stdio.h>
#include <json-c/json.h>

#include "agent/sriov/policy.h"
#include "hal/node_ops.h"

struct hal_scan;

/* Reads each PF's state through @node (nothing is written). NULL on ENOMEM. */
struct json_object *sriov_status_json(const struct node_ops *node, const struct hal_scan *scan,
				      const struct sriov_policies *pol,
				      const struct sriov_prepared *prep);

/* The text form of sriov_status_json's object. */
void sriov_status_print(struct json_object *status, FILE *out);

#endif
