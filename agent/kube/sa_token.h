/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a bound ServiceAccount token says about the node its pod runs on.
 *
 * The kubelet projects into every pod a JWT whose private claims carry
 * "kubernetes.io": {"node": {"name", "uid"}} (KEP-4193; gate
 * ServiceAccountTokenPodNodeInfo, GA and locked on since 1.32: k8s.io/kubernetes
 * v1.34.4 and v1.37.2, pkg/serviceaccount/claims.go). The agent takes the
 * Node's UID from there instead of asking the apiserver (docs/publishing.md,
 * "Requests at start"). The signature is not checked: the token is the agent's own
 * credential, and the apiserver checks it on every request. Pure.
 */
#ifndef DRALET_KUBE_SA_TOKEN_H
#define DRALET_KUBE_SA_TOKEN_H

/* The node name and UID in the payload of @jwt (header.payload.signature,
 * base64url). On success *ret_name and *ret_uid are malloc'd. -ENOENT when
 * the token is not a JWT bound to a pod on a node (a static token, an old
 * apiserver), -ENOMEM. */
int sa_token_bound_node(const char *jwt, char **ret_name, char **ret_uid);

#endif
