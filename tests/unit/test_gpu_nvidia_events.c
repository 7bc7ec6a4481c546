/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The verdict of the NVML event health source (backends/gpu/nvidia_events.h):
 * which events count (NVIDIA's application-error XIDs do not, single-bit ECC
 * does not), the hold time, the recovery actions, a lost GPU, which MIG
 * device an event belongs to, and a device without an event source. The
 * NVML shell is tested against the fake NVML in test_gpu_nvidia.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <dralet/device.h>

#include "backends/gpu/nvidia_events.h"

#define T0 1796216504	/* any Unix time */

static struct nvml_event_data xid(unsigned long long n)
{
	return (struct nvml_event_data){ .type = NVML_EVENT_XID, .data = n,
					 .gpu_instance = NVML_NO_INSTANCE,
					 .compute_instance = NVML_NO_INSTANCE };
}

static struct nvml_event_data ecc(unsigned long long type)
{
	return (struct nvml_event_data){ .type = type, .gpu_instance = NVML_NO_INSTANCE,
					 .compute_instance = NVML_NO_INSTANCE };
}

static const struct nvidia_nvml_facts quiet = { .recovery_action = NVIDIA_RECOVERY_NONE };

/* The verdict at @now with @facts; the reason in @why. */
static int verdict(const struct nvidia_event_state *st, const struct nvidia_nvml_facts *facts,
		   int64_t now, char *why, const char **taint)
{
	why[0] = '\0';
	return nvidia_health_verdict(st, facts, now, why, 256, taint);
}

static void test_application_xids_do_not_count(void **state)
{
	static const unsigned long long application[] = { 13, 31, 43, 45, 68, 109 };
	struct nvidia_event_state st = { 0 };
	const char *taint;
	char why[256];

	(void)state;
	for (size_t i = 0; i < sizeof(application) / sizeof(*application); i++) {
		struct nvml_event_data e = xid(application[i]);
		assert_true(nvidia_xid_is_application_error(application[i]));
		assert_false(nvidia_event_note(&st, &e, T0));
	}
	assert_int_equal(verdict(&st, &quiet, T0, why, &taint), DRALET_HEALTH_HEALTHY);
	assert_null(taint);
	assert_int_equal(st.faults, 0);
	/* every other XID is critical, as NVIDIA's device plugin holds */
	assert_false(nvidia_xid_is_application_error(79));
	assert_false(nvidia_xid_is_application_error(48));
	assert_false(nvidia_xid_is_application_error(999));
}

static void test_xid_79_unhealthy_with_name_and_taint(void **state)
{
	struct nvidia_event_state st = { 0 };
	struct nvml_event_data e = xid(79);
	const char *taint;
	char why[256];

	(void)state;
	assert_true(nvidia_event_note(&st, &e, T0));
	assert_int_equal(verdict(&st, &quiet, T0 + 12, why, &taint), DRALET_HEALTH_UNHEALTHY);
	assert_string_equal(taint, NVIDIA_XID_TAINT_KEY);
	assert_string_equal(taint, "dralet.dev/xid");
	assert_non_null(strstr(why, "XID 79 (GPU has fallen off the bus) 12 s ago"));
	assert_non_null(strstr(why, "Unhealthy until 600 s pass without one"));
	/* an XID dralet has no name for is still named by number */
	st = (struct nvidia_event_state){ 0 };
	e = xid(999);
	assert_true(nvidia_event_note(&st, &e, T0));
	assert_int_equal(verdict(&st, &quiet, T0, why, &taint), DRALET_HEALTH_UNHEALTHY);
	assert_non_null(strstr(why, "XID 999 0 s ago"));
}

