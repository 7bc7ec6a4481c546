/* SPDX-License-Identifier: Apache-2.0 */
/* Device health while running: the table (change detection, errors as
 * Unknown), the NodeWatchResources message, the monitor's rounds on a real
 * loop (one at a time, closing with a round in flight), PCIe AER counters as
 * the agent's own source (the verdict, and a round over a board's sysfs). The config key is
 * tested with the rest of the configuration (test_inventory.c). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/core/backend_call.h"
#include "agent/core/backend_ctx.h"
#include "agent/core/device_set.h"
#include "agent/health/pcie_aer.h"
#include "agent/health/pcie_link.h"
#include "board_snippet.h"
#include "agent/health/health_message.h"
#include "agent/health/health_table.h"
#include "agent/health/monitor.h"
#include "harness.h"
#include "proto/kubelet_pb.h"

#define N_DEVICES 3

struct fixture {
	struct harness h;
	struct dralet_pci_func funcs[N_DEVICES];
	struct dralet_device *devices[N_DEVICES];
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	assert_int_equal(harness_init(&fx->h, &harness_plain_backend, NULL, NULL), 0);
	assert_int_equal(harness_add_devices(&fx->h, fx->funcs, N_DEVICES, fx->devices), 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	harness_fini(&fx->h);
	free(fx);
	return 0;
}

/* ---- the table ---- */

static void test_results_map_to_health(void **state)
{
	(void)state;
	assert_int_equal(health_from_result(DRALET_HEALTH_HEALTHY), DRALET_HEALTH_HEALTHY);
	assert_int_equal(health_from_result(DRALET_HEALTH_UNHEALTHY), DRALET_HEALTH_UNHEALTHY);
	assert_int_equal(health_from_result(DRALET_HEALTH_UNKNOWN), DRALET_HEALTH_UNKNOWN);
	assert_int_equal(health_from_result(-EIO), DRALET_HEALTH_UNKNOWN);
	assert_int_equal(health_from_result(42), DRALET_HEALTH_UNKNOWN);
	assert_string_equal(health_name(DRALET_HEALTH_UNHEALTHY), "Unhealthy");
}

static void test_table_detects_changes(void **state)
{
	struct fixture *fx = *state;
	struct health_table t = { 0 };
	struct health_change c;

	assert_int_equal(health_table_set_devices(&t, fx->devices, N_DEVICES, 100), 0);
	assert_int_equal(t.n, N_DEVICES);
	assert_int_equal(t.entries[1].health, DRALET_HEALTH_HEALTHY);
	assert_int_equal(t.entries[1].updated, 100);

	/* the same answer: no change, but the time moves on */
	assert_false(health_table_apply(&t, 1, DRALET_HEALTH_HEALTHY, NULL, NULL, 110, &c));
	assert_int_equal(t.entries[1].updated, 110);

	/* a change reaches the device model */
	assert_true(health_table_apply(&t, 1, DRALET_HEALTH_UNHEALTHY, NULL, NULL, 120, &c));
	assert_string_equal(c.device, "accel-0000-02-00-0");
	assert_int_equal(c.old_health, DRALET_HEALTH_HEALTHY);
	assert_int_equal(c.new_health, DRALET_HEALTH_UNHEALTHY);
	assert_int_equal(c.error, 0);
	assert_string_equal(c.reason, "the backend reports the device unhealthy");
	assert_int_equal(dralet_device_health(fx->devices[1]), DRALET_HEALTH_UNHEALTHY);
	/* the backend's own words, when it gave them */
	assert_false(health_table_apply(&t, 1, DRALET_HEALTH_UNHEALTHY, "the link is down", NULL, 121,
					&c));
	assert_string_equal(t.entries[1].reason, "the link is down");
	assert_int_equal(dralet_device_health(fx->devices[0]), DRALET_HEALTH_HEALTHY);

	/* a failing check is Unknown, reported once: the next failure is no change */
	assert_true(health_table_apply(&t, 2, -EIO, NULL, NULL, 130, &c));
	assert_int_equal(c.new_health, DRALET_HEALTH_UNKNOWN);
	assert_int_equal(c.error, -EIO);
	assert_int_equal(t.entries[2].error, -EIO);
	assert_string_equal(t.entries[2].reason, "the health check failed: Input/output error");
	assert_false(health_table_apply(&t, 2, -EIO, NULL, NULL, 140, NULL));
	assert_false(health_table_apply(&t, 2, -ENOENT, NULL, NULL, 150, NULL));
	assert_int_equal(dralet_device_health(fx->devices[2]), DRALET_HEALTH_UNKNOWN);
	assert_true(health_table_apply(&t, 2, DRALET_HEALTH_HEALTHY, "ignored", NULL, 160, &c));
	assert_int_equal(c.error, 0);
	assert_int_equal(t.entries[2].error, 0);
	assert_string_equal(t.entries[2].reason, "");	/* healthy: nothing to say */

	/* new devices start from what their probe said */
	dralet_device_set_health(fx->devices[0], DRALET_HEALTH_UNKNOWN);
	assert_int_equal(health_table_set_devices(&t, fx->devices, 1, 200), 0);
	assert_int_equal(t.n, 1);
	assert_int_equal(t.entries[0].health, DRALET_HEALTH_UNKNOWN);
	assert_int_equal(t.entries[0].updated, 200);
	assert_int_equal(health_table_set_devices(&t, NULL, 0, 300), 0);
	assert_int_equal(t.n, 0);
	health_table_clear(&t);
}

