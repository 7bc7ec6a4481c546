/* SPDX-License-Identifier: Apache-2.0 */
/* The status.devices entries of a prepared claim (device_status.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "agent/lib/json_put.h"
#include "agent/claims/device_status.h"

static struct json_object *ready_condition(const char *node, int64_t now_s)
{
	struct json_object *c = json_object_new_object();
	char when[32], message[320];
	time_t t = (time_t)now_s;
	struct tm tm;
	int r = c ? 0 : -ENOMEM;

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(message, sizeof(message), "prepared on node %s", node);
	if (!r)
		r = json_put_str(c, "type", DEVICE_STATUS_READY);
	if (!r)
		r = json_put_str(c, "status", "True");
	if (!r)
		r = json_put_str(c, "reason", DEVICE_STATUS_REASON_PREPARED);
	if (!r)
		r = json_put_str(c, "message", message);
	if (!r)
		r = json_put_str(c, "lastTransitionTime", when);
	if (r < 0) {
		json_object_put(c);
		return NULL;
	}
	return c;
}

static int add_network_data(struct json_object *o, const struct dralet_device *dev)
{
	int r;
	struct json_object *nd = device_network_data(dev, &r);

	return nd ? json_put(o, "networkData", nd) : r;
}

static struct json_object *entry(const char *driver, const char *node,
				 const struct device_metadata_device *d, int64_t now_s)
{
	struct json_object *o = json_object_new_object(), *conditions = json_object_new_array();
	int r = o && conditions ? 0 : -ENOMEM;

	if (!r)
		r = json_put_str(o, "driver", driver);
	if (!r)
		r = json_put_str(o, "pool", d->pool);
	if (!r)
		r = json_put_str(o, "device", dralet_device_name(d->dev));
	if (!r && d->share_id)
		r = json_put_str(o, "shareID", d->share_id);
	if (!r) {
		struct json_object *c = ready_condition(node, now_s);
		r = c ? json_object_array_add(conditions, c) : -ENOMEM;
	}
	if (!r) {
		r = json_put(o, "conditions", conditions);
		conditions = NULL;
	}
	if (!r)
		r = add_network_data(o, d->dev);
	json_object_put(conditions);
	if (r < 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

bool device_status_worth_writing(const struct device_metadata_device *devices, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int r;
		struct json_object *nd = device_network_data(devices[i].dev, &r);

		json_object_put(nd);
		if (nd || r < 0)
			return true;	/* out of memory: the writer says so */
	}
	return false;
}

struct json_object *device_status_entries(const char *driver, const char *node,
					  const struct device_metadata_device *devices, size_t n,
					  int64_t now_s)
{
	struct json_object *list = json_object_new_array();

	for (size_t i = 0; list && i < n; i++) {
		struct json_object *e = entry(driver, node, &devices[i], now_s);

		if (!e || json_object_array_add(list, e) < 0) {
			json_object_put(e);
			json_object_put(list);
			return NULL;
		}
	}
	return list;
}
