/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The accel backend on the simulated edge-box board (a class 0x1200
 * accelerator): every processing accelerator no other family claims is one
 * "accel" device with its nodes, prepared with them. Skipped without the
 * board.
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
#include "test_backend.h"

static void test_edge_box(void **state)
{
	bool temp;
	char *tree = t_board("edge-box", &temp);
	struct t_inv t;
	char name[80];
	size_t n = 0;

	(void)state;
	if (!tree)
		skip();
	assert_int_equal(t_inv_open(&t, tree, NULL), 0);
	for (size_t i = 0; i < inventory_n_devices(t.inv, ACCEL_DRIVER); i++) {
		struct dralet_device *dev = inventory_device(t.inv, ACCEL_DRIVER, i);
		const struct dralet_pci_func *f = dralet_device_pci(dev);
		n++;
		t_name("accel", f->address, name, sizeof(name));
		assert_string_equal(dralet_device_name(dev), name);
		assert_true(dralet_pci_class(f) == 0x12 || dralet_pci_class_sub(f) == 0x0b40);
		for (size_t k = 0; k < f->n_accel; k++)
			assert_true(t_dev_node(dev, f->accel[k].node.path));
		if (!f->driver)
			continue;
		struct t_req r;
		t_req_init(&r, NULL);
		assert_int_equal(inventory_backend_of(t.inv, dev)->prepare(inventory_ctx_of(t.inv, dev),
									 dev, &r.req), 0);
		for (size_t k = 0; k < dralet_device_n_nodes(dev); k++)
			assert_non_null(t_edit_node(&r, dralet_device_node(dev, k)->path));
		t_req_clear(&r);
	}
	assert_true(n > 0);
	t_inv_close(&t);
	t_board_free(tree, temp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edge_box),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
