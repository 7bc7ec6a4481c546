/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The gpu-vfio backend: a GPU that is bound to vfio-pci when dralet
 * discovers it (an operator handed it to VMs: KubeVirt, confidential
 * containers). It is published in its vfio form only, as a device of type
 * "vfio" (DeviceClass vfio.gpu.dralet.dev; the plain GPU class leaves it out:
 * a container cannot compute on it through a vendor driver). Its device
 * nodes are the IOMMU group node /dev/vfio/<group> and the container node
 * /dev/vfio/vfio.
 *
 * Prepare changes nothing on the host (no rebinding: the GPU is on vfio-pci
 * already). It refuses a GPU that left vfio-pci since discovery and one
 * whose group node is missing.
 *
 * The exception: a GPU that a prepare of its vfio form moved to vfio
 * (gpu_vfio_form.c) carries a mark in the state directory; it is published
 * as that vfio form ("gpu-<address>-vfio"), also while it is on no driver
 * (a crash in the middle of the rebinding), so that its claim is still
 * unprepared after a restart and the group given back.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <dralet/pci_ctl.h>

#include "gpu_backends.h"
#include "gpu.h"
#include "../common/pcidev.h"

#define VFIO_PCI_DRIVER "vfio-pci"

static int vfio_filter(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
		       const struct dralet_pci_id *id, int score)
{
	char mark[1024];

	(void)id;
	if (pcidev_is_vfio(f))
		return score;
	return !f->driver && gpu_vfio_form_marked(ctx, f->address, mark, sizeof(mark)) ? score : 0;
}

static int vfio_probe(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
		      const struct dralet_pci_id *id)
{
	struct dralet_device *dev;
	char pci_class[16], mark[1024];
	int r;

	(void)id;
	if (gpu_vfio_form_marked(ctx, f->address, mark, sizeof(mark)))
		return gpu_vfio_form_publish_marked(ctx, f, mark);
	if ((r = dralet_device_new(ctx, f, "gpu", NULL, &dev)) < 0)
		return r;
	if (!gpu_info_attach(dev, GPU_TYPE_FULL))
		return -ENOMEM;
	gpu_set_common(dev, "vfio");
	dralet_device_set_string(dev, "driver", VFIO_PCI_DRIVER);
	snprintf(pci_class, sizeof(pci_class), "0x%04x", dralet_pci_class_sub(f));
	dralet_device_set_string(dev, "pciClass", pci_class);
	/* a shared group hands its other functions to the VM too */
	dralet_device_set_bool(dev, "vfioCapable", pcidev_vfio_capable(ctx, f));
	gpu_set_defaults(dev);
	r = pcidev_device_add_vfio(ctx, dev, f);
	dralet_device_set_health(dev, f->vfio_group.path ? DRALET_HEALTH_HEALTHY
							 : DRALET_HEALTH_UNHEALTHY);
	return r < 0 ? r : 0;
}

static int vfio_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			struct dralet_prepare_req *req)
{
	const struct dralet_pci_func *f = dralet_device_pci(dev);
	char driver[64];
	int r;

	if (gpu_is_vfio_form(dev))
		return gpu_vfio_form_prepare(ctx, dev, req);
	if ((r = gpu_validate_config_no_sharing(ctx, req->config)) < 0)
		return r;
	r = dralet_pci_driver(ctx, f->address, driver, sizeof(driver));
	if (r <= 0 || strcmp(driver, VFIO_PCI_DRIVER)) {
		dralet_ctx_error(ctx, "%s is %s since discovery; it is prepared after the next "
				      "discovery", f->address,
				 r < 0 ? "gone" : r == 0 ? "unbound" : "no longer on vfio-pci");
		return r < 0 ? r : -EAGAIN;
	}
	r = pcidev_edit_vfio(ctx, req->edits, dev, f);
	if (r >= 0)
		r = gpu_prepare_env(ctx, dev, req);
	return r < 0 ? r : 0;
}

static const struct dralet_pci_id vfio_ids[] = {
	DRALET_PCI_CLASS(0x030000, 0xff0000),		/* display controllers */
	DRALET_PCI_VENDOR_CLASS(0x1002, 0x120000, 0xff0000),	/* AMD Instinct */
	{ 0, 0, 0, 0 },
};

const struct dralet_backend gpu_vfio_backend = {
	.abi = DRALET_BACKEND_ABI,
	.name = "gpu-vfio",
	.family = "gpu",
	.default_driver = GPU_DRIVER_DEFAULT,
	.ids = vfio_ids,
	.filter = vfio_filter,
	.probe = vfio_probe,
	.validate_config = gpu_validate_config_no_sharing,
	.prepare = vfio_prepare,
	.unprepare = gpu_unprepare_vfio,
	.health = gpu_health_pci,
};
