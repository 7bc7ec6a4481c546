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
	/* a driver, class device or module came or went: apply (a PF may have got
	 * its driver), then rediscovery */
	r = node_watch_plan(&(struct node_change){ .devices_changed = true }, true);
	assert_true(r.apply);
	assert_true(r.rediscover);
	assert_false(r.reload);
	/* again (start, a refused count): apply */
	r = node_watch_plan(&(struct node_change){ .again = true }, true);
	assert_true(r.apply);
	assert_false(r.rediscover);
}

/* ---- which uevents count ---- */

struct event_case {
	const char *action, *subsystem, *sysname, *pci_address;
	bool counts;
	const char *address;		/* remembered for the hand-over */
	struct node_change change;	/* set at once */
};

static void test_events(void **state)
{
	static const struct event_case cases[] = {
		{ "add", "pci", "0000:3b:00.0", "0000:3b:00.0", true, "", { .pci_added = true } },
		{ "remove", "pci", "0000:3b:00.0", "0000:3b:00.0", true, "",
		  { .pci_removed = true } },
		/* a driver bound or unbound (a GPU driver loaded late, a VF given to
		 * vfio-pci): the function's, so a claim's own can be dropped */
		{ "bind", "pci", "0000:3b:00.0", "0000:3b:00.0", true, "0000:3b:00.0", { 0 } },
		{ "unbind", "pci", "0000:3b:00.2", "0000:3b:00.2", true, "0000:3b:00.2", { 0 } },
		{ "change", "pci", "10000:e1:00.0", "10000:e1:00.0", true, "10000:e1:00.0", { 0 } },
		{ "bind", "pci", "0000:3b:00.0", NULL, true, "0000:3b:00.0", { 0 } },
		{ "offline", "pci", "0000:3b:00.0", "0000:3b:00.0", false, "", { 0 } },
		/* class devices of a function */
		{ "add", "net", "ens1f0v3", "0000:3b:00.4", true, "0000:3b:00.4", { 0 } },
		{ "move", "net", "eth0", "0000:3b:00.0", true, "0000:3b:00.0", { 0 } },
		{ "remove", "infiniband", "mlx5_3", "0000:3b:00.4", true, "0000:3b:00.4", { 0 } },
		{ "add", "drm", "card1", "0000:c1:00.0", true, "0000:c1:00.0", { 0 } },
		{ "add", "accel", "accel0", "0000:41:00.0", true, "0000:41:00.0", { 0 } },
		{ "add", "fpga_region", "region0", "0000:3b:00.0", true, "0000:3b:00.0", { 0 } },
		{ "change", "drm", "card1", "0000:c1:00.0", false, "", { 0 } },	/* a monitor */
		/* virtual: a pod's veth never counts; soft-RoCE does */
		{ "add", "net", "veth1a2b3c", "", false, "", { 0 } },
		{ "remove", "net", "cni0", "", false, "", { 0 } },
		{ "add", "infiniband", "rxe0", "", true, "", { .devices_changed = true } },
		/* a module loaded or removed */
		{ "add", "module", "nvidia", "", true, "", { .devices_changed = true } },
		{ "remove", "module", "amdgpu", "", true, "", { .devices_changed = true } },
		{ "change", "module", "nvidia", "", false, "", { 0 } },
		/* other subsystems */
		{ "add", "usb", "1-1", "", false, "", { 0 } },
		{ "add", "vfio", "42", "", false, "", { 0 } },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		const struct event_case *k = &cases[i];
		struct hal_uevent ev = { k->action, k->subsystem, k->sysname, k->pci_address };
		struct node_change c = { 0 };
		const char *address = "unset";
		bool counts = node_watch_event(&ev, &c, &address);

		if (counts != k->counts || strcmp(address, k->address) ||
		    memcmp(&c, &k->change, sizeof(c)))
			fail_msg("%s %s %s: counts %d address \"%s\" pci_added %d pci_removed %d "
				 "devices_changed %d", k->action, k->subsystem, k->sysname, counts,
				 address, c.pci_added, c.pci_removed, c.devices_changed);
	}
}

/* ---- NVIDIA device nodes without a uevent ---- */

static void test_nvidia_nodes(void **state)
{
	char *dir = tree_new();
	struct watch_run run = { 0 };
	struct node_watch_config cfg = { .dev_root = dir };

	(void)state;
	watch_run_start(&run, &cfg);
	/* any other node: nothing */
	assert_int_equal(tree_write(dir, "tty7", ""), 0);
	watch_run_for(&run, 700);
	assert_int_equal(run.n, 0);
	/* nvidia-modprobe makes the nodes at once: one change */
	assert_int_equal(tree_write(dir, "nvidiactl", ""), 0);
	assert_int_equal(tree_write(dir, "nvidia0", ""), 0);
	assert_int_equal(tree_write(dir, "nvidia1", ""), 0);
	watch_run_until(&run, 1);
	watch_run_for(&run, 700);
	assert_int_equal(run.n, 1);
	assert_true(run.seen[0].devices_changed);
	assert_false(run.seen[0].pci_added || run.seen[0].config || run.seen[0].again);
	watch_run_finish(&run);
	tree_remove(dir);
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

/* The daemon's own change (a claim programmed an FPGA): handed over as a
 * rediscovery once idle. */
static void test_rediscover(void **state)
{
	struct watch_run run = { .busy_polls = 2 };
	struct node_watch_config cfg = { 0 };

	(void)state;
	node_watch_rediscover(NULL);	/* not watching yet: nothing */
	watch_run_start(&run, &cfg);
	node_watch_rediscover(run.w);
	node_watch_rediscover(run.w);
	watch_run_until(&run, 1);
	watch_run_for(&run, 200);
	assert_int_equal(run.n, 1);
	assert_true(run.seen[0].devices_changed);
	assert_false(run.seen[0].again || run.seen[0].pci_added || run.seen[0].config);
	assert_true(node_watch_plan(&run.seen[0], false).rediscover);
	assert_int_equal(run.idle_calls, 3);	/* waited for the busy daemon */
	watch_run_finish(&run);
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
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_nvidia_nodes),
		cmocka_unit_test(test_sighup_waits_for_idle),
		cmocka_unit_test(test_sighup_without_a_file),
		cmocka_unit_test(test_config_file_change),
		cmocka_unit_test(test_again),
		cmocka_unit_test(test_rediscover),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
