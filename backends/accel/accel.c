/* SPDX-License-Identifier: Apache-2.0 */
/*
 * accel: any processing accelerator or co-processor no vendor backend
 * claimed. One device of kind "accel" per function; a PF whose SR-IOV VFs
 * are enabled is management and yields none (its VFs are the devices).
 * Prepare of a native form changes nothing on the host. Option sharing:
 * "true" shares QAT functions by queues (accel_sharing.c); option vfio:
 * "true" publishes each function also in a vfio form, for VMs
 * (accel_vfio_form.c), whose unprepare gives the IOMMU group back.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <dralet/pci_ctl.h>

#include "accel.h"
#include "../common/pcidev.h"
#include "../common/sharing_option.h"

static const struct dralet_option accel_options[] = {
	SHARING_OPTION,
	VFIO_FORM_OPTIONS,	/* accel_vfio_form.c */
	{ NULL, 0 },
};

static const struct dralet_pci_id accel_ids[] = {
	DRALET_PCI_CLASS(0x120000, 0xff0000),	/* processing accelerators (0x12xx) */
	DRALET_PCI_CLASS(0x0b4000, 0xffff00),	/* co-processors */
	{ 0, 0, 0, 0 },
};

static int health_now(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func)
{
	char buf[64];

	if (dralet_pci_driver(ctx, func->address, buf, sizeof(buf)) <= 0)
		return DRALET_HEALTH_UNHEALTHY;
	if (accel_qat_state(ctx, func, buf, sizeof(buf)) > 0 && strcmp(buf, "up"))
		return DRALET_HEALTH_UNHEALTHY;
	return DRALET_HEALTH_HEALTHY;
}

static int add_nodes(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		     const struct dralet_pci_func *func)
{
	int r = 0;

	for (size_t i = 0; r >= 0 && i < func->n_accel; i++)
		if (func->accel[i].node.path)
			r = dralet_device_add_node(dev, &func->accel[i].node);
	for (size_t i = 0; r >= 0 && i < func->n_drm; i++)
		if (func->drm[i].node.path)
			r = dralet_device_add_node(dev, &func->drm[i].node);
	if (r >= 0)	/* nodes of vendor classes (/dev/hailo0 ...) */
		r = pcidev_device_add_chardevs(ctx, dev, func);
	if (r == -ENOENT)
		r = 0;
	if (r >= 0)
		r = pcidev_device_add_vfio(ctx, dev, func);
	return r;
}

static void add_attributes(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			   const struct dralet_pci_func *func)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "0x%04x", dralet_pci_class_sub(func));
	dralet_device_set_string(dev, "pciClass", buf);
	if (func->driver)
		dralet_device_set_string(dev, "driver", func->driver);
	if (func->n_accel)
		dralet_device_set_string(dev, "accelDevice", func->accel[0].name);
	for (size_t i = 0; i < func->n_drm; i++)
		dralet_device_set_string(dev, strncmp(func->drm[i].name, "renderD", 7) ? "drmCard"
						   : "drmRender", func->drm[i].name);
	accel_set_vf(dev, func);
	dralet_device_set_bool(dev, "vfioCapable", pcidev_vfio_capable(ctx, func));
	if (accel_qat_services(ctx, func, buf, sizeof(buf)) > 0)
		dralet_device_set_string(dev, "services", buf);
}

void accel_set_vf(struct dralet_device *dev, const struct dralet_pci_func *func)
{
	dralet_device_set_bool(dev, "isVF", func->physfn != NULL);
	if (func->physfn) {
		dralet_device_set_string(dev, "pfPciAddress", func->physfn->address);
		if (func->vf_index >= 0)
			dralet_device_set_int(dev, "vfID", func->vf_index);
	}
}

static int accel_probe(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		       const struct dralet_pci_id *id)
{
	struct dralet_device *dev;
	char mark[1024];
	int r;

	(void)id;
	if (func->sriov && func->sriov->num_vfs > 0)
		return 0;	/* its VFs carry the work */
	if (accel_vfio_form_marked(ctx, func, mark, sizeof(mark)))
		return accel_vfio_form_publish_marked(ctx, func, mark);
	r = dralet_device_new(ctx, func, "accel", NULL, &dev);
	if (r < 0)
		return r;
	add_attributes(ctx, dev, func);
	accel_publish_sharing(ctx, dev, func);
	r = add_nodes(ctx, dev, func);
	dralet_device_set_health(dev, health_now(ctx, func));
	if (r >= 0)
		r = accel_vfio_form_add(ctx, func, dev);
	return r < 0 ? r : 0;
}

static int accel_health(struct dralet_backend_ctx *ctx, struct dralet_device *dev)
{
	return health_now(ctx, dralet_device_pci(dev));
}

static int accel_validate_config(struct dralet_backend_ctx *ctx, const char *config)
{
	if (!config)
		return 0;
	dralet_ctx_error(ctx, "accel.dralet.dev takes no opaque configuration");
	return -EINVAL;
}

static int accel_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			 struct dralet_prepare_req *req)
{
	const struct dralet_pci_func *func = dralet_device_pci(dev);
	struct dralet_edits *e = req->edits;
	char driver[64], services[64];
	int r;
	bool vfio;

	if (accel_is_vfio_form(dev))
		return accel_vfio_form_prepare(ctx, dev, req);
	r = dralet_pci_driver(ctx, func->address, driver, sizeof(driver));
	if (r <= 0) {
		dralet_ctx_error(ctx, "%s is %s", func->address,
				 r == -ENODEV ? "gone" : "not bound to a driver");
		return r < 0 ? r : -ENODEV;
	}
	vfio = !strcmp(driver, "vfio-pci");
	if (vfio != pcidev_is_vfio(func)) {
		dralet_ctx_error(ctx, "%s moved from driver %s to %s since discovery; it is "
				 "prepared after the next discovery", func->address,
				 func->driver ? func->driver : "none", driver);
		return -EAGAIN;
	}
	r = vfio ? pcidev_edit_vfio(ctx, e, dev, func) : pcidev_edit_device_nodes(e, dev);
	if (r < 0)
		return r;
	r = pcidev_env(e, dev, "PCI_ADDRESS", func->address);
	if (r >= 0)
		r = pcidev_env(e, dev, "DRIVER", driver);
	if (r >= 0 && func->n_accel)
		r = pcidev_env(e, dev, "ACCEL_NODE", func->accel[0].node.path);
	if (r >= 0 && !vfio) {
		char nodes[1024];
		pcidev_node_list(dev, nodes, sizeof(nodes));
		r = pcidev_env(e, dev, "DEVICE_NODES", nodes);
	}
	if (r >= 0 && accel_qat_services(ctx, func, services, sizeof(services)) > 0)
		r = pcidev_env(e, dev, "SERVICES", services);
	if (r >= 0)
		r = pcidev_undo_record(req->undo, func, driver);
	if (r < 0)
		dralet_ctx_error(ctx, "%s: preparing the container edits failed: %s",
				 func->address, strerror(-r));
	return r < 0 ? r : accel_prepare_share(ctx, dev, req);
}

const struct dralet_backend backend_accel = {
	.abi = DRALET_BACKEND_ABI,
	.name = "accel",
	.family = "accel",
	.default_driver = ACCEL_DRIVER,
	.ids = accel_ids,
	.probe = accel_probe,
	.validate_config = accel_validate_config,
	.prepare = accel_prepare,
	.unprepare = accel_vfio_form_unprepare,
	.health = accel_health,
	.options = accel_options,
};
