/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Devices as JSON: "attributes" and "capacity" exactly in the
 * resource.k8s.io/v1 Device form (pasteable into a ResourceSlice).
 */
#ifndef DRALET_DEVICE_JSON_H
#define DRALET_DEVICE_JSON_H

#include <stdbool.h>
#include <json-c/json.h>
#include <dralet/device.h>

#include "agent/lib/json_writer.h"

/*
 * Writes the device: {"name", "attributes", "capacity"} — the API form;
 * with @extended also "driver", "kind", "backend", "health", "pciAddress",
 * "unsafe" and "deviceNodes" for operators.
 */
void device_write_json(struct json_writer *w, const struct dralet_device *dev, bool extended);

/* The same as a new json-c object (for other renderings); NULL on ENOMEM. */
struct json_object *device_to_json(const struct dralet_device *dev, bool extended);

/* The API form of one attribute value: {"int": 1} / {"string": "x"} ... */
struct json_object *device_attr_value_json(const struct dralet_attr *a);

#endif
