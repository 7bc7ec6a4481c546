/* SPDX-License-Identifier: Apache-2.0 */
#include "backends/sriov/vf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "backends/net/rdma_nodes.h"
#include "backends/sriov/pcidev.h"
#include "backends/sriov/vf_config.h"

static const struct hal_netdev *first_netdev(const struct hal_pci_func *f)
{
	return f && f->n_net ? &f->net[0] : NULL;
}

/* "ethernet" / "infiniband" from the VF's RDMA port, else from the PF class. */
static const char *link_type(const struct hal_pci_func *vf)
{
	const struct hal_ibdev *ib = rdma_primary_ibdev(vf);
	const char *t = ib ? rdma_link_type(ib) : NULL;

	if (t)
		return t;
	if (vf->physfn && hal_pci_class_sub(vf->physfn) == 0x0207)
		return "infiniband";
	if (vf->physfn && hal_pci_class_sub(vf->physfn) == 0x0200)
		return "ethernet";
	return NULL;
}

static void add_attributes(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			   const struct hal_pci_func *vf)
{
	const struct hal_pci_func *pf = vf->physfn;
	const struct hal_netdev *net = first_netdev(vf), *pf_net = first_netdev(pf);
	const struct hal_ibdev *ib = rdma_primary_ibdev(vf);
	const char *type = link_type(vf);
	char id[8];

	if (vf->vf_index >= 0)
		dralet_device_set_int(dev, "vfID", vf->vf_index);
	if (pf) {
		dralet_device_set_string(dev, "pfPciAddress", pf->address);
		snprintf(id, sizeof(id), "0x%04x", pf->device_id);
		dralet_device_set_string(dev, "pfDeviceID", id);
	}
	if (pf_net)
		dralet_device_set_string(dev, "pfName", pf_net->ifname);
	if (net) {
		dralet_device_set_string(dev, "ifName", net->ifname);
		if (net->mac)
			dralet_device_set_string(dev, "mac", net->mac);
		if (net->mtu > 0)
			dralet_device_set_int(dev, "mtu", net->mtu);
	}
	if (vf->driver)
		dralet_device_set_string(dev, "driver", vf->driver);
	dralet_device_set_bool(dev, "vfioCapable", pcidev_vfio_capable(ctx, vf));
	dralet_device_set_bool(dev, "rdmaCapable", ib != NULL);
	if (ib)
		dralet_device_set_string(dev, "rdmaDevice", ib->name);
	if (type)
		dralet_device_set_string(dev, "linkType", type);
	/* what Multus reads from a DRA device to hand the VF to SR-IOV CNI */
	dralet_device_set_string(dev, "k8s.cni.cncf.io/deviceID", vf->address);
}

static bool link_down(const char *operstate)
{
	return operstate && (!strcmp(operstate, "down") || !strcmp(operstate, "lowerlayerdown"));
}

/* Health from the discovery's facts, read a moment ago: for probe. */
static int health_at_probe(const struct hal_pci_func *vf)
{
	const struct hal_netdev *pf_net = first_netdev(vf->physfn);

	if (!vf->driver || !vf->physfn)
		return DRALET_HEALTH_UNHEALTHY;
	return pf_net && link_down(pf_net->operstate) ? DRALET_HEALTH_UNHEALTHY
						       : DRALET_HEALTH_HEALTHY;
}

/* Health from what the node says now: for the health op. */
static int health_now(struct dralet_backend_ctx *ctx, const struct hal_pci_func *vf)
{
	char driver[64], rel[128], state[32];
	const struct hal_netdev *pf_net = first_netdev(vf->physfn);

	if (pcidev_driver_now(ctx, vf, driver, sizeof(driver)) <= 0)
		return DRALET_HEALTH_UNHEALTHY;	/* gone, or no driver to use it through */
	if (!vf->physfn || !pcidev_present(ctx, vf->physfn))
		return DRALET_HEALTH_UNHEALTHY;
	if (pf_net) {
		snprintf(rel, sizeof(rel), "class/net/%s/operstate", pf_net->ifname);
		const char *op = dralet_read_file(ctx, DRALET_ROOT_SYS, rel, state,
						  sizeof(state)) > 0 ? state : pf_net->operstate;
		if (link_down(op))
			return DRALET_HEALTH_UNHEALTHY;	/* no carrier on the PF: no traffic */
	}
	return DRALET_HEALTH_HEALTHY;
}

int vf_probe_device(struct dralet_backend_ctx *ctx, const struct hal_pci_func *func,
		    struct dralet_device **ret_dev)
{
	const struct hal_ibdev *ib = rdma_primary_ibdev(func);
	struct dralet_device *dev;
	int r;

	*ret_dev = NULL;
	if (!func->physfn) {
		dralet_ctx_warn(ctx, "%s is not a virtual function; not published", func->address);
		return 0;
	}
	r = dralet_device_new(ctx, func, "vf", NULL, &dev);
	if (r < 0)
		return r;
	add_attributes(ctx, dev, func);
	r = pcidev_device_add_vfio(ctx, dev, func);
	if (r >= 0 && ib && !pcidev_is_vfio(func))
		r = rdma_device_add_nodes(ctx, dev, ib);
	dralet_device_set_health(dev, health_at_probe(func));
	*ret_dev = dev;
	return r < 0 ? r : 0;
}

