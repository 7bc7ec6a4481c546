/* SPDX-License-Identifier: Apache-2.0 */
#include "hal/uevent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libudev.h>
#include <linux/magic.h>
#include <sys/vfs.h>

#include "hal/hal.h"

/* Subsystems whose events change the inventory ("module": a driver loaded
 * after the agent started). */
static const char *const watched[] = {
	"pci", "net", "infiniband", "infiniband_verbs", "drm", "accel", "fpga_manager",
	"fpga_region", "vfio", "module", NULL,
};

/* A burst (enabling 64 VFs) must not overflow the socket buffer. */
#define UEVENT_RECEIVE_BUFFER (4 << 20)

struct hal_uevent_monitor {
	struct udev *udev;
	struct udev_monitor *mon;
};

void hal_uevent_pci_address(const char *devpath, char *buf, size_t size)
{
	const char *found = NULL, *p = devpath;
	size_t found_len = 0;

	buf[0] = '\0';
	while (p && *p) {
		const char *end = strchr(p, '/');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char part[HAL_UEVENT_ADDRESS_SIZE];
		unsigned domain, bus, dev, fn;
		if (len < sizeof(part)) {
			memcpy(part, p, len);
			part[len] = '\0';
			if (hal_parse_address(part, &domain, &bus, &dev, &fn))
				found = p, found_len = len;
		}
		p = end ? end + 1 : NULL;
	}
	if (found)
		snprintf(buf, size, "%.*s", (int)found_len, found);
}

bool hal_uevent_describes(const struct hal_roots *roots)
{
	struct statfs st;

	/* a simulated board's tree is a plain directory: the host's uevents are
	 * not about it; the host's sysfs mounted anywhere (a container's
	 * /host/sys) is */
	return statfs(roots->sys, &st) == 0 && st.f_type == SYSFS_MAGIC;
}

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
		const char *devpath = udev_device_get_devpath(d);
		char address[HAL_UEVENT_ADDRESS_SIZE];
		hal_uevent_pci_address(devpath ? devpath : "", address, sizeof(address));
		struct hal_uevent ev = {
			.action = udev_device_get_action(d),
			.subsystem = udev_device_get_subsystem(d),
			.sysname = udev_device_get_sysname(d),
			.pci_address = address,
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
