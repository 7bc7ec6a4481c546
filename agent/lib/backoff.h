/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Retry timing: exponential backoff with jitter, and the HTTP Retry-After
 * header. Pure: the caller supplies random numbers and the current time, so
 * tests are exact.
 */
#ifndef DRALET_KUBE_BACKOFF_H
#define DRALET_KUBE_BACKOFF_H

#include <stdint.h>
#include <time.h>

struct backoff {
	uint32_t base_ms;	/* first delay */
	uint32_t max_ms;	/* cap */
	uint32_t attempt;	/* failures since the last success */
	uint32_t paced;		/* backoff_paced() waits in a row */
};

/* Failures in a row the server paced that wait just its Retry-After: as
 * client-go retries a request (maxRetries 10 in rest/request.go) */
#define BACKOFF_PACED_MAX 10u

#define BACKOFF_INIT(base, max) { .base_ms = (base), .max_ms = (max), .attempt = 0 }

/*
 * The delay before the next try after one more failure: base * 2^attempt,
 * capped at max, then "equal jitter": uniformly in [d/2, d] using @random
 * (any 32-bit random value). Increments attempt; ends a run of paced waits.
 */
uint32_t backoff_next(struct backoff *b, uint32_t random);
/* A success: the next failure waits base again. */
void backoff_reset(struct backoff *b);

/*
 * The delay after a failure the server paced (a Retry-After of
 * @retry_after_ms, > 0): just that (at least @floor_ms, at most @cap_ms),
 * leaving the backoff as it is, for up to BACKOFF_PACED_MAX in a row; then
 * one backoff_next() step (or the Retry-After when longer), which starts
 * the count again. client-go waits so for 429s and 5xx answers with a
 * Retry-After (rest/with_retry.go, checkWait), without a backoff of its own.
 */
uint32_t backoff_paced(struct backoff *b, uint32_t retry_after_ms, uint32_t floor_ms,
		       uint32_t cap_ms, uint32_t random);

/*
 * Parses a Retry-After value: delta-seconds ("120") or an HTTP-date
 * ("Wed, 21 Oct 2015 07:28:00 GMT", compared with @now). On success
 * *ret_ms is the wait in milliseconds (0 for a date in the past), capped at
 * one hour. -EINVAL when the value is neither.
 */
int retry_after_parse(const char *value, time_t now, uint32_t *ret_ms);

/* The delay to use: the server's Retry-After when it asks for longer than
 * the backoff, else the backoff; never above @cap_ms. */
uint32_t backoff_with_retry_after(uint32_t backoff_ms, int have_retry_after,
				  uint32_t retry_after_ms, uint32_t cap_ms);

#endif
