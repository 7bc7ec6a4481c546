/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/sriov/policy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct sriov_prepared_vf *sriov_prepared_find(const struct sriov_prepared *p,
						    const char *address)
{
	for (size_t i = 0; p && i < p->n; i++)
		if (!strcmp(p->vfs[i].address, address))
			return &p->vfs[i];
	return NULL;
}

int sriov_prepared_add(struct sriov_prepared *p, const struct sriov_prepared_vf *vf)
{
	struct sriov_prepared_vf *grown = realloc(p->vfs, (p->n + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	p->vfs = grown;
	p->vfs[p->n++] = *vf;
	return 0;
}

void sriov_prepared_clear(struct sriov_prepared *p)
{
	free(p->vfs);
	p->vfs = NULL;
	p->n = 0;
}

/* A VF of @st with index @min_index or above that is prepared for a claim. */
static const struct sriov_prepared_vf *first_prepared(const struct hal_pf_state *st,
						      const struct sriov_prepared *prep,
						      unsigned min_index, int *ret_index)
{
	for (size_t i = 0; i < st->n_vfs; i++) {
		const struct sriov_prepared_vf *p = sriov_prepared_find(prep, st->vfs[i].address);
		if (p && st->vfs[i].index >= (int)min_index) {
			*ret_index = st->vfs[i].index;
			return p;
		}
	}
	return NULL;
}

void sriov_plan_count(const struct sriov_policy *pol, const char *pf_address,
		      const struct hal_pf_state *st, const struct sriov_prepared *prep,
		      struct sriov_count_plan *ret)
{
	const struct sriov_prepared_vf *p;
	int index = -1;

	*ret = (struct sriov_count_plan){
		.action = SRIOV_COUNT_KEEP, .from = st->num_vfs, .to = pol->num_vfs,
		.autoprobe = pol->vf_driver == SRIOV_VF_DRIVER_DEFAULT ? 1 : 0,
	};
	/* onDemand: the count belongs to the prepares (backends/sriov/on_demand.h) */
	if (pol->on_demand)
		ret->to = st->num_vfs;
	if (pol->on_demand || st->num_vfs == pol->num_vfs)
		return;
	ret->action = SRIOV_COUNT_REFUSED;
	if (pol->num_vfs > st->total_vfs) {
		snprintf(ret->reason, sizeof(ret->reason), "PF %s: policy %s wants %u VFs, the PF "
			 "supports %u (sriov_totalvfs)", pf_address, pol->name, pol->num_vfs,
			 st->total_vfs);
		return;
	}
	if (!st->driver[0]) {
		snprintf(ret->reason, sizeof(ret->reason), "PF %s: no driver is bound to it, and "
			 "only its driver can create VFs", pf_address);
		return;
	}
	if ((p = first_prepared(st, prep, pol->num_vfs, &index))) {
		snprintf(ret->reason, sizeof(ret->reason), "PF %s: policy %s wants %u VFs, but VF "
			 "%d (%s) is prepared for claim %s; refusing to remove it (the count changes "
			 "once the claim is unprepared)", pf_address, pol->name, pol->num_vfs, index,
			 p->address, p->claim);
		return;
	}
	if ((p = first_prepared(st, prep, 0, &index))) {
		snprintf(ret->reason, sizeof(ret->reason), "PF %s: policy %s wants %u VFs instead "
			 "of %u, and the kernel changes a count only through 0, which would remove "
			 "VF %d (%s) prepared for claim %s; the count changes once no VF of the PF "
			 "is prepared", pf_address, pol->name, pol->num_vfs, st->num_vfs, index,
			 p->address, p->claim);
		return;
	}
	ret->action = SRIOV_COUNT_SET;
}

void sriov_plan_vfs(const struct sriov_policy *pol, const struct hal_pf_state *st,
		    const struct sriov_prepared *prep, bool pf_has_netdev,
		    struct sriov_vf_step *steps)
{
	for (size_t i = 0; i < st->n_vfs; i++) {
		const struct hal_vf_state *vf = &st->vfs[i];
		struct sriov_vf_step *s = &steps[i];
		bool vfio = !strcmp(vf->driver, "vfio-pci");

		*s = (struct sriov_vf_step){ .vf = vf, .bind = SRIOV_BIND_KEEP };
		s->prepared = sriov_prepared_find(prep, vf->address);
		if (s->prepared)
			continue;
		switch (pol->vf_driver) {
		case SRIOV_VF_DRIVER_DEFAULT:
			/* an override (ours or another's) or vfio-pci: back to the kernel's
			 * choice; no driver and autoprobe was off (another vfDriver before):
			 * let the kernel try once (apply turns autoprobe on) */
			if (vf->override[0] || vfio || (!vf->driver[0] && st->autoprobe == 0))
				s->bind = SRIOV_BIND_DEFAULT;
			break;
		case SRIOV_VF_DRIVER_VFIO:
			if (!vfio || strcmp(vf->override, "vfio-pci"))
				s->bind = SRIOV_BIND_VFIO;
			break;
		case SRIOV_VF_DRIVER_NONE:
			if (vf->driver[0] || vf->override[0])
				s->bind = SRIOV_BIND_UNBIND;
			break;
		}
		if (pol->has_settings && pf_has_netdev && vf->index >= 0) {
			s->set = true;
			s->settings = pol->settings;
			if (pol->settings.has_mac)
				sriov_policy_vf_mac(pol, (unsigned)vf->index, s->settings.mac);
		}
	}
}

bool sriov_settings_diff(const struct dralet_vf_settings *want, const struct dralet_vf_settings *now,
			 struct dralet_vf_settings *ret)
{
	struct dralet_vf_settings d = DRALET_VF_SETTINGS_INIT;
	bool any = false;

	if (want->has_mac && (!now->has_mac || memcmp(want->mac, now->mac, 6))) {
		d.has_mac = any = true;
		memcpy(d.mac, want->mac, 6);
	}
	if (want->has_vlan && (!now->has_vlan || want->vlan != now->vlan ||
			       want->qos != now->qos)) {
		d.has_vlan = any = true;
		d.vlan = want->vlan;
		d.qos = want->qos;
	}
	if (want->trust >= 0 && want->trust != now->trust) {
		d.trust = want->trust;
		any = true;
	}
	if (want->spoof_check >= 0 && want->spoof_check != now->spoof_check) {
		d.spoof_check = want->spoof_check;
		any = true;
	}
	if (want->link_state >= 0 && want->link_state != now->link_state) {
		d.link_state = want->link_state;
		any = true;
	}
	if (want->has_rate && (!now->has_rate || want->min_tx_mbps != now->min_tx_mbps ||
			       want->max_tx_mbps != now->max_tx_mbps)) {
		d.has_rate = any = true;
		d.min_tx_mbps = want->min_tx_mbps;
		d.max_tx_mbps = want->max_tx_mbps;
	}
	*ret = d;
	return any;
}
