/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/daemon/stale_timer.h"

#include <errno.h>
#include <stdlib.h>

struct stale_timer {
	uv_timer_t timer;
	unsigned interval_s;
	void (*round)(void *userdata);
	void *userdata;
	unsigned seed;
};

/* A random number of milliseconds in [0, @span_ms). */
static uint64_t random_ms(uint64_t span_ms, unsigned *seed)
{
	uint64_t x;

	if (!span_ms)
		return 0;
	x = ((uint64_t)(unsigned)rand_r(seed) << 31) ^ (uint64_t)(unsigned)rand_r(seed);
	return x % span_ms;
}

uint64_t stale_timer_first_delay_ms(unsigned interval_s, unsigned *seed)
{
	uint64_t span = (uint64_t)(interval_s < 60 ? interval_s : 60) * 1000u;

	return random_ms(span, seed);
}

uint64_t stale_timer_next_delay_ms(unsigned interval_s, unsigned *seed)
{
	uint64_t interval = (uint64_t)interval_s * 1000u;

	return interval + random_ms(interval / 10u, seed);
}

static void on_timer(uv_timer_t *h)
{
	struct stale_timer *t = h->data;

	t->round(t->userdata);
	uv_timer_start(&t->timer, on_timer, stale_timer_next_delay_ms(t->interval_s, &t->seed), 0);
}

int stale_timer_start(const struct stale_timer_config *cfg, struct stale_timer **ret_timer)
{
	struct stale_timer *t;
	int r;

	if (!cfg->loop || !cfg->interval_s || !cfg->round)
		return -EINVAL;
	if (!(t = calloc(1, sizeof(*t))))
		return -ENOMEM;
	t->interval_s = cfg->interval_s;
	t->round = cfg->round;
	t->userdata = cfg->userdata;
	t->seed = cfg->seed;
	if ((r = uv_timer_init(cfg->loop, &t->timer)) < 0) {
		free(t);
		return r;
	}
	t->timer.data = t;
	uv_timer_start(&t->timer, on_timer, stale_timer_first_delay_ms(t->interval_s, &t->seed), 0);
	*ret_timer = t;
	return 0;
}

static void on_closed(uv_handle_t *h)
{
	free(h->data);
}

void stale_timer_close(struct stale_timer *t)
{
	if (t)
		uv_close((uv_handle_t *)&t->timer, on_closed);
}
