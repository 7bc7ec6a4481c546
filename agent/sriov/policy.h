/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The SR-IOV policy engine, without I/O: which policy manages a PF, what
 * its VF count must become (or why it must not change now), and what each
 * VF needs (driver, settings). apply.h carries the plan out.
 *
 * Rules (linux-devices.md 2.1): a non-zero count changes only through 0, so
 * ANY change of a PF's count re-creates all its VFs; it is refused while a
 * VF of the PF is prepared for a claim (shrinking below a prepared VF, and
 * growing, which would destroy it too). VFs prepared for a claim are never
 * touched: their driver and settings belong to the claim until unprepare.
 */
#ifndef DRALET_SRIOV_POLICY_H
#define DRALET_SRIOV_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include <dralet/pci.h>

#include "agent/core/sriov_policy_config.h"
#include "hal/pci_sriov.h"

/* A VF prepared for a claim (from the claims checkpoints). */
struct sriov_prepared_vf {
	char address[24];
	char claim[320];	/* "namespace/name" */
	char driver[64];	/* the DRA driver whose checkpoint holds it */
	bool in_flight;		/* PrepareStarted or UnprepareStarted */
};

struct sriov_prepared {
	struct sriov_prepared_vf *vfs;	/* malloc'd */
	size_t n;
};

const struct sriov_prepared_vf *sriov_prepared_find(const struct sriov_prepared *p,
						    const char *address);
/* Appends a copy (0 or -ENOMEM). */
int sriov_prepared_add(struct sriov_prepared *p, const struct sriov_prepared_vf *vf);
void sriov_prepared_clear(struct sriov_prepared *p);

enum sriov_count_action {
	SRIOV_COUNT_KEEP,	/* already so */
	SRIOV_COUNT_SET,	/* write it (through 0) */
	SRIOV_COUNT_REFUSED,	/* not now: reason says why */
};

struct sriov_count_plan {
	enum sriov_count_action action;
	unsigned from, to;
	int autoprobe;		/* sriov_drivers_autoprobe for the new VFs */
	char reason[640];
};

/* What PF @pf_address (state @st) needs for @pol's count. */
void sriov_plan_count(const struct sriov_policy *pol, const char *pf_address,
		      const struct hal_pf_state *st, const struct sriov_prepared *prep,
		      struct sriov_count_plan *ret);

enum sriov_bind {
	SRIOV_BIND_KEEP,	/* as it is */
	SRIOV_BIND_DEFAULT,	/* clear driver_override, let the kernel probe */
	SRIOV_BIND_VFIO,	/* driver_override vfio-pci, rebind */
	SRIOV_BIND_UNBIND,	/* no driver, no override */
};

struct sriov_vf_step {
	const struct hal_vf_state *vf;	/* borrowed from the PF state */
	const struct sriov_prepared_vf *prepared;	/* the claim holding it: left alone */
	enum sriov_bind bind;
	bool set;			/* settings wanted (diffed against the VF's at apply) */
	struct dralet_vf_settings settings;
};

/* One step per VF of @st (n_vfs of them, in @steps). @pf_has_netdev: VF
 * settings can be set (a NIC PF with an interface). */
void sriov_plan_vfs(const struct sriov_policy *pol, const struct hal_pf_state *st,
		    const struct sriov_prepared *prep, bool pf_has_netdev,
		    struct sriov_vf_step *steps);

/* The part of @want that differs from @now: false when nothing must be sent. */
bool sriov_settings_diff(const struct dralet_vf_settings *want, const struct dralet_vf_settings *now,
			 struct dralet_vf_settings *ret);

#endif
