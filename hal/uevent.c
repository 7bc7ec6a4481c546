/* SPDX-License-Identifier: Apache-2.0 */
#include "hal/uevent.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <libudev.h>

/* Subsystems whose events change the inventory. */
static const char *const watched[] = {
	"pci", "net", "infiniband", "infiniband_verbs", "drm", "accel", "fpga_manager",
	"fpga_region", "vfio", NULL,
};

/* A burst (enabling 64 VFs) must not overflow the socket buffer. */
#define UEVENT_RECEIVE_BUFFER (4 << 20)

struct hal_uevent_monitor {
	struct udev *udev;
	struct udev_monitor *mon;
};

int hal_uevent_open(struct hal_uevent_monitor **ret_mon)
{
	struct hal_uevent_monitor *m = calloc(1, sizeof(*m));
	int r;

	if (!m)
		return -ENOMEM;
	m->udev = udev_new();
	if (!m->udev) {
		r = errno ? -errno : -ENOMEM;
		goto fail;
	}
	/* the kernel group: udevd's group gets nothing where udevd does not run */
	m->mon = udev_monitor_new_from_netlink(m->udev, "kernel");
	if (!m->mon) {
		r = errno ? -errno : -EPROTONOSUPPORT;
		goto fail;
	}
	for (const char *const *s = watched; *s; s++)
		if ((r = udev_monitor_filter_add_match_subsystem_devtype(m->mon, *s, NULL)) < 0)
			goto fail;
	/* larger than rmem_max needs CAP_NET_ADMIN; the default is fine otherwise */
	udev_monitor_set_receive_buffer_size(m->mon, UEVENT_RECEIVE_BUFFER);
	if ((r = udev_monitor_enable_receiving(m->mon)) < 0)
		goto fail;
	*ret_mon = m;
	return 0;
fail:
	hal_uevent_close(m);
	return r < 0 ? r : -EIO;
}

void hal_uevent_close(struct hal_uevent_monitor *m)
{
	if (!m)
		return;
	udev_monitor_unref(m->mon);
	udev_unref(m->udev);
	free(m);
}

int hal_uevent_fd(const struct hal_uevent_monitor *m)
{
	return udev_monitor_get_fd(m->mon);
}

int hal_uevent_drain(struct hal_uevent_monitor *m,
		     void (*fn)(void *userdata, const struct hal_uevent *ev), void *userdata)
{
	int n = 0;

	/* NULL means "filtered out" or "nothing left": stop after a few NULLs in
	 * a row so a stream of filtered messages is still drained */
	for (int empty = 0; empty < 16;) {
		struct udev_device *d = udev_monitor_receive_device(m->mon);
		if (!d) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			empty++;
			continue;
		}
		empty = 0;
		struct hal_uevent ev = {
			.action = udev_device_get_action(d),
			.subsystem = udev_device_get_subsystem(d),
			.sysname = udev_device_get_sysname(d),
		};
		if (ev.action && ev.subsystem) {
			n++;
			if (fn)
				fn(userdata, &ev);
		}
		udev_device_unref(d);
	}
	return n;
}
