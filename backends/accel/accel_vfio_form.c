/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The vfio form of an accelerator (accel.h; docs/sharing.md, "Whole-device
 * VFIO passthrough"): with option vfio "true" every whole function the
 * accel backend publishes on its vendor driver (a QAT PF without VFs or a
 * QAT VF, a DSA/IAA device, any other accelerator) is also published as
 * "accel-<address>-vfio", type "vfio" (DeviceClass vfio.accel.dralet.dev),
 * both consuming counter "accel" of a set named after the native form. The
 * form itself is backends/common/vfio_form.h (mark
 * <state dir>/accel-vfio-<address>, undo key "vfio.accel").
 *
 * A function shared by queues (accel_sharing.c) has no vfio form: its
 * native form is allocated to several claims at once, and one counter of 1
 * cannot say "any number of shares, or one VM"; the operator chooses per
 * function by the options (docs/sharing.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <dralet/sharing.h>

#include "accel.h"
#include "../common/pcidev.h"
#include "../common/vfio_form.h"

/* Every node of the native form is the function's own (its accel, DRM or
 * vendor-class nodes): the family's own_node is the default. */
static const struct vfio_form_family accel_vfio_family = { .name = "accel" };

static void info_free(void *p)
{
	free(p);
}

bool accel_is_vfio_form(const struct dralet_device *dev)
{
	const struct accel_info *info = dev ? dralet_device_private(dev) : NULL;

	return info && info->vfio.is_form;
}

static struct accel_info *new_form(struct dralet_backend_ctx *ctx,
				   const struct dralet_pci_func *f, const char *native_driver,
				   struct dralet_device **ret)
{
	struct accel_info *info;
	char services[64];

	if (dralet_device_new(ctx, f, "accel", "vfio", ret) < 0 ||
	    !(info = calloc(1, sizeof(*info))))
		return NULL;
	dralet_device_set_private(*ret, info, info_free);
	vfio_form_describe(ctx, *ret, f, native_driver);
	accel_set_vf(*ret, f);
	if (accel_qat_services(ctx, f, services, sizeof(services)) > 0)
		dralet_device_set_string(*ret, "services", services);
	return info;
}

int accel_vfio_form_add(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
			struct dralet_device *native)
{
	struct dralet_device *dev;
	struct accel_info *info;

	if (!f->driver || pcidev_is_vfio(f) || !vfio_form_enabled(ctx))
		return 0;	/* nothing to move: the native form is the vfio one */
	if (dralet_device_allows_multiple(native)) {
		dralet_ctx_warn(ctx, "%s is shared by queues (option sharing); it has no vfio "
				     "form", f->address);
		return 0;
	}
	if (vfio_form_impossible(ctx, f))
		return 0;
	if (!(info = new_form(ctx, f, f->driver, &dev)))
		return -ENOMEM;
	return vfio_form_add(&accel_vfio_family, native, dev, &info->vfio);
}

bool accel_vfio_form_marked(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
			    char *mark, size_t size)
{
	return (!f->driver || pcidev_is_vfio(f)) &&
	       vfio_form_marked(ctx, &accel_vfio_family, f->address, mark, size);
}

int accel_vfio_form_publish_marked(struct dralet_backend_ctx *ctx,
				   const struct dralet_pci_func *f, const char *mark)
{
	struct dralet_device *dev;
	struct accel_info *info;
	char driver[64];

	if (vfio_form_mark_driver(ctx, f, mark, driver, sizeof(driver)) < 0)
		return 0;
	if (!(info = new_form(ctx, f, driver, &dev)))
		return -ENOMEM;
	return vfio_form_add_marked(ctx, &accel_vfio_family, f, dev, &info->vfio);
}

int accel_vfio_form_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			    struct dralet_prepare_req *req)
{
	const struct dralet_pci_func *f = dralet_device_pci(dev);
	const struct accel_info *info = dralet_device_private(dev);
	int r;

	if ((r = vfio_form_prepare(ctx, &accel_vfio_family, &info->vfio, dev, req)) < 0)
		return r;
	r = pcidev_env(req->edits, dev, "PCI_ADDRESS", f->address);
	if (r >= 0)
		r = pcidev_env(req->edits, dev, "DRIVER", vfio_form_driver(ctx));
	if (r < 0) {
		dralet_ctx_error(ctx, "%s: preparing the container edits failed: %s", f->address,
				 strerror(-r));
		accel_vfio_form_unprepare(ctx, dev, &req->claim, req->undo);
	}
	return r < 0 ? r : 0;
}

int accel_vfio_form_unprepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			      const struct dralet_claim_ref *claim, const struct dralet_undo *undo)
{
	(void)dev;
	(void)claim;
	return vfio_form_unprepare(ctx, &accel_vfio_family, undo);
}