/* ---- the message ---- */

static void test_message_packs_the_complete_list(void **state)
{
	struct fixture *fx = *state;
	struct health_table t = { 0 };
	health_watch_response *resp;
	uint8_t *buf;
	size_t len;

	assert_int_equal(health_table_set_devices(&t, fx->devices, N_DEVICES, 1700000000), 0);
	health_table_apply(&t, 1, DRALET_HEALTH_UNHEALTHY, "AER fatal errors", NULL, 1700000010, NULL);
	health_table_apply(&t, 2, -EIO, NULL, NULL, 1700000020, NULL);
	assert_int_equal(health_message_pack(&t, "node-1", 30, &buf, &len), 0);
	resp = (health_watch_response *)protobuf_c_message_unpack(&health_watch_response_descriptor,
								  NULL, len, buf);
	assert_non_null(resp);
	assert_int_equal(resp->n_devices, N_DEVICES);
	static const struct {
		const char *name;
		int health;
		int64_t updated;
		const char *message;
	} want[N_DEVICES] = {
		{ "accel-0000-01-00-0", HEALTH_STATUS_HEALTHY, 1700000000, "" },
		{ "accel-0000-02-00-0", HEALTH_STATUS_UNHEALTHY, 1700000010, "AER fatal errors" },
		{ "accel-0000-03-00-0", HEALTH_STATUS_UNKNOWN, 1700000020,
		  "the health check failed: Input/output error" },
	};
	for (size_t i = 0; i < N_DEVICES; i++) {
		assert_non_null(resp->devices[i]->device);
		assert_string_equal(resp->devices[i]->device->pool_name, "node-1");
		assert_string_equal(resp->devices[i]->device->device_name, want[i].name);
		assert_int_equal(resp->devices[i]->health, want[i].health);
		assert_int_equal(resp->devices[i]->last_updated_time, want[i].updated);
		assert_int_equal(resp->devices[i]->health_check_timeout_seconds, 30);
		assert_string_equal(resp->devices[i]->message, want[i].message);
	}
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	free(buf);

	/* no devices: an empty message, still a buffer */
	health_table_clear(&t);
	assert_int_equal(health_message_pack(&t, "node-1", 30, &buf, &len), 0);
	assert_non_null(buf);
	assert_int_equal(len, 0);
	free(buf);
}

/* ---- the monitor on a loop ---- */

