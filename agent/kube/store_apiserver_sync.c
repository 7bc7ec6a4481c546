/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sync of the apiserver store, per driver: debounced rounds that plan
 * (slices/sync.h) the cache against the desired slices and write the plan,
 * deletes then updates then creates, each phase's writes in parallel.
 * Conflicts list again, rejections wait for the next publish, other
 * failures retry after a backoff; rounds that never converge stop.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/kube/status.h"
#include "agent/kube/store_apiserver_internal.h"
#include "agent/lib/log.h"
#include "agent/slices/json_tree.h"

#define DEBOUNCE_MAX_MS 1000u
#define MAX_UNCONVERGED_ROUNDS 3

static void on_sync_timer(uv_timer_t *t);
static void drv_run_phase(struct drv *d);

/* The delay before a failed round of @d is tried again, after its n-th
 * failure in a row: 100-200 ms up to the 6th, then 5 ms * 2^(n-1) with equal
 * jitter, capped at 30 s (from the 14th). Independent writes that fail now
 * and then fail in runs against a working server too: a backoff doubling
 * from 200 ms waited 12.8-25.6 s after the 8th failure, this one 0.32-0.64 s. */
static uint32_t sync_backoff_next(struct drv *d)
{
	struct store_api *s = d->s;
	uint32_t delay = backoff_next(&d->sync_backoff, api_rnd(s));
	if (delay < BACKOFF_BASE_MS / 2)
		delay = BACKOFF_BASE_MS / 2 + api_rnd(s) % (BACKOFF_BASE_MS / 2 + 1);
	return delay;
}

void drv_want_sync(struct drv *d, bool immediate)
{
	struct store_api *s = d->s;
	if (s->destroying || !d->desired)
		return;
	if (d->sync_running) {
		d->sync_again = true;
		return;
	}
	if (d->retry_pending)
		return;	/* the retry after the backoff sees this change too */
	uint64_t now = uv_now(s->loop);
	if (!d->pending_since)
		d->pending_since = now;
	uint64_t delay = immediate ? 0 : s->debounce_ms;
	/* A burst that never pauses still gets published after a while. */
	uint64_t max_wait = s->debounce_ms * 10u > DEBOUNCE_MAX_MS ? s->debounce_ms * 10u : DEBOUNCE_MAX_MS;
	if (now + delay > d->pending_since + max_wait)
		delay = d->pending_since + max_wait > now ? d->pending_since + max_wait - now : 0;
	uv_timer_start(&d->sync_timer, on_sync_timer, delay, 0);
}

static void drv_free_ops(struct drv *d)
{
	for (size_t i = 0; d->ops && d->plan && i < d->plan->n_ops; i++)
		free(d->ops[i].body);
	free(d->ops);
	d->ops = NULL;
}

void drv_end_round(struct drv *d)
{
	drv_free_ops(d);
	slice_plan_free(d->plan);
	d->plan = NULL;
	d->sync_running = false;
}

static char *delete_body(const char *uid, const char *rv)
{
	struct json_object *b = json_object_new_object(), *pre = json_object_new_object();
	json_object_object_add(b, "kind", json_object_new_string("DeleteOptions"));
	json_object_object_add(b, "apiVersion", json_object_new_string("v1"));
	if (uid)
		json_object_object_add(pre, "uid", json_object_new_string(uid));
	if (rv)
		json_object_object_add(pre, "resourceVersion", json_object_new_string(rv));
	json_object_object_add(b, "preconditions", pre);
	char *text = strdup(json_object_to_json_string_ext(b, JSON_C_TO_STRING_PLAIN));
	json_object_put(b);
	return text;
}

#define BODY_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* New slices are owned by the Node (the daemon may not know its UID). */
static void add_owner(void *userdata, struct json_object *obj)
{
	struct store_api *s = userdata;
	json_tree_set_node_owner(obj, s->node_name, s->node_uid);
}

/* The bodies of every write of @d's plan, one write (and one device's tree) at a time. */
static int drv_make_bodies(struct drv *d)
{
	struct store_api *s = d->s;
	for (size_t i = 0; i < d->plan->n_ops; i++) {
		const struct slice_op *sop = &d->plan->ops[i];
		struct op_ctx *op = &d->ops[i];
		*op = (struct op_ctx){ .d = d, .index = i };
		if (sop->type == SLICE_OP_DELETE) {
			if (!(op->body = delete_body(sop->uid, sop->resource_version)))
				return -ENOMEM;
			continue;
		}
		int r = slice_plan_op_text(d->plan, i, BODY_FLAGS,
					   sop->type == SLICE_OP_CREATE ? add_owner : NULL, s, &op->body,
					   NULL);
		if (r < 0)
			return r;
		op->gated = sop->desired->gates != 0;
	}
	return 0;
}

