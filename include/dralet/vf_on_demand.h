/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dralet backend SDK: SR-IOV VFs made on demand (docs/sriov.md, "SR-IOV VFs
 * on demand").
 *
 * A PF that an SR-IOV policy with onDemand: true manages keeps the VF count
 * it has until a claim asks for one of its VFs: the backend publishes VFs
 * 0..max-1 whether they exist or not, and its prepare makes them
 * (sriov_numvfs, through 0: the kernel's rule) when the asked VF does not
 * exist and no VF of the PF is prepared, or takes the VF when it exists.
 * The agent answers which PFs those are from the policies it started with
 * and writes the count through its one seam to the node (a simulated
 * board's kernel model in tests).
 *
 * Errors: 0 or -errno; the reason, naming the PF, is set as the
 * operation's error (dralet_ctx_error) for the writes.
 */
#ifndef DRALET_VF_ON_DEMAND_H
#define DRALET_VF_ON_DEMAND_H

#include <stdbool.h>
#include <stddef.h>

#include <dralet/backend.h>
#include <dralet/pci.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One PF whose VFs are made on demand (strings owned by the agent, valid
 * while the backend's devices are). */
struct dralet_vf_on_demand {
	const struct dralet_pci_func *pf;	/* from the discovery */
	const char *policy;			/* the policy's name */
	unsigned max_vfs;			/* VFs 0..max_vfs-1 may be made */
	const char *vf_driver;	/* where a made VF goes when the claim does not say:
				 * "vfio-pci", "" (the kernel's own), NULL (none) */
};

/* The @i-th PF of the discovery with VFs on demand (0, 1, ...): 0, or
 * -ENOENT past the last. */
int dralet_ctx_vf_on_demand(const struct dralet_backend_ctx *ctx, size_t i,
			    struct dralet_vf_on_demand *ret);

/* The same for the PF at @pf_address: 0, or -ENOENT when its VFs are not
 * made on demand. */
int dralet_ctx_vf_on_demand_of(const struct dralet_backend_ctx *ctx, const char *pf_address,
			       struct dralet_vf_on_demand *ret);

/* PF @pf's VF count now (sriov_numvfs) into *ret_num_vfs and, when
 * @index < that count, the address of VF @index (its virtfnN link) into
 * @vf_address ("" otherwise). -ENODEV when the PF is gone. */
int dralet_pci_sriov_vf(struct dralet_backend_ctx *ctx, const char *pf, unsigned index,
			unsigned *ret_num_vfs, char *vf_address, size_t size);

/* Sets PF @pf's VF count to @n: 0 first when it has VFs (the kernel
 * changes a count only through 0), sriov_drivers_autoprobe to @autoprobe
 * for the VFs made. Returns the VFs the kernel enabled (it may enable fewer)
 * or -errno (-EBUSY, -ENOSPC ... with the reason set). */
int dralet_pci_sriov_set_numvfs(struct dralet_backend_ctx *ctx, const char *pf, unsigned n,
				bool autoprobe);

#ifdef __cplusplus
}
#endif
#endif /* DRALET_VF_ON_DEMAND_H */
