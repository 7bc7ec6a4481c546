/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The loop side of the claims engine: calls and their claims, one operation
 * per claim UID at a time, reading claims from the store, planning,
 * resolving and reserving devices, handing the work to the thread pool and
 * assembling the answer.
 */
#include "agent/claims/engine_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dralet/device.h>

#include "agent/claims/cdi_names.h"
#include "agent/claims/claims_lock.h"
#include "agent/core/backend_ctx.h"
#include "agent/core/device_set.h"
#include "agent/lib/atomic_file.h"
#include "agent/lib/err_msg.h"
#include "agent/claims/claim_ref.h"
#include "agent/lib/json_get.h"
#include "agent/lib/log.h"
#include "agent/kube/store.h"

struct call {
	struct claims_engine *e;
	bool unprepare;
	bool collect;		/* a stale-claim collection (claims_collect), not the kubelet */
	struct op *ops;
	size_t n, pending;
	claims_done_cb cb;
	void *userdata;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- devices ---- */

static int compare_device_name(const void *key, const void *elem)
{
	return strcmp(key, ((const struct engine_device *)elem)->name);
}

struct engine_device *engine_find_device(struct claims_engine *e, const char *name)
{
	if (!e->n_devices)
		return NULL;
	return bsearch(name, e->devices, e->n_devices, sizeof(*e->devices), compare_device_name);
}

void engine_device_identity(const struct dralet_device *dev, struct ckpt_identity *ret)
{
	const struct dralet_pci_func *f = dralet_device_pci(dev);
	const struct dralet_attr *uuid = dralet_device_find_attr(dev, "uuid");

	memset(ret, 0, sizeof(*ret));
	if (f) {
		ret->pci_address = (char *)f->address;
		ret->vendor_id = f->vendor_id;
		ret->device_id = f->device_id;
		ret->subsystem_vendor_id = f->subsystem_vendor_id;
		ret->subsystem_device_id = f->subsystem_device_id;
	}
	if (uuid && uuid->type == DRALET_ATTR_STRING && uuid->string_value)
		ret->uuid = (char *)uuid->string_value;
}

void engine_sync_reservations(struct claims_engine *e, const char *uid)
{
	struct ckpt_claim *c;

	for (size_t i = 0; i < e->n_devices; i++)
		share_ledger_release(&e->devices[i].holders, uid);
	claims_state_lock(e->state);
	c = checkpoint_find(claims_state_checkpoint(e->state), uid);
	for (size_t i = 0; c && i < c->n_devices; i++) {
		const struct ckpt_device *cd = &c->devices[i];
		struct err_msg why = { "" };
		struct engine_device *d;
		char desc[512];

		if (cd->admin_access || !(d = engine_find_device(e, cd->device)))
			continue;
		snprintf(desc, sizeof(desc), "%s/%s", c->namespace_, c->name);
		if (share_ledger_check(&d->holders, d->dev, uid, cd->share_id, cd->consumed,
				       cd->n_consumed, ERR_MSG_ARGS(&why)) < 0)
			log_error_kv(LOG_KV("driver", e->driver),
				     "driver %s: claim %s (uid %s) is prepared, but %s", e->driver,
				     desc, uid, why.text);
		else if (share_ledger_add(&d->holders, uid, desc, cd->share_id, cd->consumed,
					  cd->n_consumed) < 0)
			log_error_kv(LOG_KV("driver", e->driver),
				     "driver %s: out of memory reserving %s", e->driver, d->name);
	}
	claims_state_unlock(e->state);
}

/* ---- operations ---- */

void op_fail(struct op *op, const char *fmt, ...)
{
	struct err_msg cause;
	va_list ap;

	va_start(ap, fmt);
	err_vprintf(ERR_MSG_ARGS(&cause), 0, fmt, ap);
	va_end(ap);
	free(op->error);
	if (asprintf(&op->error, "claim %s/%s (uid %s): %s", op->namespace_, op->name, op->uid,
		     cause.text) < 0)
		op->error = NULL;
	if (!op->error)
		op->error = strdup("out of memory");
}

static void op_clear(struct op *op)
{
	free(op->namespace_);
	free(op->name);
	free(op->uid);
	free(op->pod);
	free(op->error);
	claim_plan_free(op->plan);
	free(op->targets);
	for (size_t i = 0; i < op->n_devices; i++) {
		struct op_device *d = &op->devices[i];
		free(d->pool);
		free(d->device);
		free(d->share_id);
		for (size_t j = 0; j < d->n_request_names; j++)
			free(d->request_names[j]);
		free(d->request_names);
		free(d->cdi_id);
	}
	free(op->devices);
}

static void call_deliver(struct call *call)
{
	struct claims_engine *e = call->e;
	struct claims_result *results = calloc(call->n + 1, sizeof(*results));
	struct claims_device_result **devs = calloc(call->n + 1, sizeof(*devs));
	bool ok = results && devs;

	for (size_t i = 0; ok && i < call->n; i++) {
		struct op *op = &call->ops[i];

		results[i].uid = op->uid;
		results[i].error = op->error;
		if (op->error || !op->n_devices)
			continue;
		if (!(devs[i] = calloc(op->n_devices, sizeof(*devs[i])))) {
			ok = false;
			break;
		}
		for (size_t j = 0; j < op->n_devices; j++) {
			devs[i][j].pool = op->devices[j].pool;
			devs[i][j].device = op->devices[j].device;
			devs[i][j].share_id = op->devices[j].share_id;
			devs[i][j].request_names = (const char *const *)op->devices[j].request_names;
			devs[i][j].n_request_names = op->devices[j].n_request_names;
			devs[i][j].cdi_ids = (const char *const *)&op->devices[j].cdi_id;
			devs[i][j].n_cdi_ids = op->devices[j].cdi_id ? 1 : 0;
		}
		results[i].devices = devs[i];
		results[i].n_devices = op->n_devices;
	}
	if (ok) {
		call->cb(call->userdata, results, call->n);
	} else {
		/* no memory to build the answer: every claim fails, nothing else breaks */
		static const char *const oom = "out of memory building the answer";
		struct claims_result *fallback = results ? results : NULL;
		log_error_kv(LOG_KV("driver", e->driver),
			     "driver %s: %s", e->driver, oom);
		for (size_t i = 0; fallback && i < call->n; i++) {
			fallback[i].error = oom;
			fallback[i].n_devices = 0;
			fallback[i].devices = NULL;
		}
		call->cb(call->userdata, fallback, fallback ? call->n : 0);
	}
	for (size_t i = 0; devs && i < call->n; i++)
		free(devs[i]);
	free(devs);
	free(results);
	for (size_t i = 0; i < call->n; i++)
		op_clear(&call->ops[i]);
	free(call->ops);
	free(call);
	e->calls_in_flight--;
	if (e->shutting_down && !e->calls_in_flight && e->shutdown_cb) {
		void (*cb)(void *) = e->shutdown_cb;
		e->shutdown_cb = NULL;
		cb(e->shutdown_userdata);
	}
}

static void op_start(struct op *op);

/* The devices of @op's answer, comma-separated, in @buf (cut when long), and
 * the backend of the first one (NULL when none). */
static const char *op_devices(struct claims_engine *e, const struct op *op, char *buf,
			      size_t size, const char **ret_backend)
{
	struct engine_device *d;
	size_t len = 0;

	buf[0] = '\0';
	*ret_backend = NULL;
	for (size_t i = 0; i < op->n_devices && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? "," : "",
					op->devices[i].device);
	if (op->n_devices && (d = engine_find_device(e, op->devices[0].device)) &&
	    dralet_device_ctx(d->dev) && dralet_device_ctx(d->dev)->backend)
		*ret_backend = dralet_device_ctx(d->dev)->backend->name;
	return op->n_devices ? buf : NULL;
}

static void log_op(struct claims_engine *e, const struct op *op, bool unprepare, double ms)
{
	char claim[320], devices[512];
	const char *backend, *listed = op_devices(e, op, devices, sizeof(devices), &backend);

	snprintf(claim, sizeof(claim), "%s/%s", op->namespace_, op->name);
	if (op->error)
		log_warn_kv(LOG_KV("driver", e->driver, "claim", claim, "uid", op->uid,
				   "pod", op->pod, "err", op->error),
			    "%s failed", unprepare ? "unprepare" : "prepare");
	else
		log_info_kv(LOG_KV("driver", e->driver, "claim", claim, "uid", op->uid,
				   "pod", op->pod, "device", listed, "backend", backend),
			    "%s claim %s (uid %s): %zu device(s) in %.1f ms",
			    unprepare ? "unprepared" : "prepared", claim, op->uid,
			    unprepare ? op->n_unprepared : op->n_devices, ms);
}

/* A prepare that failed, told on the claim itself (kubectl describe
 * resourceclaim; the store queues it, rate-limited: nothing waits here). */
static void record_prepare_failed(struct claims_engine *e, const struct op *op)
{
	const struct kube_object_ref claim = {
		.api_version = "resource.k8s.io/v1", .kind = "ResourceClaim",
		.namespace_ = op->namespace_, .name = op->name, .uid = op->uid,
	};
	char msg[KUBE_EVENT_MESSAGE_MAX + 1];

	if (!op->namespace_ || !*op->namespace_ || !op->name || !*op->name)
		return;
	snprintf(msg, sizeof(msg), "driver %s: %s", e->driver, op->error);
	e->store->ops->record_event(e->store, &claim, "Warning", CLAIMS_EVENT_PREPARE_FAILED, msg);
}

/* The claim's operation is over: log it, let the next one on its UID run. */
static void op_done(struct op *op)
{
	struct call *call = op->call;
	struct claims_engine *e = call->e;
	struct uid_queue **pq, *q;
	double ms = (double)(now_ns() - op->started_ns) / 1e6;

	if (!call->collect) {
		prom_histogram_observe(call->unprepare ? &e->metrics.unprepare_seconds
						       : &e->metrics.prepare_seconds, ms / 1000.0);
		if (op->error)
			++*(call->unprepare ? &e->metrics.unprepares_failed
					    : &e->metrics.prepares_failed);
		/* a collected claim is gone or another's: its status is not ours to touch */
		engine_report_status(e, op);
	}
	log_op(e, op, call->unprepare, ms);
	if (op->error && !call->unprepare)
		record_prepare_failed(e, op);
	if (e->node_changed && device_set_take_node_changed(e->set))
		e->node_changed(e->userdata);
	for (pq = &e->queues; (q = *pq); pq = &q->next)
		if (q->head == op)
			break;
	if (q) {
		q->head = op->next_queued;
		if (!q->head) {
			*pq = q->next;
			free(q->uid);
			free(q);
		} else {
			op_start(q->head);
		}
	}
	engine_lock_unhold(e, op);	/* after the next op on the UID took its hold */
	if (--call->pending == 0)
		call_deliver(call);
}

void engine_op_done(struct op *op)
{
	op_done(op);
}

static void after_work(uv_work_t *w, int status)
{
	struct op *op = w->data;

	if (status < 0 && !op->error)
		op_fail(op, "the work was cancelled: %s", uv_strerror(status));
	engine_sync_reservations(op->call->e, op->uid);
	op_done(op);
}

static void run_work(uv_work_t *w)
{
	struct op *op = w->data;
	struct claims_engine *e = op->call->e;

	switch (op->kind) {
	case OP_PREPARE:
		engine_work_prepare(e, op);
		break;
	case OP_HIT:
		engine_work_hit(e, op);
		break;
	case OP_UNPREPARE:
		engine_work_unprepare(e, op);
		break;
	}
}

static void queue_work(struct op *op)
{
	int r;

	op->work.data = op;
	r = uv_queue_work(op->call->e->loop, &op->work, run_work, after_work);
	if (r < 0) {
		op_fail(op, "cannot start the work: %s", uv_strerror(r));
		engine_sync_reservations(op->call->e, op->uid);
		op_done(op);
	}
}

/* Resolves and reserves the plan's devices (each share of a shared device
 * on its own); false (op failed) on a problem. */
static bool resolve_and_reserve(struct claims_engine *e, struct op *op)
{
	struct claim_plan *p = op->plan;
	char desc[512];

	op->targets = calloc(p->n_devices + 1, sizeof(*op->targets));
	if (!op->targets) {
		op_fail(op, "out of memory");
		return false;
	}
	snprintf(desc, sizeof(desc), "%s/%s", op->namespace_, op->name);
	for (size_t i = 0; i < p->n_devices; i++) {
		struct claim_plan_device *pd = &p->devices[i];
		struct err_msg why = { "" };
		struct engine_device *d;

		if (strcmp(pd->pool, e->pool)) {
			op_fail(op, "device %s/%s is unknown: pool %s is not this node's pool %s",
				pd->pool, pd->device, pd->pool, e->pool);
			return false;
		}
		d = engine_find_device(e, pd->device);
		if (!d) {
			op_fail(op, "device %s/%s is unknown: driver %s has no such device on this "
				"node", pd->pool, pd->device, e->driver);
			return false;
		}
		op->targets[i] = d;
		if (pd->admin_access)
			continue;
		/* checked and added one by one: two shares of one device in this
		 * claim count against each other */
		if (share_ledger_check(&d->holders, d->dev, op->uid, pd->share_id, pd->consumed,
				       pd->n_consumed, ERR_MSG_ARGS(&why)) < 0) {
			op_fail(op, "%s", why.text);
			return false;
		}
		if (share_ledger_add(&d->holders, op->uid, desc, pd->share_id, pd->consumed,
				     pd->n_consumed) < 0) {
			op_fail(op, "out of memory");
			return false;
		}
	}
	return true;
}

/* The first pod in the claim's status.reservedFor as "<namespace>/<name>" (a
 * claim's consumers live in its namespace), or NULL. For log lines only: the
 * kubelet's calls name no pod. */
static char *reserved_pod(struct json_object *claim, const char *ns)
{
	struct json_object *list = json_get_at(claim, JSON_PATH("status", "reservedFor"));
	char *pod = NULL;

	for (size_t i = 0; json_object_is_type(list, json_type_array) &&
			   i < json_object_array_length(list); i++) {
		struct json_object *ref = json_object_array_get_idx(list, i);
		const char *resource = json_get_str(ref, "resource"), *name = json_get_str(ref, "name");
		if (resource && !strcmp(resource, "pods") && name &&
		    asprintf(&pod, "%s/%s", ns, name) >= 0)
			return pod;
	}
	return NULL;
}

static void on_claim(void *userdata, int err, struct json_object *claim, const char *message)
{
	struct op *op = userdata;
	struct claims_engine *e = op->call->e;
	struct err_msg cause = { "" };
	int r;

	if (err == -ENOENT) {
		op_fail(op, "not found%s%s", message && *message ? ": " : "",
			message ? message : "");
		op_done(op);
		return;
	}
	if (err < 0 || !claim) {
		op_fail(op, "cannot read it: %s", message && *message ? message : strerror(-err));
		op_done(op);
		return;
	}
	free(op->pod);
	op->pod = reserved_pod(claim, op->namespace_);
	r = claim_plan_build(claim, op->namespace_, op->name, op->uid, e->driver, &op->plan,
			     ERR_MSG_ARGS(&cause));
	if (r < 0) {
		op_fail(op, "%s", cause.text);
		op_done(op);
		return;
	}
	if (op->kind == OP_HIT) {
		queue_work(op);	/* a rebuilt entry learns its requests from the plan */
		return;
	}
	if (!resolve_and_reserve(e, op)) {
		engine_sync_reservations(e, op->uid);
		op_done(op);
		return;
	}
	queue_work(op);
}

/* Runs the claim's operation (at the head of its UID's queue, the lock
 * across instances held: the checkpoint is the node's). */
static void op_run(struct op *op)
{
	struct claims_engine *e = op->call->e;
	struct ckpt_claim *c;
	enum ckpt_state state = CKPT_PREPARE_STARTED;
	bool rebuilt = false;

	claims_state_lock(e->state);
	c = checkpoint_find(claims_state_checkpoint(e->state), op->uid);
	if (c) {
		state = c->state;
		rebuilt = engine_entry_rebuilt(c);
	}
	claims_state_unlock(e->state);

	if (op->call->unprepare) {
		if (!c) {
			op_done(op);	/* never prepared, or already unprepared */
			return;
		}
		op->kind = OP_UNPREPARE;
		queue_work(op);
		return;
	}
	if (c && state == CKPT_PREPARE_COMPLETED) {
		op->kind = OP_HIT;
		if (rebuilt)	/* from its CDI spec: the store says which requests */
			e->store->ops->get_claim(e->store, op->namespace_, op->name, on_claim, op);
		else
			queue_work(op);
		return;
	}
	op->kind = OP_PREPARE;
	e->store->ops->get_claim(e->store, op->namespace_, op->name, on_claim, op);
}

/* The claim's operation may start (it is at the head of its UID's queue). */
static void op_start(struct op *op)
{
	op->started_ns = now_ns();
	engine_lock_hold(op->call->e, op, op_run);
}

/* Puts @op in its UID's queue; runs it when nothing else runs on that UID. */
static void op_enqueue(struct claims_engine *e, struct op *op)
{
	struct uid_queue *q;

	for (q = e->queues; q; q = q->next)
		if (!strcmp(q->uid, op->uid))
			break;
	if (q) {
		q->tail->next_queued = op;
		q->tail = op;
		return;
	}
	q = calloc(1, sizeof(*q));
	if (!q || !(q->uid = strdup(op->uid))) {
		free(q);
		op_fail(op, "out of memory");
		op_done(op);
		return;
	}
	q->head = q->tail = op;
	q->next = e->queues;
	e->queues = q;
	op_start(op);
}

static int start_call(struct claims_engine *e, bool unprepare, bool collect,
		      const struct claims_ref *claims, size_t n, claims_done_cb cb, void *userdata)
{
	struct call *call = calloc(1, sizeof(*call));
	struct err_msg cause;

	if (!call || !(call->ops = calloc(n + 1, sizeof(*call->ops)))) {
		free(call);
		return -ENOMEM;
	}
	call->e = e;
	call->unprepare = unprepare;
	call->collect = collect;
	call->n = n;
	call->cb = cb;
	call->userdata = userdata;
	for (size_t i = 0; i < n; i++) {
		struct op *op = &call->ops[i];
		op->call = call;
		op->namespace_ = strdup(claims[i].namespace_ ? claims[i].namespace_ : "");
		op->name = strdup(claims[i].name ? claims[i].name : "");
		op->uid = strdup(claims[i].uid ? claims[i].uid : "");
		if (!op->namespace_ || !op->name || !op->uid) {
			for (size_t j = 0; j <= i; j++)
				op_clear(&call->ops[j]);
			free(call->ops);
			free(call);
			return -ENOMEM;
		}
	}
	/* pending counts one extra until every op is started, so that ops that
	 * finish at once cannot deliver the call early */
	call->pending = n + 1;
	e->calls_in_flight++;
	for (size_t i = 0; i < n; i++) {
		struct op *op = &call->ops[i];

		op->started_ns = now_ns();
		if (e->shutting_down) {
			op_fail(op, "the driver is shutting down");
			call->pending--;
		} else if (claim_ref_check(claims[i].namespace_, claims[i].name, claims[i].uid,
					   ERR_MSG_ARGS(&cause)) < 0) {
			/* not op_fail: the values are not fit to repeat in full */
			if (!(op->error = strdup(cause.text)))
				op_fail(op, "out of memory");
			call->pending--;
		} else {
			op_enqueue(e, op);
		}
	}
	if (--call->pending == 0)
		call_deliver(call);
	return 0;
}

int claims_prepare(struct claims_engine *e, const struct claims_ref *claims, size_t n,
		   claims_done_cb cb, void *userdata)
{
	return start_call(e, false, false, claims, n, cb, userdata);
}

int claims_unprepare(struct claims_engine *e, const struct claims_ref *claims, size_t n,
		     claims_done_cb cb, void *userdata)
{
	return start_call(e, true, false, claims, n, cb, userdata);
}

int claims_collect(struct claims_engine *e, const struct claims_ref *claims, size_t n,
		   claims_done_cb cb, void *userdata)
{
	return start_call(e, true, true, claims, n, cb, userdata);
}

void claims_engine_shutdown(struct claims_engine *e, void (*cb)(void *userdata), void *userdata)
{
	e->shutting_down = true;
	engine_lock_cancel_waiters(e);	/* they changed nothing yet */
	if (!e->calls_in_flight) {
		if (cb)
			cb(userdata);
		return;
	}
	e->shutdown_cb = cb;
	e->shutdown_userdata = userdata;
}

size_t claims_engine_n_claims(struct claims_engine *e)
{
	size_t n;

	claims_state_lock(e->state);
	n = claims_state_checkpoint(e->state)->n_claims;
	claims_state_unlock(e->state);
	return n;
}

int claims_engine_entries(struct claims_engine *e, struct claims_entry **ret_entries,
			  size_t *ret_n)
{
	struct claims_entry *out;
	struct checkpoint *ck;
	size_t n;
	int r = 0;

	claims_state_lock(e->state);
	ck = claims_state_checkpoint(e->state);
	n = ck->n_claims;
	out = calloc(n + 1, sizeof(*out));
	for (size_t i = 0; out && i < n; i++) {
		const struct ckpt_claim *c = ck->claims[i];

		out[i].uid = strdup(c->uid);
		out[i].namespace_ = strdup(c->namespace_ ? c->namespace_ : "");
		out[i].name = strdup(c->name ? c->name : "");
		if (!out[i].uid || !out[i].namespace_ || !out[i].name)
			r = -ENOMEM;
	}
	claims_state_unlock(e->state);
	if (!out || r < 0) {
		claims_entries_free(out, out ? n : 0);
		return -ENOMEM;
	}
	*ret_entries = out;
	*ret_n = n;
	return 0;
}

void claims_entries_free(struct claims_entry *entries, size_t n)
{
	for (size_t i = 0; entries && i < n; i++) {
		free(entries[i].uid);
		free(entries[i].namespace_);
		free(entries[i].name);
	}
	free(entries);
}

uint64_t claims_engine_checkpoint_writes(struct claims_engine *e)
{
	return claims_state_writes(e->state);
}

void claims_engine_checkpoint_write_seconds(struct claims_engine *e, struct prom_histogram *ret)
{
	claims_state_write_seconds(e->state, ret);
}

/* ---- rediscovery ---- */

bool claims_engine_idle(const struct claims_engine *e)
{
	return !e->calls_in_flight;
}

/* The engine's view of @set's devices: unlocked, unowned. */
static struct engine_device *engine_devices_of(const struct device_set *set)
{
	size_t n = device_set_n(set);
	struct engine_device *fresh = calloc(n + 1, sizeof(*fresh));

