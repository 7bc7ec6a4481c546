/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The accel backend on hand-built trees: an NPU with a compute-accelerator
 * node (class/accel), an edge-box inference card (class 0x1200) without one,
 * and an Intel QAT co-processor (class 0x0b40) with VFs on its kernel VF
 * driver, on vfio-pci and unbound; services, health, prepare, ownership.
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
#include "backends/sriov/sriov.h"
#include "test_backend.h"

#define NPU "0000:00:0b.0"
#define RP "pci0000:00/0000:00:1c.0"
#define HAILO "0000:02:00.0"
#define QRP "pci0000:e0/0000:e0:01.0"
#define QAT "0000:e1:00.0"
#define QVF0 "0000:e1:00.1"
#define QVF1 "0000:e1:00.2"
#define QVF2 "0000:e1:00.3"

/* The NPU's IOMMU group is 5, the Hailo card is in none; the others are numbered
 * in tree order, VFs last: the root ports 0 and 1, QAT 2, its VFs 3, 4 and 6. */
static const char BOARD[] =
	"board: accel-test\n"
	"pci:\n"
	"  - root: \"0000:00\"\n"
	"    devices:\n"
	"      - {bdf: 00:0b.0, id: \"8086:7d1d\", class: 0x120000, driver: intel_vpu, iommu_group: 5,\n"
	"         chardevs: [{name: accel0, class: accel, devname: accel/accel0, dev: \"261:0\"}]}\n"
	"      - bdf: 00:1c.0\n"
	"        id: \"8086:a0bc\"\n"
	"        devices:\n"
	"          # the driver's own class: /dev/hailo0\n"
	"          - {bdf: 02:00.0, id: \"1e60:2864\", class: 0x120000, driver: hailo, numa: -1,\n"
	"             iommu_group: null,\n"
	"             chardevs: [{name: hailo0, class: hailo_chardev, devname: hailo0, dev: \"501:0\"}]}\n"
	"  - root: \"0000:e0\"\n"
	"    devices:\n"
	"      - bdf: e0:01.0\n"
	"        id: \"8086:352a\"\n"
	"        devices:\n"
	"          - bdf: e1:00.0\n"
	"            id: \"8086:4940\"\n"
	"            class: 0x0b4000\n"
	"            driver: 4xxx\n"
	"            files: {qat/cfg_services: \"sym;dc\", qat/state: up}\n"
	"            sriov:\n"
	"              total: 16\n"
	"              num: 3\n"
	"              vf_id: \"8086:4941\"\n"
	"              vf_driver: 4xxxvf\n"
	"              vfs: {1: {driver: vfio-pci}, 2: {driver: null}}\n";

static char *build_tree(void)
{
	return board_tree(BOARD);
}

