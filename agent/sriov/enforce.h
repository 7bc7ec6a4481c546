/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Enforcing the SR-IOV policies on the node: one apply (apply.h) over a
 * scan, with every outcome logged once with the PF and the cause. The
 * daemon (agent/daemon/) decides when: at start, before the first
 * discovery; on SIGHUP, a configuration change and a PCI function that
 * appeared (agent/daemon/node_watch.h); again every few seconds while a
 * count is refused (a VF prepared for a claim), so it takes effect once the
 * claim is unprepared. It calls these only while no claims call and no
 * health round is in flight.
 *
 * Loop thread only (they write sysfs synchronously).
 */
#ifndef DRALET_SRIOV_ENFORCE_H
#define DRALET_SRIOV_ENFORCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/sriov/apply.h"
#include "agent/sriov/policy.h"

struct hal_roots;
struct hal_scan;
struct node_ops;
struct store;

/* Event reasons, Warning Events about the Node (docs/operations.md, "Events"). */
#define SRIOV_EVENT_REFUSED "SriovNumVfsRefused"	/* a count refused (VFs in use) */
#define SRIOV_EVENT_FAILED "SriovApplyFailed"		/* a write the kernel refused */

/* Applies by PF and outcome (enum sriov_pf_outcome), for the daemon's
 * metrics: zero-initialize, free with sriov_apply_counts_clear. */
struct sriov_pf_counts {
	char pf[24];
	uint64_t by_outcome[SRIOV_PF_FAILED + 1];
};
struct sriov_apply_counts {
	struct sriov_pf_counts *pfs;	/* in order of first apply */
	size_t n;
};
void sriov_apply_counts_clear(struct sriov_apply_counts *c);

/*
 * Applies @pol once to the node of @scan, leaving the VFs in @prep alone,
 * and logs the outcome and counts it per PF in @counts (may be NULL); a
 * refused or failed PF is also recorded as an Event through @events
 * (borrowed; NULL: none, e.g. before the store is open). The writes go
 * through @node (borrowed; NULL: the real node below @roots). *ret_changed tells
 * whether to discover again, *ret_refused (may be NULL) whether a count was
 * refused for a prepared VF (try again later). Returns 0, or -ENOMEM
 * (nothing logged then).
 */
int sriov_enforce(const struct hal_roots *roots, const struct node_ops *node,
		  const struct sriov_policies *pol,
		  const struct hal_scan *scan, const struct sriov_prepared *prep,
		  struct store *events, struct sriov_apply_counts *counts, bool *ret_changed,
		  bool *ret_refused);

/* The same over a fresh scan of @roots; a scan or memory failure is
 * logged and changes nothing (both flags false). */
void sriov_enforce_node(const struct hal_roots *roots, const struct node_ops *node,
			const struct sriov_policies *pol,
			const struct sriov_prepared *prep, struct store *events,
			struct sriov_apply_counts *counts,
			bool *ret_changed, bool *ret_refused);

#endif
