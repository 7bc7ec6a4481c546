/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xrt: AMD/Xilinx Alveo cards running XRT shells (linux-devices.md 5.3).
 * A card has a management PF (function 0, xclmgmt, /dev/xclmgmt<instance>)
 * and a user PF (function 1, xocl, DRM nodes). Both are claimed; the card is
 * ONE device named after the user PF. Golden (factory) images run no shell:
 * they are claimed so nothing else publishes them, and skipped with a
 * warning until programming a shell is supported.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dralet/pci_ctl.h>

#include "bitstream.h"
#include "fpga.h"
#include "../common/pcidev.h"

enum xrt_role { XRT_NONE, XRT_MGMT, XRT_USER, XRT_GOLDEN };

struct alveo_id {
	uint16_t device;
	enum xrt_role role;
	const char *product;
};

/* linux-devices.md 1.5 (udev hwdb, XRT driver tables). */
static const struct alveo_id alveo_ids[] = {
	{ 0x5000, XRT_MGMT, "Alveo U200" },  { 0x5001, XRT_USER, "Alveo U200" },
	{ 0x5004, XRT_MGMT, "Alveo U250" },  { 0x5005, XRT_USER, "Alveo U250" },
	{ 0x500c, XRT_MGMT, "Alveo U280" },  { 0x500d, XRT_USER, "Alveo U280" },
	{ 0x5020, XRT_MGMT, "Alveo U50" },   { 0x5021, XRT_USER, "Alveo U50" },
	{ 0x505c, XRT_MGMT, "Alveo U55C" },  { 0x505d, XRT_USER, "Alveo U55C" },
	{ 0xd000, XRT_GOLDEN, "Alveo U200" }, { 0xd004, XRT_GOLDEN, "Alveo U250" },
	{ 0xd00c, XRT_GOLDEN, "Alveo U280" }, { 0xd020, XRT_GOLDEN, "Alveo U50" },
};

/* Vendors whose cards run XRT shells: Xilinx, Advantech, AWS, Arista; the
 * filter takes the functions with an XRT role. */
static const struct dralet_pci_id xrt_ids[] = {
	DRALET_PCI_VENDOR_CLASS(0x10ee, 0, 0),
	DRALET_PCI_VENDOR_CLASS(0x13fe, 0, 0),
	DRALET_PCI_VENDOR_CLASS(0x1d0f, 0, 0),
	DRALET_PCI_VENDOR_CLASS(0x3475, 0, 0),
	{ 0, 0, 0, 0 },
};

static const struct alveo_id *alveo_lookup(const struct dralet_pci_func *f)
{
	if (f->vendor_id != 0x10ee)
		return NULL;
	for (size_t i = 0; i < sizeof(alveo_ids) / sizeof(alveo_ids[0]); i++)
		if (alveo_ids[i].device == f->device_id)
			return &alveo_ids[i];
	return NULL;
}

static enum xrt_role role_of(const struct dralet_pci_func *f)
{
	const struct alveo_id *id = alveo_lookup(f);

	if (f->vendor_id == 0x10ee && (f->device_id & 0xff00) == 0xd000)
		return XRT_GOLDEN;	/* 10ee:d0xx factory images */
	if (f->xrt && f->xrt->user_pf)
		return XRT_USER;
	if (f->xrt && f->xrt->mgmt_pf)
		return XRT_MGMT;
	return id ? id->role : XRT_NONE;
}

static int xrt_filter(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		      const struct dralet_pci_id *id, int score)
{
	(void)ctx;
	(void)id;
	(void)score;
	if ((func->class_code >> 16) == 0x06)
		return 0;
	return role_of(func) != XRT_NONE ? FPGA_VENDOR_SCORE : 0;
}

/* The management PF in the user PF's slot (function 0 on 2018.3+ shells). */
static const struct dralet_pci_func *find_mgmt(struct dralet_backend_ctx *ctx,
					    const struct dralet_pci_func *user)
{
	char address[32];

	for (unsigned fn = 0; fn < 8; fn++) {
		const struct dralet_pci_func *f;
		if (fn == user->fn)
			continue;
		snprintf(address, sizeof(address), "%04x:%02x:%02x.%u", user->domain, user->bus,
			 user->dev, fn);
		f = dralet_ctx_find_pci(ctx, address);
		if (f && role_of(f) == XRT_MGMT)
			return f;
	}
	return NULL;
}

