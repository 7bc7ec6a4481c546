/* SPDX-License-Identifier: Apache-2.0 */
/* A node watcher on its own loop, recording what it hands over (tests only). */
#ifndef DRALET_TEST_NODE_WATCH_RUN_H
#define DRALET_TEST_NODE_WATCH_RUN_H

#include <stdbool.h>
#include <stdio.h>
#include <uv.h>

#include "agent/daemon/node_watch.h"

struct watch_run {
	uv_loop_t loop;
	uv_timer_t deadline;
	struct node_watch *w;
	unsigned busy_polls;		/* idle answers false this many times first */
	unsigned idle_calls;
	struct node_change seen[8];
	int n;
	int timed_out;
	bool claim_all;			/* the answer to claimed() */
	char claimed_asked[256];	/* the addresses of the last claimed() call */
};

static inline bool run_claimed(void *userdata, const char *const *addresses, size_t n)
{
	struct watch_run *run = userdata;
	size_t used = 0;

	run->claimed_asked[0] = '\0';
	for (size_t i = 0; i < n && used < sizeof(run->claimed_asked); i++)
		used += (size_t)snprintf(run->claimed_asked + used, sizeof(run->claimed_asked) - used,
					 "%s%s", i ? "," : "", addresses[i]);
	return run->claim_all;
}

static inline bool run_idle(void *userdata)
{
	struct watch_run *run = userdata;

	run->idle_calls++;
	if (run->busy_polls) {
		run->busy_polls--;
		return false;
	}
	return true;
}

static inline void run_changed(void *userdata, const struct node_change *c)
{
	struct watch_run *run = userdata;

	if (run->n < 8)
		run->seen[run->n] = *c;
	run->n++;
}

static inline void on_deadline(uv_timer_t *t)
{
	struct watch_run *run = t->data;

	run->timed_out = 1;
}

/* Starts the watcher with @cfg (its loop, callbacks and userdata set here). */
static inline void watch_run_start(struct watch_run *run, struct node_watch_config *cfg)
{
	assert_int_equal(uv_loop_init(&run->loop), 0);
	uv_timer_init(&run->loop, &run->deadline);
	run->deadline.data = run;
	cfg->loop = &run->loop;
	cfg->idle = run_idle;
	cfg->changed = run_changed;
	cfg->claimed = run_claimed;
	cfg->userdata = run;
	assert_int_equal(node_watch_start(cfg, &run->w), 0);
}

/* Runs the loop for @ms. */
static inline void watch_run_for(struct watch_run *run, unsigned ms)
{
	run->timed_out = 0;
	uv_timer_start(&run->deadline, on_deadline, ms, 0);
	while (!run->timed_out)
		uv_run(&run->loop, UV_RUN_ONCE);
}

/* Runs the loop until @n changes were handed over (fails after 5 s). */
static inline void watch_run_until(struct watch_run *run, int n)
{
	run->timed_out = 0;
	uv_timer_start(&run->deadline, on_deadline, 5000, 0);
	while (run->n < n && !run->timed_out)
		uv_run(&run->loop, UV_RUN_ONCE);
	uv_timer_stop(&run->deadline);
	assert_int_equal(run->n, n);
}

static inline void watch_run_finish(struct watch_run *run)
{
	node_watch_close(run->w);
	uv_close((uv_handle_t *)&run->deadline, NULL);
	assert_int_equal(uv_run(&run->loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(&run->loop), 0);
}

#endif