static void test_hold_time(void **state)
{
	struct nvidia_event_state st = { 0 };
	struct nvml_event_data e = xid(48);
	const char *taint;
	char why[256];

	(void)state;
	assert_true(nvidia_event_note(&st, &e, T0));
	assert_int_equal(verdict(&st, &quiet, T0 + NVIDIA_EVENT_HOLD_S - 1, why, &taint),
			 DRALET_HEALTH_UNHEALTHY);
	assert_int_equal(verdict(&st, &quiet, T0 + NVIDIA_EVENT_HOLD_S, why, &taint),
			 DRALET_HEALTH_HEALTHY);
	assert_string_equal(why, "");
	/* a new fault starts the hold again and is counted */
	assert_true(nvidia_event_note(&st, &e, T0 + 1000));
	assert_int_equal(verdict(&st, &quiet, T0 + 1000 + NVIDIA_EVENT_HOLD_S - 1, why, &taint),
			 DRALET_HEALTH_UNHEALTHY);
	assert_non_null(strstr(why, "2 fault event(s)"));
	/* an application XID in between does not extend it */
	e = xid(13);
	assert_false(nvidia_event_note(&st, &e, T0 + 1500));
	assert_int_equal(verdict(&st, &quiet, T0 + 1000 + NVIDIA_EVENT_HOLD_S, why, &taint),
			 DRALET_HEALTH_HEALTHY);
}

static void test_ecc(void **state)
{
	struct nvidia_event_state st = { 0 };
	struct nvml_event_data sbe = ecc(NVML_EVENT_SINGLE_BIT_ECC), dbe = ecc(NVML_EVENT_DOUBLE_BIT_ECC);
	const char *taint;
	char why[256];

	(void)state;
	/* corrected: no fault */
	assert_false(nvidia_event_note(&st, &sbe, T0));
	assert_int_equal(verdict(&st, &quiet, T0, why, &taint), DRALET_HEALTH_HEALTHY);
	assert_true(nvidia_event_note(&st, &dbe, T0));
	assert_int_equal(verdict(&st, &quiet, T0 + 1, why, &taint), DRALET_HEALTH_UNHEALTHY);
	assert_string_equal(taint, NVIDIA_ECC_TAINT_KEY);
	assert_non_null(strstr(why, "NVML: double-bit ECC error 1 s ago"));
}

static void test_recovery_actions(void **state)
{
	static const struct {
		int action;
		const char *words;
	} cases[] = {
		{ NVIDIA_RECOVERY_GPU_RESET, "NVML: GPU reset required (GPU recovery action 1)" },
		{ NVIDIA_RECOVERY_NODE_REBOOT, "NVML: node reboot required (GPU recovery action 2)" },
		{ NVIDIA_RECOVERY_DRAIN_P2P, "peer-to-peer traffic must be drained" },
		{ NVIDIA_RECOVERY_DRAIN_AND_RESET, "drain and reset required" },
		{ 7, "NVML: GPU recovery action 7 (unknown to dralet)" },
	};
	const char *taint;
	char why[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct nvidia_nvml_facts f = { .recovery_action = cases[i].action };
		assert_int_equal(verdict(NULL, &f, T0, why, &taint), DRALET_HEALTH_UNHEALTHY);
		assert_string_equal(taint, NVIDIA_RECOVERY_TAINT_KEY);
		assert_non_null(strstr(why, cases[i].words));
	}
	/* none, and a driver that does not say: healthy */
	struct nvidia_nvml_facts none = { .recovery_action = NVIDIA_RECOVERY_NONE };
	struct nvidia_nvml_facts unknown = { .recovery_action = NVIDIA_RECOVERY_UNKNOWN };
	assert_int_equal(verdict(NULL, &none, T0, why, &taint), DRALET_HEALTH_HEALTHY);
	assert_int_equal(verdict(NULL, &unknown, T0, why, &taint), DRALET_HEALTH_HEALTHY);
}