/* A shell fact from the user PF, else from the management PF. */
#define XRT_FACT(user, mgmt, field)                                              \
	((user)->xrt && (user)->xrt->field ? (user)->xrt->field                  \
	 : (mgmt) && (mgmt)->xrt ? (mgmt)->xrt->field : NULL)

/*
 * The interface UUID a user xclbin must match: the LAST line of
 * interface_uuids (base/BLP first, then the shell/PLP of a two-stage
 * platform; linux-devices.md 5.3). The HAL keeps only the first line, so the
 * file is re-read here; the HAL's value is the fallback.
 */
static const char *interface_uuid(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *user,
				  const struct dralet_pci_func *mgmt, char *buf, size_t size)
{
	const struct dralet_pci_func *holders[] = { mgmt, user };
	char text[512];

	for (size_t i = 0; i < 2; i++) {
		char *last = NULL, *save = NULL;
		if (!holders[i] ||
		    dralet_read_pci_file(ctx, holders[i], "interface_uuids", text, sizeof(text)) <= 0)
			continue;
		for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			line[strcspn(line, " \t\r")] = '\0';
			if (*line)
				last = line;
		}
		if (last) {
			snprintf(buf, size, "%s", last);
			return buf;
		}
	}
	return XRT_FACT(user, mgmt, interface_uuid);
}

/* "xilinx_u55c_gen3x16_xdma_base_3" -> "Alveo U55C" for cards missing from
 * the table. */
static bool product_from_shell(const char *vbnv, char *buf, size_t size)
{
	const char *p;
	size_t o;

	if (!vbnv || strncmp(vbnv, "xilinx_u", 8))
		return false;
	p = vbnv + 7;
	o = (size_t)snprintf(buf, size, "Alveo ");
	for (; *p && *p != '_' && o + 1 < size; p++)
		buf[o++] = (char)toupper((unsigned char)*p);
	buf[o] = '\0';
	return true;
}

static int health_now(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *user,
		      const struct dralet_pci_func *mgmt)
{
	char driver[64];
	int health = DRALET_HEALTH_HEALTHY;
	char ibuf[80];
	const char *logic = XRT_FACT(user, mgmt, logic_uuid);
	const char *iface = interface_uuid(ctx, user, mgmt, ibuf, sizeof(ibuf));

	if (dralet_pci_driver(ctx, user->address, driver, sizeof(driver)) <= 0)
		return DRALET_HEALTH_UNHEALTHY;
	if (mgmt && dralet_pci_driver(ctx, mgmt->address, driver, sizeof(driver)) <= 0)
		return DRALET_HEALTH_UNHEALTHY;
	if ((logic && fpga_id_all_f(logic)) || (iface && fpga_id_all_f(iface)))
		return DRALET_HEALTH_UNHEALTHY;	/* the shell's firmware crashed */
	health = fpga_health_worst(health, fpga_managers_health(ctx, user));
	if (mgmt)
		health = fpga_health_worst(health, fpga_managers_health(ctx, mgmt));
	return health;
}

