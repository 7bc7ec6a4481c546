/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A PF's SR-IOV state and VF count through a struct node_ops
 * (hal/node_ops.h), following the kernel's rules in linux-devices.md
 * section 2: the live state of a PF and its VFs (so a model of the kernel
 * answers in tests), sriov_numvfs and sriov_drivers_autoprobe.
 *
 * Errors: -errno as the kernel returned it, with a message naming the PF
 * and the likely cause in @err where given.
 */
#ifndef DRALET_HAL_PCI_SRIOV_H
#define DRALET_HAL_PCI_SRIOV_H

#include <stdbool.h>
#include <stddef.h>

#include "hal/pci_binding.h"

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

/* A decimal PCI sysfs attribute of @address ("sriov_numvfs", at most
 * 0xffff) into *ret. 0, -EINVAL when it is not such a number, or -errno. */
int hal_pci_read_uint(const struct node_ops *node, const char *address, const char *file,
		      unsigned *ret);

/*
 * Reads the SR-IOV state of PF @address: counts, autoprobe, and every VF
 * (virtfn0 .. virtfn<num_vfs-1>) with its driver and override. -ENOTSUP when
 * the function has no sriov_totalvfs, -ENODEV when it is gone.
 */
int hal_pf_state_read(const struct node_ops *node, const char *address,
		      struct hal_pf_state *ret);
void hal_pf_state_clear(struct hal_pf_state *st);

/* The VF of @st with @address, or NULL. */
const struct hal_vf_state *hal_pf_state_vf(const struct hal_pf_state *st, const char *address);

/* Writes PF @address's sriov_drivers_autoprobe (@on 0 or 1), which decides
 * whether VFs created later bind to their default driver; nothing is written
 * when it already is so. */
int hal_sriov_set_autoprobe(const struct node_ops *node, const char *address, int on,
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
int hal_sriov_set_numvfs(const struct node_ops *node, const char *address, unsigned n,
			 int autoprobe, char *err, size_t errlen);

#endif
