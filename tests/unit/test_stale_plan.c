/* SPDX-License-Identifier: Apache-2.0 */
/* Stale claims: the planner's verdict for every case (stale_plan.h) and the
 * check timer's delays (stale_timer.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "agent/claims/stale_plan.h"
#include "agent/daemon/stale_timer.h"

#define DRV "gpu.dralet.dev"
#define POOL "node-1"
#define UID "0a1b2c3d-0000-4000-8000-123456789abc"
#define GRACE 300000u
#define NOW 10000000u

static const struct stale_entry entry = { UID, "ns", "claim" };

/* A claim with @uid; @results: JSON array text or NULL (no allocation);
 * @reserved: JSON array text or NULL (no reservedFor). */
static struct json_object *claim(const char *uid, const char *results, const char *reserved)
{
	char text[2048];
	struct json_object *o;

	snprintf(text, sizeof(text),
		 "{\"metadata\": {\"namespace\": \"ns\", \"name\": \"claim\", \"uid\": \"%s\"},"
		 " \"status\": {%s%s%s%s%s%s}}",
		 uid, results ? "\"allocation\": {\"devices\": {\"results\": " : "",
		 results ? results : "", results ? "}}" : "", results && reserved ? ", " : "",
		 reserved ? "\"reservedFor\": " : "", reserved ? reserved : "");
	o = json_tokener_parse(text);
	assert_non_null(o);
	return o;
}

#define HERE "[{\"request\": \"r\", \"driver\": \"" DRV "\", \"pool\": \"" POOL "\", \"device\": \"gpu-0\"}]"
#define POD "[{\"resource\": \"pods\", \"name\": \"p\", \"uid\": \"1234\"}]"

static enum stale_verdict judge_claim(struct json_object *c, uint64_t since)
{
	struct stale_observation seen = { STALE_ANSWER_CLAIM, c, since, false };
	enum stale_verdict v = stale_judge(&entry, &seen, DRV, POOL, NOW, GRACE);

	json_object_put(c);
	return v;
}

static void test_no_answer_keeps(void **state)
{
	struct stale_observation unknown = { STALE_ANSWER_UNKNOWN, NULL, 0, false };
	struct stale_observation old = { STALE_ANSWER_UNKNOWN, NULL, 1, false };
	(void)state;
	/* a 5xx, a timeout, no network: never a reason to unprepare */
	assert_int_equal(stale_judge(&entry, &unknown, DRV, POOL, NOW, GRACE), STALE_KEEP_UNKNOWN);
	/* not even for a claim long seen unreserved */
	assert_int_equal(stale_judge(&entry, &old, DRV, POOL, NOW, GRACE), STALE_KEEP_UNKNOWN);
	assert_false(stale_verdict_collects(STALE_KEEP_UNKNOWN));
}

static void test_unnamed_entry_is_not_judged(void **state)
{
	struct stale_entry rebuilt = { UID, "", "" }, no_name = { UID, "ns", NULL };
	struct stale_observation gone = { STALE_ANSWER_NOT_FOUND, NULL, 0, false };
	(void)state;
	assert_int_equal(stale_judge(&rebuilt, &gone, DRV, POOL, NOW, GRACE), STALE_KEEP_UNNAMED);
	assert_int_equal(stale_judge(&no_name, &gone, DRV, POOL, NOW, GRACE), STALE_KEEP_UNNAMED);
}

/* A claim new since the previous check is not judged: not even "not found"
 * collects it (it is not asked about). */
static void test_recent_is_kept(void **state)
{
	struct stale_observation fresh = { STALE_ANSWER_NOT_FOUND, NULL, 0, true };
	struct stale_entry rebuilt = { UID, "", "" };
	(void)state;
	assert_int_equal(stale_judge(&entry, &fresh, DRV, POOL, NOW, GRACE), STALE_KEEP_RECENT);
	assert_false(stale_verdict_collects(STALE_KEEP_RECENT));
	assert_int_equal(stale_judge(&rebuilt, &fresh, DRV, POOL, NOW, GRACE), STALE_KEEP_UNNAMED);
}

