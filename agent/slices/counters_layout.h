/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which devices and counter sets go into which slice of a pool
 * (partitionable devices, KEP-4815). Pure: no JSON, no I/O.
 *
 * Three layouts (docs/publishing.md, "Partitionable devices"):
 *   OFF       the server has no counters (gate off): no counter set is
 *             published, partitions are left out, other devices lose their
 *             consumptions; slices of up to @per devices.
 *   SEPARATE  1.35 and later ("only one of devices and sharedCounters"):
 *             first slices of at most 8 counter sets and no devices, then
 *             slices of at most @per devices (at most 64 once any device
 *             consumes counters). Consumptions refer to sets anywhere in
 *             the pool.
 *   INLINE    1.34: a consumption must name a set of its own slice, a slice
 *             holds at most 32 counters over all its sets and 1024
 *             consumed counters over all its devices. Sets that one device
 *             consumes together, with every device consuming from them,
 *             form a group kept in one slice; groups are packed in order,
 *             devices without counters follow in slices of @per. A group
 *             beyond the limits loses its partitions and its consumptions
 *             (warned about), so nothing overlapping is offered.
 *
 * Checks (a warning each): a set whose name an earlier device already owns
 * is left out; a device consuming a set or counter no device owns is left
 * out (it could overlap with what is allocated).
 */
#ifndef DRALET_SLICES_COUNTERS_LAYOUT_H
#define DRALET_SLICES_COUNTERS_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/slices/build.h"

enum counters_layout_kind {
	COUNTERS_LAYOUT_OFF,
	COUNTERS_LAYOUT_SEPARATE,
	COUNTERS_LAYOUT_INLINE,
};

/* 1.34's limits (k8s.io/api resource/v1 v0.34 types.go) */
#define COUNTERS_INLINE_SET_COUNTERS_MAX 32	/* ResourceSliceMaxSharedCounters */
#define COUNTERS_INLINE_CONSUMED_MAX 1024	/* ResourceSliceMaxDeviceCountersPerSlice */

/* The layout @opts ask for. */
enum counters_layout_kind counters_layout_kind(const struct slice_options *opts);

struct counters_slice {
	size_t *devices;	/* indexes into the planner's @devs, ascending */
	size_t n_devices;
	const struct dralet_counter_list **sets;	/* borrowed from @devs */
	size_t n_sets;
};

struct counters_layout {
	struct counters_slice *slices;
	size_t n_slices;
	bool *with_uses;	/* per input device: publish its consumptions */
	bool any_uses;		/* some device is published with consumptions */
};

/*
 * Plans the slices of @devs (@n devices with unique names, in publishing
 * order, borrowed) for @kind with at most @per devices a slice (the caller's
 * limit without counters: 128, or 64 with taints). Every device not left
 * out is in exactly one slice. @warn may be NULL. *ret is new
 * (counters_layout_free). -ENOMEM.
 */
int counters_layout_plan(const struct slice_device_in *const *devs, size_t n,
			 enum counters_layout_kind kind, unsigned per, slice_warn_fn warn,
			 void *userdata, struct counters_layout **ret);
void counters_layout_free(struct counters_layout *l);

#endif
