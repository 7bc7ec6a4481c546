/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The claims engine's side of the per-operation lock across dralet instances
 * (claims_lock.h; docs/operations.md, "Rolling update"). The engine holds
 * the flock while at least one of its operations runs: its own operations
 * keep running in parallel (one per claim UID), another instance's wait, and
 * the lock goes as soon as none runs. Taking it never blocks the loop: while
 * another instance holds it, the ops wait in order and a timer tries again
 * (every 2 ms at first, backing off to 50 ms). Once taken, the checkpoint is
 * read again when the generation says another instance changed it, and the
 * device reservations are made from it, so a claim the other instance
 * prepared is known (answered from the checkpoint, its devices not given to
 * another claim) and one it unprepared is gone.
 */
#include "agent/claims/engine_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/claims/checkpoint_file.h"
#include "agent/claims/claims_lock.h"
#include "agent/lib/log.h"

#define LOCK_RETRY_FIRST_MS 2
#define LOCK_RETRY_MAX_MS 50

struct engine_lock_retry {
	uv_timer_t timer;
	struct claims_engine *e;	/* NULL once closing */
	uint64_t delay_ms;
};

static void free_retry(uv_handle_t *h)
{
	free(h->data);
}

static void stop_retry(struct claims_engine *e)
{
	struct engine_lock_retry *rt = e->lock_retry;

	if (!rt)
		return;
	e->lock_retry = NULL;
	rt->e = NULL;
	uv_close((uv_handle_t *)&rt->timer, free_retry);
}

static void take(struct claims_engine *e);

static void on_retry(uv_timer_t *t)
{
	struct engine_lock_retry *rt = t->data;

	if (rt->e)
		take(rt->e);
}

static void schedule_retry(struct claims_engine *e)
{
	struct engine_lock_retry *rt = e->lock_retry;

	if (!rt) {
		if (!(rt = calloc(1, sizeof(*rt))))
			return;	/* tried again when the next op arrives */
		uv_timer_init(e->loop, &rt->timer);
		rt->timer.data = rt;
		rt->e = e;
		rt->delay_ms = LOCK_RETRY_FIRST_MS;
		e->lock_retry = rt;
		log_debug_kv(LOG_KV("driver", e->driver),
			     "driver %s: another dralet instance is preparing or unpreparing; "
			     "waiting for its operation to end", e->driver);
	} else if ((rt->delay_ms *= 2) > LOCK_RETRY_MAX_MS) {
		rt->delay_ms = LOCK_RETRY_MAX_MS;
	}
	uv_timer_start(&rt->timer, on_retry, rt->delay_ms, 0);
}

void engine_sync_all_reservations(struct claims_engine *e)
{
	struct checkpoint *ck;
	char **uids;
	size_t n;

	for (size_t i = 0; i < e->n_devices; i++)
		share_ledger_clear(&e->devices[i].holders);
	claims_state_lock(e->state);
	ck = claims_state_checkpoint(e->state);
	n = ck->n_claims;
	uids = calloc(n + 1, sizeof(*uids));
	for (size_t i = 0; uids && i < n; i++)
		uids[i] = strdup(ck->claims[i]->uid);
	claims_state_unlock(e->state);
	for (size_t i = 0; uids && i < n; i++)
		if (uids[i])
			engine_sync_reservations(e, uids[i]);
	for (size_t i = 0; uids && i < n; i++)
		free(uids[i]);
	free(uids);
}

/* Lock held, no op running: the checkpoint as the last holder left it. */
static int read_again(struct claims_engine *e)
{
	struct checkpoint *ck = NULL;
	char err[512] = "";
	bool changed;
	int r = claims_lock_take_turn(e->lock, &changed);

	/* without the bump the other instances would not see this one's changes */
	if (r < 0) {
		log_error_kv(LOG_KV("driver", e->driver, "err", strerror(-r)),
			     "driver %s: cannot update the generation in %s/%s: %s", e->driver,
			     e->state_dir, CLAIMS_LOCK_FILE_NAME, strerror(-r));
		return r;
	}
	if (!changed)
		return 0;
	r = checkpoint_file_load(e->state_dir, &ck, err, sizeof(err));
	if (r == -ENOENT && !(ck = checkpoint_new(e->driver, e->boot_id)))
		r = -ENOMEM;
	else if (r == -ENOENT)
		r = 0;
	if (r < 0) {
		log_error_kv(LOG_KV("driver", e->driver, "err", err[0] ? err : strerror(-r)),
			     "driver %s: cannot read the checkpoint in %s that another dralet "
			     "instance wrote: %s", e->driver, e->state_dir,
			     err[0] ? err : strerror(-r));
		return r;
	}
	claims_state_replace(e->state, ck);
	engine_sync_all_reservations(e);
	log_debug_kv(LOG_KV("driver", e->driver),
		     "driver %s: read the checkpoint another dralet instance changed: %zu "
		     "claim(s)", e->driver, claims_engine_n_claims(e));
	return 0;
}