struct run {
	struct fixture *fx;
	uv_loop_t loop;
	struct health_monitor *m;
	int answers[N_DEVICES];		/* what the fake checks say */
	unsigned checks, rounds, changed_rounds;
	unsigned close_after;		/* close the monitor after this many rounds */
	unsigned changes;		/* on_change calls, and the last one's device: */
	char changed_device[64];
	enum dralet_health changed_to;
	useconds_t check_delay;
};

static int fake_check(void *userdata, struct dralet_device *dev, char *why, size_t why_size)
{
	struct run *run = userdata;

	(void)why;
	(void)why_size;
	if (run->check_delay)
		usleep(run->check_delay);
	__atomic_add_fetch(&run->checks, 1, __ATOMIC_RELAXED);
	for (size_t i = 0; i < N_DEVICES; i++)
		if (run->fx->devices[i] == dev)
			return run->answers[i];
	return -ENODEV;
}

static void on_round(void *userdata, bool changed)
{
	struct run *run = userdata;

	run->rounds++;
	run->changed_rounds += changed;
	if (run->close_after && run->rounds >= run->close_after) {
		health_monitor_close(run->m);
		run->m = NULL;
	}
}

static void on_change(void *userdata, const struct health_change *c)
{
	struct run *run = userdata;

	assert_int_equal(run->changed_rounds, run->rounds);	/* before on_round */
	run->changes++;
	snprintf(run->changed_device, sizeof(run->changed_device), "%s", c->device);
	run->changed_to = c->new_health;
}

static int64_t fixed_now(void)
{
	return 1234;
}

static void start_run(struct run *run, struct fixture *fx, unsigned interval_ms)
{
	struct health_monitor_config cfg = {
		.loop = &run->loop,
		.driver = "accel.dralet.dev",
		.interval_ms = interval_ms,
		.check = fake_check,
		.on_round = on_round,
		.on_change = on_change,
		.userdata = run,
		.now = fixed_now,
	};

	run->fx = fx;
	for (size_t i = 0; i < N_DEVICES; i++)
		run->answers[i] = DRALET_HEALTH_HEALTHY;
	assert_int_equal(uv_loop_init(&run->loop), 0);
	struct device_set *set;
	assert_int_equal(device_set_new("accel.dralet.dev", fx->devices, N_DEVICES, &set), 0);
	assert_int_equal(health_monitor_new(&cfg, set, &run->m), 0);
	device_set_unref(set);	/* the monitor holds its own reference */
}

