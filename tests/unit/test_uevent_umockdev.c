/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The hot-plug monitor against umockdev's simulated uevents (run under
 * umockdev-wrapper): relevant subsystems arrive with their action, others
 * are filtered out.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <umockdev.h>

#include "hal/uevent.h"

struct seen {
	char actions[8][16];
	char subsystems[8][32];
	char names[8][64];
	char addresses[8][HAL_UEVENT_ADDRESS_SIZE];
	int n;
};

static void record(void *userdata, const struct hal_uevent *ev)
{
	struct seen *s = userdata;

	if (s->n < 8) {
		snprintf(s->actions[s->n], sizeof(s->actions[0]), "%s", ev->action);
		snprintf(s->subsystems[s->n], sizeof(s->subsystems[0]), "%s", ev->subsystem);
		snprintf(s->names[s->n], sizeof(s->names[0]), "%s", ev->sysname);
		snprintf(s->addresses[s->n], sizeof(s->addresses[0]), "%s", ev->pci_address);
	}
	s->n++;
}

static int wait_and_drain(struct hal_uevent_monitor *mon, struct seen *s, int want)
{
	for (int tries = 0; tries < 50 && s->n < want; tries++) {
		struct pollfd p = { .fd = hal_uevent_fd(mon), .events = POLLIN };
		if (poll(&p, 1, 100) > 0 && hal_uevent_drain(mon, record, s) < 0)
			return -1;
	}
	return s->n;
}

static void test_events(void **state)
{
	UMockdevTestbed *tb = umockdev_testbed_new();
	struct hal_uevent_monitor *mon;
	struct seen s = { .n = 0 };
	gchar *pci, *usb, *net, *veth;

	(void)state;
	if (!umockdev_in_mock_environment())
		fail_msg("not under umockdev-wrapper (tests/run-tests.sh runs *_umockdev tests with it)");
	assert_int_equal(hal_uevent_open(&mon), 0);
	pci = umockdev_testbed_add_device(tb, "pci", "0000:3b:00.0", NULL, "vendor", "0x10de",
					  "device", "0x2330", "class", "0x030200", NULL,
					  "PCI_ID", "10DE:2330", NULL);
	usb = umockdev_testbed_add_device(tb, "usb", "1-1", NULL, "idVendor", "0001", NULL,
					  "DEVTYPE", "usb_device", NULL);
	assert_non_null(pci);
	assert_non_null(usb);
	/* add_device already sent "add" for both; add a change and a bind */
	umockdev_testbed_uevent(tb, pci, "change");
	umockdev_testbed_uevent(tb, usb, "change");
	umockdev_testbed_uevent(tb, pci, "bind");
	assert_int_equal(wait_and_drain(mon, &s, 3), 3);
	for (int i = 0; i < 3; i++) {
		assert_string_equal(s.subsystems[i], "pci");
		assert_string_equal(s.names[i], "0000:3b:00.0");
		assert_string_equal(s.addresses[i], "0000:3b:00.0");
	}
	assert_string_equal(s.actions[0], "add");
	assert_string_equal(s.actions[1], "change");
	assert_string_equal(s.actions[2], "bind");
	/* a class device below the function carries the function's address; a
	 * virtual one none */
	net = umockdev_testbed_add_device(tb, "net", "ens3f0", pci, "mtu", "1500", NULL,
					  "INTERFACE", "ens3f0", NULL);
	veth = umockdev_testbed_add_device(tb, "net", "veth9", NULL, "mtu", "1500", NULL,
					   "INTERFACE", "veth9", NULL);
	assert_int_equal(wait_and_drain(mon, &s, 5), 5);
	assert_string_equal(s.subsystems[3], "net");
	assert_string_equal(s.names[3], "ens3f0");
	assert_string_equal(s.addresses[3], "0000:3b:00.0");
	assert_string_equal(s.names[4], "veth9");
	assert_string_equal(s.addresses[4], "");
	hal_uevent_close(mon);
	g_free(net);
	g_free(veth);
	g_free(pci);
	g_free(usb);
	g_object_unref(tb);
}

/* The function a DEVPATH belongs to, whatever the mount point of sysfs. */
static void test_pci_address_of_devpath(void **state)
{
	static const char *const cases[][2] = {
		{ "/devices/pci0000:00/0000:00:01.0/0000:01:00.3/net/eth3", "0000:01:00.3" },
		{ "/devices/pci0000:00/0000:00:01.0", "0000:00:01.0" },
		{ "/devices/pci10000:e0/10000:e0:01.0/10000:e1:00.0/nvme/nvme0", "10000:e1:00.0" },
		{ "/devices/pci0000:00/0000:00:02.0/drm/card0", "0000:00:02.0" },
		{ "/devices/virtual/net/veth1a2b", "" },
		{ "/module/nvidia", "" },
		{ "/devices/pci0000:00/0000:zz:01.0/x", "" },
		{ "", "" },
	};
	char buf[HAL_UEVENT_ADDRESS_SIZE];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		hal_uevent_pci_address(cases[i][0], buf, sizeof(buf));
		assert_string_equal(buf, cases[i][1]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pci_address_of_devpath),
		cmocka_unit_test(test_events),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
