/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The vfio form of a whole PCI function (docs/sharing.md, "Whole-device VFIO
 * passthrough"), shared by the GPU and accelerator families. With the
 * backend option vfio "true" a function on its vendor driver is published
 * twice: natively ("<kind>-<address>", for containers) and in its vfio form
 * ("<kind>-<address>-vfio", type "vfio", for VMs), one counter between them
 * so that only one is allocated. Preparing the vfio form moves the
 * function's whole IOMMU group to vfio (vfio_group.h); unprepare puts it
 * back.
 *
 * Crash safety: the group's bindings go into the undo state ("vfio.group",
 * and the address under "vfio.<family>") before the first rebinding, and
 * into the mark <state dir>/<family>-vfio-<address> right after, so a
 * restart finds the function (no longer on its vendor driver, so the backend
 * publishes it from the mark under the same name, vfio_form_add_marked) and
 * the rollback or the kubelet's unprepare restores it.
 *
 * A backend embeds struct vfio_form in its per-device private data; the
 * backend creates the form's device (its own kind, attributes, defaults)
 * and this module does the rest. Errors: -errno, reason set on @ctx.
 */
#ifndef DRALET_BACKENDS_VFIO_FORM_H
#define DRALET_BACKENDS_VFIO_FORM_H

#include <stdbool.h>
#include <stddef.h>

#include <dralet/backend.h>
#include <dralet/pci.h>

/* The options of a backend that publishes vfio forms: "vfio" ("true" turns
 * them on; off by default) and "vfioDriver" (the vendor's vfio-pci variant
 * driver, default vfio-pci). */
#define VFIO_FORM_OPTIONS { "vfio", 0 }, { "vfioDriver", 0 }

#define VFIO_FORM_HOST_NODES_MAX 8

/* What differs between families. */
struct vfio_form_family {
	/* "gpu", "accel": the mark "<name>-vfio-<address>", the undo key
	 * "vfio.<name>" and the counter "<name>" both forms consume */
	const char *name;
	/* the native nodes that are the function's own (a host process holding
	 * one uses the function); NULL: every node but /dev/vfio ones */
	bool (*own_node)(const char *path);
};

/* Per-device state; zeroed for a native device. */
struct vfio_form {
	bool is_form;		/* this device is a vfio form */
	struct vfio_form_host_node {	/* the native form's own nodes */
		char path[64];
		unsigned major, minor;
	} host_nodes[VFIO_FORM_HOST_NODES_MAX];
	size_t n_host_nodes;
};

/* True when the backend's option vfio is "true" (another value warns). */
bool vfio_form_enabled(struct dralet_backend_ctx *ctx);
/* The driver a prepare binds the function to: option vfioDriver, default
 * vfio-pci (the other members of its group always go to vfio-pci). */
const char *vfio_form_driver(struct dralet_backend_ctx *ctx);

/* The attributes every vfio form carries: type "vfio", driver "vfio-pci",
 * nativeDriver @native_driver, pciClass and vfioCapable. */
void vfio_form_describe(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			const struct dralet_pci_func *func, const char *native_driver);

/*
 * Makes @dev (just created by the backend as "<native name>-vfio", private
 * data @form) the vfio form of @native: remembers @native's own nodes, and
 * both consume the counter <family> of a set named after @native (created
 * when @native owns none; a native device already carved by counters gives
 * its vfio form everything it consumes instead). The vfio form is a
 * partition: published only where the server supports counters (1.36+).
 */
int vfio_form_add(const struct vfio_form_family *fam, struct dralet_device *native,
		  struct dralet_device *dev, struct vfio_form *form);

/* True when @func has no IOMMU group (warned: no vfio form for it). */
bool vfio_form_impossible(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func);

/*
 * The mark of a function that a prepare of its vfio form moved to vfio:
 * copies its text (what the group had) to @buf; false when there is none.
 */
bool vfio_form_marked(struct dralet_backend_ctx *ctx, const struct vfio_form_family *fam,
		      const char *address, char *buf, size_t size);
/* The native driver a mark recorded for @func into @buf; -EINVAL (warned)
 * when the mark is unreadable or not @func's. */
int vfio_form_mark_driver(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
			  const char *mark, char *buf, size_t size);
/* Completes @dev (created by the backend as "<kind>-<address>-vfio", private
 * data @form) as the vfio form of a marked function that is on vfio (or on
 * no driver, after a crash in the middle of a prepare): it owns its counter
 * set (the native form is gone) and has the group's vfio nodes. */
int vfio_form_add_marked(struct dralet_backend_ctx *ctx, const struct vfio_form_family *fam,
			 const struct dralet_pci_func *func, struct dralet_device *dev,
			 struct vfio_form *form);

/*
 * Prepare of a vfio form: refuses (-EBUSY, changing nothing) a group with
 * VFs or one whose function a host process holds, records the group's
 * bindings in the undo state and the mark, moves every non-bridge function
 * of the IOMMU group to vfio-pci (the function to option vfioDriver), and
 * hands over /dev/vfio/<group> and /dev/vfio/vfio (and /dev/iommu with
 * /dev/vfio/devices/vfioN where the kernel has the iommufd cdev). On failure
 * the group is back as it was. The caller adds its env vars after; if that
 * fails it calls vfio_form_unprepare.
 */
int vfio_form_prepare(struct dralet_backend_ctx *ctx, const struct vfio_form_family *fam,
		      const struct vfio_form *form, struct dralet_device *dev,
		      struct dralet_prepare_req *req);

/* Puts the group back from the undo state alone (idempotent; nothing to do
 * without it) and removes the mark. */
int vfio_form_unprepare(struct dralet_backend_ctx *ctx, const struct vfio_form_family *fam,
			const struct dralet_undo *undo);

#endif
