/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fpga-region: FPGAs the vendor backends do not know. A function with
 * fpga_manager or fpga_region class devices (linux-devices.md 5.1) is one
 * device; so is a Xilinx or Altera function of an FPGA-like class (raw
 * XDMA/QDMA designs: 0x0580, 0x1180, 0x1200, 0x0b40, 0xff), which the
 * vendor backends (xrt, dfl) outscore when they know it. An SoC's FPGA
 * managers, which have no PCI function, are devices too (fpga_mgr.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <dralet/pci_ctl.h>

#include "bitstream.h"
#include "fpga.h"
#include "fpga_mgr.h"
#include "../common/pcidev.h"

static bool fpga_vendor(uint16_t vendor)
{
	return vendor == 0x10ee || vendor == 0x1172;	/* Xilinx, Altera */
}

static bool fpga_like_class(const struct dralet_pci_func *f)
{
	unsigned cs = dralet_pci_class_sub(f);

	return cs == 0x0580 || cs == 0x1180 || cs == 0x0b40 || dralet_pci_class(f) == 0x12 ||
	       dralet_pci_class(f) == 0xff;
}

/* Whatever their IDs: functions with FPGA managers or regions, and raw FPGA
 * functions of FPGA vendors (the filter decides). */
static const struct dralet_pci_id region_ids[] = {
	DRALET_PCI_ANY_FUNCTION,
	{ 0, 0, 0, 0 },
};

static int region_filter(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
			 const struct dralet_pci_id *id, int score)
{
	(void)ctx;
	(void)id;
	(void)score;
	if (dralet_pci_class(func) == 0x06)
		return 0;
	if (func->n_fpga_managers || func->n_fpga_regions)
		return FPGA_REGION_SCORE;
	if (fpga_vendor(func->vendor_id) && fpga_like_class(func))
		return FPGA_RAW_SCORE;
	return 0;
}

static const char *first_compat_id(const struct dralet_pci_func *f)
{
	for (size_t i = 0; i < f->n_fpga_regions; i++)
		if (f->fpga_regions[i].compat_id)
			return f->fpga_regions[i].compat_id;
	return NULL;
}

static int health_now(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func)
{
	char driver[64];
	const char *compat = first_compat_id(func);

	if (dralet_pci_driver(ctx, func->address, driver, sizeof(driver)) <= 0)
		return DRALET_HEALTH_UNHEALTHY;
	if (compat && fpga_id_all_f(compat))
		return DRALET_HEALTH_UNHEALTHY;
	return fpga_managers_health(ctx, func);
}

static int region_probe(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
			const struct dralet_pci_id *id)
{
	struct dralet_device *dev;
	int r;

	(void)id;
	r = dralet_device_new(ctx, func, "fpga", NULL, &dev);
	if (r < 0)
		return r;
	dralet_device_set_string(dev, "framework",
				 func->n_fpga_managers || func->n_fpga_regions ? "fpga-manager"
									       : "raw");
	if (func->n_fpga_managers) {
		const struct dralet_fpga_manager *m = &func->fpga_managers[0];
		if (m->driver_name)
			dralet_device_set_string(dev, "managerName", m->driver_name);
		if (m->state)
			dralet_device_set_string(dev, "managerState", m->state);
	}
	fpga_set_id_attr(ctx, dev, "regionCompatID", first_compat_id(func));
	fpga_set_id_attr(ctx, dev, "interfaceID", first_compat_id(func));
	if (func->n_fpga_regions)
		dralet_device_set_int(dev, "regions", (int64_t)func->n_fpga_regions);
	if (func->driver)
		dralet_device_set_string(dev, "driver", func->driver);
	dralet_device_set_bool(dev, "isVF", func->physfn != NULL);
	if (func->physfn)
		dralet_device_set_string(dev, "pfPciAddress", func->physfn->address);
	dralet_device_set_bool(dev, "vfioCapable", pcidev_vfio_capable(ctx, func));
	r = 0;
	for (size_t i = 0; r >= 0 && i < func->n_accel; i++)
		if (func->accel[i].node.path)
			r = dralet_device_add_node(dev, &func->accel[i].node);
	for (size_t i = 0; r >= 0 && i < func->n_drm; i++)
		if (func->drm[i].node.path)
			r = dralet_device_add_node(dev, &func->drm[i].node);
	if (r >= 0)	/* nodes of the design's driver (/dev/xdma0_user ...) */
		r = pcidev_device_add_chardevs(ctx, dev, func);
	if (r == -ENOENT)
		r = 0;
	if (r >= 0)
		r = pcidev_device_add_vfio(ctx, dev, func);
	dralet_device_set_health(dev, health_now(ctx, func));
	return r < 0 ? r : 0;
}

/* An SoC's FPGA managers have no PCI function: their devices are made
 * here, before the functions are probed (fpga_mgr.h). */
static int region_init(struct dralet_backend_ctx *ctx, void **ret_state)
{
	*ret_state = NULL;
	return fpga_mgr_discover(ctx);
}

static int region_health(struct dralet_backend_ctx *ctx, struct dralet_device *dev)
{
	if (!dralet_device_pci(dev))
		return fpga_mgr_health(ctx, dev);
	return health_now(ctx, dralet_device_pci(dev));
}

static int region_unprepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			    const struct dralet_claim_ref *claim, const struct dralet_undo *undo)
{
	(void)claim;
	/* a PCI function's prepare changes nothing on the card */
	return dralet_device_pci(dev) ? 0 : fpga_mgr_unprepare(ctx, dev, undo);
}

