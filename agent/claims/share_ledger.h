/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Who holds one device, for the claims engine (pure; loop thread only).
 *
 * An exclusive allocation (no shareID) holds the whole device: no other
 * claim may hold it at the same time. A shared device (allowMultipleAllocations,
 * include/dralet/sharing.h) is held per (claim UID, shareID), each share with
 * the capacity it consumes; the shares of all claims together never consume
 * more of a capacity than the device has. The scheduler guarantees this
 * already; the ledger is the node's own check, so an allocation that says
 * otherwise (a stale or hand-made one, a device whose capacity shrank) is
 * refused with a clear error instead of overcommitting the device.
 */
#ifndef DRALET_CLAIMS_SHARE_LEDGER_H
#define DRALET_CLAIMS_SHARE_LEDGER_H

#include <stdbool.h>
#include <stddef.h>

#include <dralet/device.h>

struct share_holder {
	char *uid;
	char *desc;		/* "namespace/name" of the claim, for messages */
	char *share_id;		/* NULL: holds the device exclusively */
	struct dralet_capacity *consumed;	/* owned */
	size_t n_consumed;
};

struct share_ledger {
	struct share_holder *holders;
	size_t n;
};

/*
 * Whether claim @uid may hold @dev as (@share_id, @consumed[0..n)) next to
 * the holders there are (the same claim's same share does not count). 0, or
 * with the cause in @err:
 *   -EBUSY   another claim holds the device exclusively, or this is an
 *            exclusive allocation of a device another claim holds
 *   -EINVAL  a share of a device that does not allow multiple allocations,
 *            or of a capacity the device does not have, or a consumed
 *            amount that is no quantity
 *   -ENOSPC  the shares would consume more of a capacity than the device has
 */
int share_ledger_check(const struct share_ledger *l, const struct dralet_device *dev,
		       const char *uid, const char *share_id,
		       const struct dralet_capacity *consumed, size_t n, char *err, size_t errlen);

/* Records the holder (copies everything; replaces the same (uid, share)). */
int share_ledger_add(struct share_ledger *l, const char *uid, const char *desc,
		     const char *share_id, const struct dralet_capacity *consumed, size_t n);
/* Drops every holder of claim @uid. */
void share_ledger_release(struct share_ledger *l, const char *uid);
void share_ledger_clear(struct share_ledger *l);

#endif
