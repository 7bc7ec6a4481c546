/* SPDX-License-Identifier: Apache-2.0 */
#include "hal/pci_binding.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hal/scan_internal.h"

int hal_pci_driver_override(const struct hal_sysfs_io *io, const char *address, char *buf,
			    size_t size)
{
	char rel[160], value[256];
	int r;

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/driver_override", address);
	r = io->read(io->userdata, rel, value, sizeof(value));
	if (r < 0 || !strcmp(value, "(null)"))
		value[0] = '\0';
	if (r < 0 && r != -ENOENT)
		return r;
	if ((size_t)snprintf(buf, size, "%s", value) >= size)
		return -ENAMETOOLONG;
	return 0;
}

int hal_pf_state_read(const struct hal_sysfs_io *io, const char *address,
		      struct hal_pf_state *ret)
{
	struct hal_pf_state st = { .autoprobe = -1 };
	unsigned probe;
	char rel[160], target[4096];
	int r;

	r = hal_pci_read_uint(io, address, "sriov_totalvfs", &st.total_vfs);
	if (r < 0) {
		char vendor[16];
		snprintf(rel, sizeof(rel), "bus/pci/devices/%s/vendor", address);
		if (io->read(io->userdata, rel, vendor, sizeof(vendor)) < 0)
			return -ENODEV;
		return r == -ENOENT ? -ENOTSUP : r;
	}
	if ((r = hal_pci_read_uint(io, address, "sriov_numvfs", &st.num_vfs)) < 0)
		return r;
	if (hal_pci_read_uint(io, address, "sriov_drivers_autoprobe", &probe) == 0)
		st.autoprobe = probe ? 1 : 0;
	if ((r = hal_pci_driver(io, address, st.driver, sizeof(st.driver))) < 0)
		return r;
	st.vfs = calloc(st.num_vfs + 1, sizeof(*st.vfs));
	if (!st.vfs)
		return -ENOMEM;
	for (unsigned i = 0; i < st.num_vfs; i++) {
		struct hal_vf_state *vf = &st.vfs[st.n_vfs];

		snprintf(rel, sizeof(rel), "bus/pci/devices/%s/virtfn%u", address, i);
		if (io->readlink(io->userdata, rel, target, sizeof(target)) < 0)
			continue;	/* being created or removed right now */
		if (snprintf(vf->address, sizeof(vf->address), "%s", path_basename(target)) >=
		    (int)sizeof(vf->address))
			continue;
		vf->index = (int)i;
		if (hal_pci_driver(io, vf->address, vf->driver, sizeof(vf->driver)) < 0 ||
		    hal_pci_driver_override(io, vf->address, vf->override, sizeof(vf->override)) < 0)
			continue;
		st.n_vfs++;
	}
	*ret = st;
	return 0;
}

void hal_pf_state_clear(struct hal_pf_state *st)
{
	if (!st)
		return;
	free(st->vfs);
	st->vfs = NULL;
	st->n_vfs = 0;
}

int hal_sriov_set_autoprobe(const struct hal_sysfs_io *io, const char *address, int on,
			    char *err, size_t errlen)
{
	char rel[160];
	unsigned now;
	int r;

	if (hal_pci_read_uint(io, address, "sriov_drivers_autoprobe", &now) == 0 && (now != 0) == (on != 0))
		return 0;
	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/sriov_drivers_autoprobe", address);
	r = io->write(io->userdata, rel, on ? "1" : "0");
	if (r < 0)
		hal_say(err, errlen, "%s: cannot set sriov_drivers_autoprobe: %s", address, strerror(-r));
	return r;
}

const struct hal_vf_state *hal_pf_state_vf(const struct hal_pf_state *st, const char *address)
{
	for (size_t i = 0; st && i < st->n_vfs; i++)
		if (!strcmp(st->vfs[i].address, address))
			return &st->vfs[i];
	return NULL;
}

static int write_override(const struct hal_sysfs_io *io, const char *address, const char *value,
			  char *err, size_t errlen)
{
	char rel[160];
	int r;

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/driver_override", address);
	/* an empty line clears it */
	r = io->write(io->userdata, rel, value && *value ? value : "\n");
	if (r < 0)
		hal_say(err, errlen, "%s: cannot set driver_override: %s", address, strerror(-r));
	return r;
}

static int unbind(const struct hal_sysfs_io *io, const char *address, const char *current,
		  char *err, size_t errlen)
{
	char rel[160];
	int r;

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/driver/unbind", address);
	r = io->write(io->userdata, rel, address);
	if (r < 0 && r != -ENODEV) {
		hal_say(err, errlen, "%s: cannot unbind it from %s: %s", address, current, strerror(-r));
		return r;
	}
	return 0;
}

int hal_pci_unbind(const struct hal_sysfs_io *io, const char *address, char *err, size_t errlen)
{
	char current[HAL_DRIVER_NAME_MAX], override[HAL_DRIVER_NAME_MAX];
	int r;

	if ((r = hal_pci_driver(io, address, current, sizeof(current))) < 0 ||
	    (r = hal_pci_driver_override(io, address, override, sizeof(override))) < 0) {
		hal_say(err, errlen, "%s: cannot read its driver: %s", address, strerror(-r));
		return r;
	}
	if (override[0] && (r = write_override(io, address, NULL, err, errlen)) < 0)
		return r;
	if (current[0] && (r = unbind(io, address, current, err, errlen)) < 0)
		return r;
	return 0;
}

int hal_pci_restore_binding(const struct hal_sysfs_io *io, const char *address,
			    const char *driver, const char *override, char *err, size_t errlen)
{
	char current[HAL_DRIVER_NAME_MAX], now_override[HAL_DRIVER_NAME_MAX];
	int r;

	driver = driver ? driver : "";
	override = override ? override : "";
	if ((r = hal_pci_driver(io, address, current, sizeof(current))) < 0 ||
	    (r = hal_pci_driver_override(io, address, now_override, sizeof(now_override))) < 0) {
		hal_say(err, errlen, "%s: cannot read its driver: %s", address, strerror(-r));
		return r;
	}
	if (!strcmp(current, driver) && !strcmp(now_override, override))
		return 0;
	if (strcmp(current, driver)) {
		/* the override makes drivers_probe pick @driver and nothing else */
		if (driver[0] && (r = write_override(io, address, driver, err, errlen)) < 0)
			return r;
		if (current[0] && (r = unbind(io, address, current, err, errlen)) < 0)
			return r;
		if (driver[0]) {
			r = io->write(io->userdata, "bus/pci/drivers_probe", address);
			if (r < 0 && r != -ENODEV && r != -EINVAL) {
				hal_say(err, errlen, "%s: drivers_probe failed: %s", address, strerror(-r));
				return r;
			}
			if ((r = hal_pci_driver(io, address, current, sizeof(current))) < 0)
				return r;
			if (strcmp(current, driver)) {
				hal_say(err, errlen, "%s: did not bind to %s again (bound: %s); is the %s "
				    "module loaded?", address, driver, current[0] ? current : "none",
				    driver);
				return -EIO;
			}
		}
	}
	if ((r = hal_pci_driver_override(io, address, now_override, sizeof(now_override))) < 0)
		return r;
	if (strcmp(now_override, override))
		return write_override(io, address, override, err, errlen);
	return 0;
}