static void test_accel_devices(void **state)
{
	struct harness h;
	char *d = build_tree();

	(void)state;
	assert_int_equal(harness_init(&h, &backend_accel, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	assert_int_equal(h.sink.n, 5);	/* the QAT PF with VFs enabled is management */
	assert_null(harness_device(&h, "accel-0000-e1-00-0"));

	struct dralet_device *npu = harness_device(&h, "accel-0000-00-0b-0");
	assert_non_null(npu);
	assert_string_equal(dralet_device_kind(npu), "accel");
	assert_string_equal(attr_string(npu, "pciClass"), "0x1200");
	assert_string_equal(attr_string(npu, "driver"), "intel_vpu");
	assert_string_equal(attr_string(npu, "accelDevice"), "accel0");
	assert_string_equal(attr_string(npu, DRALET_ATTR_PCIE_ROOT), "pci0000:00");
	assert_int_equal(attr_bool(npu, "isVF"), 0);
	assert_int_equal(attr_bool(npu, "vfioCapable"), 1);
	assert_true(t_dev_node(npu, "/dev/accel/accel0"));
	assert_int_equal(dralet_device_health(npu), DRALET_HEALTH_HEALTHY);

	struct dralet_device *hailo = harness_device(&h, "accel-0000-02-00-0");
	assert_non_null(hailo);
	assert_int_equal(dralet_device_n_nodes(hailo), 1);
	assert_true(t_dev_node(hailo, "/dev/hailo0"));
	assert_int_equal(attr_bool(hailo, "vfioCapable"), 0);	/* no IOMMU group */
	assert_int_equal(attr_int(hailo, "numaNode", -7), -7);

	struct dralet_device *v0 = harness_device(&h, "accel-0000-e1-00-1");
	assert_string_equal(attr_string(v0, "pciClass"), "0x0b40");
	assert_string_equal(attr_string(v0, "services"), "sym;dc");
	assert_int_equal(attr_bool(v0, "isVF"), 1);
	assert_string_equal(attr_string(v0, "pfPciAddress"), QAT);
	assert_int_equal(attr_int(v0, "vfID", -1), 0);
	assert_int_equal(dralet_device_health(v0), DRALET_HEALTH_HEALTHY);

	struct dralet_device *v1 = harness_device(&h, "accel-0000-e1-00-2");
	assert_true(t_dev_node(v1, "/dev/vfio/4"));
	assert_true(t_dev_node(v1, "/dev/vfio/vfio"));
	struct dralet_device *v2 = harness_device(&h, "accel-0000-e1-00-3");
	assert_int_equal(dralet_device_health(v2), DRALET_HEALTH_UNHEALTHY);

	/* the QAT device goes down */
	t_write(d, QRP, QAT, "qat/state", "down");
	assert_int_equal(backend_accel.health(&h.ctx, v0), DRALET_HEALTH_UNHEALTHY);
	harness_fini(&h);
	tree_remove(d);
}

static void test_accel_prepare(void **state)
{
	struct harness h;
	struct t_req t;
	char *d = build_tree();

	(void)state;
	assert_int_equal(harness_init(&h, &backend_accel, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);

	struct dralet_device *npu = harness_device(&h, "accel-0000-00-0b-0");
	t_req_init(&t, NULL);
	assert_int_equal(backend_accel.prepare(&h.ctx, npu, &t.req), 0);
	const struct dralet_devnode *n = t_edit_node(&t, "/dev/accel/accel0");
	assert_non_null(n);
	assert_int_equal(n->major, 261);
	assert_int_equal(n->minor, 0);
	assert_string_equal(t_env(&t, "DRALET_ACCEL_0000_00_0B_0_PCI_ADDRESS"), NPU);
	assert_string_equal(t_env(&t, "DRALET_ACCEL_0000_00_0B_0_ACCEL_NODE"), "/dev/accel/accel0");
	assert_string_equal(t_env(&t, "DRALET_ACCEL_0000_00_0B_0_DRIVER"), "intel_vpu");
	t_req_clear(&t);

	struct dralet_device *hailo = harness_device(&h, "accel-0000-02-00-0");
	t_req_init(&t, NULL);
	assert_int_equal(backend_accel.prepare(&h.ctx, hailo, &t.req), 0);
	n = t_edit_node(&t, "/dev/hailo0");
	assert_non_null(n);
	assert_int_equal(n->major, 501);
	assert_string_equal(t_env(&t, "DRALET_ACCEL_0000_02_00_0_DEVICE_NODES"), "/dev/hailo0");
	t_req_clear(&t);

	struct dralet_device *v1 = harness_device(&h, "accel-0000-e1-00-2");
	t_req_init(&t, NULL);
	assert_int_equal(backend_accel.prepare(&h.ctx, v1, &t.req), 0);
	assert_non_null(t_edit_node(&t, "/dev/vfio/4"));
	assert_non_null(t_edit_node(&t, "/dev/vfio/vfio"));
	assert_string_equal(t_env(&t, "DRALET_ACCEL_0000_E1_00_2_IOMMU_GROUP"), "4");
	assert_string_equal(t_env(&t, "DRALET_ACCEL_0000_E1_00_2_SERVICES"), "sym;dc");
	t_req_clear(&t);

	struct dralet_device *v2 = harness_device(&h, "accel-0000-e1-00-3");
	t_req_init(&t, NULL);
	assert_int_equal(backend_accel.prepare(&h.ctx, v2, &t.req), -ENODEV);
	assert_non_null(strstr(h.ctx.error, "not bound"));
	t_req_clear(&t);

	/* rebound since discovery: refused until rediscovered */
	struct dralet_device *v0 = harness_device(&h, "accel-0000-e1-00-1");
	t_bind(d, QRP, QVF0, "vfio-pci");
	t_write(d, QRP, QVF0, "uevent", "DRIVER=vfio-pci\nPCI_SLOT_NAME=" QVF0);
	t_req_init(&t, NULL);
	assert_int_equal(backend_accel.prepare(&h.ctx, v0, &t.req), -EAGAIN);
	t_req_clear(&t);

	assert_int_equal(backend_accel.validate_config(&h.ctx, NULL), 0);
	assert_int_equal(backend_accel.validate_config(&h.ctx, "{}"), -EINVAL);
	/* prepare changed nothing: the backend's unprepare (the vfio form's,
	 * test_accel_vfio_form.c) finds nothing to give back */
	assert_non_null(backend_accel.unprepare);
	assert_int_equal(h.ops.unprepare(&h.ctx, v0, &t.req.claim, NULL), 0);
	harness_fini(&h);
	tree_remove(d);
}

static void test_ownership(void **state)
{
	struct t_inv t;
	char *d = build_tree();

	(void)state;
	assert_int_equal(t_inv_open(&t, d, NULL), 0);
	assert_int_equal(inventory_n_devices(t.inv, ACCEL_DRIVER), 5);
	assert_int_equal(inventory_n_devices(t.inv, SRIOV_DRIVER), 0);
	t_inv_close(&t);

	/* the operator hands QAT VFs 1-2 to the sriov backend */
	assert_int_equal(t_inv_open(&t, d, "backends:\n  sriov:\n    options:\n"
				    "      pfs: \"8086:4940#1-2\"\n"), 0);
	assert_non_null(t_find(&t, ACCEL_DRIVER, "accel-0000-e1-00-1"));
	assert_null(t_find(&t, ACCEL_DRIVER, "accel-0000-e1-00-2"));
	struct dralet_device *v = t_find(&t, SRIOV_DRIVER, "vf-0000-e1-00-2");
	assert_non_null(v);
	assert_null(attr_string(v, "linkType"));	/* not a NIC */
	assert_non_null(t_find(&t, SRIOV_DRIVER, "vf-0000-e1-00-3"));
	assert_int_equal(inventory_n_devices(t.inv, SRIOV_DRIVER), 2);
	assert_int_equal(inventory_n_devices(t.inv, ACCEL_DRIVER), 3);
	t_inv_close(&t);
	tree_remove(d);
}

static void test_garbage_vendor_files(void **state)
{
	struct harness h;
	char *d = build_tree();

	(void)state;
	t_write(d, QRP, QAT, "qat/cfg_services", "sym;<script>");
	tree_write(d, "sys/devices/pci0000:00/" NPU "/accel/accel0/dev", "nonsense");
	assert_int_equal(harness_init(&h, &backend_accel, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	struct dralet_device *v0 = harness_device(&h, "accel-0000-e1-00-1");
	assert_null(attr_string(v0, "services"));
	assert_true(h.ctx.warnings > 0);
	harness_fini(&h);
	tree_remove(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accel_devices),
		cmocka_unit_test(test_accel_prepare),
		cmocka_unit_test(test_ownership),
		cmocka_unit_test(test_garbage_vendor_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