	for (size_t i = 0; fresh && i < n; i++) {
		fresh[i].dev = device_set_devices(set)[i];
		fresh[i].name = dralet_device_name(fresh[i].dev);
		pthread_mutex_init(&fresh[i].lock, NULL);
	}
	return fresh;
}

static void drop_devices(struct claims_engine *e)
{
	for (size_t i = 0; i < e->n_devices; i++) {
		share_ledger_clear(&e->devices[i].holders);
		pthread_mutex_destroy(&e->devices[i].lock);
	}
	free(e->devices);
	e->devices = NULL;
	e->n_devices = 0;
	device_set_unref(e->set);
	e->set = NULL;
}

int claims_engine_set_devices(struct claims_engine *e, struct device_set *set)
{
	struct engine_device *fresh;
	size_t n = device_set_n(set);

	if (e->calls_in_flight)
		return -EBUSY;
	if (!(fresh = engine_devices_of(set)))
		return -ENOMEM;
	/* a prepared claim keeps its device across the rediscovery */
	for (size_t i = 0; i < n; i++) {
		struct engine_device *old = engine_find_device(e, fresh[i].name);
		if (old) {
			fresh[i].holders = old->holders;
			old->holders = (struct share_ledger){ 0 };
		}
	}
	drop_devices(e);
	e->set = device_set_ref(set);
	e->devices = fresh;
	e->n_devices = n;
	return 0;
}

/* ---- life cycle ---- */

void claims_engine_free(struct claims_engine *e)
{
	if (!e)
		return;
	drop_devices(e);
	while (e->queues) {
		struct uid_queue *q = e->queues;
		e->queues = q->next;
		free(q->uid);
		free(q);
	}
	claims_state_free(e->state);
	engine_recover_free(e);
	claims_lock_free(e->lock);	/* releases the flock when held */
	free(e->driver);
	free(e->pool);
	free(e->vendor);
	free(e->state_dir);
	free(e->cdi_dir);
	free(e->boot_id);
	free(e);
}

/*
 * How durable the engine's files need to be. A process crash loses nothing
 * that was renamed into place: the page cache outlives the process, so the
 * write order alone makes every crash point recoverable (docs/claims.md,
 * "Checkpoint"). fsync only matters across a power loss or a kernel crash,
 * and that is a new boot: with the boot ID known, the start drops every claim
 * of the old boot without touching hardware (recovery.h) and removes their
 * spec and metadata files. So, with the boot ID known:
 *   - the checkpoint is fsynced before its rename (one fsync per write) so
 *     that after a power loss it is the old or the new version, whole, and
 *     its boot ID readable; its directory is not: either version names the
 *     old boot. A torn one would be "unreadable", whose recovery keeps
 *     every spec file instead of removing them.
 *   - device metadata files are not fsynced at all: bind-mounted into the
 *     containers of this boot only.
 *   - CDI specs: cdi_files.h (fsynced, whole or missing after a power loss).
 * Without a boot ID a power loss looks like a restart, and the claims it
 * finds are kept: then everything is fsynced, directories too.
 */
static void durable_enough(struct claims_engine *e)
{
	bool boot_known = e->boot_id[0] != '\0';

	e->ckpt_sync = boot_known ? ATOMIC_FILE_SYNC_FILE : ATOMIC_FILE_SYNC_DIR;
	e->metadata_sync = boot_known ? ATOMIC_FILE_SYNC_NONE : ATOMIC_FILE_SYNC_DIR;
}

int claims_engine_new(const struct claims_engine_config *cfg, struct claims_engine **ret_engine,
		      struct claims_recovery_stats *ret_stats)
{
	struct claims_recovery_stats stats = { 0 };
	struct claims_engine *e;
	char vendor[256];
	int r;

