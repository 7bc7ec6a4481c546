/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Handing a whole IOMMU group to vfio at prepare and back at unprepare
 * (docs/sharing.md, "Whole-device VFIO passthrough"): vfio gives a group,
 * never one function, to its user, and refuses a group whose functions
 * other drivers keep (Documentation/driver-api/vfio.rst), so every
 * non-bridge function of the group moves to vfio-pci, the requested one to
 * @driver (vfio-pci or the vendor's variant driver).
 *
 * What each function had (driver, driver_override) is kept as one text
 * ("0000:3b:00.0=nvidia,none 0000:3b:00.1=snd_hda_intel,none") that goes
 * into the undo state before anything changes, so unprepare, also in a new
 * process after a crash, puts every function back from it alone.
 *
 * Everything goes through the SDK (pci_ctl.h: the agent's node_ops seam), so
 * the board simulator's kernel model sees the same writes a kernel does.
 * Errors: -errno with the reason set as the operation's error.
 */
#ifndef DRALET_BACKENDS_VFIO_GROUP_H
#define DRALET_BACKENDS_VFIO_GROUP_H

#include <stddef.h>

#include <dralet/backend.h>
#include <dralet/pci.h>

#define VFIO_GROUP_MEMBERS_MAX 16
#define VFIO_GROUP_TEXT_MAX 1024

struct vfio_group_member {
	char address[24];
	char driver[64];	/* "" when none */
	char override[64];	/* "" when none */
};

/* The non-bridge functions of one IOMMU group, with their bindings. */
struct vfio_group {
	int group;
	size_t n;
	struct vfio_group_member m[VFIO_GROUP_MEMBERS_MAX];
};

/* Reads the group of @func as it is now (every non-bridge member, @func
 * first). -EPERM when @func has no IOMMU group (IOMMU off). */
int vfio_group_read(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		    struct vfio_group *ret);

/*
 * Refuses (-EBUSY, reason set) a group a rebinding would break: a member
 * with SR-IOV VFs enabled (unbinding the PF driver takes them from their
 * users), or one of @nodes (@n, the function's own device nodes) held open
 * by a host process other than the agent (found through <proc>/<pid>/fd: a
 * character device with the node's numbers, or in a simulated tree the node
 * file itself; the driver would block in unbind, or the process would lose
 * its device).
 */
int vfio_group_check_free(struct dralet_backend_ctx *ctx, const struct vfio_group *g,
			  const struct dralet_devnode *nodes, size_t n);

/* The undo text of @g (see above); -ENAMETOOLONG when it does not fit. */
int vfio_group_text(const struct vfio_group *g, char *buf, size_t size);
/* Parses an undo text; -EINVAL when it is not one. */
int vfio_group_parse(const char *text, struct vfio_group *ret);

/* Binds the first member to @driver and every other one to vfio-pci
 * (nothing is written for a member already so). On failure the caller
 * restores with vfio_group_restore. */
int vfio_group_bind(struct dralet_backend_ctx *ctx, const struct vfio_group *g,
		    const char *driver);

/* Puts every member back as @g recorded it, the requested function last
 * (a vendor driver's sound or USB companion functions first). A member that
 * is gone has nothing to restore; the others are still tried after a
 * failure, and the first failure is returned. */
int vfio_group_restore(struct dralet_backend_ctx *ctx, const struct vfio_group *g);

#endif
