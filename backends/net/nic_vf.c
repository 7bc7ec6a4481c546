/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nic-vf: the virtual functions of NIC physical functions (PF class 0x02xx),
 * published as kind "vf" under net.dralet.dev. A VF that is an RDMA device
 * itself (its own ibdev) goes to the rdma backend, which scores higher; a VF
 * of a PF the sriov backend's "pfs" option selects goes there.
 *
 * Shared mode (option sharing: "true"; docs/sharing.md, "NIC VFs by
 * bandwidth"): a VF is published with allowMultipleAllocations and a
 * capacity "bandwidth" (vf_bandwidth.h); each share adds its bandwidth to the
 * VF's transmit cap. A share takes no VfConfig driver or settings (they
 * change the whole VF the other shares use) unless it holds all of the
 * bandwidth, and then it is prepared as an exclusive claim, without a cap.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <dralet/sharing.h>

#include "net.h"
#include "../common/pcidev.h"
#include "../common/sharing_option.h"
#include "../common/vf.h"
#include "../common/vf_bandwidth.h"
#include "../common/vf_config.h"

static const struct dralet_option nic_vf_options[] = {
	SHARING_OPTION,
	{ NULL, 0 },
};

/* Whatever its IDs, a VF of a network PF is ours. */
static const struct dralet_pci_id nic_vf_ids[] = {
	DRALET_PCI_ANY_FUNCTION,
	{ 0, 0, 0, 0 },
};

static int nic_vf_filter(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
			 const struct dralet_pci_id *id, int score)
{
	(void)ctx;
	(void)id;
	(void)score;
	if (!func->physfn || dralet_pci_class(func->physfn) != 0x02)
		return 0;
	return NIC_VF_SCORE;
}

static int nic_vf_probe(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
			const struct dralet_pci_id *id)
{
	struct dralet_device *dev;
	int r;

	(void)id;
	r = vf_probe_device(ctx, func, &dev);
	if (r >= 0 && dev)
		vf_bandwidth_publish(ctx, dev, func);
	return r;
}

static int nic_vf_validate_config(struct dralet_backend_ctx *ctx, const char *config)
{
	return vf_validate_config(ctx, config, NET_API_VERSION);
}

static int nic_vf_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			  struct dralet_prepare_req *req)
{
	const struct dralet_pci_func *vf = dralet_device_pci(dev);
	struct vf_config c;
	char err[384];
	int64_t bits;
	bool whole;
	int r;

	if (!req->share_id)
		return vf_prepare(ctx, dev, req, NET_API_VERSION);
	/* a share of the whole link holds the VF alone: it may configure it,
	 * and its cap would be the link itself */
	whole = vf_bandwidth_whole(dev, req);
	if ((r = vf_config_parse(req->config, NET_API_VERSION, &c, err, sizeof(err))) < 0) {
		dralet_ctx_error(ctx, "%s", err);
		return r;
	}
	if (!whole && (c.has_driver || vf_config_has_settings(&c))) {
		dralet_ctx_error(ctx, "VF %s: share %s asks for VfConfig.%s, which changes the "
				 "whole VF its other shares use; request all of its bandwidth (or "
				 "none) to configure it", vf->address, req->share_id,
				 c.has_driver ? "driver" : vf_config_first_setting(&c));
		return -EINVAL;
	}
	/* a partial share has no VfConfig, so vf_prepare changes nothing on the
	 * host; the cap comes last, so a failure leaves nothing to take back */
	if ((r = vf_prepare(ctx, dev, req, NET_API_VERSION)) < 0)
		return r;
	r = pcidev_env(req->edits, dev, "SHARE_ID", req->share_id);
	if (r >= 0 && dralet_prepare_consumed(req, dralet_ctx_driver(ctx), "bandwidth", &bits) == 0)
		r = pcidev_env_int(req->edits, dev, "SHARE_BANDWIDTH", bits);
	if (r < 0) {
		dralet_ctx_error(ctx, "VF %s: preparing the container edits failed: %s",
				 vf->address, strerror(-r));
		vf_unprepare(ctx, dev, &req->claim, req->undo);
		return r;
	}
	return whole ? 0 : vf_bandwidth_prepare(ctx, vf, req);
}

static int nic_vf_unprepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			    const struct dralet_claim_ref *claim, const struct dralet_undo *undo)
{
	int r = vf_unprepare(ctx, dev, claim, undo);

	return r < 0 ? r : vf_bandwidth_restore(ctx, undo);
}

const struct dralet_backend backend_nic_vf = {
	.abi = DRALET_BACKEND_ABI,
	.name = "nic-vf",
	.family = "net",
	.default_driver = NET_DRIVER,
	.ids = nic_vf_ids,
	.filter = nic_vf_filter,
	.probe = nic_vf_probe,
	.validate_config = nic_vf_validate_config,
	.admin_config_keys = vf_config_admin_keys,
	.prepare = nic_vf_prepare,
	.unprepare = nic_vf_unprepare,
	.health = vf_health,
	.options = nic_vf_options,
};
