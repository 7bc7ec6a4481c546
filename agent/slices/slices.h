/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The desired ResourceSlices of one driver, straight from the inventory:
 * what the daemon hands to store->ops->publish() and what `dralet slices`
 * prints. Shares the builder (build.h) with every other input.
 */
#ifndef DRALET_SLICES_H
#define DRALET_SLICES_H

#include <json-c/json.h>

#include "agent/slices/build.h"

struct inventory;

/*
 * Builds the slices of @driver's devices in @inv for @node_name. @node_uid
 * may be NULL (the apiserver store fills in the owner reference). @opts may
 * be NULL (no alpha fields). Every device or attribute left out is logged as
 * a warning naming backend, device and attribute. On success *ret_slices is a
 * new json array (empty when the driver has no valid device); -EINVAL for an
 * invalid driver or node name, -ENOMEM.
 */
int slices_build(const struct inventory *inv, const char *driver, const char *node_name,
		 const char *node_uid, const struct slice_options *opts,
		 struct json_object **ret_slices);

#endif
