/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The generic accelerator family (DRA driver accel.dralet.dev): backend
 * "accel" takes processing accelerators (class 0x12) and co-processors
 * (class 0x0b40) that no vendor backend claims. It scores a class match (10),
 * the lowest score, so every vendor backend (FPGA, GPU, a vendor's .so) wins.
 */
#ifndef DRALET_BACKENDS_ACCEL_H
#define DRALET_BACKENDS_ACCEL_H

#include <stddef.h>
#include <dralet/backend.h>

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

#endif