static void drv_sync_now(struct drv *d)
{
	struct store_api *s = d->s;
	if (d->sync_running || !d->desired || d->stalled ||
	    (d->rejected_version && d->rejected_version == d->desired_version))
		return;
	if (!d->listed || (d->counters && s->version == VERSION_ASKING))
		return;	/* list_done / on_version call again */

	struct slice_plan *plan = NULL;
	int r = slice_plan_compute(d->cache, d->desired, s->node_name, s->dropped_gates, &plan);
	if (r < 0) {
		log_error("apiserver: cannot plan the slices of %s: %s", d->driver, strerror(-r));
		return;
	}
	if (plan->n_create && !s->node_uid && node_uid_from_token(s) < 0) {
		/* New slices are owned by the Node: read its UID first (only now, so
		 * a restart that finds its slices in place never asks). */
		slice_plan_free(plan);
		node_fetch(s);
		return;	/* node_done calls again */
	}
	if (plan->n_ops == 0) {
		d->generation = plan->generation;
		slice_plan_free(plan);
		d->unconverged = 0;
		d->conflicts = 0;
		backoff_reset(&d->sync_backoff);
		if (!d->synced_once)
			log_info_kv(LOG_KV("driver", d->driver),
				    "apiserver: the ResourceSlices of %s are up to date (generation %lld)",
				    d->driver, (long long)d->generation);
		d->synced_once = true;
		if (s->on_synced)
			s->on_synced(s->userdata, d->driver, d->generation);
		if (s->on_gates_dropped && (s->dropped_gates & ~s->told_gates)) {
			s->told_gates = s->dropped_gates;
			s->on_gates_dropped(s->userdata, s->dropped_gates);
		}
		return;
	}
	if (d->unconverged >= MAX_UNCONVERGED_ROUNDS) {
		log_warn_kv(LOG_KV("driver", d->driver),
			    "apiserver: the ResourceSlices of %s still differ after %d write rounds (the "
			    "server changes what dralet sends); not writing again until the devices or "
			    "the published slices change", d->driver, MAX_UNCONVERGED_ROUNDS);
		d->stalled = true;
		slice_plan_free(plan);
		return;
	}
	d->plan = plan;
	d->ops = calloc(plan->n_ops, sizeof(*d->ops));
	if (!d->ops || (r = drv_make_bodies(d)) < 0) {
		log_error_kv(LOG_KV("driver", d->driver, "err", strerror(d->ops ? -r : ENOMEM)),
			     "apiserver: cannot write the slices of %s: %s", d->driver,
			     strerror(d->ops ? -r : ENOMEM));
		drv_end_round(d);
		drv_want_sync(d, false);
		return;
	}
	d->sync_running = true;
	d->sync_again = false;
	d->failed = d->conflict = d->rejected = d->have_retry_after = d->progress = false;
	d->unpaced = false;
	d->round_version = d->desired_version;
	d->retry_after_ms = 0;
	d->phase = PHASE_DELETE;
	s->stats.syncs++;
	log_debug("apiserver: slices of %s: generation %lld, %zu delete(s), %zu update(s), "
		  "%zu create(s)", d->driver, (long long)plan->generation, plan->n_delete,
		  plan->n_update, plan->n_create);
	drv_run_phase(d);
}

static void on_sync_timer(uv_timer_t *t)
{
	struct drv *d = t->data;
	d->pending_since = 0;
	d->retry_pending = false;
	drv_sync_now(d);
}