static void finish_run(struct run *run)
{
	health_monitor_close(run->m);
	run->m = NULL;
	assert_int_equal(uv_run(&run->loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(&run->loop), 0);
}

static void test_round_applies_results_off_the_loop(void **state)
{
	struct fixture *fx = *state;
	struct run run = { 0 };

	start_run(&run, fx, 3600 * 1000);	/* the timer stays out of the way */
	run.answers[0] = DRALET_HEALTH_UNHEALTHY;
	run.answers[2] = -EIO;
	run.check_delay = 20000;
	assert_int_equal(health_monitor_run_round(run.m), 0);
	/* one round at a time, and the devices stay put meanwhile */
	assert_true(health_monitor_busy(run.m));
	assert_int_equal(health_monitor_run_round(run.m), -EBUSY);
	struct device_set *one, *two;
	assert_int_equal(device_set_new("accel.dralet.dev", fx->devices, 1, &one), 0);
	assert_int_equal(device_set_new("accel.dralet.dev", fx->devices, 2, &two), 0);
	assert_int_equal(health_monitor_set_devices(run.m, one), -EBUSY);
	/* nothing is applied before the round is back on the loop */
	assert_int_equal(dralet_device_health(fx->devices[0]), DRALET_HEALTH_HEALTHY);
	while (run.rounds < 1)
		uv_run(&run.loop, UV_RUN_ONCE);
	assert_false(health_monitor_busy(run.m));
	assert_int_equal(run.checks, N_DEVICES);
	assert_int_equal(run.changed_rounds, 1);
	assert_int_equal(run.changes, 2);	/* devices 0 and 2, in table order */
	assert_string_equal(run.changed_device, dralet_device_name(fx->devices[2]));
	assert_int_equal(run.changed_to, DRALET_HEALTH_UNKNOWN);
	assert_int_equal(dralet_device_health(fx->devices[0]), DRALET_HEALTH_UNHEALTHY);
	assert_int_equal(dralet_device_health(fx->devices[1]), DRALET_HEALTH_HEALTHY);
	assert_int_equal(dralet_device_health(fx->devices[2]), DRALET_HEALTH_UNKNOWN);
	const struct health_table *t = health_monitor_table(run.m);
	assert_int_equal(t->entries[2].error, -EIO);
	assert_int_equal(t->entries[2].updated, 1234);

	/* the same answers again: a round without changes */
	run.check_delay = 0;
	assert_int_equal(health_monitor_run_round(run.m), 0);
	while (run.rounds < 2)
		uv_run(&run.loop, UV_RUN_ONCE);
	assert_int_equal(run.changed_rounds, 1);
	assert_int_equal(run.changes, 2);

	/* rediscovery while idle */
	assert_int_equal(health_monitor_set_devices(run.m, two), 0);
	assert_int_equal(health_monitor_table(run.m)->n, 2);
	device_set_unref(one);
	device_set_unref(two);
	finish_run(&run);
}

static void test_timer_runs_rounds(void **state)
{
	struct fixture *fx = *state;
	struct run run = { 0 };

	start_run(&run, fx, 5);
	run.close_after = 3;
	assert_int_equal(uv_run(&run.loop, UV_RUN_DEFAULT), 0);	/* until the close */
	assert_int_equal(run.rounds, 3);
	assert_int_equal(run.changed_rounds, 0);
	assert_int_equal(run.checks, 3 * N_DEVICES);
	assert_int_equal(uv_loop_close(&run.loop), 0);
}

static void test_close_with_a_round_in_flight(void **state)
{
	struct fixture *fx = *state;
	struct run run = { 0 };

	start_run(&run, fx, 3600 * 1000);
	run.answers[1] = DRALET_HEALTH_UNHEALTHY;
	run.check_delay = 20000;
	assert_int_equal(health_monitor_run_round(run.m), 0);
	finish_run(&run);	/* frees once the round is back; nothing applied */
	assert_int_equal(run.rounds, 0);
	assert_int_equal(dralet_device_health(fx->devices[1]), DRALET_HEALTH_HEALTHY);
	assert_true(run.checks <= N_DEVICES);
}

/* ---- PCIe AER ---- */

static void test_aer_parse(void **state)
{
	uint64_t total = 7;

	(void)state;
	assert_int_equal(pcie_aer_parse_total("Undefined 0\nDLP 2\nTOTAL_ERR_FATAL 2\n", &total), 0);
	assert_int_equal(total, 2);
	assert_int_equal(pcie_aer_parse_total("TOTAL_ERR_NONFATAL 18446744073709551615", &total), 0);
	assert_int_equal(total, UINT64_MAX);
	assert_int_equal(pcie_aer_parse_total("Undefined 0\nDLP 2\n", &total), -EINVAL);
	assert_int_equal(pcie_aer_parse_total("TOTAL_ERR_FATAL x\n", &total), -EINVAL);
	assert_int_equal(pcie_aer_parse_total("TOTAL_ERR_FATAL\n", &total), -EINVAL);
}

/* The first counts are history; a rise is Unhealthy until PCIE_AER_HOLD_S pass
 * without another; a reset (counts going down) is a new baseline. */
static void test_aer_verdict(void **state)
{
	struct pcie_aer_state st = { 0 };
	struct pcie_aer_counts c = { .fatal = 3, .nonfatal = 1 };
	char why[256] = "";

	(void)state;
	assert_false(pcie_aer_verdict(&st, &c, 1000, why, sizeof(why)));
	assert_false(pcie_aer_verdict(&st, &c, 1010, why, sizeof(why)));
	c.nonfatal = 3;
	assert_true(pcie_aer_verdict(&st, &c, 1020, why, sizeof(why)));
	assert_non_null(strstr(why, "PCIe AER: 0 fatal and 2 non-fatal uncorrectable error(s)"));
	assert_true(pcie_aer_verdict(&st, &c, 1020 + PCIE_AER_HOLD_S - 1, why, sizeof(why)));
	assert_false(pcie_aer_verdict(&st, &c, 1020 + PCIE_AER_HOLD_S, why, sizeof(why)));
	c.fatal = 4;
	assert_true(pcie_aer_verdict(&st, &c, 5000, why, sizeof(why)));
	assert_non_null(strstr(why, "1 fatal and 2 non-fatal"));
	/* reset: zero again, no new error, the hold still runs out */
	c = (struct pcie_aer_counts){ 0, 0 };
	assert_true(pcie_aer_verdict(&st, &c, 5010, why, sizeof(why)));
	assert_false(pcie_aer_verdict(&st, &c, 5000 + PCIE_AER_HOLD_S, why, sizeof(why)));
	c.fatal = 1;
	assert_true(pcie_aer_verdict(&st, &c, 9000, why, sizeof(why)));
	assert_non_null(strstr(why, "1 fatal and 0 non-fatal"));
}

/* Narrower than the widest seen is Unhealthy; max_link_width is never asked,
 * and a wider link is the new widest. */
static void test_link_verdict(void **state)
{
	struct pcie_link_state st = { 0 };
	char why[256] = "";

	(void)state;
	assert_false(pcie_link_verdict(&st, 8, 8, why, sizeof(why)));	/* x16 card, x8 slot */
	assert_true(pcie_link_verdict(&st, 8, 4, why, sizeof(why)));
	assert_string_equal(why, "PCIe link degraded: it runs x4, narrower than the x8 it ran "
				 "before (a lane or connector fault; the link retrained)");
	assert_false(pcie_link_verdict(&st, 8, 8, why, sizeof(why)));
	assert_false(pcie_link_verdict(&st, 8, 16, why, sizeof(why)));
	assert_true(pcie_link_verdict(&st, 8, 8, why, sizeof(why)));	/* x16 seen since */
	assert_false(pcie_link_verdict(&st, 0, 16, why, sizeof(why)));
}

static int64_t aer_clock;

static int64_t aer_now(void)
{
	return aer_clock;
}

static int healthy_check(void *userdata, struct dralet_device *dev, char *why, size_t why_size)
{
	(void)userdata;
	(void)dev;
	(void)why;
	(void)why_size;
	return DRALET_HEALTH_HEALTHY;
}

static void on_aer_round(void *userdata, bool changed)
{
	int *rounds = userdata;

	(void)changed;
	++*rounds;
}

static void run_one_round(uv_loop_t *loop, struct health_monitor *m, int *rounds)
{
	int want = *rounds + 1;

	assert_int_equal(health_monitor_run_round(m), 0);
	while (*rounds < want)
		uv_run(loop, UV_RUN_ONCE);
}

/* A round over a board's function: healthy by its backend, Unhealthy with the
 * AER taint once the kernel's counter rises (the board's file rewritten, as
 * the kernel would), with the link taint once the hold is over while the link
 * still runs narrower, healthy when it has retrained. */
static void test_aer_round_on_a_board(void **state)
{
	char *t = board_tree("board: aer\n"
			     "pci:\n"
			     "  - root: \"0000:00\"\n"
			     "    devices:\n"
			     "      - {bdf: 00:0b.0, id: \"8086:7d1d\", class: 0x120000, driver: intel_vpu,\n"
			     "         link: 16GT/s x16, aer: {nonfatal: {CmpltTO: 1}}}\n");
	struct health_monitor_config cfg = {
		.driver = "accel.dralet.dev", .interval_ms = 3600 * 1000, .check = healthy_check,
		.on_round = on_aer_round, .now = aer_now,
	};
	const struct dralet_pci_func *f;
	struct dralet_device *dev;
	struct health_monitor *m;
	struct device_set *set;
	struct harness h;
	uv_loop_t loop;
	int rounds = 0;
	char path[4096], text[512];
	FILE *file;

	(void)state;
	assert_int_equal(harness_init(&h, &harness_plain_backend, t, NULL), 0);
	assert_non_null(f = hal_scan_find(h.scan, "0000:00:0b.0"));
	assert_int_equal(f->link.current_width, 16);
	h.ctx.sink = &h.sink;
	assert_int_equal(dralet_device_new(&h.ctx, f, "accel", NULL, &dev), 0);
	assert_int_equal(uv_loop_init(&loop), 0);
	cfg.loop = &loop;
	cfg.userdata = &rounds;
	aer_clock = 1000;
	assert_int_equal(device_set_new("accel.dralet.dev", &dev, 1, &set), 0);
	assert_int_equal(health_monitor_new(&cfg, set, &m), 0);
	run_one_round(&loop, m, &rounds);	/* the board's old error is history */
	assert_int_equal(dralet_device_health(dev), DRALET_HEALTH_HEALTHY);
	assert_null(device_health_taint(dev));

	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/0000:00:0b.0/aer_dev_nonfatal", t);
	snprintf(text, sizeof(text), "Undefined 0\nCmpltTO 2\nTOTAL_ERR_NONFATAL 2\n");
	assert_non_null(file = fopen(path, "w"));
	fputs(text, file);
	fclose(file);
	aer_clock = 1010;
	run_one_round(&loop, m, &rounds);
	assert_int_equal(dralet_device_health(dev), DRALET_HEALTH_UNHEALTHY);
	assert_string_equal(device_health_taint(dev), PCIE_AER_TAINT_KEY);
	assert_non_null(strstr(health_monitor_table(m)->entries[0].reason,
			       "0 fatal and 1 non-fatal uncorrectable error(s)"));

	/* a link that retrains narrower: the AER cause still wins while it holds */
	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/0000:00:0b.0/current_link_width", t);
	assert_non_null(file = fopen(path, "w"));
	fputs("4\n", file);
	fclose(file);
	aer_clock = 1020;
	run_one_round(&loop, m, &rounds);
	assert_string_equal(device_health_taint(dev), PCIE_AER_TAINT_KEY);

	/* a rediscovery keeps what the counters were */
	assert_int_equal(health_monitor_set_devices(m, set), 0);
	aer_clock = 1020 + PCIE_AER_HOLD_S;
	run_one_round(&loop, m, &rounds);
	assert_int_equal(dralet_device_health(dev), DRALET_HEALTH_UNHEALTHY);
	assert_string_equal(device_health_taint(dev), PCIE_LINK_TAINT_KEY);
	assert_non_null(strstr(health_monitor_table(m)->entries[0].reason, "it runs x4, narrower"));
	assert_non_null(file = fopen(path, "w"));	/* it retrains to its width */
	fprintf(file, "%u\n", f->link.current_width);
	fclose(file);
	run_one_round(&loop, m, &rounds);
	assert_int_equal(dralet_device_health(dev), DRALET_HEALTH_HEALTHY);
	assert_null(device_health_taint(dev));

	health_monitor_close(m);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(&loop), 0);
	device_set_unref(set);
	harness_fini(&h);
	tree_remove(t);
}

