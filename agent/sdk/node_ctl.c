/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/sdk/node_ctl.h"

static int real_vf_get(void *userdata, int pf_ifindex, unsigned vf, struct hal_vf_settings *ret)
{
	(void)userdata;
	return hal_vf_get(pf_ifindex, vf, ret);
}

static int real_vf_set(void *userdata, int pf_ifindex, unsigned vf,
		       const struct hal_vf_settings *s)
{
	(void)userdata;
	return hal_vf_apply(pf_ifindex, vf, s);
}

struct node_ctl node_ctl_real(const struct hal_roots *roots)
{
	return (struct node_ctl){
		.sysfs = hal_sysfs_io_real(roots),
		.vf_get = real_vf_get,
		.vf_set = real_vf_set,
	};
}
