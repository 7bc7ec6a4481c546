/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Changing the node through sysfs: a function's driver (driver_override,
 * unbind, drivers_probe) and a PF's VF count (sriov_numvfs), following the
 * kernel's rules in linux-devices.md section 2. Every write goes through a
 * struct hal_sysfs_io so tests can record and model the kernel's answers;
 * hal_sysfs_io_real() writes below the sysfs root for real.
 *
 * Errors: -errno as the kernel returned it, with a message in @err naming the
 * function and the likely cause.
 */
#ifndef DRALET_HAL_SYSFS_CTL_H
#define DRALET_HAL_SYSFS_CTL_H

#include <stddef.h>

#include "hal/hal.h"

struct hal_sysfs_io {
	/* Writes @value to <sysfs root>/<relpath>; returns 0 or -errno. */
	int (*write)(void *userdata, const char *relpath, const char *value);
	/* Reads <sysfs root>/<relpath> (trailing newline removed); length or -errno. */
	int (*read)(void *userdata, const char *relpath, char *buf, size_t size);
	/* readlink of <sysfs root>/<relpath>; length or -errno. */
	int (*readlink)(void *userdata, const char *relpath, char *buf, size_t size);
	void *userdata;
};

/* The real thing below @roots->sys; @roots must outlive the result's use. */
struct hal_sysfs_io hal_sysfs_io_real(const struct hal_roots *roots);

/* A decimal PCI sysfs attribute of @address ("sriov_numvfs", at most
 * 0xffff) into *ret. 0, -EINVAL when it is not such a number, or -errno. */
int hal_pci_read_uint(const struct hal_sysfs_io *io, const char *address, const char *file,
		      unsigned *ret);

/* printf into @err (@errlen bytes) unless @err is NULL. */
void hal_say(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The bound driver of @address into @buf ("" when none). Returns 0 or -errno. */
int hal_pci_driver(const struct hal_sysfs_io *io, const char *address, char *buf, size_t size);

/*
 * Binds @address to @driver ("vfio-pci"); @driver NULL gives it back to the
 * kernel's own choice (clears driver_override, reprobes). Idempotent: nothing
 * is written when it is already so. Verifies the result by reading the
 * driver link back (-EIO with a message when the kernel did not bind it, for
 * instance because the module is not loaded).
 */
int hal_pci_set_driver(const struct hal_sysfs_io *io, const char *address, const char *driver,
		       char *err, size_t errlen);

/*
 * Sets the number of VFs of PF @address to @n: nothing when it already is;
 * 0 first when changing a non-zero count (the kernel refuses otherwise);
 * sriov_drivers_autoprobe set to @autoprobe (0/1, -1 leaves it) while no VFs
 * exist, since it only affects VFs created afterwards. Returns the number of
 * VFs the kernel actually enabled (it may enable fewer than asked) or -errno:
 * -ERANGE above sriov_totalvfs, -ENOENT when no driver is bound to the PF,
 * -EBUSY when VFs are in use, -ENOSPC when the PF ran out of resources.
 */
int hal_sriov_set_numvfs(const struct hal_sysfs_io *io, const char *address, unsigned n,
			 int autoprobe, char *err, size_t errlen);

#endif