static void test_not_found_is_gone(void **state)
{
	struct stale_observation gone = { STALE_ANSWER_NOT_FOUND, NULL, 0, false };
	(void)state;
	assert_int_equal(stale_judge(&entry, &gone, DRV, POOL, NOW, GRACE), STALE_GONE);
	assert_true(stale_verdict_collects(STALE_GONE));
	assert_string_equal(stale_verdict_name(STALE_GONE), "gone");
}

static void test_other_uid_is_replaced(void **state)
{
	(void)state;
	assert_int_equal(judge_claim(claim("ffffffff-0000-4000-8000-000000000000", HERE, POD), 0),
			 STALE_REPLACED);
	assert_true(stale_verdict_collects(STALE_REPLACED));
}

static void test_claim_without_uid_keeps(void **state)
{
	struct json_object *c = json_tokener_parse("{\"metadata\": {\"name\": \"claim\"}}");
	struct json_object *array = json_tokener_parse("[]");
	struct stale_observation not_object = { STALE_ANSWER_CLAIM, array, 0, false };
	(void)state;
	assert_int_equal(judge_claim(c, 0), STALE_KEEP_UNKNOWN);
	assert_int_equal(stale_judge(&entry, &not_object, DRV, POOL, NOW, GRACE),
			 STALE_KEEP_UNKNOWN);
	json_object_put(array);
}

static void test_not_allocated_is_deallocated(void **state)
{
	(void)state;
	assert_int_equal(judge_claim(claim(UID, NULL, NULL), 0), STALE_DEALLOCATED);
	/* reservedFor alone does not make an allocation */
	assert_int_equal(judge_claim(claim(UID, NULL, POD), 0), STALE_DEALLOCATED);
	assert_int_equal(judge_claim(json_tokener_parse("{\"metadata\": {\"uid\": \"" UID "\"}}"), 0),
			 STALE_DEALLOCATED);
}

static void test_allocated_elsewhere(void **state)
{
	(void)state;
	/* another node's pool */
	assert_int_equal(judge_claim(claim(UID, "[{\"request\": \"r\", \"driver\": \"" DRV "\", "
					   "\"pool\": \"node-2\", \"device\": \"gpu-0\"}]", POD), 0),
			 STALE_ALLOCATED_ELSEWHERE);
	/* another driver in our pool */
	assert_int_equal(judge_claim(claim(UID, "[{\"request\": \"r\", \"driver\": \"nic.dralet.dev\", "
					   "\"pool\": \"" POOL "\", \"device\": \"nic-0\"}]", POD), 0),
			 STALE_ALLOCATED_ELSEWHERE);
	/* no results at all */
	assert_int_equal(judge_claim(claim(UID, "[]", POD), 0), STALE_ALLOCATED_ELSEWHERE);
	/* a result without pool counts for nothing */
	assert_int_equal(judge_claim(claim(UID, "[{\"request\": \"r\", \"driver\": \"" DRV "\"}]",
					   POD), 0),
			 STALE_ALLOCATED_ELSEWHERE);
}

static void test_in_use_keeps(void **state)
{
	(void)state;
	assert_int_equal(judge_claim(claim(UID, HERE, POD), 0), STALE_KEEP_IN_USE);
	/* one of several results is ours */
	assert_int_equal(judge_claim(claim(UID, "[{\"request\": \"a\", \"driver\": \"x.dev\", "
					   "\"pool\": \"p\", \"device\": \"d\"}, {\"request\": \"r\", "
					   "\"driver\": \"" DRV "\", \"pool\": \"" POOL "\", "
					   "\"device\": \"gpu-0\"}]", POD), 0),
			 STALE_KEEP_IN_USE);
	/* reserved again after being seen unreserved: in use */
	assert_int_equal(judge_claim(claim(UID, HERE, POD), 1), STALE_KEEP_IN_USE);
	assert_false(stale_verdict_collects(STALE_KEEP_IN_USE));
}

