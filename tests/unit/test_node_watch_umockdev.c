/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hot-plug reaches the daemon through node watching (run under
 * umockdev-wrapper): a PCI function added or removed, a driver bound or
 * unbound, a function's class device coming or going are handed over as
 * what the daemon applies the SR-IOV policies for and rediscovers on
 * (node_watch_plan); changes on functions that prepared claims hold, a
 * virtual netdev and other subsystems' events are not.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <umockdev.h>

#include "node_watch_run.h"

static void test_hotplug_reaches_sriov_and_rediscovery(void **state)
{
	UMockdevTestbed *tb = umockdev_testbed_new();
	struct watch_run run = { 0 };
	struct node_watch_config cfg = { .hotplug = true };
	struct node_response todo;
	gchar *pci, *usb, *veth, *net;

	(void)state;
	if (!umockdev_in_mock_environment())
		fail_msg("not under umockdev-wrapper (tests/run-tests.sh runs *_umockdev tests with it)");
	watch_run_start(&run, &cfg);
	/* a burst: the PF and a USB device appear, the PF changes: one change */
	pci = umockdev_testbed_add_device(tb, "pci", "0000:3b:00.0", NULL, "vendor", "0x8086",
					  "device", "0x1592", "class", "0x020000", NULL,
					  "PCI_ID", "8086:1592", NULL);
	usb = umockdev_testbed_add_device(tb, "usb", "1-1", NULL, "idVendor", "0001", NULL,
					  "DEVTYPE", "usb_device", NULL);
	assert_non_null(pci);
	assert_non_null(usb);
	umockdev_testbed_uevent(tb, pci, "change");
	watch_run_until(&run, 1);
	assert_true(run.seen[0].pci_added);
	assert_false(run.seen[0].pci_removed || run.seen[0].config || run.seen[0].sighup);
	todo = node_watch_plan(&run.seen[0], false);
	assert_true(todo.apply);	/* the SR-IOV policies: the PF may be one of theirs */
	assert_true(todo.rediscover);
	/* a claim rebinding the function it holds, USB's events, a pod's veth: nothing */
	run.claim_all = true;
	umockdev_testbed_uevent(tb, pci, "unbind");
	umockdev_testbed_uevent(tb, pci, "bind");
	umockdev_testbed_uevent(tb, usb, "remove");
	veth = umockdev_testbed_add_device(tb, "net", "veth1a2b", NULL, "mtu", "1500", NULL,
					   "INTERFACE", "veth1a2b", NULL);
	assert_non_null(veth);
	watch_run_for(&run, 800);
	assert_int_equal(run.n, 1);
	assert_string_equal(run.claimed_asked, "0000:3b:00.0");
	/* a driver bound to a function no claim holds: rediscovery */
	run.claim_all = false;
	umockdev_testbed_uevent(tb, pci, "bind");
	watch_run_until(&run, 2);
	assert_true(run.seen[1].devices_changed);
	assert_false(run.seen[1].pci_added || run.seen[1].pci_removed);
	todo = node_watch_plan(&run.seen[1], false);
	assert_true(todo.rediscover);
	/* the function's netdev appears (the driver made it): the function's change */
	net = umockdev_testbed_add_device(tb, "net", "ens3f0", pci, "mtu", "1500", NULL,
					  "INTERFACE", "ens3f0", NULL);
	assert_non_null(net);
	watch_run_until(&run, 3);
	assert_true(run.seen[2].devices_changed);
	assert_string_equal(run.claimed_asked, "0000:3b:00.0");
	/* the PF goes: rediscovery, no apply */
	umockdev_testbed_uevent(tb, pci, "remove");
	watch_run_until(&run, 4);
	assert_true(run.seen[3].pci_removed);
	assert_false(run.seen[3].pci_added);
	todo = node_watch_plan(&run.seen[3], false);
	assert_false(todo.apply);
	assert_true(todo.rediscover);
	watch_run_finish(&run);
	g_free(pci);
	g_free(usb);
	g_free(veth);
	g_free(net);
	g_object_unref(tb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hotplug_reaches_sriov_and_rediscovery),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
