/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dralet backend SDK: changing a PCI function at prepare and unprepare, for
 * backends that hand whole functions to containers (a VF on vfio-pci, a VF
 * with its MAC and VLAN set through its PF).
 *
 * Everything goes through the agent: below its sysfs root, following the
 * kernel's rules (linux-devices.md section 2), and in tests through the
 * board simulator's model of the kernel. A backend records what it finds in its undo
 * state (prepare.h) before it changes anything, so unprepare can put it back
 * from the checkpoint alone.
 *
 * Errors: 0 or -errno; the reason, naming the function, is set as the
 * operation's error (dralet_ctx_error), so a caller that only adds context
 * may leave it.
 */
#ifndef DRALET_PCI_CTL_H
#define DRALET_PCI_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dralet/backend.h>
#include <dralet/pci.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The driver bound to @address now (its driver link) into @buf, "" when
 * none: the name's length, 0 when no driver is bound, -ENODEV when the
 * function is gone. Sets no error, so health checks may ask it freely.
 * "Is the function still on the driver it was discovered with" is this
 * compared with dralet_pci_func.driver. */
int dralet_pci_driver(struct dralet_backend_ctx *ctx, const char *address, char *buf,
		      size_t size);

/* The driver bound to @address now and its driver_override, each "" when
 * none. -ENODEV when the function is gone. */
int dralet_pci_binding(struct dralet_backend_ctx *ctx, const char *address, char *driver,
		       size_t driver_size, char *override, size_t override_size);

/*
 * Binds @address to @driver ("vfio-pci"): driver_override, unbind,
 * drivers_probe, verified. NULL gives it to the kernel's own choice (clears
 * driver_override, reprobes). Nothing is written when it already is so.
 */
int dralet_pci_bind(struct dralet_backend_ctx *ctx, const char *address, const char *driver);

/* Puts @address back: bound to @driver ("" for none), driver_override
 * @override ("" for none). */
int dralet_pci_restore(struct dralet_backend_ctx *ctx, const char *address, const char *driver,
		       const char *override);

/*
 * Writes @value to the sysfs attribute @file (a plain name, no '/') of PCI
 * function @address, in one write, as the kernel's store takes it
 * (amdgpu's current_compute_partition). -errno as the kernel answered
 * (-EBUSY, -EINVAL ...); the reason, naming the file, is set as the
 * operation's error.
 */
int dralet_pci_attr_write(struct dralet_backend_ctx *ctx, const char *address, const char *file,
			  const char *value);

/* VF @vf's settings now, from the PF's interface @pf (rtnetlink
 * RTM_GETLINK); fields the PF does not report stay unset. -ENODEV when the
 * interface is not there (by name and index) in the agent's network
 * namespace. */
int dralet_vf_get(struct dralet_backend_ctx *ctx, const struct dralet_netdev *pf, unsigned vf,
		  struct dralet_vf_settings *ret);

/* Changes VF @vf's settings through the PF's interface @pf (RTM_SETLINK).
 * -EOPNOTSUPP when the PF's driver does not support one of them. */
int dralet_vf_set(struct dralet_backend_ctx *ctx, const struct dralet_netdev *pf, unsigned vf,
		  const struct dralet_vf_settings *s);

/*
 * Programs port @port_id of a DFL card's FME with a partial-reconfiguration
 * image of @size bytes at @image (DFL_FPGA_FME_PORT_PR on /dev/@fme, with the
 * port node /dev/@port held exclusively meanwhile; docs/fpga.md 1.1): @fme
 * and @port are node names below /dev ("dfl-fme.0", "dfl-port.0"). Record
 * the undo state first: the port's AFU is unknown once this starts.
 * -EBUSY when something has the port open (a container), -EIO when the
 * hardware refused the image; the reason is set as the operation's error.
 */
int dralet_fpga_dfl_program(struct dralet_backend_ctx *ctx, const char *fme, const char *port,
			    unsigned port_id, const void *image, size_t size);

/*
 * fpga_manager (docs/fpga.md 1.4): loads @image, a file name on the kernel's
 * firmware search path, through class/fpga_manager/@manager's flags (@flags,
 * FPGA_MGR_* bits) and firmware attributes (the Xilinx kernel's). Record the
 * undo state first. -ENOENT when the kernel has no firmware attribute; the
 * kernel's error when the load failed (the manager's state and status say
 * why); the reason is set as the operation's error.
 */
int dralet_fpga_mgr_load(struct dralet_backend_ctx *ctx, const char *manager, unsigned long flags,
			 const char *image);

/* Applies (@dtbo, a file name on the firmware search path) or, with @dtbo
 * NULL, removes the device-tree overlay @name through configfs
 * (kernel/config/device-tree/overlays/@name; vendor kernels). Applying
 * returns 0 also when the kernel could not apply it: read its status. */
int dralet_fpga_overlay(struct dralet_backend_ctx *ctx, const char *name, const char *dtbo);

/* The operation's error message so far ("" when none): a backend cleaning
 * up after a failure keeps the first reason with it. */
const char *dralet_ctx_error_message(const struct dralet_backend_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif /* DRALET_PCI_CTL_H */
