/* SPDX-License-Identifier: Apache-2.0 */
/* Accelerators shared by queues (accel.h, accel_publish_sharing). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <dralet/sharing.h>

#include "accel.h"
#include "../common/pcidev.h"
#include "../common/sharing_option.h"

void accel_publish_sharing(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			   const struct dralet_pci_func *func)
{
	char max[16];
	int n;

	if (!sharing_enabled(ctx) || (n = accel_qat_ring_pairs(ctx, func)) <= 0)
		return;
	snprintf(max, sizeof(max), "%d", n);
	struct dralet_capacity_policy p = { .default_value = max, .range_min = "1",
					    .range_max = max, .range_step = "1" };
	if (dralet_device_allow_multiple(dev) < 0 ||
	    dralet_device_set_capacity_int(dev, "queues", n) < 0)
		return;
	dralet_device_set_capacity_policy(dev, "queues", &p);
}

int accel_prepare_share(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			struct dralet_prepare_req *req)
{
	char value[24];
	int64_t queues;
	int r;

	if (!req->share_id)
		return 0;
	if (dralet_prepare_consumed(req, dralet_ctx_driver(ctx), "queues", &queues) < 0 ||
	    queues <= 0) {
		dralet_ctx_error(ctx, "device %s: share %s consumes no queues; a device shared by "
				 "queues needs the amount the scheduler allocated",
				 dralet_device_name(dev), req->share_id);
		return -EINVAL;
	}
	snprintf(value, sizeof(value), "%" PRId64, queues);
	r = pcidev_env(req->edits, dev, "SHARE_ID", req->share_id);
	if (r >= 0)
		r = pcidev_env(req->edits, dev, "SHARE_QUEUES", value);
	if (r < 0)
		dralet_ctx_error(ctx, "device %s: cannot build container edits: %s",
				 dralet_device_name(dev), strerror(-r));
	return r < 0 ? r : 0;
}
