/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A devices file: devices written by hand (or by a test) in the
 * resource.k8s.io/v1 Device shape, for `dralet slices --devices FILE` —
 * publishing without hardware, a board or discovery:
 *
 *   devices:
 *   - driver: gpu.dralet.dev          # DRA driver name
 *     name: gpu-0                     # device name
 *     backend: nvidia                 # optional, named in warnings
 *     health: Unhealthy               # optional (taint with DRADeviceTaints)
 *     attributes: {model: {string: H100}, index: {int: 0}}
 *     capacity: {memory: {value: 80Gi}}
 *
 * The devices go through the same builder (build.h) as discovered ones, with
 * the same checks and warnings.
 */
#ifndef DRALET_SLICES_DEVICES_FILE_H
#define DRALET_SLICES_DEVICES_FILE_H

#include <json-c/json.h>

#include "agent/slices/build.h"

/*
 * Builds the desired slices of every driver in @doc (a parsed devices file).
 * On success *ret_by_driver is a new object: driver name -> array of slices,
 * drivers in name order. Problems with single devices or attributes are
 * logged and left out; -EINVAL (logged) when the file's shape is wrong.
 */
int devices_file_build(struct json_object *doc, const char *node_name, const char *node_uid,
		       const struct slice_options *opts, struct json_object **ret_by_driver);

#endif
