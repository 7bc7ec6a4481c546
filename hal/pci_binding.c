/* SPDX-License-Identifier: Apache-2.0 */
#include "hal/pci_binding.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "agent/lib/err_msg.h"
#include "hal/scan_internal.h"

int hal_pci_driver(const struct node_ops *node, const char *address, char *buf, size_t size)
{
	char rel[128], target[4096];
	int r;

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/driver", address);
	r = node->readlink(node->userdata, rel, target, sizeof(target));
	if (r == -ENOENT) {
		buf[0] = '\0';
		return 0;
	}
	if (r < 0)
		return r;
	if ((size_t)snprintf(buf, size, "%s", path_basename(target)) >= size)
		return -ENAMETOOLONG;
	return 0;
}

int hal_pci_driver_override(const struct node_ops *node, const char *address, char *buf,
			    size_t size)
{
	char rel[160], value[256];
	int r;

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/driver_override", address);
	r = node->read(node->userdata, rel, value, sizeof(value));
	if (r < 0 || !strcmp(value, "(null)"))
		value[0] = '\0';
	if (r < 0 && r != -ENOENT)
		return r;
	if ((size_t)snprintf(buf, size, "%s", value) >= size)
		return -ENAMETOOLONG;
	return 0;
}

static int write_override(const struct node_ops *node, const char *address, const char *value,
			  char *err, size_t errlen)
{
	char rel[160];
	int r;

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/driver_override", address);
	/* an empty line clears it */
	r = node->write(node->userdata, rel, value && *value ? value : "\n");
	if (r < 0)
		err_printf(err, errlen, 0, "%s: cannot set driver_override: %s", address, strerror(-r));
	return r;
}

static int unbind(const struct node_ops *node, const char *address, const char *current,
		  char *err, size_t errlen)
{
	char rel[160];
	int r;

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/driver/unbind", address);
	r = node->write(node->userdata, rel, address);
	if (r < 0 && r != -ENODEV) {
		err_printf(err, errlen, 0, "%s: cannot unbind it from %s: %s", address, current, strerror(-r));
		return r;
	}
	return 0;
}

/* drivers_probe honours driver_override; ENODEV/EINVAL just mean no driver
 * took it, which the caller's check of the driver link reports better */
static int drivers_probe(const struct node_ops *node, const char *address, char *err,
			 size_t errlen)
{
	int r = node->write(node->userdata, "bus/pci/drivers_probe", address);

	if (r < 0 && r != -ENODEV && r != -EINVAL) {
		err_printf(err, errlen, 0, "%s: drivers_probe failed: %s", address, strerror(-r));
		return r;
	}
	return 0;
}

int hal_pci_set_driver(const struct node_ops *node, const char *address, const char *driver,
		       char *err, size_t errlen)
{
	char current[256], override[256] = "";
	int r;

	r = hal_pci_driver(node, address, current, sizeof(current));
	if (r < 0) {
		err_printf(err, errlen, 0, "%s: cannot read its driver: %s", address, strerror(-r));
		return r;
	}
	hal_pci_driver_override(node, address, override, sizeof(override));
	/* already so: bound to the target, and the override says the same */
	if (driver && !strcmp(current, driver) && !strcmp(override, driver))
		return 0;
	if (!driver && !override[0] && current[0])
		return 0;

	if ((r = write_override(node, address, driver, err, errlen)) < 0)
		return r;
	if (current[0] && (!driver || strcmp(current, driver)) &&
	    (r = unbind(node, address, current, err, errlen)) < 0)
		return r;
	if ((r = drivers_probe(node, address, err, errlen)) < 0)
		return r;
	r = hal_pci_driver(node, address, current, sizeof(current));
	if (r < 0)
		return r;
	if (driver && strcmp(current, driver)) {
		err_printf(err, errlen, 0, "%s: did not bind to %s (bound: %s); is the %s module loaded?",
		    address, driver, current[0] ? current : "none", driver);
		return -EIO;
	}
	return 0;
}

int hal_pci_unbind(const struct node_ops *node, const char *address, char *err, size_t errlen)
{
	char current[HAL_DRIVER_NAME_MAX], override[HAL_DRIVER_NAME_MAX];
	int r;

	if ((r = hal_pci_driver(node, address, current, sizeof(current))) < 0 ||
	    (r = hal_pci_driver_override(node, address, override, sizeof(override))) < 0) {
		err_printf(err, errlen, 0, "%s: cannot read its driver: %s", address, strerror(-r));
		return r;
	}
	if (override[0] && (r = write_override(node, address, NULL, err, errlen)) < 0)
		return r;
	if (current[0] && (r = unbind(node, address, current, err, errlen)) < 0)
		return r;
	return 0;
}

int hal_pci_restore_binding(const struct node_ops *node, const char *address,
			    const char *driver, const char *override, char *err, size_t errlen)
{
	char current[HAL_DRIVER_NAME_MAX], now_override[HAL_DRIVER_NAME_MAX];
	int r;

	driver = driver ? driver : "";
	override = override ? override : "";
	if ((r = hal_pci_driver(node, address, current, sizeof(current))) < 0 ||
	    (r = hal_pci_driver_override(node, address, now_override, sizeof(now_override))) < 0) {
		err_printf(err, errlen, 0, "%s: cannot read its driver: %s", address, strerror(-r));
		return r;
	}
	if (!strcmp(current, driver) && !strcmp(now_override, override))
		return 0;
	if (strcmp(current, driver)) {
		/* the override makes drivers_probe pick @driver and nothing else */
		if (driver[0] && (r = write_override(node, address, driver, err, errlen)) < 0)
			return r;
		if (current[0] && (r = unbind(node, address, current, err, errlen)) < 0)
			return r;
		if (driver[0]) {
			if ((r = drivers_probe(node, address, err, errlen)) < 0)
				return r;
			if ((r = hal_pci_driver(node, address, current, sizeof(current))) < 0)
				return r;
			if (strcmp(current, driver)) {
				err_printf(err, errlen, 0, "%s: did not bind to %s again (bound: %s); is the %s "
				    "module loaded?", address, driver, current[0] ? current : "none",
				    driver);
				return -EIO;
			}
		}
	}
	if ((r = hal_pci_driver_override(node, address, now_override, sizeof(now_override))) < 0)
		return r;
	if (strcmp(now_override, override))
		return write_override(node, address, override, err, errlen);
	return 0;
}
