/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Full NVIDIA GPUs shared by several claims (consumable capacity,
 * include/dralet/sharing.h; docs/sharing.md).
 *
 * A full GPU is published with allowMultipleAllocations and two consumable
 * capacities:
 *   memory  the GPU's memory; requestPolicy validRange {min 1Gi, max the
 *           memory rounded down to whole GiB, step 1Gi}, default = that max:
 *           a claim that asks for no memory takes all of it, so a claim
 *           written before sharing (or one that does not care) still gets
 *           the GPU to itself;
 *   shares  100 compute shares; validRange {min 1, max 100, step 1}, default
 *           1, so a claim that asks only for memory takes one share.
 * Every share gets the same device nodes (time-sliced by the driver, no
 * MPS): the limits are a scheduling contract, not enforced on the GPU; the
 * container learns them from DRALET_GPU_<DEV>_SHARE_MEMORY / _SHARE_ID.
 * Backend option sharing: "false" publishes the GPU exclusive, as before.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <dralet/sharing.h>

#include "nvidia.h"
#include "../common/sharing_option.h"

#define GIB (1024ull * 1024 * 1024)
#define NVIDIA_SHARES 100

void nvidia_publish_sharing(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			    uint64_t memory)
{
	char max[32];
	struct dralet_capacity_policy mem = { .range_min = "1Gi", .range_step = "1Gi" };
	struct dralet_capacity_policy shares = { .default_value = "1", .range_min = "1",
						 .range_max = "100", .range_step = "1" };

	if (memory < GIB || !sharing_enabled(ctx))
		return;
	if (dralet_device_allow_multiple(dev) < 0)
		return;
	dralet_quantity_from_bytes(memory / GIB * GIB, max, sizeof(max));
	mem.range_max = max;
	mem.default_value = max;
	dralet_device_set_capacity_policy(dev, "memory", &mem);
	if (dralet_device_set_capacity_int(dev, "shares", NVIDIA_SHARES) == 0)
		dralet_device_set_capacity_policy(dev, "shares", &shares);
}

/* True when @req, a share, takes the GPU's whole memory. */
static bool takes_all_memory(struct dralet_device *dev, const struct dralet_prepare_req *req)
{
	int64_t want = 0, have = 0;

	for (size_t i = 0; i < dralet_device_n_capacities(dev); i++) {
		const struct dralet_capacity *c = dralet_device_capacity(dev, i);
		if (!strcmp(c->name, "memory") && dralet_quantity_value(c->quantity, &have) < 0)
			return false;
	}
	if (dralet_prepare_consumed(req, dralet_device_driver(dev), "memory", &want) < 0)
		return false;
	return have > 0 && want >= have / (int64_t)GIB * (int64_t)GIB;
}

int nvidia_prepare_share(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			 struct dralet_prepare_req *req, bool timeslice)
{
	int64_t memory;
	char value[32];
	int r;

	if (!req->share_id)
		return 0;
	/* time-slicing sets the whole GPU's policy, and unprepare resets it: only
	 * a share that holds all of the memory (no other share beside it) may */
	if (timeslice && !takes_all_memory(dev, req)) {
		dralet_ctx_error(ctx, "device %s: a time-slicing config changes the whole GPU, but "
				      "share %s holds only part of its memory; request all of it "
				      "(or no memory) to set the time-slice", dralet_device_name(dev),
				 req->share_id);
		return -EINVAL;
	}
	r = gpu_env(dev, req->edits, "SHARE_ID", req->share_id);
	if (r >= 0 && dralet_prepare_consumed(req, dralet_device_driver(dev), "memory",
					      &memory) == 0) {
		snprintf(value, sizeof(value), "%" PRId64, memory);
		r = gpu_env(dev, req->edits, "SHARE_MEMORY", value);
	}
	if (r < 0)
		dralet_ctx_error(ctx, "device %s: cannot build container edits: %s",
				 dralet_device_name(dev), strerror(-r));
	return r < 0 ? r : 0;
}
