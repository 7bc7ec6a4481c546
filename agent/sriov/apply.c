/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/sriov/apply.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/lib/err_msg.h"
#include "hal/hal.h"
#include "hal/pci_sriov.h"

const char *sriov_pf_outcome_name(enum sriov_pf_outcome o)
{
	switch (o) {
	case SRIOV_PF_CHANGED: return "changed";
	case SRIOV_PF_REFUSED: return "refused";
	case SRIOV_PF_FAILED: return "failed";
	default: return "unchanged";
	}
}

/* Keeps the first failure of a PF as its message. */
static void failure(struct sriov_pf_report *rep, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void failure(struct sriov_pf_report *rep, const char *fmt, ...)
{
	va_list ap;

	rep->errors++;
	if (rep->outcome == SRIOV_PF_FAILED)
		return;
	rep->outcome = SRIOV_PF_FAILED;
	va_start(ap, fmt);
	err_vprintf(rep->message, sizeof(rep->message), 0, fmt, ap);
	va_end(ap);
}

static int set_binding(const struct node_ops *node, const struct sriov_vf_step *s, char *err,
		       size_t errlen)
{
	switch (s->bind) {
	case SRIOV_BIND_DEFAULT:
		return hal_pci_set_driver(node, s->vf->address, NULL, err, errlen);
	case SRIOV_BIND_VFIO:
		return hal_pci_set_driver(node, s->vf->address, "vfio-pci", err, errlen);
	case SRIOV_BIND_UNBIND:
		return hal_pci_unbind(node, s->vf->address, err, errlen);
	default:
		return 0;
	}
}

/* The settings of one VF: only what differs is sent. 1 when sent. */
static int apply_settings(const struct node_ops *node, const struct dralet_netdev *pf_net,
			  const struct sriov_vf_step *s, bool dry_run, char *err, size_t errlen)
{
	struct dralet_vf_settings now = DRALET_VF_SETTINGS_INIT, diff;
	int r;

	r = node->vf_get(node->userdata, pf_net->ifname, pf_net->ifindex, (unsigned)s->vf->index,
			 &now);
	if (r < 0)
		return err_printf(err, errlen, r, "cannot read its settings through the PF: %s",
				  strerror(-r));
	if (!sriov_settings_diff(&s->settings, &now, &diff))
		return 0;
	if (dry_run)
		return 1;
	r = node->vf_set(node->userdata, pf_net->ifname, pf_net->ifindex, (unsigned)s->vf->index,
			 &diff);
	if (r < 0)
		return err_printf(err, errlen, r, "setting it through the PF failed: %s%s",
				  strerror(-r), r == -EOPNOTSUPP ? " (the PF's driver does not "
				  "support a setting of vfSettings)" : "");
	return 1;
}

static void apply_vfs(const struct node_ops *node, const struct sriov_policy *pol,
		      const struct dralet_pci_func *pf, const struct hal_pf_state *st,
		      const struct sriov_prepared *prep, bool dry_run, struct sriov_pf_report *rep)
{
	const struct dralet_netdev *pf_net = pf->n_net ? &pf->net[0] : NULL;
	int ifindex = pf_net && pf_net->ifname ? pf_net->ifindex : -1;
	struct sriov_vf_step *steps = calloc(st->n_vfs + 1, sizeof(*steps));
	struct err_msg err;

	if (!steps) {
		failure(rep, "PF %s: out of memory", pf->address);
		return;
	}
	if (pol->has_settings && ifindex <= 0)
		failure(rep, "PF %s: policy %s has vfSettings, which are set through the PF's "
			"network interface, and the PF has none; they are left out", pf->address,
			pol->name);
	sriov_plan_vfs(pol, st, prep, ifindex > 0, steps);
	for (size_t i = 0; i < st->n_vfs; i++) {
		const struct sriov_vf_step *s = &steps[i];
		int r;

		err.text[0] = '\0';
		if (s->set) {
			r = apply_settings(node, pf_net, s, dry_run, ERR_MSG_ARGS(&err));
			if (r < 0)
				failure(rep, "PF %s: VF %d (%s): %s", pf->address, s->vf->index,
					s->vf->address, err.text);
			else if (r > 0)
				rep->vfs_set++;
		}
		if (s->bind == SRIOV_BIND_KEEP)
			continue;
		r = dry_run ? 0 : set_binding(node, s, ERR_MSG_ARGS(&err));
		if (r < 0)
			failure(rep, "PF %s: VF %d: %s", pf->address, s->vf->index,
				err.text[0] ? err.text : strerror(-r));
		else
			rep->vfs_rebound++;
	}
	free(steps);
}

static void apply_pf(const struct node_ops *node, const struct sriov_policy *pol,
		     const struct dralet_pci_func *pf, const struct sriov_prepared *prep,
		     bool dry_run, struct sriov_pf_report *rep)
{
	struct hal_pf_state st;
	struct sriov_count_plan plan;
	struct err_msg err = { "" };
	int r;

	rep->wanted = pol->num_vfs;
	r = hal_pf_state_read(node, pf->address, &st);
	if (r < 0) {
		failure(rep, "PF %s: cannot read its SR-IOV state: %s", pf->address,
			r == -ENODEV ? "it is gone" : strerror(-r));
		return;
	}
	rep->before = rep->after = st.num_vfs;
	sriov_plan_count(pol, pf->address, &st, prep, &plan);
	if (plan.action == SRIOV_COUNT_REFUSED) {
		rep->outcome = SRIOV_PF_REFUSED;
		err_printf(rep->message, sizeof(rep->message), 0, "%s", plan.reason);
	} else if (plan.action == SRIOV_COUNT_SET && dry_run) {
		rep->after = plan.to;
		rep->vfs_changed = true;
	} else if (plan.action == SRIOV_COUNT_SET) {
		r = hal_sriov_set_numvfs(node, pf->address, plan.to, plan.autoprobe,
					 ERR_MSG_ARGS(&err));
		hal_pf_state_clear(&st);
		if (hal_pf_state_read(node, pf->address, &st) < 0) {
			failure(rep, "PF %s: %s", pf->address,
				err.text[0] ? err.text : "gone after changing its VF count");
			rep->vfs_changed = true;
			return;
		}
		rep->after = st.num_vfs;
		rep->vfs_changed = rep->after != rep->before || r >= 0;
		if (r < 0)
			failure(rep, "%s", err.text[0] ? err.text : strerror(-r));
		else if ((unsigned)r < plan.to)
			failure(rep, "%s", err.text);
	}
	if (!dry_run || plan.action != SRIOV_COUNT_SET)
		apply_vfs(node, pol, pf, &st, prep, dry_run, rep);
	/* for the VFs created later, and so the next run sees the policy's value */
	if (st.autoprobe >= 0 && st.autoprobe != plan.autoprobe) {
		r = dry_run ? 0 : hal_sriov_set_autoprobe(node, pf->address, plan.autoprobe,
							  ERR_MSG_ARGS(&err));
		if (r < 0)
			failure(rep, "%s", err.text);
		else
			rep->autoprobe_set = true;
	}
	hal_pf_state_clear(&st);
	if (rep->outcome == SRIOV_PF_UNCHANGED &&
	    (rep->vfs_changed || rep->vfs_rebound || rep->vfs_set || rep->autoprobe_set))
		rep->outcome = SRIOV_PF_CHANGED;
}

int sriov_apply(const struct node_ops *node, const struct sriov_policies *pol,
		const struct hal_scan *scan, const struct sriov_prepared *prep,
		const struct sriov_apply_options *opts, struct sriov_report **ret)
{
	struct sriov_report *rep = calloc(1, sizeof(*rep));
	bool dry_run = opts && opts->dry_run;

	if (!rep || !(rep->pfs = calloc(scan->n_funcs + 1, sizeof(*rep->pfs)))) {
		free(rep);
		return -ENOMEM;
	}
	for (size_t i = 0; i < scan->n_funcs; i++) {
		const struct dralet_pci_func *pf = scan->funcs[i];
		const struct sriov_policy *also, *p = sriov_policy_for(pol, pf, &also);
		struct sriov_pf_report *r;

		if (!p || (opts && opts->only_pf && strcmp(opts->only_pf, pf->address)))
			continue;
		r = &rep->pfs[rep->n++];
		snprintf(r->pf, sizeof(r->pf), "%s", pf->address);
		r->policy = p->name;
		r->also = also ? also->name : NULL;
		apply_pf(node, p, pf, prep, dry_run, r);
		rep->vfs_changed |= r->vfs_changed;
		rep->changed |= r->vfs_changed || r->vfs_rebound || r->vfs_set || r->autoprobe_set;
	}
	*ret = rep;
	return 0;
}

void sriov_report_free(struct sriov_report *r)
{
	if (!r)
		return;
	free(r->pfs);
	free(r);
}
