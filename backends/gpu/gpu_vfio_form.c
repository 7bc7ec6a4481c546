/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The vfio form of a GPU (gpu.h; docs/sharing.md, "Whole-device VFIO
 * passthrough"): what is GPU-specific about it. The form itself (one counter
 * between the two forms, the mark, the IOMMU group's rebinding, its undo and
 * crash recovery) is backends/common/vfio_form.h; a GPU's form is named
 * "gpu-<address>-vfio", counts counter "gpu", is marked
 * <state dir>/gpu-vfio-<address>, and carries the GPU's productName and
 * memory besides.
 */
#include <errno.h>
#include <string.h>

#include "gpu.h"
#include "../common/vfio_form.h"

/* A node that is the function's own (not one every GPU shares, like
 * /dev/nvidiactl or /dev/kfd): a host process holding it uses this GPU. */
static bool own_node(const char *path)
{
	return !strncmp(path, "/dev/dri/", 9) || !strncmp(path, "/dev/accel/", 11) ||
	       (!strncmp(path, "/dev/nvidia", 11) && path[11] >= '0' && path[11] <= '9');
}

static const struct vfio_form_family gpu_vfio_family = { .name = "gpu", .own_node = own_node };

bool gpu_is_vfio_form(const struct dralet_device *dev)
{
	const struct gpu_info *info = gpu_info_of(dev);

	return info && info->vfio.is_form;
}

/* The GPU device of a vfio form, its vfio_form attributes set. */
static struct gpu_info *new_form(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
				 const char *native_driver, struct dralet_device **ret)
{
	struct gpu_info *info;

	if (dralet_device_new(ctx, f, "gpu", "vfio", ret) < 0 ||
	    !(info = gpu_info_attach(*ret, GPU_TYPE_FULL)))
		return NULL;
	vfio_form_describe(ctx, *ret, f, native_driver);
	gpu_set_defaults(*ret);
	return info;
}

int gpu_vfio_form_add(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
		      struct dralet_device *native)
{
	struct dralet_device *dev;
	struct gpu_info *info;

	if (vfio_form_impossible(ctx, f))
		return 0;
	if (!(info = new_form(ctx, f, f->driver, &dev)))
		return -ENOMEM;
	/* what the vendor backend knows better than the PCI name database, and
	 * the memory a VM gets with the whole GPU */
	const struct dralet_attr *product = dralet_device_find_attr(native, "productName");
	if (product && product->string_value)
		dralet_device_set_string(dev, "productName", product->string_value);
	for (size_t i = 0; i < dralet_device_n_capacities(native); i++) {
		const struct dralet_capacity *c = dralet_device_capacity(native, i);
		if (!strcmp(c->name, "memory"))
			dralet_device_set_capacity(dev, "memory", c->quantity);
	}
	return vfio_form_add(&gpu_vfio_family, native, dev, &info->vfio);
}

bool gpu_vfio_form_marked(struct dralet_backend_ctx *ctx, const char *address, char *buf,
			  size_t size)
{
	return vfio_form_marked(ctx, &gpu_vfio_family, address, buf, size);
}

int gpu_vfio_form_publish_marked(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
				 const char *mark)
{
	struct dralet_device *dev;
	struct gpu_info *info;
	char driver[64];

	if (vfio_form_mark_driver(ctx, f, mark, driver, sizeof(driver)) < 0)
		return 0;
	if (!(info = new_form(ctx, f, driver, &dev)))
		return -ENOMEM;
	return vfio_form_add_marked(ctx, &gpu_vfio_family, f, dev, &info->vfio);
}

int gpu_vfio_form_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			  struct dralet_prepare_req *req)
{
	int r;

	if ((r = gpu_validate_config_no_sharing(ctx, req->config)) < 0 ||
	    (r = vfio_form_prepare(ctx, &gpu_vfio_family, &gpu_info_of(dev)->vfio, dev, req)) < 0)
		return r;
	if ((r = gpu_prepare_env(ctx, dev, req)) < 0)
		gpu_vfio_form_unprepare(ctx, req->undo);
	return r;
}

int gpu_vfio_form_unprepare(struct dralet_backend_ctx *ctx, const struct dralet_undo *undo)
{
	return vfio_form_unprepare(ctx, &gpu_vfio_family, undo);
}

int gpu_prepare_plain_or_vfio(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			      struct dralet_prepare_req *req)
{
	return gpu_is_vfio_form(dev) ? gpu_vfio_form_prepare(ctx, dev, req)
				     : gpu_prepare_plain(ctx, dev, req);
}

int gpu_unprepare_vfio(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		       const struct dralet_claim_ref *claim, const struct dralet_undo *undo)
{
	(void)dev;
	(void)claim;
	return gpu_vfio_form_unprepare(ctx, undo);
}
