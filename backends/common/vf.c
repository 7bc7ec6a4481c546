/* SPDX-License-Identifier: Apache-2.0 */
#include "vf.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <dralet/pci_ctl.h>

#include "rdma_nodes.h"
#include "pcidev.h"
#include "vf_config.h"
#include "vf_lifecycle.h"

static const struct dralet_netdev *first_netdev(const struct dralet_pci_func *f)
{
	return f && f->n_net ? &f->net[0] : NULL;
}

/* "ethernet" / "infiniband" from the VF's RDMA port, else from the PF class. */
static const char *link_type(const struct dralet_pci_func *vf)
{
	const struct dralet_ibdev *ib = rdma_primary_ibdev(vf);
	const char *t = ib ? rdma_link_type(ib) : NULL;

	if (t)
		return t;
	if (vf->physfn && dralet_pci_class_sub(vf->physfn) == 0x0207)
		return "infiniband";
	if (vf->physfn && dralet_pci_class_sub(vf->physfn) == 0x0200)
		return "ethernet";
	return NULL;
}

void vf_add_attributes(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		       const struct dralet_pci_func *vf)
{
	const struct dralet_pci_func *pf = vf->physfn;
	const struct dralet_netdev *net = first_netdev(vf), *pf_net = first_netdev(pf);
	const struct dralet_ibdev *ib = rdma_primary_ibdev(vf);
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
	/* net.dralet.dev's RDMA devices carry isVF too: a claim's `isVF` must
	 * never be a CEL "no such key" error, which fails the whole claim */
	dralet_device_set_bool(dev, "isVF", true);
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

/* Health from the discovery's facts, read a moment ago: for probe. It
 * judges as health_now does, so the first health round changes nothing (a
 * flip would be one more slice write for every rediscovery). */
static int health_at_probe(const struct dralet_pci_func *vf)
{
	const struct dralet_netdev *pf_net = first_netdev(vf->physfn);

	if (!vf->physfn)
		return DRALET_HEALTH_UNHEALTHY;
	return pf_net && link_down(pf_net->operstate) ? DRALET_HEALTH_UNHEALTHY
						       : DRALET_HEALTH_HEALTHY;
}

/* Health from what the node says now: for the health op. */
static int health_now(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *vf)
{
	char driver[64], rel[128], state[32];
	const struct dralet_netdev *pf_net = first_netdev(vf->physfn);

	/* no driver is fine: prepare binds one (VfConfig.driver), as policies with
	 * vfDriver none intend */
	if (dralet_pci_driver(ctx, vf->address, driver, sizeof(driver)) < 0)
		return DRALET_HEALTH_UNHEALTHY;	/* gone */
	if (!vf->physfn)
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

int vf_probe_device(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		    struct dralet_device **ret_dev)
{
	const struct dralet_ibdev *ib = rdma_primary_ibdev(func);
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
	vf_add_attributes(ctx, dev, func);
	r = pcidev_device_add_vfio(ctx, dev, func);
	if (r >= 0 && ib && !pcidev_is_vfio(func))
		r = rdma_device_add_nodes(ctx, dev, ib);
	dralet_device_set_health(dev, health_at_probe(func));
	*ret_dev = dev;
	return r < 0 ? r : 0;
}

int vf_probe(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
	     const struct dralet_pci_id *id)
{
	struct dralet_device *dev;

	(void)id;
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

	if (r < 0)
		dralet_ctx_error(ctx, "%s", err);
	return r;
}

int vf_prepare_config(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		      const char *config, const char *api_version, bool allow_rebind,
		      struct dralet_undo *undo, char *driver_now, size_t size)
{
	struct vf_config c;
	char err[384];
	int r = vf_config_parse(config, api_version, &c, err, sizeof(err));

	if (r < 0) {
		dralet_ctx_error(ctx, "%s", err);
		return r;
	}
	if (!func->physfn && (c.has_driver || vf_config_has_settings(&c))) {
		dralet_ctx_error(ctx, "VfConfig.%s applies to virtual functions; %s is a physical "
				 "function", c.has_driver ? "driver" : vf_config_first_setting(&c),
				 func->address);
		return -EINVAL;
	}
	if (!func->physfn) {
		r = dralet_pci_driver(ctx, func->address, driver_now, size);
		if (r >= 0)
			r = pcidev_undo_record(undo, func, driver_now);
		return r < 0 ? r : 0;
	}
	return vf_lifecycle_prepare(ctx, func, &c, allow_rebind, undo, driver_now, size);
}

/* The VF's network interface now ("<function>/net/<name>"), which a kernel
 * driver may register a moment after it bound: waits up to @wait_ms. */
static bool netdev_now(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *vf,
		       int wait_ms, char *ifname, size_t ifsize, char *mac, size_t macsize)
{
	char rel[4096], path[4096];

	snprintf(rel, sizeof(rel), "%s/net", vf->sysfs_path);
	for (int waited = 0;; waited += 50) {
		DIR *dir = dralet_root_path(ctx, DRALET_ROOT_SYS, rel, path, sizeof(path)) < 0
			 ? NULL : opendir(path);
		struct dirent *de;

		while (dir && (de = readdir(dir))) {
			char file[4400];
			if (de->d_name[0] == '.')
				continue;
			snprintf(ifname, ifsize, "%.63s", de->d_name);
			snprintf(file, sizeof(file), "%s/%s/address", rel, de->d_name);
			if (dralet_read_file(ctx, DRALET_ROOT_SYS, file, mac, macsize) <= 0)
				mac[0] = '\0';
			closedir(dir);
			return true;
		}
		if (dir)
			closedir(dir);
		if (waited >= wait_ms)
			return false;
		usleep(50 * 1000);
	}
}

int vf_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
	       struct dralet_prepare_req *req, const char *api_version)
{
	return vf_prepare_vf(ctx, dev, dralet_device_pci(dev), req, api_version, NULL);
}

int vf_prepare_vf(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		  const struct dralet_pci_func *vf, struct dralet_prepare_req *req,
		  const char *api_version, const char *default_driver)
{
	const struct dralet_ibdev *ib = rdma_primary_ibdev(vf);
	struct dralet_edits *e = req->edits;
	char driver[64], ifname[64] = "", mac[32] = "", msg[640];
	struct vf_config c;
	bool vfio, as_discovered;
	int r = vf_config_parse(req->config, api_version, &c, msg, sizeof(msg));

	if (r < 0) {
		dralet_ctx_error(ctx, "%s", msg);
		return r;
	}
	if (!c.has_driver && default_driver) {
		c.has_driver = true;
		snprintf(c.driver, sizeof(c.driver), "%s", default_driver);
	}
	r = vf_lifecycle_prepare(ctx, vf, &c, true, req->undo, driver, sizeof(driver));
	if (r < 0)
		return r;
	vfio = !strcmp(driver, "vfio-pci");
	/* the nodes found at discovery belong to the driver it had then */
	as_discovered = vf->driver && !strcmp(vf->driver, driver);
	if (vfio)
		r = pcidev_edit_vfio(ctx, e, dev, vf);
	else if (as_discovered)
		r = pcidev_edit_device_nodes(e, dev);
	if (r >= 0 && !vfio)
		netdev_now(ctx, vf, as_discovered ? 0 : 3000, ifname, sizeof(ifname), mac,
			   sizeof(mac));
	if (r >= 0)
		r = pcidev_env(e, dev, "PCI_ADDRESS", vf->address);
	if (r >= 0 && vf->physfn)
		r = pcidev_env(e, dev, "PF_PCI_ADDRESS", vf->physfn->address);
	if (r >= 0 && vf->vf_index >= 0)
		r = pcidev_env_int(e, dev, "VF_ID", vf->vf_index);
	if (r >= 0)
		r = pcidev_env(e, dev, "DRIVER", driver);
	if (r >= 0 && ifname[0])
		r = pcidev_env(e, dev, "NETDEV", ifname);
	/* a MAC set through the PF reaches the VF's interface after a VF reset */
	if (r >= 0 && (ifname[0] || c.has_mac))
		r = pcidev_env(e, dev, "MAC", c.has_mac ? c.mac : mac);
	if (r >= 0 && ib && !vfio && as_discovered)
		r = pcidev_env(e, dev, "RDMA_DEVICE", ib->name);
	if (r >= 0)
		return 0;
	/* nothing may stay changed when prepare fails */
	if (r != -ENODEV && r != -ENOENT)
		dralet_ctx_error(ctx, "VF %s: preparing the container edits failed: %s",
				 vf->address, strerror(-r));
	snprintf(msg, sizeof(msg), "%s", dralet_ctx_error_message(ctx));
	if (vf_lifecycle_restore(ctx, req->undo) < 0)
		dralet_ctx_error(ctx, "%s; putting the VF back failed too: %s", msg,
				 dralet_ctx_error_message(ctx));
	else
		dralet_ctx_error(ctx, "%s", msg);
	return r;
}

int vf_unprepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		 const struct dralet_claim_ref *claim, const struct dralet_undo *undo)
{
	(void)dev;
	(void)claim;
	return vf_lifecycle_restore(ctx, undo);
}
