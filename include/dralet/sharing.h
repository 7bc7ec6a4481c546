/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dralet backend SDK: devices that several claims share (consumable
 * capacity, KEP-5075, Kubernetes feature gate DRAConsumableCapacity; beta
 * and on by default since 1.36).
 *
 * A device marked with dralet_device_allow_multiple() is published with
 * allowMultipleAllocations: true. The scheduler may then allocate it to
 * several requests at once, each allocation with its own shareID and the
 * amount of every capacity it consumes; the sum over the allocations never
 * exceeds the capacity's value. A capacity of such a device may carry a
 * request policy that says what one allocation may consume: a default (what
 * a request that names no amount consumes), and either a list of valid
 * values or a range. The limits and rules (docs/sharing.md, "Consumable
 * capacity"; upstream k8s.io/api resource/v1 CapacityRequestPolicy):
 *   - validValues: 1 to 10 quantities, strictly ascending, default among
 *     them (dralet also wants each <= the capacity's value);
 *   - validRange: min >= 0, min <= value; max (optional) <= value and
 *     >= min; step (optional) > 0 with min + step <= value, max and default
 *     multiples of step; default in [min, max];
 *   - at most one of validValues and validRange; a default is required with
 *     either, and is at most the capacity's value.
 * The values are compared as resource.Quantity.Value() does (integers,
 * fractions rounded up).
 *
 * Prepare is called once per allocation (per claim and share) of a shared
 * device: it must leave what other shares prepared alone, and its undo
 * state is per share. The share's ID and what it consumes reach prepare in
 * struct dralet_prepare_req (share_id, consumed; backend.h).
 *
 * Errors: 0 or -errno; a rejected policy is not stored and a warning naming
 * the device and the capacity is recorded (like device.h's setters).
 */
#ifndef DRALET_SHARING_H
#define DRALET_SHARING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dralet/device.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DRALET_CAPACITY_VALID_VALUES_MAX 10	/* CapacityRequestPolicy.validValues */

/* What one allocation of a shared device may consume of one capacity. The
 * strings are Kubernetes quantities; NULL means unset. */
struct dralet_capacity_policy {
	const char *default_value;	/* requestPolicy.default */
	const char *const *valid_values;	/* requestPolicy.validValues, ascending */
	size_t n_valid_values;
	const char *range_min;		/* requestPolicy.validRange.min; set = a range */
	const char *range_max;		/* validRange.max (optional) */
	const char *range_step;		/* validRange.step (optional) */
};

/* Marks @dev as shareable: published with allowMultipleAllocations: true. */
int dralet_device_allow_multiple(struct dralet_device *dev);
bool dralet_device_allows_multiple(const struct dralet_device *dev);

/*
 * Gives capacity @capacity of @dev (set before, with device.h) the request
 * policy @policy (copied; the quantities are stored canonical). The device
 * must allow multiple allocations first. Setting it again replaces it.
 *   -ENOENT  the device has no such capacity
 *   -EPERM   the device does not allow multiple allocations
 *   -EINVAL  a rule above is broken (the warning says which)
 */
int dralet_device_set_capacity_policy(struct dralet_device *dev, const char *capacity,
				      const struct dralet_capacity_policy *policy);
/* The value of Kubernetes quantity @q as resource.Quantity.Value() gives it
 * (a fraction rounded up): 0, -EINVAL or -ERANGE (beyond 64 bits). */
int dralet_quantity_value(const char *q, int64_t *ret_value);
/* How much of capacity @name @req consumes: 0 and *ret_value, or -ENOENT
 * when the allocation names none (an exclusive one takes everything). The
 * name may carry the driver's domain ("gpu.dralet.dev/memory"). */
struct dralet_prepare_req;
int dralet_prepare_consumed(const struct dralet_prepare_req *req, const char *driver,
			    const char *name, int64_t *ret_value);

/* The policy of capacity @capacity, or NULL (valid while the device lives). */
const struct dralet_capacity_policy *dralet_device_capacity_policy(const struct dralet_device *dev,
								    const char *capacity);

#ifdef __cplusplus
}
#endif
#endif /* DRALET_SHARING_H */
