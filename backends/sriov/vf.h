/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Virtual functions as devices (kind "vf"): the model the nic-vf backend
 * (net.dralet.dev) and the sriov backend (sriov.dralet.dev) share. Attributes
 * follow the SR-IOV DRA driver (docs/attributes-fpga-net-sriov-accel.md);
 * prepare hands the VF over as it is bound now (kernel network driver, or
 * vfio-pci with its group and container nodes).
 */
#ifndef DRALET_BACKENDS_VF_H
#define DRALET_BACKENDS_VF_H

#include <dralet/backend.h>
#include <dralet/prepare.h>

/* Creates the device of VF @func (func->physfn set) in the current probe;
 * *ret_dev is the device (owned by the probe's list), NULL when none. */
int vf_probe_device(struct dralet_backend_ctx *ctx, const struct hal_pci_func *func,
		    struct dralet_device **ret_dev);
/* The same as a probe operation. */
int vf_probe(struct dralet_backend_ctx *ctx, const struct hal_pci_func *func);

/* enum dralet_health of a VF now: VF and PF present, a driver bound, the PF's
 * link not down. */
int vf_health(struct dralet_backend_ctx *ctx, struct dralet_device *dev);

/* VfConfig validation with the apiVersion of the backend's API group
 * ("net.dralet.dev/v1alpha1"). */
int vf_validate_config(struct dralet_backend_ctx *ctx, const char *config,
		       const char *api_version);

int vf_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
	       struct dralet_prepare_req *req, const char *api_version);

/* Nothing to undo until prepare changes VF settings or drivers. */
int vf_unprepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		 const struct dralet_claim_ref *claim, const struct dralet_undo *undo);

/* Shared by the rdma backend for RDMA-capable VFs and PFs: checks the
 * VfConfig of @func against its driver now. @driver is the bound driver. */
int vf_config_apply_check(struct dralet_backend_ctx *ctx, const struct hal_pci_func *func,
			  const char *config, const char *api_version, const char *driver);

#endif
