/* SPDX-License-Identifier: Apache-2.0 */
/* What a backend may change on a PCI function (include/dralet/pci_ctl.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <dralet/pci_ctl.h>

#include "agent/core/backend_ctx.h"
#include "hal/node_ops.h"
#include "hal/pci_binding.h"
#include "hal/vf_netlink.h"

/* The context's seam, or the real node below its roots (in @tmp). */
static const struct node_ops *node_of(const struct dralet_backend_ctx *ctx, struct node_ops *tmp)
{
	if (ctx->node)
		return ctx->node;
	*tmp = node_ops_real(ctx->roots);
	return tmp;
}

static bool valid_address(const char *address)
{
	return address && hal_parse_address(address, &(unsigned){ 0 }, &(unsigned){ 0 },
					    &(unsigned){ 0 }, &(unsigned){ 0 });
}

static bool bad_address(struct dralet_backend_ctx *ctx, const char *address)
{
	if (valid_address(address))
		return false;
	dralet_ctx_error(ctx, "\"%.40s\" is not a PCI address", address ? address : "(null)");
	return true;
}

static bool present(const struct node_ops *node, const char *address)
{
	char rel[160], vendor[16];

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/vendor", address);
	return node->read(node->userdata, rel, vendor, sizeof(vendor)) >= 0;
}

int dralet_pci_driver(struct dralet_backend_ctx *ctx, const char *address, char *buf, size_t size)
{
	struct node_ops tmp;
	const struct node_ops *node = node_of(ctx, &tmp);
	int r;

	if (size)
		buf[0] = '\0';
	if (!valid_address(address))
		return -EINVAL;
	/* a driver link lives in the function's directory: only without one is
	 * there a question whether the function is there (health rounds ask
	 * for every device) */
	r = hal_pci_driver(node, address, buf, size);
	if (r == 0 && !*buf && !present(node, address))
		return -ENODEV;
	return r < 0 ? r : (int)strlen(buf);
}

int dralet_pci_binding(struct dralet_backend_ctx *ctx, const char *address, char *driver,
		       size_t driver_size, char *override, size_t override_size)
{
	struct node_ops tmp;
	const struct node_ops *node = node_of(ctx, &tmp);
	int r;

	if (bad_address(ctx, address))
		return -EINVAL;
	/* a driver link that reads is a function that is there (the kernel removes
	 * the link when it unbinds, before the function goes): the presence check
	 * (the vendor file) only tells "gone" from "no driver" */
	r = hal_pci_driver(node, address, driver, driver_size);
	if (r >= 0 && !driver[0] && !present(node, address)) {
		dralet_ctx_error(ctx, "%s is gone", address);
		return -ENODEV;
	}
	if (r >= 0)
		r = hal_pci_driver_override(node, address, override, override_size);
	if (r < 0)
		dralet_ctx_error(ctx, "%s: cannot read its driver: %s", address, strerror(-r));
	return r;
}

int dralet_pci_bind(struct dralet_backend_ctx *ctx, const char *address, const char *driver)
{
	struct node_ops tmp;
	const struct node_ops *node = node_of(ctx, &tmp);
	char err[384] = "";
	int r;

	if (bad_address(ctx, address))
		return -EINVAL;
	r = hal_pci_set_driver(node, address, driver, err, sizeof(err));
	if (r < 0)
		dralet_ctx_error(ctx, "%s", err[0] ? err : strerror(-r));
	return r;
}

int dralet_pci_restore(struct dralet_backend_ctx *ctx, const char *address, const char *driver,
		       const char *override)
{
	struct node_ops tmp;
	const struct node_ops *node = node_of(ctx, &tmp);
	char err[384] = "";
	int r;

	if (bad_address(ctx, address))
		return -EINVAL;
	r = hal_pci_restore_binding(node, address, driver, override, err, sizeof(err));
	if (r < 0)
		dralet_ctx_error(ctx, "%s", err[0] ? err : strerror(-r));
	return r;
}