static void drv_finish_round(struct drv *d)
{
	struct store_api *s = d->s;
	struct slice_plan *plan = d->plan;
	bool wrote = plan && plan->n_ops > 0;
	bool ok = !d->failed && !d->conflict && !d->rejected;
	if (ok && wrote)
		log_info_kv(LOG_KV("driver", d->driver),
			    "apiserver: published the ResourceSlices of %s: generation %lld, %zu "
			    "slice(s) (%zu created, %zu updated, %zu deleted)", d->driver,
			    (long long)plan->generation, d->desired->n,
			    plan->n_create, plan->n_update, plan->n_delete);
	drv_end_round(d);
	if (s->destroying)
		return;
	api_release_soon(s);
	if (d->rejected) {
		/* Logged with the causes. The same content would be refused again: wait
		 * for the next publish (or write the newer one that came meanwhile). */
		d->rejected_version = d->round_version;
		if (d->desired_version != d->round_version)
			drv_want_sync(d, false);
		return;
	}
	if (d->conflict) {
		/* Our view was stale: read again (the list triggers the next round). */
		d->conflicts++;
		if (d->conflicts <= 2) {
			informer_list(s);
		} else {
			uint32_t delay = sync_backoff_next(d);
			log_info("apiserver: %u conflicts in a row on the ResourceSlices of %s; listing "
				 "again in %u ms", d->conflicts, d->driver, delay);
			informer_relist_after(s, delay);
		}
		return;
	}
	if (d->failed) {
		/* A round that got something written talks to a working server: retry
		 * soon. Only rounds without progress back off further. */
		if (d->progress)
			backoff_reset(&d->sync_backoff);
		uint32_t delay;
		if (!d->unpaced && d->have_retry_after) {
			/* Every failure came with the server's Retry-After (429, a 5xx
			 * with one): it said when to come back. Growing the backoff too
			 * would keep waiting longer and longer after it is ready. */
			delay = backoff_paced(&d->sync_backoff, d->retry_after_ms, BACKOFF_BASE_MS,
					      RETRY_AFTER_CAP_MS, api_rnd(s));
		} else {
			delay = backoff_with_retry_after(sync_backoff_next(d), d->have_retry_after,
							 d->retry_after_ms, RETRY_AFTER_CAP_MS);
		}
		log_info("apiserver: retrying the ResourceSlices of %s in %u ms", d->driver, delay);
		d->retry_pending = true;
		d->pending_since = 0;
		uv_timer_start(&d->sync_timer, on_sync_timer, delay, 0);
		return;
	}
	backoff_reset(&d->sync_backoff);
	d->conflicts = 0;
	d->unconverged++;
	/* Check the result right away (pure planning; no request when converged). */
	drv_want_sync(d, !d->sync_again);
}

/* @sent_text: the body written, or NULL when it carried no alpha field. */
static void note_dropped(struct drv *d, const char *sent_text, struct json_object *stored)
{
	struct store_api *s = d->s;
	struct json_object *sent = sent_text ? kube_json_parse(sent_text, strlen(sent_text)) : NULL;
	unsigned gates = sent ? slice_dropped_gates(sent, stored) & ~s->dropped_gates : 0;
	json_object_put(sent);
	for (unsigned bit = 1; gates && bit <= SLICE_GATE_ALL; bit <<= 1) {
		if (!(gates & bit))
			continue;
		log_warn("apiserver: the server silently dropped alpha fields from the ResourceSlices "
			 "of %s: the feature gate %s is probably disabled; publishing without them",
			 d->driver, slice_gate_name(bit));
	}
	s->dropped_gates |= gates;
}

