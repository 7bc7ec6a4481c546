/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Node watching (agent/daemon/node_watch.h): what the daemon does about a
 * change (the plan), and SIGHUP, the configuration file and node_watch_again
 * handed over once the daemon is idle. PCI hot-plug: test_node_watch_umockdev.c.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <uv.h>

#include "agent/daemon/node_watch.h"
#include "harness.h"
#include "node_watch_run.h"

/* ---- the plan ---- */

static void test_plan(void **state)
{
	struct node_response r;

	(void)state;
	/* hot-plug add: a PF a policy selects may have appeared, then rediscovery */
	r = node_watch_plan(&(struct node_change){ .pci_added = true }, true);
	assert_true(r.apply);
	assert_true(r.rediscover);
	assert_false(r.reload);
	/* hot-plug remove: rediscovery only */
	r = node_watch_plan(&(struct node_change){ .pci_removed = true }, true);
	assert_false(r.apply);
	assert_true(r.rediscover);
	/* the file changed: reload, applied only when it brings new policies */
	r = node_watch_plan(&(struct node_change){ .config = true }, true);
	assert_true(r.reload);
	assert_false(r.force_reload);
	assert_false(r.apply);
	assert_false(r.rediscover);
	/* SIGHUP: a forced reload; without a file, the policies in force applied */
	r = node_watch_plan(&(struct node_change){ .config = true, .sighup = true }, true);
	assert_true(r.reload && r.force_reload);
	assert_false(r.apply);
	r = node_watch_plan(&(struct node_change){ .sighup = true }, false);
	assert_false(r.reload);
	assert_true(r.apply);
	/* again (start, a refused count): apply */
	r = node_watch_plan(&(struct node_change){ .again = true }, true);
	assert_true(r.apply);
	assert_false(r.rediscover);
}

/* ---- SIGHUP, the file, again ---- */

static void test_sighup_waits_for_idle(void **state)
{
	struct watch_run run = { .busy_polls = 3 };
	struct node_watch_config cfg = { .config_path = "/nonexistent/dralet.yaml" };

	(void)state;
	watch_run_start(&run, &cfg);
	raise(SIGHUP);
	watch_run_until(&run, 1);
	assert_true(run.seen[0].sighup);
	assert_true(run.seen[0].config);
	assert_false(run.seen[0].pci_added || run.seen[0].pci_removed || run.seen[0].again);
	/* handed over only once idle: the busy daemon was asked again */
	assert_int_equal(run.idle_calls, 4);
	watch_run_finish(&run);
}

static void test_sighup_without_a_file(void **state)
{
	struct watch_run run = { 0 };
	struct node_watch_config cfg = { 0 };

	(void)state;
	watch_run_start(&run, &cfg);
	raise(SIGHUP);
	watch_run_until(&run, 1);
	assert_true(run.seen[0].sighup);
	assert_false(run.seen[0].config);
	watch_run_finish(&run);
}

static void test_config_file_change(void **state)
{
	char *dir = tree_new(), path[4096], other[4096];
	struct watch_run run = { 0 };
	struct node_watch_config cfg = { .config_path = path };

	(void)state;
	snprintf(path, sizeof(path), "%s/dralet.yaml", dir);
	snprintf(other, sizeof(other), "%s/other.yaml", dir);
	assert_int_equal(tree_write(dir, "dralet.yaml", "{}"), 0);
	watch_run_start(&run, &cfg);
	/* another file in the directory is none of its business */
	assert_int_equal(tree_write(dir, "other.yaml", "{}"), 0);
	watch_run_for(&run, 400);
	assert_int_equal(run.n, 0);
	/* two writes in quick succession: one change */
	assert_int_equal(tree_write(dir, "dralet.yaml", "sriov: {}"), 0);
	assert_int_equal(tree_write(dir, "dralet.yaml", "sriov: {policies: []}"), 0);
	watch_run_until(&run, 1);
	watch_run_for(&run, 400);
	assert_int_equal(run.n, 1);
	assert_true(run.seen[0].config);
	assert_false(run.seen[0].sighup);
	watch_run_finish(&run);
	tree_remove(dir);
}

static void test_again(void **state)
{
	struct watch_run run = { 0 };
	struct node_watch_config cfg = { 0 };

	(void)state;
	watch_run_start(&run, &cfg);
	node_watch_again(run.w, 20);
	watch_run_until(&run, 1);
	assert_true(run.seen[0].again);
	assert_false(run.seen[0].config || run.seen[0].sighup);
	watch_run_finish(&run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_sighup_waits_for_idle),
		cmocka_unit_test(test_sighup_without_a_file),
		cmocka_unit_test(test_config_file_change),
		cmocka_unit_test(test_again),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