/* A function without AER files is no source, and the rounds stop reading
 * them: counters that appear afterwards (only a re-enumeration can add them,
 * which is a rediscovery) are not followed until set_devices makes a fresh
 * entry, which reads them again. */
static void test_aer_absent_is_not_read_again(void **state)
{
	char *t = board_tree("board: noaer\n"
			     "pci:\n"
			     "  - root: \"0000:00\"\n"
			     "    devices:\n"
			     "      - {bdf: 00:0b.0, id: \"8086:7d1d\", class: 0x120000, driver: intel_vpu,\n"
			     "         link: 16GT/s x16}\n");
	struct health_monitor_config cfg = {
		.driver = "accel.dralet.dev", .interval_ms = 3600 * 1000, .check = healthy_check,
		.on_round = on_aer_round, .now = aer_now,
	};
	const struct dralet_pci_func *f;
	struct dralet_device *dev;
	struct health_monitor *m;
	struct device_set *set, *again;
	struct harness h;
	uv_loop_t loop;
	int rounds = 0;
	char path[4096];
	FILE *file;

	(void)state;
	assert_int_equal(harness_init(&h, &harness_plain_backend, t, NULL), 0);
	assert_non_null(f = hal_scan_find(h.scan, "0000:00:0b.0"));
	h.ctx.sink = &h.sink;
	assert_int_equal(dralet_device_new(&h.ctx, f, "accel", NULL, &dev), 0);
	assert_int_equal(uv_loop_init(&loop), 0);
	cfg.loop = &loop;
	cfg.userdata = &rounds;
	aer_clock = 1000;
	/* a function without the AER capability: the simulator writes the files
	 * for every PF, the kernel does not */
	for (int k = 0; k < 2; k++) {
		snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/0000:00:0b.0/%s", t,
			 k ? "aer_dev_nonfatal" : "aer_dev_fatal");
		assert_int_equal(unlink(path), 0);
	}
	assert_int_equal(device_set_new("accel.dralet.dev", &dev, 1, &set), 0);
	assert_int_equal(health_monitor_new(&cfg, set, &m), 0);
	run_one_round(&loop, m, &rounds);
	assert_true(health_monitor_table(m)->entries[0].no_aer);
	assert_false(health_monitor_table(m)->entries[0].aer.known);

	/* files written behind the monitor's back: not read */
	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/0000:00:0b.0/aer_dev_fatal", t);
	assert_non_null(file = fopen(path, "w"));
	fputs("Undefined 0\nTOTAL_ERR_FATAL 0\n", file);
	fclose(file);
	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/0000:00:0b.0/aer_dev_nonfatal", t);
	assert_non_null(file = fopen(path, "w"));
	fputs("Undefined 0\nTOTAL_ERR_NONFATAL 0\n", file);
	fclose(file);
	aer_clock = 1010;
	run_one_round(&loop, m, &rounds);
	assert_true(health_monitor_table(m)->entries[0].no_aer);
	assert_false(health_monitor_table(m)->entries[0].aer.known);

	/* a rediscovery: a fresh entry reads them, and follows them from then on */
	assert_int_equal(device_set_new("accel.dralet.dev", &dev, 1, &again), 0);
	assert_int_equal(health_monitor_set_devices(m, again), 0);
	device_set_unref(again);
	aer_clock = 1020;
	run_one_round(&loop, m, &rounds);
	assert_false(health_monitor_table(m)->entries[0].no_aer);
	assert_true(health_monitor_table(m)->entries[0].aer.known);
	assert_non_null(file = fopen(path, "w"));
	fputs("Undefined 0\nTOTAL_ERR_NONFATAL 1\n", file);
	fclose(file);
	aer_clock = 1030;
	run_one_round(&loop, m, &rounds);
	assert_int_equal(dralet_device_health(dev), DRALET_HEALTH_UNHEALTHY);
	assert_string_equal(device_health_taint(dev), PCIE_AER_TAINT_KEY);

	health_monitor_close(m);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(&loop), 0);
	device_set_unref(set);
	harness_fini(&h);
	tree_remove(t);
}

