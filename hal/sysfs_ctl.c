/* SPDX-License-Identifier: Apache-2.0 */
#include "hal/sysfs_ctl.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/vfs.h>

#include "hal/scan_internal.h"

static bool on_sysfs(int fd)
{
	struct statfs fs;

	return fstatfs(fd, &fs) == 0 && fs.f_type == SYSFS_MAGIC;
}

static int real_write(void *userdata, const char *relpath, const char *value)
{
	const struct hal_roots *roots = userdata;
	char path[4096];
	size_t len = strlen(value);
	ssize_t n;
	int fd, r = hal_root_path(roots->sys, relpath, path, sizeof(path));

	if (r < 0)
		return r;
	fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	/* A sysfs attribute takes the whole value from one write; a simulated
	 * node's tree holds plain files, which must end up the same: "8" over
	 * "64" is "8", not "84". */
	if (!on_sysfs(fd) && ftruncate(fd, 0) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	/* sysfs takes one write per value, and the kernel's error comes back here */
	n = write(fd, value, len);
	r = n < 0 ? -errno : (size_t)n == len ? 0 : -EIO;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}

static int real_read(void *userdata, const char *relpath, char *buf, size_t size)
{
	const struct hal_roots *roots = userdata;
	char path[4096];
	int r = hal_root_path(roots->sys, relpath, path, sizeof(path));

	return r < 0 ? r : sysfs_read(AT_FDCWD, path, buf, size);
}

static int real_readlink(void *userdata, const char *relpath, char *buf, size_t size)
{
	const struct hal_roots *roots = userdata;
	char path[4096];
	int r = hal_root_path(roots->sys, relpath, path, sizeof(path));

	return r < 0 ? r : sysfs_readlink(AT_FDCWD, path, buf, size);
}

struct hal_sysfs_io hal_sysfs_io_real(const struct hal_roots *roots)
{
	return (struct hal_sysfs_io){ real_write, real_read, real_readlink, (void *)roots };
}

void hal_say(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int hal_pci_driver(const struct hal_sysfs_io *io, const char *address, char *buf, size_t size)
{
	char rel[128], target[4096];
	int r;

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/driver", address);
	r = io->readlink(io->userdata, rel, target, sizeof(target));
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

int hal_pci_set_driver(const struct hal_sysfs_io *io, const char *address, const char *driver,
		       char *err, size_t errlen)
{
	char rel[160], current[256], override[256] = "";
	int r;

	r = hal_pci_driver(io, address, current, sizeof(current));
	if (r < 0) {
		hal_say(err, errlen, "%s: cannot read its driver: %s", address, strerror(-r));
		return r;
	}
	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/driver_override", address);
	io->read(io->userdata, rel, override, sizeof(override));
	if (!strcmp(override, "(null)"))
		override[0] = '\0';
	/* already so: bound to the target, and the override says the same */
	if (driver && !strcmp(current, driver) && !strcmp(override, driver))
		return 0;
	if (!driver && !override[0] && current[0])
		return 0;

	/* an empty line clears driver_override */
	r = io->write(io->userdata, rel, driver ? driver : "\n");
	if (r < 0) {
		hal_say(err, errlen, "%s: cannot set driver_override: %s", address, strerror(-r));
		return r;
	}
	if (current[0] && (!driver || strcmp(current, driver))) {
		char unbind[160];
		snprintf(unbind, sizeof(unbind), "bus/pci/devices/%s/driver/unbind", address);
		r = io->write(io->userdata, unbind, address);
		if (r < 0 && r != -ENODEV) {
			hal_say(err, errlen, "%s: cannot unbind it from %s: %s", address, current,
			    strerror(-r));
			return r;
		}
	}
	/* drivers_probe honours driver_override; ENODEV/EINVAL just mean no
	 * driver took it, which the check below reports better */
	r = io->write(io->userdata, "bus/pci/drivers_probe", address);
	if (r < 0 && r != -ENODEV && r != -EINVAL) {
		hal_say(err, errlen, "%s: drivers_probe failed: %s", address, strerror(-r));
		return r;
	}
	r = hal_pci_driver(io, address, current, sizeof(current));
	if (r < 0)
		return r;
	if (driver && strcmp(current, driver)) {
		hal_say(err, errlen, "%s: did not bind to %s (bound: %s); is the %s module loaded?",
		    address, driver, current[0] ? current : "none", driver);
		return -EIO;
	}
	return 0;
}

int hal_pci_read_uint(const struct hal_sysfs_io *io, const char *address, const char *file,
		      unsigned *ret)
{
	char rel[160], buf[32], *end;
	unsigned long v;
	int r;

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/%s", address, file);
	r = io->read(io->userdata, rel, buf, sizeof(buf));
	if (r < 0)
		return r;
	v = strtoul(buf, &end, 10);
	if (end == buf || *end || v > 0xffff)
		return -EINVAL;
	*ret = (unsigned)v;
	return 0;
}

static int write_uint(const struct hal_sysfs_io *io, const char *address, const char *file,
		      unsigned v)
{
	char rel[160], buf[16];

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/%s", address, file);
	snprintf(buf, sizeof(buf), "%u", v);
	return io->write(io->userdata, rel, buf);
}

static const char *numvfs_cause(int r)
{
	switch (r) {
	case -ENOENT: return "no driver is bound to the PF, or it cannot configure SR-IOV";
	case -EBUSY: return "VFs are enabled or in use";
	case -ENOSPC: return "the PF ran out of resources (MSI-X vectors, queues, bus numbers)";
	case -ERANGE: return "more than sriov_totalvfs";
	case -EINVAL: return "the PF driver refused the count";
	default: return strerror(-r);
	}
}

int hal_sriov_set_numvfs(const struct hal_sysfs_io *io, const char *address, unsigned n,
			 int autoprobe, char *err, size_t errlen)
{
	unsigned total, current, probe = 1;
	int r;

	if ((r = hal_pci_read_uint(io, address, "sriov_totalvfs", &total)) < 0) {
		hal_say(err, errlen, "%s: not an SR-IOV physical function (%s)", address,
		    r == -ENOENT ? "no sriov_totalvfs" : strerror(-r));
		return r == -ENOENT ? -ENOTSUP : r;
	}
	if (n > total) {
		hal_say(err, errlen, "%s: %u VFs asked, the PF supports %u", address, n, total);
		return -ERANGE;
	}
	if ((r = hal_pci_read_uint(io, address, "sriov_numvfs", &current)) < 0) {
		hal_say(err, errlen, "%s: cannot read sriov_numvfs: %s", address, strerror(-r));
		return r;
	}
	hal_pci_read_uint(io, address, "sriov_drivers_autoprobe", &probe);
	bool probe_changes = autoprobe >= 0 && (unsigned)autoprobe != probe && n > 0;
	if (current == n && !probe_changes)
		return (int)n;

	if (current != 0) {
		r = write_uint(io, address, "sriov_numvfs", 0);
		if (r < 0) {
			hal_say(err, errlen, "%s: cannot disable its %u VFs: %s", address, current,
			    numvfs_cause(r));
			return r;
		}
	}
	if (probe_changes) {
		r = write_uint(io, address, "sriov_drivers_autoprobe", (unsigned)autoprobe);
		if (r < 0) {
			hal_say(err, errlen, "%s: cannot set sriov_drivers_autoprobe: %s", address,
			    strerror(-r));
			return r;
		}
	}
	if (n == 0)
		return 0;
	r = write_uint(io, address, "sriov_numvfs", n);
	if (r < 0) {
		hal_say(err, errlen, "%s: enabling %u VFs failed: %s", address, n, numvfs_cause(r));
		return r;
	}
	if ((r = hal_pci_read_uint(io, address, "sriov_numvfs", &current)) < 0)
		return r;
	if (current < n)
		hal_say(err, errlen, "%s: %u VFs asked, the driver enabled %u", address, n, current);
	return (int)current;
}