int vf_probe(struct dralet_backend_ctx *ctx, const struct hal_pci_func *func)
{
	struct dralet_device *dev;

	return vf_probe_device(ctx, func, &dev);
}

int vf_health(struct dralet_backend_ctx *ctx, struct dralet_device *dev)
{
	return health_now(ctx, dralet_device_pci(dev));
}

int vf_validate_config(struct dralet_backend_ctx *ctx, const char *config,
		       const char *api_version)
{
	struct vf_config c;
	char err[384];
	int r = vf_config_parse(config, api_version, &c, err, sizeof(err));

	if (r == 0)
		r = vf_config_check_supported(&c, err, sizeof(err));
	if (r < 0)
		dralet_ctx_error(ctx, "%s", err);
	return r;
}

int vf_config_apply_check(struct dralet_backend_ctx *ctx, const struct hal_pci_func *func,
			  const char *config, const char *api_version, const char *driver)
{
	struct vf_config c;
	char err[384];
	int r = vf_config_parse(config, api_version, &c, err, sizeof(err));
	bool vfio = driver && !strcmp(driver, "vfio-pci");

	if (r == 0)
		r = vf_config_check_supported(&c, err, sizeof(err));
	if (r < 0) {
		dralet_ctx_error(ctx, "%s", err);
		return r;
	}
	if (!c.has_driver)
		return 0;
	if (!func->physfn) {
		dralet_ctx_error(ctx, "VfConfig.driver applies to virtual functions; %s is a "
				 "physical function", func->address);
		return -EINVAL;
	}
	if (c.driver[0] && !vfio) {
		dralet_ctx_error(ctx, "VfConfig.driver \"vfio-pci\": %s is bound to %s, and "
				 "rebinding a VF to vfio-pci at prepare is not supported yet; "
				 "bind it to vfio-pci beforehand or request a VF already on "
				 "vfio-pci (attribute driver == \"vfio-pci\")", func->address,
				 driver && *driver ? driver : "no driver");
		return -EOPNOTSUPP;
	}
	if (!c.driver[0] && vfio) {
		dralet_ctx_error(ctx, "VfConfig.driver \"\": %s is bound to vfio-pci, and "
				 "returning a VF to its kernel driver at prepare is not supported "
				 "yet; request a VF on its network driver instead", func->address);
		return -EOPNOTSUPP;
	}
	return 0;
}

int vf_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
	       struct dralet_prepare_req *req, const char *api_version)
{
	const struct hal_pci_func *vf = dralet_device_pci(dev);
	const struct hal_netdev *net = first_netdev(vf);
	const struct hal_ibdev *ib = rdma_primary_ibdev(vf);
	struct dralet_edits *e = req->edits;
	char driver[64];
	int r = pcidev_driver_now(ctx, vf, driver, sizeof(driver));
	bool vfio;

	if (r == -ENODEV) {
		dralet_ctx_error(ctx, "VF %s is gone (removed, or its PF's VFs were recreated)",
				 vf->address);
		return r;
	}
	if (r < 0) {
		dralet_ctx_error(ctx, "VF %s: cannot read its driver: %s", vf->address,
				 strerror(-r));
		return r;
	}
	if (r == 0) {
		dralet_ctx_error(ctx, "VF %s has no driver bound; bind it to its network driver "
				 "or to vfio-pci", vf->address);
		return -ENODEV;
	}
	vfio = !strcmp(driver, "vfio-pci");
	if (vfio != pcidev_is_vfio(vf)) {
		dralet_ctx_error(ctx, "VF %s moved from driver %s to %s since discovery; it is "
				 "prepared after the next discovery", vf->address,
				 vf->driver ? vf->driver : "none", driver);
		return -EAGAIN;
	}
	r = vf_config_apply_check(ctx, vf, req->config, api_version, driver);
	if (r < 0)
		return r;

	if (vfio)
		r = pcidev_edit_vfio(ctx, e, dev, vf);
	else
		r = pcidev_edit_device_nodes(e, dev);
	if (r >= 0)
		r = pcidev_env(e, dev, "PCI_ADDRESS", vf->address);
	if (r >= 0 && vf->physfn)
		r = pcidev_env(e, dev, "PF_PCI_ADDRESS", vf->physfn->address);
	if (r >= 0 && vf->vf_index >= 0)
		r = pcidev_env_int(e, dev, "VF_ID", vf->vf_index);
	if (r >= 0)
		r = pcidev_env(e, dev, "DRIVER", driver);
	if (r >= 0 && net && !vfio)
		r = pcidev_env(e, dev, "NETDEV", net->ifname);
	if (r >= 0 && net && !vfio)
		r = pcidev_env(e, dev, "MAC", net->mac);
	if (r >= 0 && ib && !vfio)
		r = pcidev_env(e, dev, "RDMA_DEVICE", ib->name);
	if (r >= 0)
		r = pcidev_undo_record(req->undo, vf, driver);
	if (r < 0 && !(r == -ENODEV || r == -ENOENT))
		dralet_ctx_error(ctx, "VF %s: preparing the container edits failed: %s",
				 vf->address, strerror(-r));
	return r < 0 ? r : 0;
}

int vf_unprepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		 const struct dralet_claim_ref *claim, const struct dralet_undo *undo)
{
	(void)ctx;
	(void)dev;
	(void)claim;
	(void)undo;
	return 0;
}
