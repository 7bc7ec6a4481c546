/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The claims engine's part of claim device status (device_status.h): once a
 * prepare succeeded, the entries of its devices go to the store when one of
 * them has network data; once an unprepare undid devices, the driver's
 * entries are removed (a store that wrote none has nothing to remove). The store writes
 * in the background (store.h set_claim_status), so the kubelet's answer never
 * waits for the apiserver; a write that fails is logged and the claim keeps
 * working (the status is information, not state).
 */
#include <stdlib.h>
#include <time.h>

#include "agent/claims/claim_plan.h"
#include "agent/claims/device_status.h"
#include "agent/claims/engine_internal.h"
#include "agent/kube/store.h"
#include "agent/lib/log.h"

static void prepared(struct claims_engine *e, const struct op *op)
{
	const struct claim_plan *p = op->plan;
	struct device_metadata_device *devs;
	struct json_object *entries = NULL;

	if (!p || !op->targets || !p->n_devices)
		return;
	if ((devs = calloc(p->n_devices, sizeof(*devs)))) {
		for (size_t i = 0; i < p->n_devices; i++)
			devs[i] = (struct device_metadata_device){
				.pool = p->devices[i].pool, .dev = op->targets[i]->dev,
				.share_id = p->devices[i].share_id };
		if (!device_status_worth_writing(devs, p->n_devices)) {
			free(devs);
			return;
		}
		entries = device_status_entries(e->driver, e->pool, devs, p->n_devices,
						(int64_t)time(NULL));
		free(devs);
	}
	if (!entries) {
		log_error_kv(LOG_KV("driver", e->driver),
			     "driver %s: claim %s/%s: no device status written: out of memory",
			     e->driver, op->namespace_, op->name);
		return;
	}
	e->store->ops->set_claim_status(e->store, op->namespace_, op->name, e->driver, entries);
	json_object_put(entries);
}

static void unprepared(struct claims_engine *e, const struct op *op)
{
	struct json_object *none;

	if (!op->n_unprepared || !(none = json_object_new_array()))
		return;
	e->store->ops->set_claim_status(e->store, op->namespace_, op->name, e->driver, none);
	json_object_put(none);
}

void engine_report_status(struct claims_engine *e, const struct op *op)
{
	if (op->error || !op->namespace_ || !*op->namespace_ || !op->name || !*op->name)
		return;
	if (op->kind == OP_PREPARE)
		prepared(e, op);
	else if (op->kind == OP_UNPREPARE)
		unprepared(e, op);
}
