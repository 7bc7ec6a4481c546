/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The claim a kubelet names in NodePrepareResources/NodeUnprepareResources
 * (namespace, name, UID), checked before anything uses it (pure): the UID
 * becomes part of CDI device names, spec file names and the checkpoint, the
 * namespace and name go into store requests.
 *
 *   namespace  DNS-1123 label, at most 63 characters
 *   name       DNS-1123 subdomain, at most 253 characters
 *   uid        at most 36 characters of a-z, 0-9 and '-' (the apiserver
 *              issues RFC 4122 UUIDs, "0a1b2c3d-0000-4000-8000-123456789abc")
 */
#ifndef DRALET_CLAIM_REF_H
#define DRALET_CLAIM_REF_H

#include <stddef.h>

#define CLAIM_UID_MAX 36

/* 0 when all three are valid, else -EINVAL with the field, the value (cut
 * short) and the rule in @err. NULL counts as empty. */
int claim_ref_check(const char *namespace_, const char *name, const char *uid, char *err,
		    size_t errlen);

#endif
