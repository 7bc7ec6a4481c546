/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dfl: Intel Device Feature List FPGA cards (linux-devices.md 5.2): PAC
 * Arria 10, D5005, N3000, N6000/N6001, integrated Xeon FPGAs, Silicom
 * N501x. The FME (one per card, on the PF) is management; every port is an
 * accelerator function unit (AFU) slot and becomes one device named
 * fpga-<function>-port<N>. With SR-IOV the ports move to the VFs, which carry
 * the FME's facts from their PF.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dralet/pci_ctl.h>

#include "bitstream.h"
#include "fpga.h"
#include "../common/pcidev.h"

/* dfl-pci's ID table (linux-devices.md 1.5), then every other function: the
 * filter takes those that show DFL devices or are bound to dfl-pci. */
static const struct dralet_pci_id dfl_ids[] = {
	DRALET_PCI_DEVICE(0x8086, 0x09c4), DRALET_PCI_DEVICE(0x8086, 0x09c5),	/* PAC A10 */
	DRALET_PCI_DEVICE(0x8086, 0x0b2b), DRALET_PCI_DEVICE(0x8086, 0x0b2c),	/* D5005 */
	DRALET_PCI_DEVICE(0x8086, 0x0b30),					/* N3000 */
	DRALET_PCI_DEVICE(0x8086, 0xbcbd), DRALET_PCI_DEVICE(0x8086, 0xbcbf),	/* integrated */
	DRALET_PCI_DEVICE(0x8086, 0xbcc0), DRALET_PCI_DEVICE(0x8086, 0xbcc1),
	DRALET_PCI_DEVICE(0x8086, 0xbcce), DRALET_PCI_DEVICE(0x8086, 0xbccf),	/* OFS */
	DRALET_PCI_DEVICE(0x1c2c, 0x1000), DRALET_PCI_DEVICE(0x1c2c, 0x1001),	/* N501x */
	DRALET_PCI_ANY_FUNCTION,
	{ 0, 0, 0, 0 },
};

/* Card names for productName (linux-devices.md 1.5; Debian's PCI databases
 * lack most of them). OFS cards share one id and differ by subsystem. */
static const struct {
	uint16_t vendor, device, subsystem;	/* subsystem 0: any */
	const char *product;
} dfl_products[] = {
	{ 0x8086, 0x09c4, 0, "Intel PAC Arria 10 GX" }, { 0x8086, 0x09c5, 0, "Intel PAC Arria 10 GX" },
	{ 0x8086, 0x0b2b, 0, "Intel PAC D5005" },       { 0x8086, 0x0b2c, 0, "Intel PAC D5005" },
	{ 0x8086, 0x0b30, 0, "Intel PAC N3000" },
	{ 0x8086, 0xbcce, 0x1770, "Intel N6000" },      { 0x8086, 0xbccf, 0x1770, "Intel N6000" },
	{ 0x8086, 0xbcce, 0x1771, "Intel N6001" },      { 0x8086, 0xbccf, 0x1771, "Intel N6001" },
	{ 0x8086, 0xbcce, 0x17d4, "Intel C6100" },      { 0x8086, 0xbccf, 0x17d4, "Intel C6100" },
	{ 0x8086, 0xbcce, 0x138d, "Intel D5005 (OFS)" },
	{ 0x8086, 0xbccf, 0x138d, "Intel D5005 (OFS)" },
	{ 0x1c2c, 0x1000, 0, "Silicom N5010" },         { 0x1c2c, 0x1001, 0, "Silicom N5011" },
};

static const char *dfl_product(const struct dralet_pci_func *f)
{
	for (size_t i = 0; i < sizeof(dfl_products) / sizeof(dfl_products[0]); i++)
		if (dfl_products[i].vendor == f->vendor_id && dfl_products[i].device == f->device_id &&
		    (!dfl_products[i].subsystem || dfl_products[i].subsystem == f->subsystem_device_id))
			return dfl_products[i].product;
	return NULL;
}

/* What a port device needs later (scan pointers stay valid while it lives). */
struct dfl_port_ref {
	const struct dralet_pci_func *func;
	size_t port;			/* index in func->dfl_ports */
	const struct dralet_pci_func *fme_func;	/* the function holding the FME */
	struct fpga_stranded stranded;	/* a load interrupted, not put back */
};

