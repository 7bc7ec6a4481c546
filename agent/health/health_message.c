/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/health/health_message.h"

#include <errno.h>
#include <stdlib.h>

#include "agent/health/health_table.h"
#include "proto/kubelet_pb.h"

static int wire_status(enum dralet_health health)
{
	switch (health) {
	case DRALET_HEALTH_HEALTHY: return HEALTH_STATUS_HEALTHY;
	case DRALET_HEALTH_UNHEALTHY: return HEALTH_STATUS_UNHEALTHY;
	default: return HEALTH_STATUS_UNKNOWN;
	}
}

int health_message_pack(const struct health_table *t, const char *pool, int64_t timeout_s,
			uint8_t **ret_buf, size_t *ret_len)
{
	health_watch_response resp = HEALTH_WATCH_RESPONSE_INIT;
	health_device *devices = calloc(t->n + 1, sizeof(*devices));
	health_device **device_ptrs = calloc(t->n + 1, sizeof(*device_ptrs));
	health_device_id *ids = calloc(t->n + 1, sizeof(*ids));
	uint8_t *buf = NULL;
	size_t len;
	int r = -ENOMEM;

	if (!devices || !device_ptrs || !ids)
		goto out;
	for (size_t i = 0; i < t->n; i++) {
		const struct health_entry *e = &t->entries[i];
		health_device init_device = HEALTH_DEVICE_INIT;
		health_device_id init_id = HEALTH_DEVICE_ID_INIT;

		ids[i] = init_id;
		ids[i].pool_name = (char *)pool;
		ids[i].device_name = (char *)dralet_device_name(e->dev);
		devices[i] = init_device;
		devices[i].device = &ids[i];
		devices[i].health = wire_status(e->health);
		devices[i].last_updated_time = e->updated;
		devices[i].health_check_timeout_seconds = timeout_s;
		devices[i].message = (char *)e->reason;
		device_ptrs[i] = &devices[i];
	}
	resp.devices = device_ptrs;
	resp.n_devices = t->n;
	len = protobuf_c_message_get_packed_size(&resp.base);
	if (!(buf = malloc(len ? len : 1)))
		goto out;
	protobuf_c_message_pack(&resp.base, buf);
	*ret_buf = buf;
	*ret_len = len;
	r = 0;
out:
	free(devices);
	free(device_ptrs);
	free(ids);
	return r;
}
