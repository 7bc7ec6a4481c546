/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SR-IOV VFs on demand in the sriov backend (include/dralet/vf_on_demand.h,
 * the rules in on_demand_plan.h, docs/sriov.md "SR-IOV VFs on demand").
 *
 * Publishing: every PF of the discovery with VFs on demand gets devices
 * "vf-<pf address>-vf<N>" for N in 0..max-1, made or not (a made VF carries
 * its own attributes and vfio nodes, one not made yet the PF's and
 * created=false, and is a partition: counters.h). The device of VF 0 owns
 * counter set "vfs-<pf address>" with counter "vfs" = max; every device
 * consumes 1, so the scheduler never hands out more VFs than the policy
 * lets the PF make. The names stay when a VF is made or removed, so an
 * allocation keeps meaning the same VF.
 *
 * Prepare (under the per-PF lock of the ledger, on_demand_ledger.h): the
 * undo state first (keys below), then the ledger entry, then, when the VF
 * must be made, sriov_numvfs 0 and the policy's count, then the VF to the
 * claim's driver or the policy's (vf_prepare_vf). Unprepare puts the VF's driver back, removes the entry
 * and gives the PF its count back when no claim holds a VF of it. Both
 * work from the undo state alone, so the rollback after a crash at any
 * point does the same. Undo keys:
 *   sriov.onDemand.pf        the PF
 *   sriov.onDemand.vf        the VF index
 *   sriov.onDemand.numVfs    the PF's count before the first claim
 */
#ifndef DRALET_BACKENDS_SRIOV_ON_DEMAND_H
#define DRALET_BACKENDS_SRIOV_ON_DEMAND_H

#include <stdbool.h>

#include <dralet/backend.h>
#include <dralet/prepare.h>

/* Publishes the on-demand devices of every on-demand PF (in init). */
int sriov_on_demand_publish(struct dralet_backend_ctx *ctx);

/* True when @vf is a VF of a PF with VFs on demand (published above). */
bool sriov_on_demand_owns_vf(const struct dralet_backend_ctx *ctx,
			     const struct dralet_pci_func *vf);

/* True when @dev is an on-demand device. */
bool sriov_on_demand_device(const struct dralet_device *dev);

int sriov_on_demand_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			    struct dralet_prepare_req *req, const char *api_version);

/* True when @undo is an on-demand prepare's. */
bool sriov_on_demand_owns_undo(const struct dralet_undo *undo);

int sriov_on_demand_unprepare(struct dralet_backend_ctx *ctx, const struct dralet_claim_ref *claim,
			      const struct dralet_undo *undo);

/* The health of an on-demand device: its PF there, and its VF when made. */
int sriov_on_demand_health(struct dralet_backend_ctx *ctx, struct dralet_device *dev);

#endif
