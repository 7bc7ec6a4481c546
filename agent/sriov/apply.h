/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Carrying SR-IOV policies out on the node (the I/O shell around policy.h):
 * for every SR-IOV PF of a scan that a policy selects, the VF count
 * (hal_sriov_set_numvfs: 0 first, autoprobe off unless the policy wants the
 * kernel's driver), then each VF's driver and settings, VFs prepared for a
 * claim left alone. Idempotent: a second run writes nothing. A PF's failure
 * (the kernel's ENOSPC, EBUSY, EINVAL ...) is reported with the PF and the
 * cause and does not stop the other PFs.
 *
 * The report says what happened per PF, so the agent logs it once and
 * rediscovers (and republishes) when a VF set changed.
 */
#ifndef DRALET_SRIOV_APPLY_H
#define DRALET_SRIOV_APPLY_H

#include <stdbool.h>
#include <stddef.h>

#include "hal/node_ops.h"
#include "agent/sriov/policy.h"

struct hal_scan;

enum sriov_pf_outcome {
	SRIOV_PF_UNCHANGED,	/* already as the policy says */
	SRIOV_PF_CHANGED,	/* count, drivers or settings changed */
	SRIOV_PF_REFUSED,	/* the count may not change now (message) */
	SRIOV_PF_FAILED,	/* the kernel refused something (message) */
};

struct sriov_pf_report {
	char pf[24];
	const char *policy;		/* borrowed from the policies */
	const char *also;		/* a later policy that selects it too (ignored) */
	enum sriov_pf_outcome outcome;
	unsigned wanted, before, after;	/* VF counts */
	bool vfs_changed;		/* VFs were created or removed */
	unsigned vfs_rebound, vfs_set, errors;
	bool autoprobe_set;		/* sriov_drivers_autoprobe changed to the policy's */
	char message[768];		/* refusal or first failure, naming the PF */
};

struct sriov_report {
	struct sriov_pf_report *pfs;
	size_t n;
	bool vfs_changed;		/* some PF's VF set changed: rediscover */
	bool changed;			/* anything was written */
};

struct sriov_apply_options {
	const char *only_pf;	/* just this PF (hot-plug); NULL: every PF */
	bool dry_run;		/* plan and report, write nothing */
};

/*
 * Applies @pol to the SR-IOV PFs of @scan through @node. Returns 0 and a
 * report (free with sriov_report_free) even when PFs failed; -errno only
 * when no report can be made (ENOMEM).
 */
int sriov_apply(const struct node_ops *node, const struct sriov_policies *pol,
		const struct hal_scan *scan, const struct sriov_prepared *prep,
		const struct sriov_apply_options *opts, struct sriov_report **ret);
void sriov_report_free(struct sriov_report *r);

const char *sriov_pf_outcome_name(enum sriov_pf_outcome o);

#endif
