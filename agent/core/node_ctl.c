/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/core/node_ctl.h"

#include <errno.h>
#include <string.h>
#include <net/if.h>

/* The interface with index @ifindex here is the one the sysfs tree named. */
static bool same_interface(const char *ifname, int ifindex)
{
	char here[IF_NAMESIZE];

	return ifname && ifindex > 0 && if_indextoname((unsigned)ifindex, here) &&
	       !strcmp(here, ifname);
}

static int real_vf_get(void *userdata, const char *pf_ifname, int pf_ifindex, unsigned vf,
		       struct dralet_vf_settings *ret)
{
	(void)userdata;
	if (!same_interface(pf_ifname, pf_ifindex))
		return -ENODEV;
	return hal_vf_get(pf_ifindex, vf, ret);
}

static int real_vf_set(void *userdata, const char *pf_ifname, int pf_ifindex, unsigned vf,
		       const struct dralet_vf_settings *s)
{
	(void)userdata;
	if (!same_interface(pf_ifname, pf_ifindex))
		return -ENODEV;
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
