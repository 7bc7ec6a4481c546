/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one seam through which dralet changes the node: sysfs attribute
 * writes (driver binding, VF counts; hal/pci_binding.h, hal/pci_sriov.h),
 * the reads that check their result, rtnetlink VF settings
 * (hal/vf_netlink.h), and FPGA programming (DFL partial reconfiguration,
 * fpga_manager firmware loads and device-tree overlays). The SR-IOV policy applier, `dralet sriov` and the
 * backends' PCI control calls (include/dralet/pci_ctl.h) all go through one
 * struct node_ops: node_ops_real() is the node below the sysfs root; the
 * board simulator's model of the kernel (boards/sim/board_node_ops.h: VFs
 * appearing at sriov_numvfs writes, drivers binding, VF settings kept per PF,
 * on a materialized board's tree) fills the same table for the tests.
 *
 * Every op is set (no NULL ops). Errors: -errno as the kernel returned it.
 */
#ifndef DRALET_HAL_NODE_OPS_H
#define DRALET_HAL_NODE_OPS_H

#include <stddef.h>

#include <dralet/pci.h>

#include "hal/hal.h"

struct node_ops {
	/* Writes @value to <sysfs root>/<relpath> in one write; 0 or -errno. */
	int (*write)(void *userdata, const char *relpath, const char *value);
	/* Reads <sysfs root>/<relpath> (trailing newline removed); length or -errno. */
	int (*read)(void *userdata, const char *relpath, char *buf, size_t size);
	/* readlink of <sysfs root>/<relpath>; length or -errno. */
	int (*readlink)(void *userdata, const char *relpath, char *buf, size_t size);
	/* VF @vf's settings through the PF's interface (RTM_GETLINK / RTM_SETLINK);
	 * 0 or -errno. The real ones first check that @pf_ifindex is @pf_ifname in
	 * this network namespace (-ENODEV when not): a simulated tree's interface
	 * index may be a real interface of the host. */
	int (*vf_get)(void *userdata, const char *pf_ifname, int pf_ifindex, unsigned vf,
		      struct dralet_vf_settings *ret);
	int (*vf_set)(void *userdata, const char *pf_ifname, int pf_ifindex, unsigned vf,
		      const struct dralet_vf_settings *s);
	/* Programs @size bytes at @image into port @port_id of the DFL FME whose
	 * node is <dev root>/@fme ("dfl-fme.0"): DFL_FPGA_FME_PORT_PR
	 * (docs/fpga.md 1.1), holding the port's node <dev root>/@port
	 * ("dfl-port.0") open exclusively meanwhile, as OPAE does, so a port a
	 * container has open is -EBUSY and never reprogrammed. 0 or -errno (-EIO:
	 * the hardware refused the image; the FME manager's status says why). */
	int (*fpga_pr)(void *userdata, const char *fme, const char *port, unsigned port_id,
		       const void *image, size_t size);
	/* Loads the image file @image (a name on the kernel's firmware search
	 * path, docs/fpga.md 1.4) through <sysfs root>/class/fpga_manager/
	 * @manager: writes @flags (FPGA_MGR_* bits, written in hex) to its
	 * flags, then @image to its firmware (the Xilinx kernel's attributes;
	 * the write returns when the load is over). 0 or -errno (-ENOENT: the
	 * kernel has no firmware attribute; the kernel's load error otherwise). */
	int (*fpga_mgr_load)(void *userdata, const char *manager, unsigned long flags,
			     const char *image);
	/* Device-tree overlay @name through configfs (vendor kernels): with
	 * @dtbo (a name on the firmware search path), mkdir
	 * <sysfs root>/kernel/config/device-tree/overlays/@name and write @dtbo
	 * to its path (the kernel answers success even when applying failed:
	 * its status then reads "unapplied"); with @dtbo NULL, rmdir it, which
	 * removes the overlay (0 when it is not there). 0 or -errno. */
	int (*fpga_overlay)(void *userdata, const char *name, const char *dtbo);
	void *userdata;
};

/* The real node below @roots (which must outlive the result's use). A write
 * below a root that is neither sysfs nor configfs (a materialized board)
 * replaces the file's content, as a kernel attribute takes the whole value. */
struct node_ops node_ops_real(const struct hal_roots *roots);

#endif
