/* SPDX-License-Identifier: Apache-2.0 */
#include "vf_bandwidth.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dralet/pci_ctl.h>
#include <dralet/sharing.h>

#include "sharing_option.h"

#define MBPS 1000000LL

int64_t vf_bandwidth_step_mbps(int64_t speed_mbps)
{
	return speed_mbps % 100 ? 1 : 100;
}

static const struct dralet_netdev *pf_netdev(const struct dralet_pci_func *vf)
{
	const struct dralet_pci_func *pf = vf->physfn;

	if (!pf || !pf->n_net || !pf->net[0].ifname || pf->net[0].ifindex <= 0 ||
	    vf->vf_index < 0)
		return NULL;
	return &pf->net[0];
}

void vf_bandwidth_publish(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			  const struct dralet_pci_func *vf)
{
	const struct dralet_netdev *pf = pf_netdev(vf);
	char min[32], max[32];
	int64_t speed, step;

	if (!pf || pf->speed_mbps <= 0 || !sharing_enabled(ctx))
		return;
	speed = pf->speed_mbps;
	step = vf_bandwidth_step_mbps(speed);
	snprintf(min, sizeof(min), "%" PRId64 "M", step);
	snprintf(max, sizeof(max), "%" PRId64 "M", speed);
	struct dralet_capacity_policy p = { .default_value = max, .range_min = min,
					    .range_max = max, .range_step = min };
	if (dralet_device_allow_multiple(dev) < 0 ||
	    dralet_device_set_capacity_int(dev, "bandwidth", speed * MBPS) < 0)
		return;
	dralet_device_set_capacity_policy(dev, "bandwidth", &p);
}

bool vf_bandwidth_whole(const struct dralet_device *dev, const struct dralet_prepare_req *req)
{
	int64_t want, have = -1;

	for (size_t i = 0; i < dralet_device_n_capacities(dev); i++) {
		const struct dralet_capacity *c = dralet_device_capacity(dev, i);
		if (!strcmp(c->name, "bandwidth") && dralet_quantity_value(c->quantity, &have) < 0)
			return false;
	}
	if (have <= 0 || dralet_prepare_consumed(req, dralet_device_driver(dev), "bandwidth",
						 &want) < 0)
		return false;
	return want >= have;
}

int vf_bandwidth_prepare(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *vf,
			 const struct dralet_prepare_req *req)
{
	const struct dralet_netdev *pf = pf_netdev(vf);
	struct dralet_vf_settings now = DRALET_VF_SETTINGS_INIT, want = DRALET_VF_SETTINGS_INIT;
	char text[256];
	int64_t bits, mbps;
	unsigned before;
	int r;

	if (!req->share_id)
		return 0;
	if (dralet_prepare_consumed(req, dralet_ctx_driver(ctx), "bandwidth", &bits) < 0 ||
	    bits <= 0) {
		dralet_ctx_error(ctx, "VF %s: share %s consumes no bandwidth; a VF shared by "
				 "bandwidth needs the amount the scheduler allocated",
				 vf->address, req->share_id);
		return -EINVAL;
	}
	if (!pf) {
		dralet_ctx_error(ctx, "VF %s: its bandwidth is capped through its PF's network "
				 "interface, and the PF has none", vf->address);
		return -EOPNOTSUPP;
	}
	mbps = (bits + MBPS - 1) / MBPS;
	if ((r = dralet_vf_get(ctx, pf, (unsigned)vf->vf_index, &now)) < 0) {
		dralet_ctx_error(ctx, "VF %s: cannot read its transmit rate through %s: %s",
				 vf->address, pf->ifname, strerror(-r));
		return r;
	}
	before = now.has_rate ? now.max_tx_mbps : 0;
	if (mbps > (int64_t)(UINT32_MAX - before)) {
		dralet_ctx_error(ctx, "VF %s: a transmit cap of %u + %" PRId64 " Mb/s is beyond "
				 "what the kernel takes", vf->address, before, mbps);
		return -ERANGE;
	}
	snprintf(text, sizeof(text), "pf=%s ifindex=%d vf=%d mbps=%" PRId64 " before=%u",
		 pf->ifname, pf->ifindex, vf->vf_index, mbps, before);
	if ((r = dralet_undo_set(req->undo, "bandwidth", text)) < 0) {
		dralet_ctx_error(ctx, "VF %s: cannot record its transmit rate before changing "
				 "it: %s", vf->address, strerror(-r));
		return r;
	}
	want.has_rate = true;
	want.min_tx_mbps = now.has_rate ? now.min_tx_mbps : 0;
	want.max_tx_mbps = before + (unsigned)mbps;
	if ((r = dralet_vf_set(ctx, pf, (unsigned)vf->vf_index, &want)) < 0) {
		dralet_ctx_error(ctx, "VF %s: setting its transmit cap (max_tx_rate %u Mb/s) through "
				 "%s failed: %s%s", vf->address, want.max_tx_mbps, pf->ifname,
				 strerror(-r), r == -EOPNOTSUPP ? " (the PF's driver cannot cap a "
				 "VF's rate; turn sharing off for this NIC)" : "");
		return r;
	}
	if ((r = dralet_undo_set(req->undo, "bandwidthApplied", "1")) < 0) {
		dralet_ctx_error(ctx, "VF %s: cannot record its new transmit cap: %s", vf->address,
				 strerror(-r));
		return r;	/* the agent's rollback takes it back: "before" differs now */
	}
	return 0;
}