static int dfl_filter(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		      const struct dralet_pci_id *id, int score)
{
	bool listed = id->device != DRALET_PCI_ANY;	/* a dfl-pci ID, not the catch-all */

	(void)ctx;
	(void)score;
	if ((func->class_code >> 16) == 0x06)
		return 0;
	if (listed || func->n_dfl_fmes || func->n_dfl_ports ||
	    (func->driver && !strcmp(func->driver, "dfl-pci")))
		return FPGA_VENDOR_SCORE;
	return 0;
}

static const struct dralet_pci_func *fme_function(const struct dralet_pci_func *func)
{
	if (func->n_dfl_fmes)
		return func;
	if (func->physfn && func->physfn->n_dfl_fmes)
		return func->physfn;
	return NULL;
}

static const struct dralet_dfl_fme *fme_of(const struct dralet_pci_func *fme_func)
{
	return fme_func ? &fme_func->dfl_fmes[0] : NULL;
}

/* The card's interface ID: the FME's PR region compat_id, else the compat_id
 * of a region of the function or its PF. */
static const char *region_compat_id(const struct dralet_pci_func *f)
{
	for (size_t i = 0; f && i < f->n_fpga_regions; i++)
		if (f->fpga_regions[i].compat_id)
			return f->fpga_regions[i].compat_id;
	return NULL;
}

static const char *interface_id(const struct dralet_pci_func *func, const struct dralet_pci_func *fme_func)
{
	const struct dralet_dfl_fme *fme = fme_of(fme_func);

	if (fme && fme->interface_id)
		return fme->interface_id;
	return region_compat_id(fme_func ? fme_func : func);
}

/* The port's AFU ID now (bus/platform/devices/dfl-port.N/afu_id). */
static const char *afu_id_now(struct dralet_backend_ctx *ctx, const struct dralet_dfl_port *port,
			      char *buf, size_t size)
{
	char rel[96];

	snprintf(rel, sizeof(rel), "bus/platform/devices/%s/afu_id", port->name);
	if (dralet_read_file(ctx, DRALET_ROOT_SYS, rel, buf, size) > 0)
		return buf;
	return port->afu_id;
}

static int health_now(struct dralet_backend_ctx *ctx, const struct dfl_port_ref *ref)
{
	const struct dralet_dfl_port *port = &ref->func->dfl_ports[ref->port];
	const char *iface = interface_id(ref->func, ref->fme_func);
	char driver[64], afu[80];
	const char *afu_now = afu_id_now(ctx, port, afu, sizeof(afu));
	int health = DRALET_HEALTH_HEALTHY;

	if (dralet_pci_driver(ctx, ref->func->address, driver, sizeof(driver)) <= 0)
		return DRALET_HEALTH_UNHEALTHY;
	/* all-f IDs: the FPGA firmware crashed (Intel's FPGA plugin rule) */
	if ((afu_now && fpga_id_all_f(afu_now)) || (iface && fpga_id_all_f(iface)))
		return DRALET_HEALTH_UNHEALTHY;
	health = fpga_health_worst(health, fpga_managers_health(ctx, ref->func));
	if (ref->fme_func && ref->fme_func != ref->func)
		health = fpga_health_worst(health, fpga_managers_health(ctx, ref->fme_func));
	return health;
}