/* Runs (or fails) every waiting op once the lock is taken (r == 0) or
 * cannot be (r < 0). */
static void run_waiters(struct claims_engine *e, int r)
{
	struct op *op = e->lock_waiters, *next;
	size_t n = 0;

	e->lock_waiters = NULL;
	e->lock_waiters_tail = &e->lock_waiters;
	for (struct op *o = op; o; o = o->next_waiting)
		n++;
	/* all counted before any runs: one that ends at once keeps the lock for the rest */
	if (r == 0)
		e->holds += (unsigned)n;
	for (; op; op = next) {
		next = op->next_waiting;
		op->next_waiting = NULL;
		if (r == 0) {
			op->holding = true;
			op->run(op);
		} else {
			op_fail(op, "cannot serialize with the other dralet instances of the node "
				"(%s/%s): %s", e->state_dir, CLAIMS_LOCK_FILE_NAME, strerror(-r));
			engine_op_done(op);
		}
	}
	if (!e->holds)
		claims_lock_release(e->lock);
}

static void take(struct claims_engine *e)
{
	int r = claims_lock_try(e->lock);

	if (r == -EWOULDBLOCK) {
		schedule_retry(e);
		return;
	}
	stop_retry(e);
	if (r == 0 && (r = read_again(e)) < 0)
		claims_lock_release(e->lock);
	run_waiters(e, r);
}

void engine_lock_hold(struct claims_engine *e, struct op *op, void (*run)(struct op *op))
{
	op->run = run;
	if (e->holds) {
		e->holds++;
		op->holding = true;
		run(op);
		return;
	}
	if (e->shutting_down) {	/* queued on its UID before the shutdown: changed nothing */
		op_fail(op, "the driver is shutting down");
		engine_op_done(op);
		return;
	}
	op->next_waiting = NULL;
	*e->lock_waiters_tail = op;
	e->lock_waiters_tail = &op->next_waiting;
	if (!e->lock_retry)	/* else the timer tries */
		take(e);
}

void engine_lock_unhold(struct claims_engine *e, struct op *op)
{
	if (!op->holding)
		return;
	op->holding = false;
	if (--e->holds == 0)
		claims_lock_release(e->lock);
}

void engine_lock_cancel_waiters(struct claims_engine *e)
{
	struct op *op = e->lock_waiters, *next;

	stop_retry(e);
	e->lock_waiters = NULL;
	e->lock_waiters_tail = &e->lock_waiters;
	for (; op; op = next) {
		next = op->next_waiting;
		op->next_waiting = NULL;
		op_fail(op, "the driver is shutting down");
		engine_op_done(op);
	}
}

int engine_lock_start(struct claims_engine *e)
{
	bool changed;
	int r;

	e->lock_waiters_tail = &e->lock_waiters;
	r = claims_lock_open(e->state_dir, &e->lock);
	if (r == 0 && (r = claims_lock_try(e->lock)) == -EWOULDBLOCK) {
		log_info_kv(LOG_KV("driver", e->driver),
			    "driver %s: another dralet instance holds %s/%s (an operation of a "
			    "rolling update's other instance); waiting for it", e->driver,
			    e->state_dir, CLAIMS_LOCK_FILE_NAME);
		r = claims_lock_wait(e->lock);
	}
	if (r < 0) {
		log_error_kv(LOG_KV("driver", e->driver, "err", strerror(-r)),
			     "driver %s: cannot lock %s/%s: %s", e->driver, e->state_dir,
			     CLAIMS_LOCK_FILE_NAME, strerror(-r));
		return r;
	}
	/* the start reads the checkpoint anyway; the turn tells the others it may change */
	if ((r = claims_lock_take_turn(e->lock, &changed)) < 0) {
		log_error_kv(LOG_KV("driver", e->driver, "err", strerror(-r)),
			     "driver %s: cannot update the generation in %s/%s: %s", e->driver,
			     e->state_dir, CLAIMS_LOCK_FILE_NAME, strerror(-r));
		claims_lock_release(e->lock);
	}
	return r;
}

void engine_lock_end_start(struct claims_engine *e)
{
	claims_lock_release(e->lock);
}
