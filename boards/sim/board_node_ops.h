/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The model of the kernel on a materialized board (hal/node_ops.h's model
 * node_ops): reads are the tree's (the tree is the state); writes do what
 * the kernel does (shared/reference/linux-devices.md section 2):
 *  - sriov_numvfs follows drivers/pci/iov.c sriov_numvfs_store: -EINVAL for
 *    a value that is no number, -ERANGE above sriov_totalvfs, the same count
 *    succeeds without change, -ENOENT without a PF driver, -EBUSY for a
 *    non-zero count over a non-zero count; then the PF driver's
 *    sriov_configure (board_node_hooks) and the VFs appear or go: function
 *    directories written by the board simulator (address, ids, IOMMU group
 *    from the board's `sriov:`), virtfnN and physfn links, bus/pci and IOMMU
 *    group links; with sriov_drivers_autoprobe on, each VF binds to the PF's
 *    `vf_driver` when that module is loaded;
 *  - driver_override, drivers/<driver>/bind and unbind, drivers_probe
 *    (driver_override first, else the function's own driver: the board's,
 *    or `vf_driver` for a VF) change the driver link. Binding to the
 *    function's own driver brings its class devices (a VF's `vf_net`
 *    netdev, with the MAC set through the PF when there is one), vfio-pci
 *    brings the group's vfio device and /dev/vfio nodes; unbinding takes
 *    them away.
 *  - VF settings (rtnetlink, vf_get/vf_set) are kept per PF and VF, for the
 *    PF's netdev (its name and ifindex as the tree has them; -ENODEV
 *    otherwise); a VF's settings start fresh when its VFs are created.
 *  - FPGA partial reconfiguration (fpga_pr) follows drivers/fpga/dfl-fme-pr.c:
 *    the FME node must exist (-ENOENT), the port id must be one of the FME's
 *    ports (-EINVAL, like port_id >= the FME's port count), the hook may
 *    answer for the hardware (-EIO) or for a port open elsewhere (-EBUSY,
 *    O_EXCL); then the simulated FPGA loads the
 *    image: its first 16 bytes are the AFU ID the port's afu_id shows
 *    afterwards (a shorter image is -EIO, as hardware refusing it). The
 *    programs are counted (board_node_fpga_programs).
 *  - fpga_manager loads (fpga_mgr_load, fpga_overlay) follow the Xilinx
 *    kernel (board_node_fpga_mgr.c): the image is looked up on the firmware
 *    search path the tree's module/firmware_class/parameters/path names;
 *    the manager's state goes through "firmware request" to "operating",
 *    or to "firmware request error" (no such file, -ENOENT) or "write error"
 *    with status "reconfig incompatible image" (an image under 16 bytes,
 *    -EIO). An overlay item takes a .dtbo whose firmware-name is loaded
 *    into the board's first SoC manager; its status reads "applied" or
 *    "unapplied"; rmdir removes it. Loads count as programs.
 *  - amdgpu's current_compute_partition (board_node_amdgpu.c): a mode the
 *    GPU lists and its memory partition mode allows; the KFD topology then
 *    shows one node per compute partition, each with its render node.
 * Anything else written answers -EACCES, as a read-only attribute does.
 * Not modelled: RDMA devices of VFs created at run time (`vf_rdma`).
 *
 * The ops of the table are thread-safe: each runs under the model's lock (the
 * daemon's prepares and health checks run on worker threads; `dralet run
 * --board` gives every backend this table). The other functions here
 * (hooks, modules, VF settings) are for one test thread while no op runs.
 */
#ifndef DRALET_BOARDS_BOARD_NODE_OPS_H
#define DRALET_BOARDS_BOARD_NODE_OPS_H

#include <stdbool.h>
#include <stddef.h>

#include "hal/node_ops.h"

struct board_node;

/*
 * The model over @dir, the tree board_materialize() wrote from the board
 * file @board_path (unchanged since; the model loads the file again for
 * what the tree does not say: VF ids, drivers, netdev templates). Modules
 * loaded at first: every driver the board names, and vfio-pci.
 * Returns 0 and *ret (board_node_free() it), or -errno with a message.
 */
int board_node_open(const char *board_path, const char *dir, struct board_node **ret,
		    char *err, size_t errlen);
void board_node_free(struct board_node *bn);

/* The model's node_ops; valid while @bn lives. */
const struct node_ops *board_node_ops(struct board_node *bn);
/* The tree's roots (sys/, dev/, proc/ below the directory). */
const struct hal_roots *board_node_roots(const struct board_node *bn);

/* Loads or unloads module @driver: binding to a driver that is not loaded
 * does not happen (drivers_probe succeeds, the function stays unbound). */
void board_node_set_loaded(struct board_node *bn, const char *driver, bool loaded);

/* What the PF drivers answer, for tests of the kernel's refusals. Each op
 * may be NULL (0: go on); a negative return is the write's or call's error. */
struct board_node_hooks {
	/* the PF driver's sriov_configure(@pf, @n), before VFs are made or removed */
	int (*sriov_configure)(void *userdata, const char *pf, unsigned n);
	/* the PF driver's ndo_get_vf_config (@set false) / ndo_set_vf_* (true) */
	int (*vf_config)(void *userdata, const char *pf, unsigned vf, bool set);
	/* the FPGA's answer to programming port @port_id of FME @fme ("dfl-fme.0"),
	 * before the image loads (-EIO: refused, -EBUSY: the port is open) */
	int (*fpga_pr)(void *userdata, const char *fme, unsigned port_id);
	void *userdata;
};
void board_node_set_hooks(struct board_node *bn, const struct board_node_hooks *hooks);

/* The settings the PF @pf keeps for its VF @vf (what vf_get reports and
 * vf_set changes), to read or preset; NULL when @pf is no SR-IOV PF or @vf
 * is not below its sriov_totalvfs. Valid while @bn lives. */
struct dralet_vf_settings *board_node_vf_settings(struct board_node *bn, const char *pf,
						  unsigned vf);

/* How many images fpga_pr loaded so far, and the size of the last. */
unsigned board_node_fpga_programs(const struct board_node *bn, size_t *ret_last_size);

#endif
