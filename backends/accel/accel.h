/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The generic accelerator family (DRA driver accel.dralet.dev): backend
 * "accel" takes processing accelerators (class 0x12) and co-processors
 * (class 0x0b40) that no vendor backend claims. It scores a class match (10),
 * the lowest score, so every vendor backend (FPGA, GPU, a vendor's .so) wins.
 */
#ifndef DRALET_BACKENDS_ACCEL_H
#define DRALET_BACKENDS_ACCEL_H

#include <stdbool.h>
#include <stddef.h>
#include <dralet/backend.h>

#include "../common/vfio_form.h"

#define ACCEL_DRIVER "accel.dralet.dev"

extern const struct dralet_backend backend_accel;

/* Intel QuickAssist: the services the PF (of a VF) is configured for
 * ("sym;asym", "dc" ... from qat/cfg_services) into @buf; length, or -ENOENT
 * for functions that are not QAT. */
int accel_qat_services(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		       char *buf, size_t size);
/* The QAT device state now ("up"/"down"), same rules. */
int accel_qat_state(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func, char *buf,
		    size_t size);

/* The QAT function's ring pairs (qat/num_rps, Linux 6.7+, on the function
 * itself): > 0, or -ENOENT (not QAT, or an older kernel), -EINVAL. */
int accel_qat_ring_pairs(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func);

/* accel_sharing.c (docs/sharing.md, "Accelerators by queues"): with option
 * sharing: "true" a QAT function that reports its ring pairs is published
 * with allowMultipleAllocations and a capacity "queues" = num_rps,
 * requestPolicy validRange {1, num_rps, step 1}, default all of them (a
 * claim that names no queues holds it alone). The queues are a scheduling
 * contract: the kernel gives every share the same device nodes and does not
 * assign ring pairs to processes; the container learns its count from
 * DRALET_<DEV>_SHARE_QUEUES. */
void accel_publish_sharing(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			   const struct dralet_pci_func *func);
/* The share's container environment (nothing for an exclusive allocation). */
int accel_prepare_share(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			struct dralet_prepare_req *req);

/* isVF, and pfPciAddress and vfID for a VF: what a function's native and
 * vfio forms share besides services (accel.c). */
void accel_set_vf(struct dralet_device *dev, const struct dralet_pci_func *func);

/* ---- the vfio form (accel_vfio_form.c; backends/common/vfio_form.h) ---- */

/* The private data of an accel device: only a vfio form has one. */
struct accel_info {
	struct vfio_form vfio;
};

/* With option vfio "true": publishes the vfio form "<native name>-vfio" of
 * @native, a whole function on its vendor driver, both consuming counter
 * "accel" (none for a function shared by queues, on vfio-pci or unbound). */
int accel_vfio_form_add(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
			struct dralet_device *native);
/* True for a device accel_vfio_form_add or accel_vfio_form_publish_marked made. */
bool accel_is_vfio_form(const struct dralet_device *dev);
/* True (the mark's text in @mark) for a function on vfio-pci or on no driver
 * that a prepare of its vfio form moved: it is published in that form only,
 * by accel_vfio_form_publish_marked, so that its claim can be unprepared. */
bool accel_vfio_form_marked(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
			    char *mark, size_t size);
int accel_vfio_form_publish_marked(struct dralet_backend_ctx *ctx,
				   const struct dralet_pci_func *func, const char *mark);
/* Prepare of a vfio form (vfio_form_prepare) with the env vars PCI_ADDRESS
 * and DRIVER; unprepare puts the IOMMU group back from @undo alone (nothing
 * for a native form, whose prepare changes nothing on the host). */
int accel_vfio_form_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			    struct dralet_prepare_req *req);
int accel_vfio_form_unprepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			      const struct dralet_claim_ref *claim, const struct dralet_undo *undo);

#endif
