/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A VF's life in a claim: prepare moves it to the driver its VfConfig asks
 * for and sets its VF settings through the PF; unprepare puts both back.
 *
 * Crash safety: what prepare finds (driver, driver_override, the settings
 * about to change) goes into the undo state before anything changes, and
 * dralet_undo_set makes each value durable (the claims checkpoint) before it
 * returns, so the rollback after a crash in the middle restores it; a
 * prepare that fails part-way restores what it changed before it returns.
 * Undo keys (strings; "none" for no driver), only when prepare changes the VF:
 *
 *   pciAddress, driver         the VF and the driver it had
 *   vfSettings                 when prepare changes VF settings: the PF's
 *                              interface and the values before, in one value
 *                              ("pf=ens1f0 ifindex=7 vf=2 mac=.. vlan=5 qos=0")
 *   driverOverride, rebound    when prepare moves it: the override it had
 *                              ("none" when unset) and where it moved it
 *                              ("vfio-pci" or "kernel"); rebound comes last
 */
#ifndef DRALET_BACKENDS_VF_LIFECYCLE_H
#define DRALET_BACKENDS_VF_LIFECYCLE_H

#include <stdbool.h>
#include <stddef.h>

#include <dralet/backend.h>
#include <dralet/prepare.h>

#include "vf_config.h"

/*
 * Refuses vfio for @vf (-EPERM with the reason in the context) unless it has
 * an IOMMU group in which every other device is a bridge or bound to no
 * driver: a container given /dev/vfio/<group> reaches the whole group, and
 * vfio refuses a group whose devices other drivers use.
 */
int vf_iommu_check(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *vf);

/*
 * Brings @vf to what @c asks for: the driver (vfio-pci, or the kernel's own
 * for "") when @allow_rebind, and the VF settings through the PF. Records
 * and commits the undo state first (see above). On success the driver bound
 * now is copied to @driver_now ("" never: a VF without a driver is an
 * error). On failure everything changed is restored and the reason is in
 * the context.
 */
int vf_lifecycle_prepare(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *vf,
			 const struct vf_config *c, bool allow_rebind, struct dralet_undo *undo,
			 char *driver_now, size_t size);

/* Puts the VF back as @undo says (idempotent; a VF or PF that is gone has
 * nothing to restore). */
int vf_lifecycle_restore(struct dralet_backend_ctx *ctx, const struct dralet_undo *undo);

#endif
