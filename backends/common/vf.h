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
int vf_probe_device(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		    struct dralet_device **ret_dev);
/* The same as a probe operation. */
int vf_probe(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
	     const struct dralet_pci_id *id);

/* enum dralet_health of a VF now: VF and PF present, a driver bound, the PF's
 * link not down. */
int vf_health(struct dralet_backend_ctx *ctx, struct dralet_device *dev);

/* VfConfig validation with the apiVersion of the backend's API group
 * ("net.dralet.dev/v1alpha1"). */
int vf_validate_config(struct dralet_backend_ctx *ctx, const char *config,
		       const char *api_version);

/*
 * Prepare of a VF device: VfConfig applied (vf_lifecycle.h: driver, VF
 * settings, undo state), then the container edits from what the VF is now:
 * on vfio-pci /dev/vfio/<group> and /dev/vfio/vfio, else its device nodes
 * and its interface; env DRALET_<DEVICE>_{PCI_ADDRESS, PF_PCI_ADDRESS,
 * VF_ID, DRIVER, NETDEV, MAC, RDMA_DEVICE, IOMMU_GROUP, VFIO_GROUP}.
 */
int vf_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
	       struct dralet_prepare_req *req, const char *api_version);

/* The same for VF @vf (the device may stand for it, a VF made on demand);
 * @default_driver (NULL: none) is the driver when the VfConfig names none
 * ("vfio-pci", or "" for the kernel's own). */
int vf_prepare_vf(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		  const struct dralet_pci_func *vf, struct dralet_prepare_req *req,
		  const char *api_version, const char *default_driver);

/* The attributes of VF @vf (vfID, pfPciAddress, driver, vfioCapable ...) on @dev. */
void vf_add_attributes(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		       const struct dralet_pci_func *vf);

/* Puts the VF back from the undo state (driver and settings). */
int vf_unprepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		 const struct dralet_claim_ref *claim, const struct dralet_undo *undo);

/*
 * The VfConfig step of a prepare, shared with the rdma backend (whose
 * devices may be PFs, and whose VFs stay on their RDMA driver:
 * @allow_rebind false). A PF takes only an empty VfConfig. Fills the undo
 * state; @driver_now gets the driver bound afterwards.
 */
int vf_prepare_config(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		      const char *config, const char *api_version, bool allow_rebind,
		      struct dralet_undo *undo, char *driver_now, size_t size);

#endif
