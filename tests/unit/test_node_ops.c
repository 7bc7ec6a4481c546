/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node_ops seam (hal/node_ops.h): driver binding and VF counts against
 * the board simulator's model of the kernel (boards/sim/board_node_ops.h,
 * linux-devices.md 2.1, 2.2): what is written, in which order, and how the
 * kernel's refusals come back; the real writer on a simulated node's plain
 * files.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <dralet/pci_ctl.h>

#include "harness.h"
#include "hal/pci_binding.h"
#include "hal/pci_sriov.h"
#include "node_model.h"
#include "test_sriov_board.h"

#define PF "0000:17:00.0"		/* the SR-IOV NIC of test_sriov_board.h */
#define NVME "0000:18:00.0"

static unsigned numvfs_now(struct node_model *k)
{
	unsigned n = 99;

	assert_int_equal(hal_pci_read_uint(&k->real, PF, "sriov_numvfs", &n), 0);
	return n;
}

static void test_numvfs_rules(void **state)
{
	struct node_model k;
	struct node_ops *io = &k.node;
	char err[256];

	(void)state;
	node_model_init(&k, SRIOV_BOARD);
	assert_int_equal(hal_sriov_set_numvfs(io, PF, 4, -1, err, sizeof(err)), 4);
	assert_int_equal(k.n_log, 1);
	assert_int_equal(numvfs_now(&k), 4);
	/* same count: nothing written */
	assert_int_equal(hal_sriov_set_numvfs(io, PF, 4, -1, err, sizeof(err)), 4);
	assert_int_equal(k.n_log, 1);
	/* a different non-zero count goes through 0 */
	assert_int_equal(hal_sriov_set_numvfs(io, PF, 6, -1, err, sizeof(err)), 6);
	assert_string_equal(k.log[1], PF "/sriov_numvfs=0");
	assert_string_equal(k.log[2], PF "/sriov_numvfs=6");
	/* autoprobe off: disable, set autoprobe, re-enable */
	assert_int_equal(hal_sriov_set_numvfs(io, PF, 6, 0, err, sizeof(err)), 6);
	assert_string_equal(k.log[3], PF "/sriov_numvfs=0");
	assert_string_equal(k.log[4], PF "/sriov_drivers_autoprobe=0");
	assert_string_equal(k.log[5], PF "/sriov_numvfs=6");
	assert_int_equal(hal_sriov_set_numvfs(io, PF, 0, -1, err, sizeof(err)), 0);
	assert_int_equal(numvfs_now(&k), 0);

	assert_int_equal(hal_sriov_set_numvfs(io, PF, 9, -1, err, sizeof(err)), -ERANGE);
	assert_non_null(strstr(err, "supports 8"));
	k.faults[0] = (struct node_model_fault){ .pf = PF, .enospc_above = 2 };
	assert_int_equal(hal_sriov_set_numvfs(io, PF, 3, -1, err, sizeof(err)), -ENOSPC);
	assert_non_null(strstr(err, PF));
	assert_non_null(strstr(err, "resources"));
	/* the PF loses its driver */
	assert_int_equal(hal_pci_unbind(io, PF, err, sizeof(err)), 0);
	assert_int_equal(hal_sriov_set_numvfs(io, PF, 1, -1, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "no driver is bound"));
	/* not a function of this node */
	assert_int_equal(hal_sriov_set_numvfs(io, "0000:00:00.0", 1, -1, err, sizeof(err)) < 0, 1);
	node_model_fini(&k);
}

/* The kernel's own answers (drivers/pci/iov.c sriov_numvfs_store), which
 * hal_sriov_set_numvfs never provokes: a count over a count, no number. */
static void test_numvfs_kernel_answers(void **state)
{
	struct node_model k;
	const char *rel = "bus/pci/devices/" PF "/sriov_numvfs";

	(void)state;
	node_model_init(&k, SRIOV_BOARD);
	assert_int_equal(k.node.write(k.node.userdata, rel, "2"), 0);
	assert_int_equal(k.node.write(k.node.userdata, rel, "3"), -EBUSY);
	assert_int_equal(k.node.write(k.node.userdata, rel, "2"), 0);
	assert_int_equal(k.node.write(k.node.userdata, rel, "9"), -ERANGE);
	assert_int_equal(k.node.write(k.node.userdata, rel, "two"), -EINVAL);
	assert_int_equal(numvfs_now(&k), 2);
	assert_true(node_model_has(&k, "0000:17:00.2"));
	assert_false(node_model_has(&k, "0000:17:00.3"));
	assert_int_equal(k.node.write(k.node.userdata, rel, "0"), 0);
	assert_false(node_model_has(&k, "0000:17:00.1"));
	/* read-only attributes stay as they are; what is not there is not there */
	assert_int_equal(k.node.write(k.node.userdata, "bus/pci/devices/" NVME "/sriov_nothing", "1"),
			 -ENOENT);
	assert_int_equal(k.node.write(k.node.userdata, "bus/pci/devices/" PF "/sriov_totalvfs", "4"),
			 -EACCES);
	node_model_fini(&k);
}

