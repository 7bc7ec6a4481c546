/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The devices of one DRA driver from one discovery: a list sorted by device
 * name, refcounted, never changed once made. The daemon makes one set per
 * driver for every discovery and hands a reference to each holder (the
 * claims engine, the health monitor, the slice publishing); a rediscovery
 * makes new sets and the daemon swaps them in, in one place, while a holder
 * that could not take the new set keeps the old one alive with its
 * reference.
 *
 * Ownership: a set made from an inventory keeps that inventory alive (the
 * sets of one discovery share it); the inventory is freed with the last
 * reference to the last of them. A set made from a plain list borrows the
 * devices: they must outlive it. The device list never changes; the devices
 * themselves are the device model's (their health is written by the health
 * monitor on the loop thread, their backend calls are serialized by the
 * claims engine's device locks).
 *
 * Threads: the list may be read on any thread while a reference is held
 * (health checks run on worker threads, under the monitor's reference);
 * device_set_ref and device_set_unref are atomic and may be called on any
 * thread; the last unref frees on the thread that calls it.
 */
#ifndef DRALET_CORE_DEVICE_SET_H
#define DRALET_CORE_DEVICE_SET_H

#include <stdbool.h>
#include <stddef.h>

struct dralet_device;
struct inventory;
struct device_set;

/*
 * Makes the set of each of @drivers (@n of them) from @inv, which the sets
 * take over: ret_sets[i] gets one reference to the set of @drivers[i]
 * (empty for a driver @inv has no device of). @inv is freed with the last
 * reference to the last set; with @n == 0, or on failure (-ENOMEM, nothing
 * returned), right here.
 */
int device_sets_from_inventory(struct inventory *inv, const char *const *drivers, size_t n,
			       struct device_set **ret_sets);

/*
 * A set of @driver (copied) over @devices (the list is copied, the devices
 * borrowed: they must outlive the set). *ret_set holds one reference.
 * -EINVAL when the devices are not sorted by name without duplicates (the
 * claims engine looks them up by name), -ENOMEM.
 */
int device_set_new(const char *driver, struct dralet_device *const *devices, size_t n,
		   struct device_set **ret_set);

/* Takes one more reference; returns @set (NULL stays NULL). */
struct device_set *device_set_ref(struct device_set *set);

/* Drops one reference; the last frees the set (and the inventory it kept
 * alive, when it was the last of its discovery). Accepts NULL. */
void device_set_unref(struct device_set *set);

/* The DRA driver name (lives as long as the set). */
const char *device_set_driver(const struct device_set *set);

/* The devices, sorted by name; the array ends with NULL and lives as long
 * as the set. */
size_t device_set_n(const struct device_set *set);
struct dralet_device *const *device_set_devices(const struct device_set *set);

/* The device named @name, or NULL. */
struct dralet_device *device_set_find(const struct device_set *set, const char *name);
/* Whether a prepare or unprepare of any device of @set changed what
 * discovery publishes since the last call (device_take_node_changed of
 * each: the notes are cleared). Loop thread. */
bool device_set_take_node_changed(struct device_set *set);

#endif
