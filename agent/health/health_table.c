/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/health/health_table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/core/backend_ctx.h"

int health_table_set_devices(struct health_table *t, struct dralet_device *const *devices,
			     size_t n, int64_t now)
{
	struct health_entry *fresh = n ? calloc(n, sizeof(*fresh)) : NULL;

	if (n && !fresh)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		fresh[i].dev = devices[i];
		fresh[i].health = dralet_device_health(devices[i]);
		fresh[i].updated = now;
		for (size_t k = 0; k < t->n; k++)
			if (!strcmp(dralet_device_name(t->entries[k].dev),
				    dralet_device_name(devices[i]))) {
				fresh[i].aer = t->entries[k].aer;
				fresh[i].link = t->entries[k].link;
				break;
			}
	}
	free(t->entries);
	t->entries = fresh;
	t->n = n;
	return 0;
}

void health_table_clear(struct health_table *t)
{
	free(t->entries);
	t->entries = NULL;
	t->n = 0;
}

enum dralet_health health_from_result(int result)
{
	switch (result) {
	case DRALET_HEALTH_HEALTHY:
	case DRALET_HEALTH_UNHEALTHY:
		return (enum dralet_health)result;
	default:
		return DRALET_HEALTH_UNKNOWN;
	}
}

bool health_table_apply(struct health_table *t, size_t i, int result, const char *why,
			const char *taint, int64_t now, struct health_change *ret_change)
{
	struct health_entry *e = &t->entries[i];
	enum dralet_health old = e->health, fresh = health_from_result(result);
	const char *old_taint = e->taint;
	bool said = why && *why;

	e->health = fresh;
	e->updated = now;
	e->error = result < 0 ? result : 0;
	if (fresh == DRALET_HEALTH_HEALTHY)
		e->reason[0] = '\0';
	else if (result < 0)
		snprintf(e->reason, sizeof(e->reason), "the health check failed: %s",
			 said ? why : strerror(-result));
	else if (fresh == DRALET_HEALTH_UNHEALTHY)
		snprintf(e->reason, sizeof(e->reason), "%s",
			 said ? why : "the backend reports the device unhealthy");
	else
		snprintf(e->reason, sizeof(e->reason), "%s",
			 said ? why : "the backend cannot tell the device's health");
	e->taint = fresh == DRALET_HEALTH_UNHEALTHY ? taint : NULL;
	if (fresh == old && e->taint == old_taint)
		return false;
	dralet_device_set_health(e->dev, fresh);
	device_set_health_taint(e->dev, e->taint);
	if (ret_change)
		*ret_change = (struct health_change){
			.device = dralet_device_name(e->dev),
			.old_health = old,
			.new_health = fresh,
			.error = e->error,
			.reason = e->reason,
		};
	return true;
}

const char *health_name(enum dralet_health health)
{
	switch (health) {
	case DRALET_HEALTH_HEALTHY: return "Healthy";
	case DRALET_HEALTH_UNHEALTHY: return "Unhealthy";
	default: return "Unknown";
	}
}
