/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/sriov/enforce.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/kube/store.h"
#include "agent/lib/log.h"
#include "hal/hal.h"
#include "hal/node_ops.h"

void sriov_apply_counts_clear(struct sriov_apply_counts *c)
{
	if (!c)
		return;
	free(c->pfs);
	c->pfs = NULL;
	c->n = 0;
}

static void count_report(struct sriov_apply_counts *c, const struct sriov_report *rep)
{
	for (size_t i = 0; c && i < rep->n; i++) {
		const struct sriov_pf_report *p = &rep->pfs[i];
		size_t k;

		for (k = 0; k < c->n; k++)
			if (!strcmp(c->pfs[k].pf, p->pf))
				break;
		if (k == c->n) {
			struct sriov_pf_counts *more = realloc(c->pfs, (c->n + 1) * sizeof(*more));

			if (!more)
				continue;	/* not counted; the apply itself is logged */
			c->pfs = more;
			memset(&c->pfs[k], 0, sizeof(c->pfs[k]));
			snprintf(c->pfs[k].pf, sizeof(c->pfs[k].pf), "%s", p->pf);
			c->n++;
		}
		if (p->outcome <= SRIOV_PF_FAILED)
			c->pfs[k].by_outcome[p->outcome]++;
	}
}

static void log_report(const struct sriov_report *rep, struct store *events, bool *ret_refused)
{
	bool refused = false;

	for (size_t i = 0; i < rep->n; i++) {
		const struct sriov_pf_report *p = &rep->pfs[i];
		const char *const *kv = LOG_KV("pf", p->pf, "policy", p->policy);

		if (p->also)
			log_warn_kv(kv, "sriov: PF %s: policies %s and %s both select it; %s applies",
				    p->pf, p->policy, p->also, p->policy);
		switch (p->outcome) {
		case SRIOV_PF_CHANGED:
			log_info_kv(kv, "sriov: PF %s (policy %s): %u VFs (was %u), %u rebound, %u "
				    "with new settings", p->pf, p->policy, p->after, p->before,
				    p->vfs_rebound, p->vfs_set);
			break;
		case SRIOV_PF_REFUSED:
			refused = true;
			log_error_kv(LOG_KV("pf", p->pf, "policy", p->policy, "err", p->message),
				     "sriov: %s", p->message);
			if (events)
				events->ops->record_event(events, NULL, "Warning", SRIOV_EVENT_REFUSED,
							  p->message);
			break;
		case SRIOV_PF_FAILED:
			log_error_kv(LOG_KV("pf", p->pf, "policy", p->policy, "err", p->message),
				     "sriov: %s%s", p->message,
				     p->errors > 1 ? " (and more errors on this PF)" : "");
			if (events)
				events->ops->record_event(events, NULL, "Warning", SRIOV_EVENT_FAILED,
							  p->message);
			break;
		default:
			log_debug_kv(kv, "sriov: PF %s (policy %s): as the policy says (%u VFs)",
				     p->pf, p->policy, p->after);
		}
	}
	if (ret_refused)
		*ret_refused = refused;
}

int sriov_enforce(const struct hal_roots *roots, const struct node_ops *node,
		  const struct sriov_policies *pol,
		  const struct hal_scan *scan, const struct sriov_prepared *prep,
		  struct store *events, struct sriov_apply_counts *counts, bool *ret_changed,
		  bool *ret_refused)
{
	struct node_ops real = node_ops_real(roots);
	struct sriov_report *rep;
	int r;

	*ret_changed = false;
	if (ret_refused)
		*ret_refused = false;
	if (!pol || !pol->n)
		return 0;
	r = sriov_apply(node ? node : &real, pol, scan, prep, NULL, &rep);
	if (r < 0)
		return r;
	log_report(rep, events, ret_refused);
	count_report(counts, rep);
	*ret_changed = rep->changed;
	sriov_report_free(rep);
	return 0;
}

void sriov_enforce_node(const struct hal_roots *roots, const struct node_ops *node,
			const struct sriov_policies *pol,
			const struct sriov_prepared *prep, struct store *events,
			struct sriov_apply_counts *counts,
			bool *ret_changed, bool *ret_refused)
{
	struct hal_scan_options so = { .no_names = true };
	struct hal_scan *scan = NULL;
	int r;

	*ret_changed = *ret_refused = false;
	if (!pol || !pol->n)
		return;
	r = hal_scan(roots, &so, &scan);
	if (r < 0)
		log_error("sriov: cannot scan the node: %s", strerror(-r));
	else if (sriov_enforce(roots, node, pol, scan, prep, events, counts, ret_changed,
			       ret_refused) < 0)
		log_error("sriov: out of memory applying the policies");
	hal_scan_free(scan);
}