/* A backend's health op naming causes: device 1 Unhealthy with a valid key,
 * device 2 Unhealthy with a key that is no qualified name, device 3 Healthy
 * (a cause named then is ignored). */
static int naming_health(struct dralet_backend_ctx *ctx, struct dralet_device *dev)
{
	const char *name = dralet_device_name(dev);

	if (strstr(name, "01-00-0")) {
		dralet_ctx_error(ctx, "fan stopped");
		dralet_ctx_health_cause(ctx, "example.com/fan");
		return DRALET_HEALTH_UNHEALTHY;
	}
	dralet_ctx_health_cause(ctx, strstr(name, "02-00-0") ? "not a key!" : "example.com/fan");
	return strstr(name, "02-00-0") ? DRALET_HEALTH_UNHEALTHY : DRALET_HEALTH_HEALTHY;
}

static int no_probe(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
		    const struct dralet_pci_id *id)
{
	(void)ctx;
	(void)f;
	(void)id;
	return 0;
}

static const struct dralet_backend naming_backend = {
	.abi = DRALET_BACKEND_ABI, .name = "naming", .family = "accel",
	.default_driver = "accel.dralet.dev", .ids = (const struct dralet_pci_id[]){ { 0, 0, 0, 0 } },
	.probe = no_probe, .health = naming_health,
};

