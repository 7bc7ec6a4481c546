/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The net and sriov backends on the simulated boards: hgx-h100 (8 ConnectX-7
 * in RoCE mode with 16 VFs each, each behind the PCIe switch of one H100)
 * and e810 (an E810 with 64 VFs, some on vfio-pci). The assertions follow
 * from the scan, so they hold for any layout of those boards; a board that
 * is not there (or cannot be materialized) skips its test.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "backends/net/net.h"
#include "backends/common/pcidev.h"
#include "backends/sriov/sriov.h"
#include "test_backend.h"

static void test_hgx_h100(void **state)
{
	bool temp;
	char *tree = t_board("hgx-h100", &temp);
	struct t_inv t;
	char name[64];
	size_t n_ib = 0, n_pf = 0, n_vf = 0;

	(void)state;
	if (!tree)
		skip();
	assert_int_equal(t_inv_open(&t, tree, NULL), 0);
	const struct hal_scan *scan = inventory_scan(t.inv);
	for (size_t i = 0; i < scan->n_funcs; i++) {
		const struct dralet_pci_func *f = scan->funcs[i];
		if (!f->n_ib || f->unsafe_reason)
			continue;
		n_ib++;
		t_name("rdma", f->address, name, sizeof(name));
		struct dralet_device *dev = t_find(&t, NET_DRIVER, name);
		if (!dev)
			fail_msg("no %s", name);
		assert_true(dralet_device_n_attrs(dev) <= DRALET_ATTRS_AND_CAPACITIES_MAX);
		assert_int_equal(dralet_device_health(dev), DRALET_HEALTH_HEALTHY);
		assert_string_equal(attr_string(dev, "linkLayer"), "Ethernet");
		assert_int_equal(attr_int(dev, "rateGbps", 0), 400);
		assert_true(t_dev_node(dev, f->ib[0].uverbs.path));
		if (f->physfn) {
			n_vf++;
			assert_string_equal(attr_string(dev, "pfPciAddress"), f->physfn->address);
			continue;
		}
		n_pf++;
		/* scenario 6: the NIC shares its switch and root with one GPU */
		const struct dralet_pci_func *gpu = NULL;
		for (size_t j = 0; j < scan->n_funcs; j++)
			if (scan->funcs[j]->vendor_id == 0x10de &&
			    scan->funcs[j]->pcie_switch == f->pcie_switch)
				gpu = scan->funcs[j];
		assert_non_null(gpu);
		assert_non_null(f->pcie_switch);
		assert_string_equal(attr_string(dev, "pcieSwitch"), gpu->pcie_switch->address);
		assert_string_equal(attr_string(dev, DRALET_ATTR_PCIE_ROOT), gpu->pcie_root);

		struct t_req r;
		struct dralet_backend_ctx *ctx = inventory_ctx_of(t.inv, dev);
		t_req_init(&r, NULL);
		assert_int_equal(inventory_backend_of(t.inv, dev)->prepare(ctx, dev, &r.req), 0);
		assert_non_null(t_edit_node(&r, f->ib[0].uverbs.path));
		assert_non_null(t_edit_node(&r, "/dev/infiniband/rdma_cm"));
		t_req_clear(&r);
	}
	assert_int_equal(n_pf, 8);
	assert_int_equal(n_vf, 128);
	assert_int_equal(inventory_n_devices(t.inv, NET_DRIVER), n_ib);
	/* the management NICs (default route, plain PF) are not published */
	assert_null(t_find(&t, NET_DRIVER, "vf-0000-08-00-0"));
	assert_null(t_find(&t, NET_DRIVER, "rdma-0000-08-00-0"));
	t_inv_close(&t);

	/* VFs 0-7 of every ConnectX-7 go to the sriov backend */
	assert_int_equal(t_inv_open(&t, tree, "backends:\n  sriov:\n    options:\n"
				    "      pfs: \"15b3:1021#0-7\"\n"), 0);
	assert_int_equal(inventory_n_devices(t.inv, SRIOV_DRIVER), 64);
	assert_int_equal(inventory_n_devices(t.inv, NET_DRIVER), n_ib - 64);
	for (size_t i = 0; i < inventory_n_devices(t.inv, SRIOV_DRIVER); i++) {
		struct dralet_device *dev = inventory_device(t.inv, SRIOV_DRIVER, i);
		assert_int_equal(attr_bool(dev, "rdmaCapable"), 1);
		assert_true(attr_int(dev, "vfID", -1) <= 7);
		assert_string_equal(attr_string(dev, "linkType"), "ethernet");
	}
	t_inv_close(&t);
	t_board_free(tree, temp);
}

static void test_e810(void **state)
{
	bool temp;
	char *tree = t_board("e810", &temp);
	struct t_inv t;
	char name[64];
	size_t n_vfs = 0, n_vfio = 0;

	(void)state;
	if (!tree)
		skip();
	assert_int_equal(t_inv_open(&t, tree, NULL), 0);
	const struct hal_scan *scan = inventory_scan(t.inv);
	for (size_t i = 0; i < scan->n_funcs; i++) {
		const struct dralet_pci_func *f = scan->funcs[i];
		if (!f->physfn || dralet_pci_class(f->physfn) != 0x02 || f->unsafe_reason)
			continue;
		n_vfs++;
		t_name(f->n_ib ? "rdma" : "vf", f->address, name, sizeof(name));
		struct dralet_device *dev = t_find(&t, NET_DRIVER, name);
		if (!dev)
			fail_msg("no %s", name);
		if (f->n_ib || !pcidev_is_vfio(f))
			continue;
		n_vfio++;
		assert_string_equal(attr_string(dev, "driver"), "vfio-pci");
		struct t_req r;
		struct dralet_backend_ctx *ctx = inventory_ctx_of(t.inv, dev);
		t_req_init(&r, NULL);
		assert_int_equal(inventory_backend_of(t.inv, dev)->prepare(ctx, dev, &r.req), 0);
		char group[32];
		snprintf(group, sizeof(group), "/dev/vfio/%d", f->iommu_group);
		assert_non_null(t_edit_node(&r, group));
		assert_non_null(t_edit_node(&r, "/dev/vfio/vfio"));
		t_req_clear(&r);
	}
	assert_true(n_vfs >= 64);
	assert_true(n_vfio > 0);
	t_inv_close(&t);

	/* every VF of the ice PFs moves to sriov.dralet.dev */
	assert_int_equal(t_inv_open(&t, tree, "backends:\n  sriov:\n    options:\n"
				    "      pfs: \"driver=ice\"\n"), 0);
	assert_true(inventory_n_devices(t.inv, SRIOV_DRIVER) >= 64);
	t_inv_close(&t);
	t_board_free(tree, temp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hgx_h100),
		cmocka_unit_test(test_e810),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