	if (!cfg->loop || !cfg->store || !cfg->driver || !cfg->pool || !cfg->devices ||
	    !cfg->state_dir || !cfg->cdi_dir)
		return -EINVAL;
	if (cdi_vendor_of_driver(cfg->driver, vendor, sizeof(vendor)) < 0) {
		log_error("driver %s: not usable as a CDI vendor name", cfg->driver);
		return -EINVAL;
	}
	if (!(e = calloc(1, sizeof(*e))))
		return -ENOMEM;
	e->loop = cfg->loop;
	e->node_changed = cfg->node_changed;
	e->userdata = cfg->userdata;
	e->store = cfg->store;
	e->driver = strdup(cfg->driver);
	e->pool = strdup(cfg->pool);
	e->vendor = strdup(vendor);
	e->state_dir = strdup(cfg->state_dir);
	e->metrics.prepare_seconds.bounds = e->metrics.unprepare_seconds.bounds =
		prom_latency_bounds;
	e->metrics.prepare_seconds.n_bounds = e->metrics.unprepare_seconds.n_bounds =
		prom_latency_n_bounds;
	e->cdi_dir = strdup(cfg->cdi_dir);
	e->boot_id = strdup(cfg->boot_id ? cfg->boot_id : "");
	if ((e->devices = engine_devices_of(cfg->devices))) {
		e->set = device_set_ref(cfg->devices);
		e->n_devices = device_set_n(cfg->devices);
	}
	if (!e->driver || !e->pool || !e->vendor || !e->state_dir || !e->cdi_dir || !e->boot_id ||
	    !e->devices) {
		claims_engine_free(e);
		return -ENOMEM;
	}
	durable_enough(e);
	if ((r = atomic_file_mkdirs(e->state_dir, 0750)) < 0 ||
	    (r = atomic_file_mkdirs(e->cdi_dir, 0755)) < 0) {
		log_error_kv(LOG_KV("driver", e->driver, "err", strerror(-r)),
			     "driver %s: cannot create %s or %s: %s", e->driver, e->state_dir,
			     e->cdi_dir, strerror(-r));
		claims_engine_free(e);
		return r;
	}
	if (e->state_dir[0] != '/') {
		/* device metadata files are mounted by their absolute host path */
		char *abs = realpath(e->state_dir, NULL);

		if (!abs) {
			r = -errno;
			log_error_kv(LOG_KV("driver", e->driver, "err", strerror(-r)),
				     "driver %s: cannot resolve %s: %s", e->driver, e->state_dir,
				     strerror(-r));
			claims_engine_free(e);
			return r;
		}
		free(e->state_dir);
		e->state_dir = abs;
	}
	/* the recovery is an operation like the others: under the lock */
	if ((r = engine_lock_start(e)) < 0) {
		claims_engine_free(e);
		return r;
	}
	r = engine_recover(e, &stats);
	engine_lock_end_start(e);
	if (r < 0) {
		claims_engine_free(e);
		return r;
	}
	engine_sync_all_reservations(e);
	if (ret_stats)
		*ret_stats = stats;
	*ret_engine = e;
	return 0;
}

const struct claims_engine_metrics *claims_engine_metrics(const struct claims_engine *e)
{
	return &e->metrics;
}
