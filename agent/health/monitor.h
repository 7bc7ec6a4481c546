/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The health monitor of one DRA driver (docs/health.md): every interval a
 * round checks each device on a worker thread (uv_queue_work; a check may
 * call NVML or read sysfs), then applies the results on the loop thread: the
 * device model gets the new health (dralet_device_set_health, so slices
 * built afterwards carry it), each change is logged once (device, old → new,
 * and the check's error when it failed), and on_round says whether anything
 * changed. A round never starts while another is in flight; a tick that
 * finds one running is skipped.
 *
 * The device model is written only on the loop thread, after the workers
 * are done. The monitor holds a reference to its device set
 * (agent/core/device_set.h), which the workers read without locks; the set
 * is replaced only while no round is in flight (health_monitor_set_devices).
 *
 * Threading: every function here and every callback except check runs on
 * the loop thread.
 */
#ifndef DRALET_HEALTH_MONITOR_H
#define DRALET_HEALTH_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "agent/health/health_table.h"

#define HEALTH_DEFAULT_INTERVAL_S 10

struct device_set;
struct health_monitor;

struct health_monitor_config {
	uv_loop_t *loop;
	const char *driver;		/* for log lines (copied) */
	unsigned interval_ms;		/* between rounds; 0: HEALTH_DEFAULT_INTERVAL_S */
	/* Worker thread: the enum dralet_health of @dev, or -errno; unless healthy,
	 * why in @why (NUL-terminated, may stay empty). */
	int (*check)(void *userdata, struct dralet_device *dev, char *why, size_t why_size);
	/* After every round; @changed: some device's health changed. */
	void (*on_round)(void *userdata, bool changed);
	/* May be NULL. For each device whose health changed in a round, before
	 * on_round (loop thread; @change valid during the call). */
	void (*on_change)(void *userdata, const struct health_change *change);
	void *userdata;
	/* Unix seconds; NULL: the real clock (tests set their own). */
	int64_t (*now)(void);
};

/*
 * Creates the monitor over the devices of @set (it takes a reference,
 * dropped when the monitor is freed or the set replaced) and starts its
 * timer: the first round runs one interval from now (the probe has just
 * determined the health). @cfg is copied. Returns 0 and *ret_monitor, or
 * -EINVAL (no check) / -ENOMEM.
 */
int health_monitor_new(const struct health_monitor_config *cfg, struct device_set *set,
		       struct health_monitor **ret_monitor);

/* Starts a round now, as a tick would. Returns 0, -EBUSY (one is in
 * flight), -ECANCELED (closing) or a uv_queue_work error. */
int health_monitor_run_round(struct health_monitor *m);

/* True while a round is in flight (its workers hold the devices). */
bool health_monitor_busy(const struct health_monitor *m);

/* Replaces the devices after a rediscovery with those of @set (referenced
 * as above; their health as probed, stamped now). -EBUSY while a round is in
 * flight, or -ENOMEM; nothing changes then (the monitor keeps its set). */
int health_monitor_set_devices(struct health_monitor *m, struct device_set *set);

/* The table (valid until the next round ends or set_devices). */
const struct health_table *health_monitor_table(const struct health_monitor *m);

/*
 * Stops the timer; a round in flight finishes without applying anything
 * (its workers skip the devices left). No callback runs after this. The
 * monitor is freed once the timer is closed and no round is in flight
 * (dropping its reference to the set), so the loop must run. Accepts NULL.
 */
void health_monitor_close(struct health_monitor *m);

#endif
