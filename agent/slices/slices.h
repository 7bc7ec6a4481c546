/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The desired ResourceSlices of one driver, straight from the inventory or
 * the driver's device set: what the daemon hands to store->ops->publish()
 * and what `dralet slices` prints. Shares the builder (build.h) with every other input.
 */
#ifndef DRALET_SLICES_H
#define DRALET_SLICES_H

#include "agent/slices/build.h"

struct device_set;
struct inventory;

/*
 * Builds the slices of @driver's devices in @inv for @node_name. @node_uid
 * may be NULL (the apiserver store fills in the owner reference). @opts may
 * be NULL (no alpha fields). Every device or attribute left out is logged as
 * a warning naming backend, device and attribute. On success *ret_slices is a
 * new list (one reference; empty when the driver has no valid device), built
 * one slice at a time; -EINVAL for an invalid driver or node name, -ENOMEM.
 */
int slices_build(const struct inventory *inv, const char *driver, const char *node_name,
		 const char *node_uid, const struct slice_options *opts,
		 struct slice_list **ret_slices);

/* The same for the driver and the devices of @set (borrowed for the call). */
int slices_build_set(const struct device_set *set, const char *node_name, const char *node_uid,
		     const struct slice_options *opts, struct slice_list **ret_slices);

#endif
