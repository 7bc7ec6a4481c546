/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Claim device status (KEP-4817; docs/claims.md, "Device status"): the
 * status.devices entries a driver writes into a ResourceClaim for the devices
 * it prepared (pure: no I/O, the time is an argument). One entry per device:
 *
 *   {"driver": ..., "pool": ..., "device": ...,
 *    "conditions": [{"type": "Ready", "status": "True", "reason": "Prepared",
 *                    "message": "prepared on node <node>",
 *                    "lastTransitionTime": <now, RFC 3339>}],
 *    "networkData": {"interfaceName": ..., "hardwareAddress": ...}}   (NICs, VFs, RDMA)
 *
 * Limits (k8s.io/api resource/v1 types.go, v0.37): at most 8 conditions
 * (AllocatedDeviceStatusMaxConditions), interfaceName <= 256 bytes,
 * hardwareAddress <= 128 (NetworkDeviceDataInterfaceNameMaxLength,
 * NetworkDeviceDataHardwareAddressMaxLength): one condition, and device
 * attribute strings are at most 64 bytes (the SDK's limit), so every entry
 * fits.
 */
#ifndef DRALET_CLAIMS_DEVICE_STATUS_H
#define DRALET_CLAIMS_DEVICE_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "agent/claims/device_metadata.h"

#define DEVICE_STATUS_READY "Ready"
#define DEVICE_STATUS_REASON_PREPARED "Prepared"

/* True when an entry for @devices would carry data the cluster has nowhere
 * else (networkData of a NIC, VF or RDMA device): only then does the engine
 * write the status. A Ready condition alone repeats what the running pod
 * says, at the price of one apiserver write per claim (docs/claims.md). */
bool device_status_worth_writing(const struct device_metadata_device *devices, size_t n);

/* The entries for @devices of driver @driver, prepared on @node at @now_s
 * (seconds since the epoch): a new JSON array (json_object_put), or NULL on
 * ENOMEM. */
struct json_object *device_status_entries(const char *driver, const char *node,
					  const struct device_metadata_device *devices, size_t n,
					  int64_t now_s);

#endif