static void test_bind_and_restore(void **state)
{
	struct node_model k;
	struct node_ops *io = &k.node;
	char err[256], drv[32];

	(void)state;
	node_model_init(&k, SRIOV_BOARD);
	assert_int_equal(hal_pci_set_driver(io, NVME, "vfio-pci", err, sizeof(err)), 0);
	assert_int_equal(hal_pci_driver(&k.real, NVME, drv, sizeof(drv)), 0);
	assert_string_equal(drv, "vfio-pci");
	assert_string_equal(k.log[0], NVME "/driver_override=vfio-pci");
	assert_string_equal(k.log[1], NVME "/driver/unbind=" NVME);
	assert_string_equal(k.log[2], "bus/pci/drivers_probe=" NVME);
	/* idempotent */
	assert_int_equal(hal_pci_set_driver(io, NVME, "vfio-pci", err, sizeof(err)), 0);
	assert_int_equal(k.n_log, 3);
	/* back to the kernel's choice */
	assert_int_equal(hal_pci_set_driver(io, NVME, NULL, err, sizeof(err)), 0);
	assert_int_equal(hal_pci_driver(io, NVME, drv, sizeof(drv)), 0);
	assert_string_equal(drv, "nvme");
	assert_int_equal(hal_pci_driver_override(&k.real, NVME, drv, sizeof(drv)), 0);
	assert_string_equal(drv, "");
	assert_int_equal(hal_pci_set_driver(io, NVME, NULL, err, sizeof(err)), 0);
	assert_int_equal(k.n_log, 6);

	/* vfio-pci not loaded: a clear error */
	board_node_set_loaded(k.bn, "vfio-pci", false);
	assert_int_equal(hal_pci_set_driver(io, NVME, "vfio-pci", err, sizeof(err)), -EIO);
	assert_non_null(strstr(err, "did not bind to vfio-pci"));
	assert_non_null(strstr(err, "module loaded"));
	node_model_fini(&k);
}

/* The SDK's one answer to "which driver is bound now" reads the driver link
 * through the context's node_ops: its length, 0 unbound, -ENODEV gone,
 * and no error message either way. */
static void test_sdk_driver_now(void **state)
{
	struct node_model k;
	struct dralet_backend_ctx ctx = { 0 };
	char drv[32], err[256];

	(void)state;
	node_model_init(&k, SRIOV_BOARD);
	assert_int_equal(hal_pci_set_driver(&k.node, NVME, "vfio-pci", err, sizeof(err)), 0);
	ctx.node = &k.node;
	assert_int_equal(dralet_pci_driver(&ctx, NVME, drv, sizeof(drv)), 8);
	assert_string_equal(drv, "vfio-pci");
	assert_int_equal(hal_pci_unbind(&k.node, NVME, err, sizeof(err)), 0);
	assert_int_equal(dralet_pci_driver(&ctx, NVME, drv, sizeof(drv)), 0);
	assert_string_equal(drv, "");
	assert_int_equal(dralet_pci_driver(&ctx, "0000:19:00.0", drv, sizeof(drv)), -ENODEV);
	assert_int_equal(dralet_pci_driver(&ctx, "nonsense", drv, sizeof(drv)), -EINVAL);
	assert_string_equal(ctx.error, "");

	/* the binding (driver and override) the same way; gone is an error that says so */
	char override[32];
	assert_int_equal(dralet_pci_binding(&ctx, NVME, drv, sizeof(drv), override,
					    sizeof(override)), 0);
	assert_string_equal(drv, "");
	assert_int_equal(hal_pci_set_driver(&k.node, NVME, "vfio-pci", err, sizeof(err)), 0);
	assert_int_equal(dralet_pci_binding(&ctx, NVME, drv, sizeof(drv), override,
					    sizeof(override)), 0);
	assert_string_equal(drv, "vfio-pci");
	assert_string_equal(override, "vfio-pci");
	assert_string_equal(ctx.error, "");
	assert_int_equal(dralet_pci_binding(&ctx, "0000:19:00.0", drv, sizeof(drv), override,
					    sizeof(override)), -ENODEV);
	assert_non_null(strstr(ctx.error, "is gone"));
	node_model_fini(&k);
}

/* On a simulated node's tree (plain files) a write replaces the whole
 * value, as a sysfs attribute does: 8 over 64 is 8, not 84. */
static void test_real_write_on_tree_replaces_value(void **state)
{
	struct hal_roots roots = { 0 };
	char *dir = tree_new(), sys[4096], buf[64];
	struct node_ops io;

	(void)state;
	snprintf(sys, sizeof(sys), "%s/sys", dir);
	roots.sys = sys;
	io = node_ops_real(&roots);
	assert_int_equal(tree_write(dir, "sys/bus/pci/devices/" PF "/sriov_numvfs", "64"), 0);
	assert_int_equal(io.write(io.userdata, "bus/pci/devices/" PF "/sriov_numvfs", "8"), 0);
	assert_int_equal(io.read(io.userdata, "bus/pci/devices/" PF "/sriov_numvfs", buf,
				 sizeof(buf)), 1);
	assert_string_equal(buf, "8");
	tree_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numvfs_rules),
		cmocka_unit_test(test_numvfs_kernel_answers),
		cmocka_unit_test(test_bind_and_restore),
		cmocka_unit_test(test_sdk_driver_now),
		cmocka_unit_test(test_real_write_on_tree_replaces_value),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