struct bandwidth_undo {
	char ifname[64];
	long ifindex, vf, mbps, before;
};

static bool parse_undo(const char *text, struct bandwidth_undo *u)
{
	char copy[256], *save = NULL;

	*u = (struct bandwidth_undo){ .ifindex = -1, .vf = -1, .mbps = -1, .before = -1 };
	if (!text || strlen(text) >= sizeof(copy))
		return false;
	snprintf(copy, sizeof(copy), "%s", text);
	for (char *f = strtok_r(copy, " ", &save); f; f = strtok_r(NULL, " ", &save)) {
		char *v = strchr(f, '=');
		if (!v)
			return false;
		*v++ = '\0';
		if (!strcmp(f, "pf"))
			snprintf(u->ifname, sizeof(u->ifname), "%s", v);
		else if (!strcmp(f, "ifindex"))
			u->ifindex = strtol(v, NULL, 10);
		else if (!strcmp(f, "vf"))
			u->vf = strtol(v, NULL, 10);
		else if (!strcmp(f, "mbps"))
			u->mbps = strtol(v, NULL, 10);
		else if (!strcmp(f, "before"))
			u->before = strtol(v, NULL, 10);
	}
	return u->ifname[0] && u->ifindex > 0 && u->vf >= 0 && u->mbps > 0 && u->before >= 0;
}

int vf_bandwidth_restore(struct dralet_backend_ctx *ctx, const struct dralet_undo *undo)
{
	struct dralet_vf_settings now = DRALET_VF_SETTINGS_INIT, want = DRALET_VF_SETTINGS_INIT;
	const char *text = dralet_undo_get(undo, "bandwidth");
	bool applied = dralet_undo_get(undo, "bandwidthApplied") != NULL;
	struct bandwidth_undo u;
	struct dralet_netdev pf;
	unsigned cap;
	int r;

	if (!text)
		return 0;	/* prepare changed nothing */
	if (!parse_undo(text, &u)) {
		dralet_ctx_error(ctx, "the recorded transmit cap \"%s\" cannot be read", text);
		return -EINVAL;
	}
	pf = (struct dralet_netdev){ .ifname = u.ifname, .ifindex = (int)u.ifindex };
	r = dralet_vf_get(ctx, &pf, (unsigned)u.vf, &now);
	if (r == -ENODEV)
		return 0;	/* the PF's interface is gone, and its VFs with it */
	if (r < 0)
		return r;
	cap = now.has_rate ? now.max_tx_mbps : 0;
	/* a crash before the cap was raised: it is still what it was */
	if (!applied && cap == (unsigned)u.before)
		return 0;
	want.has_rate = true;
	want.min_tx_mbps = now.has_rate ? now.min_tx_mbps : 0;
	want.max_tx_mbps = cap > (unsigned)u.mbps ? cap - (unsigned)u.mbps : 0;
	r = dralet_vf_set(ctx, &pf, (unsigned)u.vf, &want);
	return r == -ENODEV ? 0 : r;
}