static void add_attributes(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			   const struct dralet_pci_func *user, const struct dralet_pci_func *mgmt)
{
	const struct alveo_id *id = alveo_lookup(user);
	const char *vbnv = XRT_FACT(user, mgmt, vbnv);
	const char *ts = XRT_FACT(user, mgmt, timestamp);
	const char *serial = XRT_FACT(user, mgmt, serial);
	const char *xclbin = user->xrt ? user->xrt->xclbin_uuid : NULL;
	char product[48], ibuf[80], *end;

	dralet_device_set_string(dev, "framework", "xrt");
	if (id)
		dralet_device_set_string(dev, "productName", id->product);
	else if (product_from_shell(vbnv, product, sizeof(product)))
		dralet_device_set_string(dev, "productName", product);
	if (vbnv)
		dralet_device_set_string(dev, "shell", vbnv);
	if (ts) {
		long long v = strtoll(ts, &end, 0);
		if (end != ts && !*end && v >= 0)
			dralet_device_set_int(dev, "shellTimestamp", v);
		else
			dralet_ctx_warn(ctx, "device %s: shell timestamp \"%.40s\" is not a number",
					dralet_device_name(dev), ts);
	}
	fpga_set_id_attr(ctx, dev, "logicUUID", XRT_FACT(user, mgmt, logic_uuid));
	fpga_set_id_attr(ctx, dev, "interfaceUUID",
			 interface_uuid(ctx, user, mgmt, ibuf, sizeof(ibuf)));
	if (xclbin && !fpga_id_all_zero(xclbin)) {
		fpga_set_id_attr(ctx, dev, "xclbinUUID", xclbin);
		fpga_set_loaded_attr(ctx, dev, FPGA_IMAGE_XCLBIN, xclbin,
				     interface_uuid(ctx, user, mgmt, ibuf, sizeof(ibuf)));
	}
	if (serial)
		dralet_device_set_string(dev, "serial", serial);
	dralet_device_set_string(dev, "userPciAddress", user->address);
	if (mgmt)
		dralet_device_set_string(dev, "mgmtPciAddress", mgmt->address);
	if (user->driver)
		dralet_device_set_string(dev, "driver", user->driver);
}

/* A card's private data: its management PF (scan pointer, may be NULL) and
 * a load left unfinished (fpga.h). */
struct xrt_card {
	const struct dralet_pci_func *mgmt;
	struct fpga_stranded stranded;
};

static int xrt_health(struct dralet_backend_ctx *ctx, struct dralet_device *dev);

static int xrt_probe(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		     const struct dralet_pci_id *id)
{
	const struct dralet_pci_func *mgmt;
	struct dralet_device *dev;
	int r = 0;

	(void)id;
	switch (role_of(func)) {
	case XRT_GOLDEN:
		dralet_ctx_warn(ctx, "%s runs the golden (factory) image: no shell to run "
				"workloads on; flash a shell with xbmgmt (not published)",
				func->address);
		return 0;
	case XRT_MGMT:
		return 0;	/* published through its user PF */
	case XRT_USER:
		break;
	case XRT_NONE:
		return 0;
	}
	mgmt = find_mgmt(ctx, func);
	r = dralet_device_new(ctx, func, "fpga", NULL, &dev);
	if (r < 0)
		return r;
	add_attributes(ctx, dev, func, mgmt);
	struct xrt_card *card = calloc(1, sizeof(*card));
	if (!card)
		return -ENOMEM;
	card->mgmt = mgmt;
	dralet_device_set_private(dev, card, free);
	fpga_stranded_load(ctx, &card->stranded, dralet_device_name(dev));
	for (size_t i = 0; r >= 0 && i < func->n_drm; i++)
		if (func->drm[i].node.path)
			r = dralet_device_add_node(dev, &func->drm[i].node);
	if (r >= 0)
		r = pcidev_device_add_vfio(ctx, dev, func);
	if (r >= 0 && !pcidev_is_vfio(func) && func->driver && !func->n_drm)
		dralet_ctx_warn(ctx, "device %s: user PF bound to %s has no DRM render node",
				dralet_device_name(dev), func->driver);
	dralet_device_set_health(dev, xrt_health(ctx, dev));
	return r < 0 ? r : 0;
}

static struct fpga_region xrt_region(const struct dralet_pci_func *user, const char *iface,
				     const char *what);

static int xrt_health(struct dralet_backend_ctx *ctx, struct dralet_device *dev)
{
	struct xrt_card *card = dralet_device_private(dev);
	const struct dralet_pci_func *user = dralet_device_pci(dev);
	int health = health_now(ctx, user, card->mgmt);
	char what[64];

	if (health != DRALET_HEALTH_HEALTHY || !card->stranded.set)
		return health;
	snprintf(what, sizeof(what), "Alveo %s", user->address);
	struct fpga_region rg = xrt_region(user, NULL, what);
	return fpga_stranded_health(ctx, &rg, &card->stranded);
}