static void add_attributes(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			   const struct dfl_port_ref *ref)
{
	const struct dralet_pci_func *func = ref->func;
	const struct dralet_dfl_port *port = &func->dfl_ports[ref->port];
	const struct dralet_dfl_fme *fme = fme_of(ref->fme_func);

	dralet_device_set_string(dev, "framework", "dfl");
	if (dfl_product(func))
		dralet_device_set_string(dev, "productName", dfl_product(func));
	dralet_device_set_string(dev, "portDevice", port->name);
	if (port->id >= 0)
		dralet_device_set_int(dev, "portID", port->id);
	if (port->afu_id && !fpga_id_all_zero(port->afu_id)) {
		fpga_set_id_attr(ctx, dev, "afuID", port->afu_id);
		fpga_set_loaded_attr(ctx, dev, FPGA_IMAGE_GBS, port->afu_id,
				     interface_id(func, ref->fme_func));
	}
	fpga_set_id_attr(ctx, dev, "interfaceID", interface_id(func, ref->fme_func));
	fpga_set_id_attr(ctx, dev, "regionCompatID", region_compat_id(func));
	if (fme) {
		fpga_set_id_attr(ctx, dev, "bitstreamID", fme->bitstream_id);
		fpga_set_id_attr(ctx, dev, "bitstreamMetadata", fme->bitstream_metadata);
		if (fme->socket_id >= 0)
			dralet_device_set_int(dev, "socketID", fme->socket_id);
		dralet_device_set_string(dev, "fmeDevice", fme->name);
	}
	if (func->driver)
		dralet_device_set_string(dev, "driver", func->driver);
	dralet_device_set_bool(dev, "isVF", func->physfn != NULL);
	if (func->physfn)
		dralet_device_set_string(dev, "pfPciAddress", func->physfn->address);
}

static int dfl_health(struct dralet_backend_ctx *ctx, struct dralet_device *dev);

static int probe_port(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func, size_t i,
		      const struct dralet_pci_func *fme_func)
{
	const struct dralet_dfl_port *port = &func->dfl_ports[i];
	struct dfl_port_ref *ref;
	struct dralet_device *dev;
	char suffix[24];
	int r;

	snprintf(suffix, sizeof(suffix), "port%d", port->id >= 0 ? port->id : (int)i);
	r = dralet_device_new(ctx, func, "fpga", suffix, &dev);
	if (r < 0)
		return r;
	ref = malloc(sizeof(*ref));
	if (!ref)
		return -ENOMEM;
	*ref = (struct dfl_port_ref){ .func = func, .port = i, .fme_func = fme_func };
	dralet_device_set_private(dev, ref, free);
	fpga_stranded_load(ctx, &ref->stranded, dralet_device_name(dev));
	add_attributes(ctx, dev, ref);
	if (port->node.path)
		r = dralet_device_add_node(dev, &port->node);
	else
		dralet_ctx_warn(ctx, "device %s: /dev/%s does not exist", dralet_device_name(dev),
				port->name);
	if (r >= 0)
		r = pcidev_device_add_vfio(ctx, dev, func);
	dralet_device_set_health(dev, dfl_health(ctx, dev));
	return r < 0 ? r : 0;
}

static int dfl_probe(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		     const struct dralet_pci_id *id)
{
	const struct dralet_pci_func *fme_func = fme_function(func);
	int r = 0;

	(void)id;
	if (!func->n_dfl_ports && !func->n_dfl_fmes && !(func->sriov && func->sriov->num_vfs))
		dralet_ctx_warn(ctx, "%s: DFL card without FME or ports (is dfl-pci loaded?); "
				"not published", func->address);
	if (func->n_dfl_fmes > 1)
		dralet_ctx_warn(ctx, "%s has %zu FMEs; using %s", func->address, func->n_dfl_fmes,
				func->dfl_fmes[0].name);
	for (size_t i = 0; r >= 0 && i < func->n_dfl_ports; i++) {
		r = probe_port(ctx, func, i, fme_func);
		if (r == -EEXIST) {
			dralet_ctx_warn(ctx, "%s: two ports with id %d; %s skipped", func->address,
					func->dfl_ports[i].id, func->dfl_ports[i].name);
			r = 0;
		}
	}
	return r;
}

static struct fpga_region dfl_region(const struct dfl_port_ref *ref, const char *what);

static void port_what(const struct dfl_port_ref *ref, char *what, size_t size)
{
	snprintf(what, size, "DFL port %s of %s", ref->func->dfl_ports[ref->port].name,
		 ref->func->address);
}

static int dfl_health(struct dralet_backend_ctx *ctx, struct dralet_device *dev)
{
	struct dfl_port_ref *ref = dralet_device_private(dev);
	char what[96];
	int health = health_now(ctx, ref);

	if (health != DRALET_HEALTH_HEALTHY || !ref->stranded.set)
		return health;
	port_what(ref, what, sizeof(what));
	struct fpga_region rg = dfl_region(ref, what);
	return fpga_stranded_health(ctx, &rg, &ref->stranded);
}

