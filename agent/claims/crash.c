/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/claims/crash.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/lib/log.h"

/* Set once at start, before any worker thread exists. */
static char crash_at[64], pause_at[64];
static atomic_long crash_countdown;
static long pause_ms;
static atomic_bool paused;

static void pause_init(void)
{
	const char *v = getenv("DRALET_PAUSE_AT");
	const char *colon = v ? strchr(v, ':') : NULL;

	if (!colon || colon == v || (pause_ms = strtol(colon + 1, NULL, 10)) <= 0)
		return;
	snprintf(pause_at, sizeof(pause_at), "%.*s", (int)(colon - v), v);
	log_warn("DRALET_PAUSE_AT=%s: test-only pause armed (%ld ms)", pause_at, pause_ms);
}

void claims_crash_init(void)
{
	const char *v = getenv("DRALET_CRASH_AT");
	const char *colon;
	long n = 1;

	pause_init();
	if (!v || !*v)
		return;
	colon = strchr(v, ':');
	if (colon) {
		n = strtol(colon + 1, NULL, 10);
		if (n < 1)
			n = 1;
	}
	snprintf(crash_at, sizeof(crash_at), "%.*s",
		 (int)(colon ? (size_t)(colon - v) : strlen(v)), v);
	atomic_store(&crash_countdown, n);
	log_warn("DRALET_CRASH_AT=%s: test-only crash point armed (arrival %ld)", crash_at, n);
}

void claims_crash_point(const char *point)
{
	if (pause_at[0] && !strcmp(point, pause_at) && !atomic_exchange(&paused, true)) {
		log_warn("DRALET_PAUSE_AT: pausing at %s for %ld ms", point, pause_ms);
		usleep((useconds_t)pause_ms * 1000);
		log_warn("DRALET_PAUSE_AT: going on after %s", point);
	}
	if (!crash_at[0] || strcmp(point, crash_at))
		return;
	if (atomic_fetch_sub(&crash_countdown, 1) != 1)
		return;
	log_error("DRALET_CRASH_AT: crashing at %s", point);
	kill(getpid(), SIGKILL);
	pause();
}
