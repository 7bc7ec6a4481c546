/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dralet backend SDK: partitionable devices (KEP-4815, DRAPartitionableDevices).
 *
 * A device that can be handed out whole or in parts owns a counter set: the
 * finite things its parts share (a GPU's multiprocessors, memory slices,
 * engines). The whole device and each possible part are published as
 * devices that consume counters from that set; the scheduler never
 * allocates two devices whose consumptions together exceed the set, so two
 * overlapping parts (or a part and the whole) are never handed out at once.
 *
 * A part that exists only as a possibility (a MIG profile at one placement,
 * made at prepare) is marked a partition: it is published only where the
 * server supports counters. Where it does not (a 1.34 server, the gate off),
 * the agent leaves partitions out and publishes the whole devices without
 * their consumptions, so nothing overlapping is ever offered.
 *
 * Counter sets are owned by a device (the whole device they describe) and
 * go when it goes; any device of the same driver may consume from them. The
 * agent lays the sets and devices out in slices as the server's version
 * wants (docs/publishing.md, "Partitionable devices").
 *
 * Names: counter sets and counters are DNS labels ("gpu-0000-3b-00-0",
 * "memory-slice-0"); values are Kubernetes quantities. Errors as in
 * device.h: a rejected value is not stored and a warning is recorded.
 */
#ifndef DRALET_COUNTERS_H
#define DRALET_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dralet/device.h>

#ifdef __cplusplus
extern "C" {
#endif

/* resource.k8s.io/v1 limits (k8s.io/api resource/v1 types.go, 1.35 and later) */
#define DRALET_COUNTER_SETS_PER_SLICE_MAX 8		/* ResourceSliceMaxCounterSets */
#define DRALET_COUNTERS_PER_SET_MAX 32			/* ResourceSliceMaxCountersPerCounterSet */
#define DRALET_CONSUMPTIONS_PER_DEVICE_MAX 2		/* ...MaxDeviceCounterConsumptionsPerDevice */
#define DRALET_COUNTERS_PER_CONSUMPTION_MAX 32		/* ...MaxCountersPerDeviceCounterConsumption */
#define DRALET_DEVICES_PER_SLICE_WITH_COUNTERS 64	/* ...MaxDevicesWithAdvancedFeatures */

/* One counter as the agent reads it back (strings owned by the device). */
struct dralet_counter {
	const char *name;
	const char *quantity;
};

/* A counter set a device owns, or what it consumes from one set. */
struct dralet_counter_list {
	const char *set;
	const struct dralet_counter *counters;
	size_t n;
};

/* Sets counter @name of set @set owned by @dev to @quantity, creating the
 * set on its first counter (at most 8 sets per device, 32 counters each). */
int dralet_device_set_counter(struct dralet_device *dev, const char *set, const char *name,
			      const char *quantity);
int dralet_device_set_counter_int(struct dralet_device *dev, const char *set, const char *name,
				  int64_t value);

/* @dev consumes @quantity of counter @name of set @set (owned by a device of
 * the same driver); at most 2 sets per device, 32 counters each. Setting a
 * counter again replaces its quantity. */
int dralet_device_consume_counter(struct dralet_device *dev, const char *set, const char *name,
				  const char *quantity);
int dralet_device_consume_counter_int(struct dralet_device *dev, const char *set,
				      const char *name, int64_t value);

/* Marks @dev a partition: published only with its consumptions (see above). */
void dralet_device_set_partition(struct dralet_device *dev, bool partition);

/* Getters (valid while the device lives and is not changed). The sets are
 * the elements of one array, and so are the consumptions. */
size_t dralet_device_n_counter_sets(const struct dralet_device *dev);
const struct dralet_counter_list *dralet_device_counter_set(const struct dralet_device *dev,
							    size_t i);
size_t dralet_device_n_consumptions(const struct dralet_device *dev);
const struct dralet_counter_list *dralet_device_consumption(const struct dralet_device *dev,
							    size_t i);
bool dralet_device_is_partition(const struct dralet_device *dev);

#ifdef __cplusplus
}
#endif
#endif /* DRALET_COUNTERS_H */
