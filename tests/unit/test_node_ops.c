/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node_ops seam (hal/node_ops.h): driver binding and VF counts against
 * a model of the kernel's sysfs rules (linux-devices.md 2.1, 2.2): what is
 * written, in which order, and how the kernel's refusals come back; the real
 * writer on a simulated node's plain files.
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
#include "hal/pci_sriov.h"

#define PF "0000:3b:00.0"

struct kernel {
	unsigned total, numvfs, autoprobe;
	bool pf_driver;			/* a driver with sriov_configure is bound */
	bool enospc_above;		/* resources for at most 'limit' VFs */
	unsigned limit;
	char driver[32];		/* bound driver of the function */
	char override[32];
	char default_driver[32];	/* what the kernel picks without an override */
	bool vfio_loaded;
	bool gone;			/* the function was removed */
	char log[16][96];
	int n_log;
};

static int k_write(void *ud, const char *rel, const char *value)
{
	struct kernel *k = ud;
	const char *file = strrchr(rel, '/') + 1;

	snprintf(k->log[k->n_log++ % 16], sizeof(k->log[0]), "%s=%s", file, value);
	if (!strcmp(file, "sriov_numvfs")) {
		unsigned n = (unsigned)atoi(value);
		if (!k->pf_driver)
			return -ENOENT;
		if (n > k->total)
			return -ERANGE;
		if (n && k->numvfs)
			return -EBUSY;
		if (k->enospc_above && n > k->limit)
			return -ENOSPC;
		k->numvfs = n;
		return 0;
	}
	if (!strcmp(file, "sriov_drivers_autoprobe")) {
		k->autoprobe = (unsigned)atoi(value);
		return 0;
	}
	if (!strcmp(file, "driver_override")) {
		snprintf(k->override, sizeof(k->override), "%s", strcmp(value, "\n") ? value : "");
		return 0;
	}
	if (!strcmp(file, "unbind")) {
		k->driver[0] = '\0';
		return 0;
	}
	if (!strcmp(file, "drivers_probe")) {
		if (k->driver[0])
			return 0;
		const char *want = k->override[0] ? k->override : k->default_driver;
		if (!strcmp(want, "vfio-pci") && !k->vfio_loaded)
			return -ENODEV;
		snprintf(k->driver, sizeof(k->driver), "%s", want);
		return 0;
	}
	return -EACCES;
}

static int k_read(void *ud, const char *rel, char *buf, size_t size)
{
	struct kernel *k = ud;
	const char *file = strrchr(rel, '/') + 1;

	if (!strcmp(file, "sriov_totalvfs"))
		return snprintf(buf, size, "%u", k->total);
	if (!strcmp(file, "sriov_numvfs"))
		return snprintf(buf, size, "%u", k->numvfs);
	if (!strcmp(file, "sriov_drivers_autoprobe"))
		return snprintf(buf, size, "%u", k->autoprobe);
	if (!strcmp(file, "driver_override"))
		return snprintf(buf, size, "%s", k->override[0] ? k->override : "(null)");
	if (!strcmp(file, "vendor") && !k->gone)
		return snprintf(buf, size, "0x8086");
	return -ENOENT;
}

static int k_readlink(void *ud, const char *rel, char *buf, size_t size)
{
	struct kernel *k = ud;

	if (strcmp(strrchr(rel, '/') + 1, "driver") || !k->driver[0])
		return -ENOENT;
	return snprintf(buf, size, "../../../bus/pci/drivers/%s", k->driver);
}

/* The model's sysfs side; VF settings are no part of these tests. */
static struct node_ops io_of(struct kernel *k)
{
	return (struct node_ops){ .write = k_write, .read = k_read, .readlink = k_readlink,
				  .userdata = k };
}