/* The daemon's check: the backend through backend_call_health. */
static int backend_check(void *userdata, struct dralet_device *dev, char *why, size_t why_size)
{
	(void)userdata;
	return backend_call_health(dev, NULL, why, why_size);
}

/* The cause a backend names (dralet_ctx_health_cause) becomes the device's
 * taint; an invalid key and a Healthy answer keep the generic one. */
static void test_backend_names_the_cause(void **state)
{
	struct health_monitor_config cfg = {
		.driver = "accel.dralet.dev", .interval_ms = 3600 * 1000, .check = backend_check,
		.on_round = on_aer_round, .now = aer_now,
	};
	struct dralet_pci_func funcs[3];
	struct dralet_device *devs[3];
	struct health_monitor *m;
	struct device_set *set;
	struct harness h;
	uv_loop_t loop;
	int rounds = 0;

	(void)state;
	assert_int_equal(harness_init(&h, &naming_backend, NULL, NULL), 0);
	assert_int_equal(harness_add_devices(&h, funcs, 3, devs), 0);
	assert_int_equal(uv_loop_init(&loop), 0);
	cfg.loop = &loop;
	cfg.userdata = &rounds;
	aer_clock = 1000;
	assert_int_equal(device_set_new("accel.dralet.dev", devs, 3, &set), 0);
	assert_int_equal(health_monitor_new(&cfg, set, &m), 0);
	run_one_round(&loop, m, &rounds);
	assert_int_equal(dralet_device_health(devs[0]), DRALET_HEALTH_UNHEALTHY);
	assert_string_equal(device_health_taint(devs[0]), "example.com/fan");
	assert_string_equal(health_monitor_table(m)->entries[0].reason, "fan stopped");
	assert_int_equal(dralet_device_health(devs[1]), DRALET_HEALTH_UNHEALTHY);
	assert_null(device_health_taint(devs[1]));	/* generic: dralet.dev/unhealthy */
	assert_int_equal(dralet_device_health(devs[2]), DRALET_HEALTH_HEALTHY);
	assert_null(device_health_taint(devs[2]));

	health_monitor_close(m);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(&loop), 0);
	device_set_unref(set);
	harness_fini(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_results_map_to_health),
		cmocka_unit_test_setup_teardown(test_table_detects_changes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_message_packs_the_complete_list, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_round_applies_results_off_the_loop, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_timer_runs_rounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_with_a_round_in_flight, setup, teardown),
		cmocka_unit_test(test_aer_parse),
		cmocka_unit_test(test_aer_verdict),
		cmocka_unit_test(test_link_verdict),
		cmocka_unit_test(test_aer_round_on_a_board),
		cmocka_unit_test(test_aer_absent_is_not_read_again),
		cmocka_unit_test(test_backend_names_the_cause),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
