/* SPDX-License-Identifier: Apache-2.0 */
/* Backoff with jitter and Retry-After. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdint.h>
#include <time.h>
#include <cmocka.h>

#include "agent/lib/backoff.h"

static void test_exponential_with_cap(void **state)
{
	(void)state;
	struct backoff b = BACKOFF_INIT(200, 30000);
	/* random 0 gives the lower edge (d/2), UINT32_MAX-ish values stay within d */
	uint32_t expect_max[] = { 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 30000, 30000 };
	for (size_t i = 0; i < sizeof(expect_max) / sizeof(expect_max[0]); i++) {
		struct backoff lo = b, hi = b;
		uint32_t dlo = backoff_next(&lo, 0);
		uint32_t dhi = backoff_next(&hi, expect_max[i] - expect_max[i] / 2);
		assert_int_equal(dlo, expect_max[i] / 2);
		assert_int_equal(dhi, expect_max[i]);
		backoff_next(&b, 12345);
	}
	backoff_reset(&b);
	assert_int_equal(backoff_next(&b, 0), 100);
}

/* Waits the server paces (Retry-After) leave the backoff alone for ten in a
 * row, then take one backoff step; a failure without one ends the run. */
static void test_paced(void **state)
{
	(void)state;
	struct backoff b = BACKOFF_INIT(200, 30000);
	backoff_next(&b, 0);
	backoff_next(&b, 0);	/* two failures: the next step is 400-800 */
	for (unsigned i = 0; i < BACKOFF_PACED_MAX; i++)
		assert_int_equal(backoff_paced(&b, 1000, 200, 300000, 0), 1000);
	assert_int_equal(b.attempt, 2);
	/* the 11th: one step (800 at most), the Retry-After being longer */
	assert_int_equal(backoff_paced(&b, 1000, 200, 300000, 0), 1000);
	assert_int_equal(b.attempt, 3);
	assert_int_equal(backoff_paced(&b, 5000, 200, 300000, 0), 5000);	/* counts again */
	assert_int_equal(b.attempt, 3);
	/* floor and cap */
	assert_int_equal(backoff_paced(&b, 1, 200, 300000, 0), 200);
	assert_int_equal(backoff_paced(&b, 600000, 200, 300000, 0), 300000);
	/* an unpaced failure or a success starts the count again */
	for (int i = 0; i < 9; i++)
		backoff_paced(&b, 1000, 200, 300000, 0);
	backoff_next(&b, 0);
	uint32_t attempt = b.attempt;
	for (unsigned i = 0; i < BACKOFF_PACED_MAX; i++)
		assert_int_equal(backoff_paced(&b, 1000, 200, 300000, 0), 1000);
	assert_int_equal(b.attempt, attempt);
	backoff_reset(&b);
	for (unsigned i = 0; i < BACKOFF_PACED_MAX; i++)
		assert_int_equal(backoff_paced(&b, 1000, 200, 300000, 0), 1000);
	assert_int_equal(b.attempt, 0);
}

static void test_jitter_spread(void **state)
{
	(void)state;
	uint32_t seen_min = UINT32_MAX, seen_max = 0;
	for (uint32_t r = 0; r < 5000; r++) {
		struct backoff b = BACKOFF_INIT(1000, 60000);
		backoff_next(&b, 0);
		backoff_next(&b, 0);
		uint32_t d = backoff_next(&b, r * 2654435761u);	/* third failure: base*4 */
		assert_true(d >= 2000 && d <= 4000);
		seen_min = d < seen_min ? d : seen_min;
		seen_max = d > seen_max ? d : seen_max;
	}
	/* jitter really spreads the clients out */
	assert_true(seen_min < 2100);
	assert_true(seen_max > 3900);
}

static void test_attempt_saturates(void **state)
{
	(void)state;
	struct backoff b = BACKOFF_INIT(1, 5000);
	for (int i = 0; i < 1000; i++)
		assert_true(backoff_next(&b, (uint32_t)i) <= 5000);
	assert_int_equal(b.attempt, 64);
}

static void test_retry_after(void **state)
{
	(void)state;
	uint32_t ms = 7;
	time_t now = 1445412480;	/* Wed, 21 Oct 2015 07:28:00 GMT */
	assert_int_equal(retry_after_parse("5", now, &ms), 0);
	assert_int_equal(ms, 5000);
	assert_int_equal(retry_after_parse(" 0 ", now, &ms), 0);
	assert_int_equal(ms, 0);
	assert_int_equal(retry_after_parse("99999999999", now, &ms), 0);
	assert_int_equal(ms, 3600000);
	assert_int_equal(retry_after_parse("Wed, 21 Oct 2015 07:28:30 GMT", now, &ms), 0);
	assert_int_equal(ms, 30000);
	assert_int_equal(retry_after_parse("Wed, 21 Oct 2015 07:27:00 GMT", now, &ms), 0);
	assert_int_equal(ms, 0);
	ms = 7;
	assert_int_equal(retry_after_parse("soon", now, &ms), -EINVAL);
	assert_int_equal(retry_after_parse("-1", now, &ms), -EINVAL);
	assert_int_equal(retry_after_parse("1.5", now, &ms), -EINVAL);
	assert_int_equal(retry_after_parse("", now, &ms), -EINVAL);
	assert_int_equal(retry_after_parse(NULL, now, &ms), -EINVAL);
	assert_int_equal(retry_after_parse("Wed, 21 Oct 2015 07:28:30 GMT trailing", now, &ms), -EINVAL);
	assert_int_equal(ms, 7);	/* untouched on failure */
}

static void test_combined(void **state)
{
	(void)state;
	assert_int_equal(backoff_with_retry_after(300, 0, 9000, 60000), 300);
	assert_int_equal(backoff_with_retry_after(300, 1, 9000, 60000), 9000);
	assert_int_equal(backoff_with_retry_after(3000, 1, 1000, 60000), 3000);
	assert_int_equal(backoff_with_retry_after(300, 1, 3600000, 300000), 300000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exponential_with_cap),
		cmocka_unit_test(test_jitter_spread),
		cmocka_unit_test(test_paced),
		cmocka_unit_test(test_attempt_saturates),
		cmocka_unit_test(test_retry_after),
		cmocka_unit_test(test_combined),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
