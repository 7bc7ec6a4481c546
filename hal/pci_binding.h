/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What SR-IOV provisioning and VF prepare need beyond hal/sysfs_ctl.h: the
 * live state of a PF and its VFs (read through the same struct hal_sysfs_io,
 * so a model of the kernel answers in tests), a function's driver_override,
 * unbinding, and putting a function back exactly as it was (driver and
 * override). linux-devices.md sections 2.1 and 2.2.
 *
 * Errors: -errno, with a message naming the function in @err where given.
 */
#ifndef DRALET_HAL_PCI_BINDING_H
#define DRALET_HAL_PCI_BINDING_H

#include <stdbool.h>
#include <stddef.h>

#include "hal/sysfs_ctl.h"

#define HAL_DRIVER_NAME_MAX 64

/* One VF as the kernel shows it now. */
struct hal_vf_state {
	char address[24];
	int index;				/* N of the PF's virtfnN */
	char driver[HAL_DRIVER_NAME_MAX];	/* "" when unbound */
	char override[HAL_DRIVER_NAME_MAX];	/* driver_override, "" when unset */
};

/* A PF's SR-IOV state now. */
struct hal_pf_state {
	char driver[HAL_DRIVER_NAME_MAX];	/* PF driver, "" when unbound */
	unsigned total_vfs;
	unsigned num_vfs;
	int autoprobe;			/* sriov_drivers_autoprobe, -1 unknown */
	size_t n_vfs;			/* virtfnN links that resolved (<= num_vfs) */
	struct hal_vf_state *vfs;	/* malloc'd; hal_pf_state_clear() frees */
};

/*
 * Reads the SR-IOV state of PF @address: counts, autoprobe, and every VF
 * (virtfn0 .. virtfn<num_vfs-1>) with its driver and override. -ENOTSUP when
 * the function has no sriov_totalvfs, -ENODEV when it is gone.
 */
int hal_pf_state_read(const struct hal_sysfs_io *io, const char *address,
		      struct hal_pf_state *ret);
void hal_pf_state_clear(struct hal_pf_state *st);

/* Writes PF @address's sriov_drivers_autoprobe (@on 0 or 1), which decides
 * whether VFs created later bind to their default driver; nothing is written
 * when it already is so. */
int hal_sriov_set_autoprobe(const struct hal_sysfs_io *io, const char *address, int on,
			    char *err, size_t errlen);

/* The VF of @st with @address, or NULL. */
const struct hal_vf_state *hal_pf_state_vf(const struct hal_pf_state *st, const char *address);

/* driver_override of @address into @buf: "" when unset ("(null)") or absent. */
int hal_pci_driver_override(const struct hal_sysfs_io *io, const char *address, char *buf,
			    size_t size);

/* Unbinds @address from its driver and clears driver_override, leaving it
 * with no driver (nothing is written when that is so already). */
int hal_pci_unbind(const struct hal_sysfs_io *io, const char *address, char *err, size_t errlen);

/*
 * Puts @address back as it was: bound to @driver ("" for no driver) with
 * driver_override @override ("" for none). The kernel binds @driver through
 * a temporary override and drivers_probe, then the override is set to
 * @override; the result is verified (-EIO with a message when @driver did
 * not take it). Nothing is written when it already is so.
 */
int hal_pci_restore_binding(const struct hal_sysfs_io *io, const char *address,
			    const char *driver, const char *override, char *err, size_t errlen);

#endif