static void test_unreserved_after_grace(void **state)
{
	(void)state;
	/* first seen so: the clock starts, nothing is collected */
	assert_int_equal(judge_claim(claim(UID, HERE, "[]"), 0), STALE_KEEP_UNRESERVED);
	assert_int_equal(judge_claim(claim(UID, HERE, NULL), 0), STALE_KEEP_UNRESERVED);
	assert_false(stale_verdict_collects(STALE_KEEP_UNRESERVED));
	/* within the grace period */
	assert_int_equal(judge_claim(claim(UID, HERE, "[]"), NOW - GRACE + 1), STALE_KEEP_UNRESERVED);
	/* a start time after now (the caller's clock) collects nothing */
	assert_int_equal(judge_claim(claim(UID, HERE, "[]"), NOW + 5), STALE_KEEP_UNRESERVED);
	/* the grace period is over */
	assert_int_equal(judge_claim(claim(UID, HERE, "[]"), NOW - GRACE), STALE_UNRESERVED);
	assert_int_equal(judge_claim(claim(UID, HERE, NULL), 1), STALE_UNRESERVED);
	assert_true(stale_verdict_collects(STALE_UNRESERVED));
}

static void test_plan_counts(void **state)
{
	struct json_object *in_use = claim(UID, HERE, POD), *dealloc = claim(UID, NULL, NULL);
	struct stale_entry entries[4] = { entry, entry, entry, { UID, "", "" } };
	struct stale_observation seen[4] = {
		{ STALE_ANSWER_CLAIM, in_use, 0, false },
		{ STALE_ANSWER_NOT_FOUND, NULL, 0, false },
		{ STALE_ANSWER_CLAIM, dealloc, 0, false },
		{ STALE_ANSWER_NOT_FOUND, NULL, 0, false },
	};
	enum stale_verdict v[4];
	(void)state;
	assert_int_equal(stale_plan(entries, seen, 4, DRV, POOL, NOW, GRACE, v), 2);
	assert_int_equal(v[0], STALE_KEEP_IN_USE);
	assert_int_equal(v[1], STALE_GONE);
	assert_int_equal(v[2], STALE_DEALLOCATED);
	assert_int_equal(v[3], STALE_KEEP_UNNAMED);
	assert_int_equal(stale_plan(entries, seen, 0, DRV, POOL, NOW, GRACE, v), 0);
	json_object_put(in_use);
	json_object_put(dealloc);
}

static void test_verdict_names(void **state)
{
	static const char *const want[] = { "in_use", "unknown", "unnamed", "unreserved_grace",
					    "recent", "gone", "replaced", "deallocated",
					    "allocated_elsewhere", "unreserved" };
	(void)state;
	for (int v = STALE_KEEP_IN_USE; v <= STALE_UNRESERVED; v++)
		assert_string_equal(stale_verdict_name((enum stale_verdict)v), want[v]);
}

static void test_timer_delays(void **state)
{
	unsigned seed = 42;
	(void)state;
	for (int i = 0; i < 1000; i++) {
		uint64_t first = stale_timer_first_delay_ms(600, &seed);
		uint64_t next = stale_timer_next_delay_ms(600, &seed);
		assert_true(first < 60000);	/* within the first minute */
		assert_true(next >= 600000 && next < 660000);	/* interval + up to a tenth */
		assert_true(stale_timer_first_delay_ms(2, &seed) < 2000);	/* short interval */
		next = stale_timer_next_delay_ms(1, &seed);
		assert_true(next >= 1000 && next < 1100);
	}
	/* the jitter spreads: not every agent picks the same moment */
	{
		unsigned a = 1, b = 2;
		assert_int_not_equal(stale_timer_first_delay_ms(600, &a),
				     stale_timer_first_delay_ms(600, &b));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_answer_keeps),
		cmocka_unit_test(test_unnamed_entry_is_not_judged),
		cmocka_unit_test(test_recent_is_kept),
		cmocka_unit_test(test_not_found_is_gone),
		cmocka_unit_test(test_other_uid_is_replaced),
		cmocka_unit_test(test_claim_without_uid_keeps),
		cmocka_unit_test(test_not_allocated_is_deallocated),
		cmocka_unit_test(test_allocated_elsewhere),
		cmocka_unit_test(test_in_use_keeps),
		cmocka_unit_test(test_unreserved_after_grace),
		cmocka_unit_test(test_plan_counts),
		cmocka_unit_test(test_verdict_names),
		cmocka_unit_test(test_timer_delays),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
