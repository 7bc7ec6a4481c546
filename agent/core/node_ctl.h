/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The seam through which the agent changes the node: sysfs writes (driver
 * binding, VF counts; hal/sysfs_ctl.h) and rtnetlink VF settings
 * (hal/vf_netlink.h). The SR-IOV policy applier and the backends' PCI
 * control functions (include/dralet/pci_ctl.h) both go through one, so tests
 * put a model of the kernel behind it. Private to agent/.
 */
#ifndef DRALET_NODE_CTL_H
#define DRALET_NODE_CTL_H

#include "hal/hal.h"
#include "hal/sysfs_ctl.h"
#include "hal/vf_netlink.h"

struct node_ctl {
	struct hal_sysfs_io sysfs;
	/* VF settings through the PF (hal_vf_get / hal_vf_apply); 0 or -errno. The
	 * real ones first check that @pf_ifindex is @pf_ifname in this network
	 * namespace (-ENODEV when not): a simulated tree's interface index may be
	 * a real interface of the host. */
	int (*vf_get)(void *userdata, const char *pf_ifname, int pf_ifindex, unsigned vf,
		      struct dralet_vf_settings *ret);
	int (*vf_set)(void *userdata, const char *pf_ifname, int pf_ifindex, unsigned vf,
		      const struct dralet_vf_settings *s);
	void *vf_userdata;
};

/* The real node below @roots (which must outlive the result's use). */
struct node_ctl node_ctl_real(const struct hal_roots *roots);

#endif
