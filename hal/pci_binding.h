/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A PCI function's driver, through a struct node_ops (hal/node_ops.h):
 * which driver is bound now (the one answer to "is it bound to its driver"
 * on the agent's side), its driver_override, binding it to a driver
 * (driver_override, unbind, drivers_probe, verified), unbinding it, and
 * putting it back exactly as it was (driver and override). The kernel's
 * rules are linux-devices.md sections 2.1 and 2.2.
 *
 * Errors: -errno as the kernel returned it, with a message naming the
 * function and the likely cause in @err where given.
 */
#ifndef DRALET_HAL_PCI_BINDING_H
#define DRALET_HAL_PCI_BINDING_H

#include <stdbool.h>
#include <stddef.h>

#include "hal/node_ops.h"

#define HAL_DRIVER_NAME_MAX 64

/* The driver bound to @address now into @buf ("" when none): the basename of
 * its driver link. Returns 0 or -errno. */
int hal_pci_driver(const struct node_ops *node, const char *address, char *buf, size_t size);

/* driver_override of @address into @buf: "" when unset ("(null)") or absent. */
int hal_pci_driver_override(const struct node_ops *node, const char *address, char *buf,
			    size_t size);

/*
 * Binds @address to @driver ("vfio-pci"); @driver NULL gives it back to the
 * kernel's own choice (clears driver_override, reprobes). Idempotent: nothing
 * is written when it already is so. Verifies the result by reading the
 * driver link back (-EIO with a message when the kernel did not bind it, for
 * instance because the module is not loaded).
 */
int hal_pci_set_driver(const struct node_ops *node, const char *address, const char *driver,
		       char *err, size_t errlen);

/* Unbinds @address from its driver and clears driver_override, leaving it
 * with no driver (nothing is written when that is so already). */
int hal_pci_unbind(const struct node_ops *node, const char *address, char *err, size_t errlen);

/*
 * Puts @address back as it was: bound to @driver ("" for no driver) with
 * driver_override @override ("" for none). The kernel binds @driver through
 * a temporary override and drivers_probe, then the override is set to
 * @override; the result is verified (-EIO with a message when @driver did
 * not take it). Nothing is written when it already is so.
 */
int hal_pci_restore_binding(const struct node_ops *node, const char *address,
			    const char *driver, const char *override, char *err, size_t errlen);

#endif
