/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The drm backend: any display-class function (0x03xx) with a DRM card that
 * no vendor backend took: BMC VGA (ASPEED ast), virtio-gpu, nouveau, radeon,
 * simpledrm-less framebuffers ... One device of kind "gpu" with its card and
 * render nodes; its type is "display" when it has no render node (nothing to
 * compute on), so the GPU DeviceClass leaves it out. Lowest score (class
 * only), so vendor backends win.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "gpu_backends.h"
#include "gpu.h"

/* A display controller (drm_ids) with a DRM card node. */
static int drm_filter(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
		      const struct dralet_pci_id *id, int score)
{
	(void)ctx;
	(void)id;
	for (size_t i = 0; i < f->n_drm; i++)
		if (!strncmp(f->drm[i].name, "card", 4))
			return score;
	return 0;	/* no DRM card: nothing a container could open */
}

/* A card without a render node (a BMC's VGA, a plain framebuffer) only
 * drives a display: it is no GPU a workload could compute on. */
static bool has_render_node(const struct dralet_pci_func *f)
{
	for (size_t i = 0; i < f->n_drm; i++)
		if (!strncmp(f->drm[i].name, "renderD", 7))
			return true;
	return false;
}

static int drm_probe(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
		     const struct dralet_pci_id *id)
{
	struct dralet_device *dev;
	uint64_t boot_vga;
	int r;

	(void)id;
	if ((r = dralet_device_new(ctx, f, "gpu", NULL, &dev)) < 0)
		return r;
	if (!gpu_info_attach(dev, GPU_TYPE_FULL))
		return -ENOMEM;
	gpu_set_common(dev, has_render_node(f) ? "gpu" : "display");
	if (f->driver)
		dralet_device_set_string(dev, "driver", f->driver);
	if (gpu_read_pci_u64(ctx, f, "boot_vga", &boot_vga))
		dralet_device_set_bool(dev, "bootVGA", boot_vga == 1);
	gpu_set_defaults(dev);
	gpu_add_drm_nodes(ctx, dev, f);
	dralet_device_set_health(dev, DRALET_HEALTH_HEALTHY);
	/* a display-only card is no GPU to hand a VM either */
	return has_render_node(f) && vfio_form_enabled(ctx) ? gpu_vfio_form_add(ctx, f, dev) : 0;
}

static const struct dralet_option drm_options[] = {
	VFIO_FORM_OPTIONS,
	{ NULL, 0 },
};

static const struct dralet_pci_id drm_ids[] = {
	DRALET_PCI_CLASS(0x030000, 0xff0000),
	{ 0, 0, 0, 0 },
};

const struct dralet_backend gpu_drm_backend = {
	.abi = DRALET_BACKEND_ABI,
	.name = "drm",
	.family = "gpu",
	.default_driver = GPU_DRIVER_DEFAULT,
	.ids = drm_ids,
	.filter = drm_filter,
	.probe = drm_probe,
	.validate_config = gpu_validate_config_no_sharing,
	.prepare = gpu_prepare_plain_or_vfio,
	.unprepare = gpu_unprepare_vfio,
	.health = gpu_health_pci,
	.options = drm_options,
};
