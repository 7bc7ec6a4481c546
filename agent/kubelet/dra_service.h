/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The DRA kubelet service of one driver over the claims engine:
 * NodePrepareResources and NodeUnprepareResources of dra.v1 and dra.v1beta1
 * (kubelet-contract.md 2.1/2.2). The messages of both packages are
 * identical on the wire, so both are decoded and encoded with the v1
 * descriptors; only the method paths differ. Every requested claim UID gets
 * an entry in the answer, with its own error when it failed.
 */
#ifndef DRALET_DRA_SERVICE_H
#define DRALET_DRA_SERVICE_H

struct grpc_server;
struct claims_engine;

/* Adds the four methods to @srv; @engine must outlive the server. */
int dra_service_register(struct grpc_server *srv, struct claims_engine *engine);

#endif