static int region_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			  struct dralet_prepare_req *req)
{
	const struct dralet_pci_func *func = dralet_device_pci(dev);
	struct dralet_edits *e = req->edits;
	char driver[64], what[64], norm[40];

	if (!func)
		return fpga_mgr_prepare(ctx, dev, req);
	const char *compat = first_compat_id(func);
	int r = dralet_pci_driver(ctx, func->address, driver, sizeof(driver));

	snprintf(what, sizeof(what), "FPGA %s", func->address);
	if (r <= 0) {
		dralet_ctx_error(ctx, "%s is %s", what,
				 r == -ENODEV ? "gone" : "not bound to a driver");
		return r < 0 ? r : -ENODEV;
	}
	if (!strcmp(driver, "vfio-pci") != pcidev_is_vfio(func)) {
		dralet_ctx_error(ctx, "%s moved from driver %s to %s since discovery; it is "
				 "prepared after the next discovery", what,
				 func->driver ? func->driver : "none", driver);
		return -EAGAIN;
	}
	struct fpga_identity id = { .what = what, .interface_id = compat };
	struct fpga_config cfg;
	struct fpga_loaded img = { 0 };
	bool loaded;

	r = fpga_claim_bitstream(ctx, req, &id, &cfg, FPGA_IMAGE_RAW, &img, &loaded);
	if (r >= 0 && cfg.has_bitstream) {
		dralet_ctx_error(ctx, "%s: loading bitstream %s through fpga_manager at prepare is "
				 "not supported yet", what, img.sha256);
		r = -EOPNOTSUPP;
	}
	fpga_store_unload(&img);
	if (r < 0)
		return r;
	r = fpga_config_check(ctx, req->config, &id, NULL);
	if (r < 0)
		return r;
	r = pcidev_is_vfio(func) ? pcidev_edit_vfio(ctx, e, dev, func)
				 : pcidev_edit_device_nodes(e, dev);
	if (r < 0)
		return r;
	r = pcidev_env(e, dev, "PCI_ADDRESS", func->address);
	if (r >= 0)
		r = pcidev_env(e, dev, "DRIVER", driver);
	if (r >= 0 && compat && fpga_id_normalize(compat, norm, sizeof(norm)))
		r = pcidev_env(e, dev, "INTERFACE_ID", norm);
	if (r >= 0 && !pcidev_is_vfio(func)) {
		char nodes[1024];
		pcidev_node_list(dev, nodes, sizeof(nodes));
		r = pcidev_env(e, dev, "DEVICE_NODES", nodes);
	}
	if (r >= 0)
		r = pcidev_undo_record(req->undo, func, driver);
	if (r < 0)
		dralet_ctx_error(ctx, "%s: preparing the container edits failed: %s", what,
				 strerror(-r));
	return r < 0 ? r : 0;
}

const struct dralet_backend backend_fpga_region = {
	.abi = DRALET_BACKEND_ABI,
	.name = "fpga-region",
	.family = "fpga",
	.default_driver = FPGA_DRIVER,
	.ids = region_ids,
	.filter = region_filter,
	.init = region_init,
	.probe = region_probe,
	.validate_config = fpga_validate_config,
	.admin_config_keys = fpga_config_admin_keys,
	.options = fpga_options,
	.prepare = region_prepare,
	.unprepare = region_unprepare,
	.health = region_health,
};