static void test_lost_gpu_wins(void **state)
{
	struct nvidia_event_state st = { 0 };
	struct nvml_event_data e = xid(79);
	struct nvidia_nvml_facts f = { .lost = true, .recovery_action = NVIDIA_RECOVERY_NODE_REBOOT,
				       .retired_pages_pending = true };
	const char *taint;
	char why[256];

	(void)state;
	assert_true(nvidia_event_note(&st, &e, T0));
	assert_int_equal(verdict(&st, &f, T0, why, &taint), DRALET_HEALTH_UNHEALTHY);
	assert_string_equal(taint, NVIDIA_LOST_TAINT_KEY);
	assert_non_null(strstr(why, "the GPU is lost"));
	/* without the loss, the recovery action comes before the event */
	f.lost = false;
	assert_int_equal(verdict(&st, &f, T0, why, &taint), DRALET_HEALTH_UNHEALTHY);
	assert_string_equal(taint, NVIDIA_RECOVERY_TAINT_KEY);
	/* and the event before the polled memory facts */
	f.recovery_action = NVIDIA_RECOVERY_NONE;
	assert_int_equal(verdict(&st, &f, T0, why, &taint), DRALET_HEALTH_UNHEALTHY);
	assert_string_equal(taint, NVIDIA_XID_TAINT_KEY);
}

static void test_polled_memory_facts_keep_generic_taint(void **state)
{
	struct nvidia_nvml_facts f = { .recovery_action = NVIDIA_RECOVERY_UNKNOWN,
				       .retired_pages_pending = true };
	const char *taint;
	char why[256];

	(void)state;
	assert_int_equal(verdict(NULL, &f, T0, why, &taint), DRALET_HEALTH_UNHEALTHY);
	assert_null(taint);
	assert_non_null(strstr(why, "retired memory pages are pending"));
	f = (struct nvidia_nvml_facts){ .recovery_action = 0, .remap_failure = true };
	assert_int_equal(verdict(NULL, &f, T0, why, &taint), DRALET_HEALTH_UNHEALTHY);
	assert_string_equal(why, "NVML: row remapping failed");
	f = (struct nvidia_nvml_facts){ .recovery_action = 0, .remap_pending = true };
	assert_int_equal(verdict(NULL, &f, T0, why, &taint), DRALET_HEALTH_UNHEALTHY);
	assert_non_null(strstr(why, "row remapping is pending"));
}

static void test_no_event_source(void **state)
{
	const char *taint = "unset";
	char why[256];

	(void)state;
	/* NVML without events: no state, nothing wrong polled: healthy */
	assert_int_equal(verdict(NULL, &quiet, T0, why, &taint), DRALET_HEALTH_HEALTHY);
	assert_null(taint);
	assert_string_equal(why, "");
}

static void test_mig_events(void **state)
{
	struct nvidia_place full = { .mig = false };
	struct nvidia_place gi9 = { .mig = true, .gi = 9, .ci = 0 };
	struct nvidia_place gi3ci1 = { .mig = true, .gi = 3, .ci = 1 };
	struct nvml_event_data whole = xid(79), in9 = xid(43), in3ci0 = xid(94), in3 = xid(94);

	(void)state;
	in9.gpu_instance = 9;
	in9.compute_instance = 0;
	in3ci0.gpu_instance = 3;
	in3ci0.compute_instance = 0;
	in3.gpu_instance = 3;	/* the GPU instance as a whole */
	/* an event of the whole GPU reaches every device on it */
	assert_true(nvidia_event_concerns(&whole, &full));
	assert_true(nvidia_event_concerns(&whole, &gi9));
	assert_true(nvidia_event_concerns(&whole, &gi3ci1));
	/* an instance's event reaches that MIG device only */
	assert_true(nvidia_event_concerns(&in9, &gi9));
	assert_false(nvidia_event_concerns(&in9, &gi3ci1));
	assert_false(nvidia_event_concerns(&in3ci0, &gi3ci1));
	assert_true(nvidia_event_concerns(&in3, &gi3ci1));
	assert_false(nvidia_event_concerns(&in3, &gi9));
	/* a full GPU (MIG off) is the parent of whatever instance is named */
	assert_true(nvidia_event_concerns(&in9, &full));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_application_xids_do_not_count),
		cmocka_unit_test(test_xid_79_unhealthy_with_name_and_taint),
		cmocka_unit_test(test_hold_time),
		cmocka_unit_test(test_ecc),
		cmocka_unit_test(test_recovery_actions),
		cmocka_unit_test(test_lost_gpu_wins),
		cmocka_unit_test(test_polled_memory_facts_keep_generic_taint),
		cmocka_unit_test(test_no_event_source),
		cmocka_unit_test(test_mig_events),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