static void op_done(void *ud, const struct kube_response *resp)
{
	struct op_ctx *op = ud;
	struct drv *d = op->d;
	struct store_api *s = d->s;
	struct slice_op *sop = &d->plan->ops[op->index];
	const char *name = sop->name;
	static const char *const verbs[] = { "deleting", "updating", "creating" };
	op->req = NULL;
	bool ok = false, gone = false;
	switch (sop->type) {
	case SLICE_OP_DELETE:
		if ((resp->status >= 200 && resp->status < 300) || resp->status == 404) {
			const struct slice_record *cur = name ? cache_get(d, name) : NULL;
			const char *uid = sop->uid;
			if (cur) {
				const char *cuid = cur->uid;
				if (!uid || !cuid || !strcmp(uid, cuid))
					cache_del(d, name);
			}
			if (resp->status != 404)
				s->stats.deletes++;
			ok = true;
		}
		break;
	case SLICE_OP_UPDATE:
	case SLICE_OP_CREATE:
		if (resp->status == 200 || resp->status == 201) {
			struct slice_record *stored = NULL;
			if (resp->body && slice_record_from_text(resp->body, resp->body_len,
								 SLICE_RECORD_PUBLISHED, &stored) == 0 &&
			    stored->name) {
				/* Only a write that carried alpha fields needs the server's
				 * answer as a tree: did it drop some? */
				if (op->gated) {
					struct json_object *tree = kube_json_parse(resp->body, resp->body_len);
					if (tree)
						note_dropped(d, op->body, tree);
					json_object_put(tree);
				}
				/* Cache what we wrote unless the watch is already past it: then
				 * the watch told the truth (maybe a deletion) before our answer. */
				if (!rv_older(stored->resource_version, s->inf.rv) &&
				    !rv_equal(stored->resource_version, s->inf.rv)) {
					cache_keep(d, d->cache, stored);
					stored = NULL;
				}
				if (sop->type == SLICE_OP_UPDATE)
					s->stats.updates++;
				else
					s->stats.creates++;
				ok = true;
			}
			slice_record_free(stored);
		} else if (resp->status == 404 && sop->type == SLICE_OP_UPDATE && name) {
			cache_del(d, name);	/* gone meanwhile: read again */
			d->conflict = true;
			ok = gone = true;
		}
		break;
	}
	free(op->body);
	op->body = NULL;
	s->stats.slice_writes[sop->type][ok && !gone ? STORE_WRITE_OK
					 : ok || resp->status == 409 ? STORE_WRITE_CONFLICT
					 : resp->status == 422 || resp->status == 400 ? STORE_WRITE_INVALID
					 : STORE_WRITE_ERROR]++;
	if (ok)
		d->progress = true;
	if (!ok) {
		struct err_msg why;
		api_describe_failure(resp, &why);
		s->stats.failures++;
		if (resp->status == 409) {
			log_info("apiserver: conflict %s ResourceSlice %s of %s (%s); reading again",
				 verbs[sop->type], name ? name : "(new)", d->driver, why.text);
			d->conflict = true;
		} else if (resp->status == 422 || resp->status == 400) {
			log_error_kv(LOG_KV("driver", d->driver, "err", why.text),
				     "apiserver: the server rejected %s the ResourceSlice %s of %s: %s; not "
				     "retrying until the devices change", verbs[sop->type],
				     name ? name : "(new)", d->driver, why.text);
			d->rejected = true;
		} else {
			log_warn_kv(LOG_KV("driver", d->driver, "err", why.text),
				    "apiserver: %s ResourceSlice %s of %s failed: %s", verbs[sop->type],
				    name ? name : "(new)", d->driver, why.text);
			d->failed = true;
			uint32_t ra;
			bool paced = resp->retry_after &&
				     retry_after_parse(resp->retry_after, time(NULL), &ra) == 0;
			if (!paced)
				d->unpaced = true;
			else if (ra > d->retry_after_ms) {
				d->retry_after_ms = ra;
				d->have_retry_after = true;
			}
			if ((resp->status == 401 || resp->status == 403) && d->retry_after_ms < 5000) {
				d->retry_after_ms = 5000;	/* RBAC or credentials: no hurry */
				d->have_retry_after = true;
			}
		}
	}
	if (--d->outstanding == 0) {
		if (d->failed || d->conflict || d->rejected)
			drv_finish_round(d);
		else {
			d->phase++;
			drv_run_phase(d);
		}
	}
}

static void drv_run_phase(struct drv *d)
{
	struct store_api *s = d->s;
	static const enum slice_op_type types[] = { SLICE_OP_DELETE, SLICE_OP_UPDATE, SLICE_OP_CREATE };
	for (; d->phase < PHASE_DONE; d->phase++) {
		size_t started = 0;
		d->outstanding = 1;	/* holds the round open while starting */
		for (size_t i = 0; i < d->plan->n_ops; i++) {
			struct slice_op *sop = &d->plan->ops[i];
			if (sop->type != types[d->phase])
				continue;
			struct op_ctx *op = &d->ops[i];
			char *esc = sop->name ? kube_escape(sop->name) : NULL, *path = NULL;
			const char *method;
			int r = -ENOMEM;
			if (sop->type == SLICE_OP_CREATE) {
				method = "POST";
				path = strdup(SLICES_PATH);
			} else {
				method = sop->type == SLICE_OP_DELETE ? "DELETE" : "PUT";
				if (esc && asprintf(&path, SLICES_PATH "/%s", esc) < 0)
					path = NULL;
			}
			if (path && op->body)
				r = api_start(s, method, path, op->body, REQUEST_TIMEOUT_MS, 0, NULL, op_done,
					      op, &op->req);
			free(esc);
			free(path);
			if (!op->gated) {	/* the client has its own copy */
				free(op->body);
				op->body = NULL;
			}
			if (r < 0) {
				log_warn("apiserver: cannot start a request for %s: %s", d->driver,
					 strerror(-r));
				d->failed = d->unpaced = true;
				continue;
			}
			d->outstanding++;
			started++;
		}
		if (--d->outstanding > 0)
			return;	/* op_done continues */
		if (d->failed)
			break;
		(void)started;
	}
	drv_finish_round(d);
}
