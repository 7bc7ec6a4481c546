/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fpga family on the simulated fpga-server board (Alveo cards and Intel
 * DFL cards). The assertions follow from the scan (every XRT user PF is one
 * device paired with the management PF of its slot, every DFL port one
 * device, nothing of them reaches the accel backend), so they hold for any
 * layout of the board; without the board the test is skipped.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "backends/accel/accel.h"
#include "backends/fpga/fpga.h"
#include "test_backend.h"

static bool same_slot(const struct dralet_pci_func *a, const struct dralet_pci_func *b)
{
	return a->domain == b->domain && a->bus == b->bus && a->dev == b->dev;
}

static void test_fpga_server(void **state)
{
	bool temp;
	char *tree = t_board("fpga-server", &temp);
	struct t_inv t;
	char name[80];
	size_t n_user = 0, n_ports = 0;

	(void)state;
	if (!tree)
		skip();
	assert_int_equal(t_inv_open(&t, tree, NULL), 0);
	const struct hal_scan *scan = inventory_scan(t.inv);
	for (size_t i = 0; i < scan->n_funcs; i++) {
		const struct dralet_pci_func *f = scan->funcs[i];

		/* nothing of an FPGA card is an accel device */
		if (f->xrt || f->n_dfl_fmes || f->n_dfl_ports) {
			t_name("accel", f->address, name, sizeof(name));
			assert_null(t_find(&t, ACCEL_DRIVER, name));
		}
		if (f->xrt && f->xrt->mgmt_pf) {
			t_name("fpga", f->address, name, sizeof(name));
			assert_null(t_find(&t, FPGA_DRIVER, name));
		}
		if (f->xrt && f->xrt->user_pf) {
			n_user++;
			t_name("fpga", f->address, name, sizeof(name));
			struct dralet_device *dev = t_find(&t, FPGA_DRIVER, name);
			if (!dev)
				fail_msg("no %s", name);
			assert_string_equal(attr_string(dev, "framework"), "xrt");
			assert_non_null(attr_string(dev, "shell"));
			const char *mgmt = attr_string(dev, "mgmtPciAddress");
			assert_non_null(mgmt);
			const struct dralet_pci_func *m = hal_scan_find(scan, mgmt);
			assert_non_null(m);
			assert_true(same_slot(m, f));
			assert_true(m->xrt && m->xrt->mgmt_pf);
			for (size_t k = 0; k < f->n_drm; k++)
				assert_true(t_dev_node(dev, f->drm[k].node.path));

			struct t_req r;
			char cfg[256];
			struct dralet_backend_ctx *ctx = inventory_ctx_of(t.inv, dev);
			snprintf(cfg, sizeof(cfg), "{\"apiVersion\":\"fpga.dralet.dev/v1alpha1\","
				 "\"kind\":\"FpgaConfig\",\"requireShell\":\"%s\"}",
				 attr_string(dev, "shell"));
			t_req_init(&r, cfg);
			assert_int_equal(inventory_backend_of(t.inv, dev)->prepare(ctx, dev, &r.req), 0);
			t_req_clear(&r);
		}
		for (size_t k = 0; k < f->n_dfl_ports; k++) {
			n_ports++;
			t_name("fpga", f->address, name, sizeof(name));
			char port[80];
			snprintf(port, sizeof(port), "%s-port%d", name,
				 f->dfl_ports[k].id >= 0 ? f->dfl_ports[k].id : (int)k);
			struct dralet_device *dev = t_find(&t, FPGA_DRIVER, port);
			if (!dev)
				fail_msg("no %s", port);
			assert_string_equal(attr_string(dev, "framework"), "dfl");
			assert_true(t_dev_node(dev, f->dfl_ports[k].node.path));
		}
	}
	assert_true(n_user + n_ports > 0);
	t_inv_close(&t);
	t_board_free(tree, temp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fpga_server),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