/* /dev/xclmgmt<instance>: numbers from <mgmt PF>/xrt/xclmgmt<N>/dev, else the
 * "xclmgmt" major with the instance as minor (older xclmgmt). */
static int mgmt_node(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *mgmt,
		     char *path, struct dralet_devnode *ret)
{
	char name[48], rel[80], buf[32];
	unsigned major = 0, minor = 0;
	int r, instance = mgmt && mgmt->xrt ? mgmt->xrt->instance : -1;

	*ret = (struct dralet_devnode){ 0 };
	if (instance < 0)
		return -ENOENT;
	snprintf(name, sizeof(name), "xclmgmt%d", instance);
	snprintf(rel, sizeof(rel), "xrt/%s/dev", name);
	if (dralet_read_pci_file(ctx, mgmt, rel, buf, sizeof(buf)) > 0 &&
	    sscanf(buf, "%u:%u", &major, &minor) == 2) {
		/* numbers from sysfs */
	} else if ((r = dralet_char_major(ctx, "xclmgmt")) > 0) {
		major = (unsigned)r;
		minor = (unsigned)instance;
	}
	r = dralet_devnode(ctx, name, major, minor, path, ret);
	if (r < 0)
		return r;
	return ret->path ? 0 : -ENOENT;
}

/* fpga_region ops of an Alveo (self: its user PF). */
static const char *xrt_loaded(struct dralet_backend_ctx *ctx, const void *self, char *buf,
			      size_t size)
{
	if (dralet_read_pci_file(ctx, self, "xclbinuuid", buf, size) <= 0 ||
	    fpga_id_all_zero(buf))
		return NULL;
	return buf;
}

static int xrt_write(struct dralet_backend_ctx *ctx, const void *self,
		     const struct fpga_loaded *img)
{
	const struct dralet_pci_func *user = self;

	return fpga_xrt_load(ctx, user->address, img);
}

static struct fpga_region xrt_region(const struct dralet_pci_func *user, const char *iface,
				     const char *what)
{
	return (struct fpga_region){
		.what = what,
		.kind = FPGA_IMAGE_XCLBIN,
		.interface_id = iface,
		.loaded = xrt_loaded,
		.write = xrt_write,
		.self = user,
	};
}

