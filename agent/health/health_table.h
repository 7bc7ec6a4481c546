/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The health of one DRA driver's devices as the agent last determined it:
 * a pure table (no I/O, no clock, no threads) that the monitor fills with
 * check results and the NodeWatchResources service reads.
 *
 * A check result is an enum dralet_health or -errno; an error (or a value
 * that is no enum dralet_health) counts as Unknown. Applying a result
 * stores it in the device model (dralet_device_set_health) and stamps the
 * entry with the time it was determined.
 */
#ifndef DRALET_HEALTH_TABLE_H
#define DRALET_HEALTH_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dralet/device.h>

#include "agent/health/pcie_aer.h"
#include "agent/health/pcie_link.h"

/* Room for a health message (the kubelet keeps at most 1024 characters; ours
 * are one sentence). */
#define HEALTH_REASON_MAX 256

struct health_entry {
	struct dralet_device *dev;	/* borrowed */
	enum dralet_health health;	/* as last determined */
	int64_t updated;		/* Unix seconds of that determination */
	int error;			/* -errno of the last check, 0 when it answered */
	/* why it is not healthy (the backend's words, or the check's error); ""
	 * when healthy. The kubelet shows it in the pod's status (1.36+). */
	char reason[HEALTH_REASON_MAX];
	/* the taint key of the cause the agent found (PCIE_AER_TAINT_KEY) or the
	 * backend named (dralet_ctx_health_cause), NULL for the generic one: the
	 * device model gets it with the health */
	const char *taint;
	/* the monitor worker's memory of the AER counters and the link width
	 * (kept over a rediscovery for a device of the same name) */
	struct pcie_aer_state aer;
	struct pcie_link_state link;
	/* the function had no AER counters (their files were missing): the
	 * rounds stop reading them until a rediscovery makes a fresh entry (a
	 * function re-enumerated with AER is a uevent, so a rediscovery) */
	bool no_aer;
};

struct health_table {
	struct health_entry *entries;
	size_t n;
};

/* One device whose health changed (strings borrowed from the device). */
struct health_change {
	const char *device;
	enum dralet_health old_health, new_health;
	int error;			/* the check's -errno when it failed */
	const char *reason;		/* the entry's reason ("" when healthy) */
};

/*
 * Fills @t with @devices (borrowed; they must outlive the table or the next
 * call), each with the health its probe set and @now as the time (and the AER
 * and link memory of the entry of the same name @t held). Replaces what @t held. Returns 0 or -ENOMEM (then @t is unchanged); never fails
 * for no devices.
 */
int health_table_set_devices(struct health_table *t, struct dralet_device *const *devices,
			     size_t n, int64_t now);

/* Frees the entries (not the devices); @t is empty afterwards. */
void health_table_clear(struct health_table *t);

/* The health a check result stands for: the enum itself, or Unknown for
 * -errno and values outside the enum. */
enum dralet_health health_from_result(int result);

/*
 * Applies the check result of entry @i, determined at @now, with @why (what
 * the check said when not healthy; may be NULL or empty) and @taint (the
 * cause's taint key, NULL for the generic one). Returns true when the health
 * or the taint changed; then *ret_change (may be NULL) says how.
 */
bool health_table_apply(struct health_table *t, size_t i, int result, const char *why,
			const char *taint, int64_t now, struct health_change *ret_change);

/* "Healthy", "Unhealthy", "Unknown" (for log lines). */
const char *health_name(enum dralet_health health);

#endif