int dralet_pci_attr_write(struct dralet_backend_ctx *ctx, const char *address, const char *file,
			  const char *value)
{
	struct node_ops tmp;
	const struct node_ops *node = node_of(ctx, &tmp);
	char rel[256];
	int r;

	if (bad_address(ctx, address))
		return -EINVAL;
	if (!file || !*file || strchr(file, '/') || !strcmp(file, "..") || !value) {
		dralet_ctx_error(ctx, "%s: \"%.40s\" is no attribute name", address,
				 file ? file : "(null)");
		return -EINVAL;
	}
	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/%s", address, file);
	r = node->write(node->userdata, rel, value);
	if (r < 0)
		dralet_ctx_error(ctx, "%s: writing %s to %s: %s", address, value, file,
				 strerror(-r));
	return r;
}

int dralet_vf_get(struct dralet_backend_ctx *ctx, const struct dralet_netdev *pf, unsigned vf,
		  struct dralet_vf_settings *ret)
{
	struct node_ops tmp;
	const struct node_ops *node = node_of(ctx, &tmp);
	struct dralet_vf_settings now = DRALET_VF_SETTINGS_INIT;
	int r = node->vf_get(node->userdata, pf->ifname, pf->ifindex, vf, &now);

	if (r < 0) {
		dralet_ctx_error(ctx, "cannot read the settings of VF %u of %s (index %d): %s%s", vf,
				 pf->ifname, pf->ifindex, strerror(-r),
				 r == -ENODEV ? " (no such interface in this network namespace)"
					      : "");
		return r;
	}
	*ret = now;
	return 0;
}

int dralet_vf_set(struct dralet_backend_ctx *ctx, const struct dralet_netdev *pf, unsigned vf,
		  const struct dralet_vf_settings *s)
{
	struct node_ops tmp;
	const struct node_ops *node = node_of(ctx, &tmp);
	int r = hal_vf_settings_valid(s);

	if (r == 0)
		r = node->vf_set(node->userdata, pf->ifname, pf->ifindex, vf, s);
	if (r < 0)
		dralet_ctx_error(ctx, "setting VF %u through %s failed: %s%s", vf, pf->ifname,
				 strerror(-r),
				 r == -EOPNOTSUPP ? " (the PF's driver does not support it)"
				 : r == -ENODEV ? " (no such interface in this network namespace)" : "");
	return r;
}

int dralet_fpga_mgr_load(struct dralet_backend_ctx *ctx, const char *manager, unsigned long flags,
			 const char *image)
{
	struct node_ops tmp;
	const struct node_ops *node = node_of(ctx, &tmp);
	int r = node->fpga_mgr_load(node->userdata, manager, flags, image);

	if (r == -ENOENT)
		dralet_ctx_error(ctx, "the kernel found no class/fpga_manager/%s/firmware attribute "
				 "or no image %s on its firmware search path", manager, image);
	else if (r < 0)
		dralet_ctx_error(ctx, "loading %s through fpga_manager %s failed: %s", image, manager,
				 strerror(-r));
	return r;
}

int dralet_fpga_overlay(struct dralet_backend_ctx *ctx, const char *name, const char *dtbo)
{
	struct node_ops tmp;
	const struct node_ops *node = node_of(ctx, &tmp);
	int r = node->fpga_overlay(node->userdata, name, dtbo);

	if (r < 0 && dtbo)
		dralet_ctx_error(ctx, "applying device-tree overlay %s (%s) through configfs failed: "
				 "%s", name, dtbo, strerror(-r));
	else if (r < 0)
		dralet_ctx_error(ctx, "removing device-tree overlay %s through configfs failed: %s",
				 name, strerror(-r));
	return r;
}

const char *dralet_ctx_error_message(const struct dralet_backend_ctx *ctx)
{
	return ctx ? ctx->error : "";
}

int dralet_fpga_dfl_program(struct dralet_backend_ctx *ctx, const char *fme, const char *port,
			    unsigned port_id, const void *image, size_t size)
{
	struct node_ops tmp;
	const struct node_ops *node = node_of(ctx, &tmp);
	int r = node->fpga_pr(node->userdata, fme, port, port_id, image, size);

	if (r == -EBUSY)
		dralet_ctx_error(ctx, "/dev/%s is open (in use): not reprogramming it", port);
	else if (r == -EIO)
		dralet_ctx_error(ctx, "programming port %u through /dev/%s failed: the FPGA "
				 "refused the image (the FME manager's status says why)", port_id, fme);
	else if (r < 0)
		dralet_ctx_error(ctx, "programming port %u through /dev/%s failed: %s", port_id,
				 fme, strerror(-r));
	return r;
}