static int fme_node(struct dralet_backend_ctx *ctx, const struct dralet_dfl_fme *fme, char *path,
		    struct dralet_devnode *ret)
{
	*ret = (struct dralet_devnode){ 0 };
	if (!fme || !fme->node.path)
		return -ENOENT;
	return dralet_devnode(ctx, fme->node.path, fme->node.major, fme->node.minor, path, ret);
}

/*
 * A port on a VF is programmed only by way of its PF (docs/fpga.md 1.1.1): the
 * FME is on the PF, and the kernel's FME bridge reaches the port through the
 * PF, which it can only while the port is in PF access mode, i.e. while
 * SR-IOV is off on the PF. Turning it off (sriov_numvfs 0) removes every VF
 * of the card, the claimed one and the others, whoever uses them: dralet
 * never does that at a prepare. -EBUSY with the reason.
 */
static int refuse_vf_port(struct dralet_backend_ctx *ctx, const char *prefix,
			  const struct dralet_pci_func *vf)
{
	const struct dralet_pci_func *pf = vf->physfn;
	unsigned vfs = pf->sriov ? pf->sriov->num_vfs : 1;

	dralet_ctx_error(ctx, "%sthe port is on VF %s of %s: the kernel programs a port only "
			 "through its PF's FME, with SR-IOV off there (sriov_numvfs 0 removes all "
			 "%u VF%s of the card, in use or not): not reprogramming it; load the "
			 "image with SR-IOV off (docs/fpga.md 1.1.1) or claim a port on a PF",
			 prefix, vf->address, pf->address, vfs, vfs == 1 ? "" : "s");
	return -EBUSY;
}

/* fpga_region ops of a port (self: the struct dfl_port_ref). */
static const char *dfl_loaded(struct dralet_backend_ctx *ctx, const void *self, char *buf,
			      size_t size)
{
	const struct dfl_port_ref *ref = self;

	return afu_id_now(ctx, &ref->func->dfl_ports[ref->port], buf, size);
}

static int dfl_write(struct dralet_backend_ctx *ctx, const void *self,
		     const struct fpga_loaded *img)
{
	const struct dfl_port_ref *ref = self;
	const struct dralet_dfl_port *port = &ref->func->dfl_ports[ref->port];
	const struct dralet_dfl_fme *fme = fme_of(ref->fme_func);

	if (ref->func->physfn)
		return refuse_vf_port(ctx, "", ref->func);
	if (!fme || !fme->node.path || port->id < 0 || !port->node.path) {
		dralet_ctx_error(ctx, "no FME node or port id to program it through");
		return -ENODEV;
	}
	return dralet_fpga_dfl_program(ctx, fme->node.path + strlen("/dev/"),
				       port->node.path + strlen("/dev/"), (unsigned)port->id,
				       img->data + img->image.payload_offset,
				       img->image.payload_size);
}

static struct fpga_region dfl_region(const struct dfl_port_ref *ref, const char *what)
{
	return (struct fpga_region){
		.what = what,
		.kind = FPGA_IMAGE_GBS,
		.interface_id = interface_id(ref->func, ref->fme_func),
		.loaded = dfl_loaded,
		.write = dfl_write,
		.self = ref,
	};
}

