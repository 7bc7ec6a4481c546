/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nic-vf: the virtual functions of NIC physical functions (PF class 0x02xx),
 * published as kind "vf" under net.dralet.dev. A VF that is an RDMA device
 * itself (its own ibdev) goes to the rdma backend, which scores higher; a VF
 * of a PF the sriov backend's "pfs" option selects goes there.
 */
#include "net.h"
#include "../common/vf.h"
#include "../common/vf_config.h"

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

static int nic_vf_validate_config(struct dralet_backend_ctx *ctx, const char *config)
{
	return vf_validate_config(ctx, config, NET_API_VERSION);
}

static int nic_vf_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			  struct dralet_prepare_req *req)
{
	return vf_prepare(ctx, dev, req, NET_API_VERSION);
}

const struct dralet_backend backend_nic_vf = {
	.abi = DRALET_BACKEND_ABI,
	.name = "nic-vf",
	.family = "net",
	.default_driver = NET_DRIVER,
	.ids = nic_vf_ids,
	.filter = nic_vf_filter,
	.probe = vf_probe,
	.validate_config = nic_vf_validate_config,
	.admin_config_keys = vf_config_admin_keys,
	.prepare = nic_vf_prepare,
	.unprepare = vf_unprepare,
	.health = vf_health,
};
