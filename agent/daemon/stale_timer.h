/* SPDX-License-Identifier: Apache-2.0 */
/*
 * When the stale-claim checks run (docs/claims.md, "Stale claims"): once
 * soon after the start (at a random moment within the first minute, or the
 * first interval when shorter, so that a fleet restarted at once does not
 * ask the apiserver at once), then every interval plus up to a tenth of it
 * at random. Each round calls @round, which runs every driver's check
 * (stale_check.h).
 *
 * Threading: loop thread only.
 */
#ifndef DRALET_DAEMON_STALE_TIMER_H
#define DRALET_DAEMON_STALE_TIMER_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

struct stale_timer;

/* The default interval between checks (--stale-claims-interval). */
#define STALE_TIMER_DEFAULT_INTERVAL_S 600u

struct stale_timer_config {
	uv_loop_t *loop;
	unsigned interval_s;			/* > 0 */
	void (*round)(void *userdata);
	void *userdata;
	unsigned seed;				/* for the jitter */
};

int stale_timer_start(const struct stale_timer_config *cfg, struct stale_timer **ret_timer);

/* Stops the timer and frees it once libuv has closed it (NULL is fine). */
void stale_timer_close(struct stale_timer *t);

/* The delay before the first round and before each later one (pure; @seed
 * is rand_r's state). */
uint64_t stale_timer_first_delay_ms(unsigned interval_s, unsigned *seed);
uint64_t stale_timer_next_delay_ms(unsigned interval_s, unsigned *seed);

#endif