static int xrt_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		       struct dralet_prepare_req *req)
{
	const struct dralet_pci_func *user = dralet_device_pci(dev);
	struct xrt_card *card = dralet_device_private(dev);
	const struct dralet_pci_func *mgmt = card->mgmt;
	struct dralet_edits *e = req->edits;
	struct dralet_devnode mnode = { 0 };
	struct fpga_config cfg;
	struct fpga_loaded img = { 0 };
	bool loaded;
	char driver[64], what[64], norm_iface[40] = "", norm_xclbin[40] = "", ibuf[80];
	char mgmt_path[DRALET_DEVNODE_PATH_MAX];
	const char *iface = interface_uuid(ctx, user, mgmt, ibuf, sizeof(ibuf));
	char xbuf[80];
	/* now, not at discovery: a prepare may have loaded another since */
	const char *xclbin = xrt_loaded(ctx, user, xbuf, sizeof(xbuf));
	int r = dralet_pci_driver(ctx, user->address, driver, sizeof(driver));

	snprintf(what, sizeof(what), "Alveo %s", user->address);
	if (r <= 0) {
		dralet_ctx_error(ctx, "%s: the user PF is %s", what,
				 r == -ENODEV ? "gone" : "not bound to a driver");
		return r < 0 ? r : -ENODEV;
	}
	if (!strcmp(driver, "vfio-pci") != pcidev_is_vfio(user)) {
		dralet_ctx_error(ctx, "%s moved from driver %s to %s since discovery; it is "
				 "prepared after the next discovery", what,
				 user->driver ? user->driver : "none", driver);
		return -EAGAIN;
	}
	bool have_mgmt = mgmt_node(ctx, mgmt, mgmt_path, &mnode) == 0;
	struct fpga_identity id = {
		.what = what,
		.shell = XRT_FACT(user, mgmt, vbnv),
		.interface_id = iface,
		.afu_id = xclbin && !fpga_id_all_zero(xclbin) ? xclbin : NULL,
		.has_management = have_mgmt,
	};
	const char *before = id.afu_id;
	struct fpga_region rg = xrt_region(user, iface, what);

	r = fpga_claim_bitstream(ctx, req, &id, &cfg, FPGA_IMAGE_XCLBIN, &img, &loaded);
	if (r < 0)
		goto out;
	if (cfg.has_bitstream)	/* the requirements hold for the card as it will be */
		id.afu_id = img.image.accelerator_id;
	r = fpga_config_check(ctx, req->config, &id, &cfg);
	if (r >= 0 && cfg.has_bitstream) {
		r = fpga_load_for_claim(ctx, &rg, req, &cfg, &img, loaded, before);
		fpga_stranded_note(ctx, &rg, req->undo, r, &card->stranded);
	}
	if (r < 0)
		goto out;
	if (pcidev_is_vfio(user))
		r = pcidev_edit_vfio(ctx, e, dev, user);
	else
		r = pcidev_edit_device_nodes(e, dev);
	if (r >= 0 && cfg.management_access)
		r = dralet_edits_add_node(e, &mnode, NULL);
	if (r >= 0)
		r = pcidev_env(e, dev, "PCI_ADDRESS", user->address);
	if (r >= 0 && mgmt)
		r = pcidev_env(e, dev, "MGMT_PCI_ADDRESS", mgmt->address);
	if (r >= 0)
		r = pcidev_env(e, dev, "SHELL", id.shell);
	if (r >= 0 && iface && fpga_id_normalize(iface, norm_iface, sizeof(norm_iface)))
		r = pcidev_env(e, dev, "INTERFACE_UUID", norm_iface);
	if (r >= 0 && id.afu_id && fpga_id_normalize(id.afu_id, norm_xclbin, sizeof(norm_xclbin)))
		r = pcidev_env(e, dev, "XCLBIN_UUID", norm_xclbin);
	if (r >= 0 && cfg.management_access)
		r = pcidev_env(e, dev, "MGMT_NODE", mnode.path);
	if (r >= 0 && img.data)
		r = pcidev_env(e, dev, "BITSTREAM_SHA256", img.sha256);
	if (r >= 0)
		r = pcidev_undo_record(req->undo, user, driver);
	if (r < 0 && r != -ENODEV)
		dralet_ctx_error(ctx, "%s: preparing the container edits failed: %s", what,
				 strerror(-r));
out:
	fpga_store_unload(&img);
	return r < 0 ? r : 0;
}

/* Puts the card back as the claim's policy says (fpga_restore). */
static int xrt_unprepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			 const struct dralet_claim_ref *claim, const struct dralet_undo *undo)
{
	const struct dralet_pci_func *user = dralet_device_pci(dev);
	struct xrt_card *card = dralet_device_private(dev);
	char what[64], ibuf[80];
	int r;

	(void)claim;
	snprintf(what, sizeof(what), "Alveo %s", user->address);
	struct fpga_region rg = xrt_region(user, interface_uuid(ctx, user, card->mgmt, ibuf,
								  sizeof(ibuf)), what);
	r = fpga_restore(ctx, &rg, undo);
	fpga_stranded_note(ctx, &rg, undo, r, &card->stranded);
	return r;
}

const struct dralet_backend backend_xrt = {
	.abi = DRALET_BACKEND_ABI,
	.name = "xrt",
	.family = "fpga",
	.default_driver = FPGA_DRIVER,
	.ids = xrt_ids,
	.filter = xrt_filter,
	.probe = xrt_probe,
	.validate_config = fpga_validate_config,
	.admin_config_keys = fpga_config_admin_keys,
	.options = fpga_options,
	.prepare = xrt_prepare,
	.unprepare = xrt_unprepare,
	.health = xrt_health,
};