static void test_numvfs_rules(void **state)
{
	struct kernel k = { .total = 16, .autoprobe = 1, .pf_driver = true };
	struct node_ops io = io_of(&k);
	char err[256];

	(void)state;
	assert_int_equal(hal_sriov_set_numvfs(&io, PF, 4, -1, err, sizeof(err)), 4);
	assert_int_equal(k.n_log, 1);
	/* same count: nothing written */
	assert_int_equal(hal_sriov_set_numvfs(&io, PF, 4, -1, err, sizeof(err)), 4);
	assert_int_equal(k.n_log, 1);
	/* a different non-zero count goes through 0 */
	assert_int_equal(hal_sriov_set_numvfs(&io, PF, 8, -1, err, sizeof(err)), 8);
	assert_string_equal(k.log[1], "sriov_numvfs=0");
	assert_string_equal(k.log[2], "sriov_numvfs=8");
	/* autoprobe off: disable, set autoprobe, re-enable */
	assert_int_equal(hal_sriov_set_numvfs(&io, PF, 8, 0, err, sizeof(err)), 8);
	assert_string_equal(k.log[3], "sriov_numvfs=0");
	assert_string_equal(k.log[4], "sriov_drivers_autoprobe=0");
	assert_string_equal(k.log[5], "sriov_numvfs=8");
	assert_int_equal(hal_sriov_set_numvfs(&io, PF, 0, -1, err, sizeof(err)), 0);
	assert_int_equal(k.numvfs, 0);

	assert_int_equal(hal_sriov_set_numvfs(&io, PF, 17, -1, err, sizeof(err)), -ERANGE);
	assert_non_null(strstr(err, "supports 16"));
	k.enospc_above = true;
	k.limit = 2;
	assert_int_equal(hal_sriov_set_numvfs(&io, PF, 3, -1, err, sizeof(err)), -ENOSPC);
	assert_non_null(strstr(err, PF));
	assert_non_null(strstr(err, "resources"));
	k.pf_driver = false;
	assert_int_equal(hal_sriov_set_numvfs(&io, PF, 1, -1, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "no driver is bound"));
	k.total = 0;
	assert_int_equal(hal_sriov_set_numvfs(&io, "0000:00:00.0", 1, -1, err, sizeof(err)) < 0, 1);
}

static void test_bind_and_restore(void **state)
{
	struct kernel k = { .vfio_loaded = true };
	struct node_ops io = io_of(&k);
	char err[256], drv[32];

	(void)state;
	strcpy(k.driver, "nvme");
	strcpy(k.default_driver, "nvme");
	assert_int_equal(hal_pci_set_driver(&io, PF, "vfio-pci", err, sizeof(err)), 0);
	assert_string_equal(k.driver, "vfio-pci");
	assert_string_equal(k.log[0], "driver_override=vfio-pci");
	assert_string_equal(k.log[1], "unbind=" PF);
	assert_string_equal(k.log[2], "drivers_probe=" PF);
	/* idempotent */
	assert_int_equal(hal_pci_set_driver(&io, PF, "vfio-pci", err, sizeof(err)), 0);
	assert_int_equal(k.n_log, 3);
	/* back to the kernel's choice */
	assert_int_equal(hal_pci_set_driver(&io, PF, NULL, err, sizeof(err)), 0);
	assert_int_equal(hal_pci_driver(&io, PF, drv, sizeof(drv)), 0);
	assert_string_equal(drv, "nvme");
	assert_string_equal(k.override, "");
	assert_int_equal(hal_pci_set_driver(&io, PF, NULL, err, sizeof(err)), 0);
	assert_int_equal(k.n_log, 6);

	/* vfio-pci not loaded: a clear error */
	k.vfio_loaded = false;
	assert_int_equal(hal_pci_set_driver(&io, PF, "vfio-pci", err, sizeof(err)), -EIO);
	assert_non_null(strstr(err, "did not bind to vfio-pci"));
	assert_non_null(strstr(err, "module loaded"));
}

/* The SDK's one answer to "which driver is bound now" reads the driver link
 * through the context's node_ops: its length, 0 unbound, -ENODEV gone,
 * and no error message either way. */
static void test_sdk_driver_now(void **state)
{
	struct kernel k = { .vfio_loaded = true };
	struct node_ops io = io_of(&k);
	struct dralet_backend_ctx ctx = { .node = &io };
	char drv[32];

	(void)state;
	strcpy(k.driver, "vfio-pci");
	assert_int_equal(dralet_pci_driver(&ctx, PF, drv, sizeof(drv)), 8);
	assert_string_equal(drv, "vfio-pci");
	k.driver[0] = '\0';
	assert_int_equal(dralet_pci_driver(&ctx, PF, drv, sizeof(drv)), 0);
	assert_string_equal(drv, "");
	k.gone = true;
	assert_int_equal(dralet_pci_driver(&ctx, PF, drv, sizeof(drv)), -ENODEV);
	assert_int_equal(dralet_pci_driver(&ctx, "nonsense", drv, sizeof(drv)), -EINVAL);
	assert_string_equal(ctx.error, "");
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
		cmocka_unit_test(test_bind_and_restore),
		cmocka_unit_test(test_sdk_driver_now),
		cmocka_unit_test(test_real_write_on_tree_replaces_value),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
