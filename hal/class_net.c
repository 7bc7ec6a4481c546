/* SPDX-License-Identifier: Apache-2.0 */
/* Network interfaces (class/net) linked to their PCI function. */
#include <string.h>

#include "hal/class.h"

static void on_netdev(struct hal_scan_private *s, const char *name, int fd, const char *path,
		      void *userdata)
{
	struct dralet_pci_func *f = scan_owner_of_path(s, path);
	struct dralet_netdev *n;
	char buf[128];
	int64_t v;

	(void)userdata;
	if (!f)
		return;	/* virtual interfaces (lo, bridges, veth) have no PCI function */
	n = scan_append(s, (const void **)&f->net, &f->n_net, sizeof(*n));
	if (!n)
		return;
	n->ifname = arena_strdup(s->arena, name);
	n->speed_mbps = -1;
	n->mtu = -1;
	n->ifindex = -1;
	if (sysfs_read(fd, "address", buf, sizeof(buf)) > 0)
		n->mac = arena_strdup(s->arena, buf);
	if (sysfs_read(fd, "operstate", buf, sizeof(buf)) > 0)
		n->operstate = arena_strdup(s->arena, buf);
	/* speed reads EINVAL while the link is down */
	if (sysfs_read_int(fd, "speed", &v) == 0 && v > 0)
		n->speed_mbps = v;
	if (sysfs_read_int(fd, "mtu", &v) == 0 && v > 0 && v < (1 << 20))
		n->mtu = (int)v;
	if (sysfs_read_int(fd, "ifindex", &v) == 0 && v > 0 && v < (1 << 30))
		n->ifindex = (int)v;
}

void class_net_scan(struct hal_scan_private *s)
{
	class_for_each(s, "class/net", NULL, on_netdev, NULL);
}
