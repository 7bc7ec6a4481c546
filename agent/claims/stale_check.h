/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The stale-claim check of one driver (docs/claims.md, "Stale claims"): the
 * I/O around stale_plan.h. A check asks the store for the ResourceClaim of
 * every checkpointed claim, one request at a time, but for those new since
 * the previous check (the first check asks about all), judges each answer
 * (stale_judge) and unprepares the stale ones through the claims engine
 * (claims_collect: the kubelet's unprepare path), logging and counting each.
 * Between checks it remembers since when a claim was seen reserved for
 * nobody (the grace period of stale_plan.h) and which claims it saw.
 *
 * Threading: loop thread only (store and engine callbacks included).
 */
#ifndef DRALET_CLAIMS_STALE_CHECK_H
#define DRALET_CLAIMS_STALE_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/claims/stale_plan.h"

struct claims_engine;
struct store;
struct stale_check;

/* The grace period for a claim reserved for nobody (stale_plan.h). */
#define STALE_CHECK_UNRESERVED_GRACE_MS (5u * 60u * 1000u)

struct stale_check_config {
	struct claims_engine *engine;	/* borrowed: must outlive the check */
	struct store *store;		/* borrowed: get_claim */
	const char *driver;		/* copied */
	const char *pool;		/* the node's pool; copied */
	uint64_t unreserved_grace_ms;
};

/* What the checks did (loop thread). */
struct stale_check_metrics {
	uint64_t runs;				/* checks finished */
	uint64_t collected[STALE_UNRESERVED + 1];	/* by verdict */
	uint64_t collect_failed;		/* collections whose unprepare failed */
};

int stale_check_new(const struct stale_check_config *cfg, struct stale_check **ret_check);

/* Frees the check; one in flight is abandoned (call it once the store and
 * the engine are gone or idle: a pending store answer would find it freed). */
void stale_check_free(struct stale_check *sc);

/*
 * Starts a check unless one is running. @done (may be NULL) runs once it is
 * over, collections included (it may run before this returns). 0, -EBUSY
 * (a check is running), or -ENOMEM.
 */
int stale_check_run(struct stale_check *sc, void (*done)(void *userdata), void *userdata);

const struct stale_check_metrics *stale_check_metrics(const struct stale_check *sc);

#endif