static int dfl_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		       struct dralet_prepare_req *req)
{
	struct dfl_port_ref *ref = dralet_device_private(dev);
	const struct dralet_pci_func *func = ref->func;
	const struct dralet_dfl_port *port = &func->dfl_ports[ref->port];
	const struct dralet_dfl_fme *fme = fme_of(ref->fme_func);
	struct dralet_edits *e = req->edits;
	struct dralet_devnode fnode = { 0 };
	struct fpga_config cfg;
	struct fpga_loaded img = { 0 };
	char driver[64], what[96], afu[80], norm[40], fme_path[DRALET_DEVNODE_PATH_MAX];
	const char *afu_now = afu_id_now(ctx, port, afu, sizeof(afu));
	const char *iface = interface_id(func, ref->fme_func);
	int r = dralet_pci_driver(ctx, func->address, driver, sizeof(driver));

	snprintf(what, sizeof(what), "DFL port %s of %s", port->name, func->address);
	if (r <= 0) {
		dralet_ctx_error(ctx, "%s: the function is %s", what,
				 r == -ENODEV ? "gone" : "not bound to a driver");
		return r < 0 ? r : -ENODEV;
	}
	if (!port->node.path) {
		dralet_ctx_error(ctx, "%s: /dev/%s does not exist", what, port->name);
		return -ENODEV;
	}
	bool have_fme = fme_node(ctx, fme, fme_path, &fnode) == 0 && fnode.path;
	struct fpga_identity id = {
		.what = what,
		.shell = NULL,
		.interface_id = iface,
		.afu_id = afu_now,
		.has_management = have_fme,
	};
	struct fpga_region rg = dfl_region(ref, what);
	bool loaded;

	r = fpga_claim_bitstream(ctx, req, &id, &cfg, FPGA_IMAGE_GBS, &img, &loaded);
	if (r < 0)
		goto out;
	if (cfg.has_bitstream)	/* the requirements hold for the port as it will be */
		id.afu_id = img.image.accelerator_id;
	r = fpga_config_check(ctx, req->config, &id, &cfg);
	if (r >= 0 && cfg.has_bitstream && !loaded && func->physfn) {
		char prefix[192];	/* refused before the undo state: nothing to undo */

		snprintf(prefix, sizeof(prefix), "%s: loading bitstream %s: ", what, img.sha256);
		r = refuse_vf_port(ctx, prefix, func);
	} else if (r >= 0 && cfg.has_bitstream) {
		r = fpga_load_for_claim(ctx, &rg, req, &cfg, &img, loaded, afu_now);
		fpga_stranded_note(ctx, &rg, req->undo, r, &ref->stranded);
	}
	if (r < 0)
		goto out;
	r = dralet_edits_add_node(e, &port->node, NULL);
	if (r >= 0 && cfg.management_access)
		r = dralet_edits_add_node(e, &fnode, NULL);
	if (r >= 0)
		r = pcidev_env(e, dev, "PCI_ADDRESS", func->address);
	if (r >= 0)
		r = pcidev_env(e, dev, "PORT_NODE", port->node.path);
	if (r >= 0 && port->id >= 0)
		r = pcidev_env_int(e, dev, "PORT_ID", port->id);
	if (r >= 0 && id.afu_id && fpga_id_normalize(id.afu_id, norm, sizeof(norm)))
		r = pcidev_env(e, dev, "AFU_ID", norm);
	if (r >= 0 && iface && fpga_id_normalize(iface, norm, sizeof(norm)))
		r = pcidev_env(e, dev, "INTERFACE_ID", norm);
	if (r >= 0 && cfg.management_access)
		r = pcidev_env(e, dev, "FME_NODE", fnode.path);
	if (r >= 0 && img.data)
		r = pcidev_env(e, dev, "BITSTREAM_SHA256", img.sha256);
	if (r >= 0)
		r = pcidev_undo_record(req->undo, func, driver);
	if (r < 0)
		dralet_ctx_error(ctx, "%s: preparing the container edits failed: %s", what,
				 strerror(-r));
out:
	fpga_store_unload(&img);
	return r < 0 ? r : 0;
}

/* Puts the port back as the claim's policy says (fpga_restore). */
static int dfl_unprepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			 const struct dralet_claim_ref *claim, const struct dralet_undo *undo)
{
	struct dfl_port_ref *ref = dralet_device_private(dev);
	char what[96];
	int r;

	(void)claim;
	port_what(ref, what, sizeof(what));
	struct fpga_region rg = dfl_region(ref, what);
	r = fpga_restore(ctx, &rg, undo);
	fpga_stranded_note(ctx, &rg, undo, r, &ref->stranded);
	return r;
}

const struct dralet_backend backend_dfl = {
	.abi = DRALET_BACKEND_ABI,
	.name = "dfl",
	.family = "fpga",
	.default_driver = FPGA_DRIVER,
	.ids = dfl_ids,
	.filter = dfl_filter,
	.probe = dfl_probe,
	.validate_config = fpga_validate_config,
	.admin_config_keys = fpga_config_admin_keys,
	.options = fpga_options,
	.prepare = dfl_prepare,
	.unprepare = dfl_unprepare,
	.health = dfl_health,
};
