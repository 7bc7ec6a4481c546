/* SPDX-License-Identifier: Apache-2.0 */
/* The device model: names, common attributes, limits, capacities, nodes;
 * resolving device nodes and recording undo state (the SDK's prepare side). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <dralet/counters.h>

#include "agent/core/edits.h"
#include "board_snippet.h"
#include "harness.h"

static struct dralet_pci_func sample_func(void)
{
	static struct dralet_pci_func sw = { .address = "0000:01:00.0" };
	struct dralet_pci_func f = {
		.address = "0000:3B:00.0", .vendor_id = 0x10de, .device_id = 0x2330,
		.class_code = 0x030200, .numa_node = 1, .iommu_group = 40, .pcie_root = "pci0000:3a",
		.pcie_switch = &sw, .device_name = "GH100 [H100 SXM5 80GB]",
		.link = { .current_mts = 32000, .current_width = 16 }, .vf_index = -1,
	};
	return f;
}

static void test_name_and_common_attributes(void **state)
{
	struct harness h;
	struct dralet_device *d;
	struct dralet_pci_func f = sample_func();

	(void)state;
	assert_int_equal(harness_init(&h, &harness_plain_backend, NULL, NULL), 0);
	h.ctx.sink = &h.sink;
	assert_int_equal(dralet_device_new(&h.ctx, &f, "gpu", NULL, &d), 0);
	assert_string_equal(dralet_device_name(d), "gpu-0000-3b-00-0");
	assert_string_equal(attr_string(d, "resource.kubernetes.io/pcieRoot"), "pci0000:3a");
	assert_string_equal(attr_string(d, "resource.kubernetes.io/pciBusID"), "0000:3B:00.0");
	assert_int_equal(attr_int(d, "numaNode", -1), 1);
	assert_int_equal(attr_int(d, "resource.kubernetes.io/numaNode", -1), 1);
	assert_int_equal(attr_int(d, "iommuGroup", -1), 40);
	assert_string_equal(attr_string(d, "pcieSwitch"), "0000:01:00.0");
	assert_string_equal(attr_string(d, "dralet.dev/pcieSwitch"), "0000:01:00.0");
	assert_string_equal(attr_string(d, "vendorID"), "0x10de");
	assert_string_equal(attr_string(d, "deviceID"), "0x2330");
	assert_string_equal(attr_string(d, "productName"), "GH100 [H100 SXM5 80GB]");
	assert_int_equal(attr_int(d, "pcieGeneration", -1), 5);
	assert_int_equal(attr_int(d, "pcieLinkWidth", -1), 16);
	assert_string_equal(dralet_device_driver(d), "accel.dralet.dev");

	/* suffixes are sanitised; a duplicate name is refused */
	assert_int_equal(dralet_device_new(&h.ctx, &f, "gpu", "MIG 1g.10gb+me/0", &d), 0);
	assert_string_equal(dralet_device_name(d), "gpu-0000-3b-00-0-mig-1g-10gb-me-0");
	assert_int_equal(dralet_device_new(&h.ctx, &f, "gpu", NULL, &d), -EEXIST);
	assert_int_equal(dralet_device_new(&h.ctx, &f, "Bad Kind", NULL, &d), -EINVAL);
	assert_int_equal(dralet_device_new(&h.ctx, NULL, "gpu", NULL, &d), -EINVAL);
	assert_int_equal(dralet_device_new(&h.ctx, &f, "gpu",
		"a-very-long-suffix-that-does-not-fit-into-a-dns-label-at-all", &d), -EINVAL);
	harness_fini(&h);
}

static void test_limits_and_values(void **state)
{
	struct harness h;
	struct dralet_device *d;
	struct dralet_pci_func f = sample_func();
	char name[40];
	int accepted = 0;

	(void)state;
	assert_int_equal(harness_init(&h, &harness_plain_backend, NULL, NULL), 0);
	h.ctx.sink = &h.sink;
	assert_int_equal(dralet_device_new(&h.ctx, &f, "accel", NULL, &d), 0);
	size_t base = dralet_device_n_attrs(d);

	assert_int_equal(dralet_device_set_string(d, "bad name", "x"), -EINVAL);
	assert_int_equal(dralet_device_set_string(d, "long", "0123456789012345678901234567890123456789"
						  "0123456789012345678901234"), -EINVAL);
	assert_int_equal(dralet_device_set_version(d, "fw", "not a version"), -EINVAL);
	assert_int_equal(dralet_device_set_version(d, "driverVersion", "535.104.05"), 0);
	assert_string_equal(attr_string(d, "driverVersion"), "535.104.5");
	assert_int_equal(dralet_device_set_capacity(d, "memory", "80GB"), -EINVAL);
	assert_int_equal(dralet_device_set_capacity_bytes(d, "memory", 80ull << 30), 0);
	assert_string_equal(capacity(d, "memory"), "80Gi");
	assert_int_equal(dralet_device_set_int(d, "numaNode", 0), 0);	/* replaces */
	assert_int_equal(attr_int(d, "numaNode", -1), 0);
	assert_int_equal(dralet_device_n_attrs(d), base + 1);
	assert_int_equal(h.ctx.warnings, 4);

	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "extra%d", i);
		accepted += dralet_device_set_bool(d, name, true) == 0;
	}
	assert_int_equal(dralet_device_n_attrs(d) + dralet_device_n_capacities(d), 32);
	assert_int_equal(accepted, (int)(32 - base - 1 - 1));
	assert_int_equal(dralet_device_remove_attr(d, "extra0"), 0);
	assert_int_equal(dralet_device_remove_attr(d, "extra0"), -ENOENT);

	struct dralet_devnode n = { "/dev/nvidia0", 195, 0 };
	assert_int_equal(dralet_device_add_node(d, &n), 0);
	assert_int_equal(dralet_device_add_node(d, &n), 0);
	assert_int_equal(dralet_device_n_nodes(d), 1);
	assert_int_equal(dralet_device_node(d, 0)->major, 195);
	struct dralet_devnode rel = { "dev/x", 1, 1 };
	assert_int_equal(dralet_device_add_node(d, &rel), -EINVAL);
	harness_fini(&h);
}

/* Counter sets and consumptions (counters.h): names are DNS labels, values
 * quantities, at most 8 sets a device owns, 2 it consumes from, 32 counters
 * each; setting a counter again replaces it. */
static void test_counters(void **state)
{
	struct harness h;
	struct dralet_device *d;
	struct dralet_pci_func f = sample_func();
	char name[40];
	int accepted = 0;

	(void)state;
	assert_int_equal(harness_init(&h, &harness_plain_backend, NULL, NULL), 0);
	h.ctx.sink = &h.sink;
	assert_int_equal(dralet_device_new(&h.ctx, &f, "gpu", NULL, &d), 0);
	assert_int_equal(dralet_device_n_counter_sets(d), 0);
	assert_null(dralet_device_counter_set(d, 0));
	assert_false(dralet_device_is_partition(d));

	assert_int_equal(dralet_device_set_counter_int(d, "gpu-0", "multiprocessors", 112), 0);
	assert_int_equal(dralet_device_set_counter(d, "gpu-0", "memory", "80Gi"), 0);
	assert_int_equal(dralet_device_set_counter(d, "gpu-0", "memory", "40Gi"), 0);	/* replaces */
	assert_int_equal(dralet_device_set_counter(d, "gpu-0", "memorySlice0", "1"), -EINVAL);
	assert_int_equal(dralet_device_set_counter(d, "GPU 0", "memory", "1"), -EINVAL);
	assert_int_equal(dralet_device_set_counter(d, "gpu-0", "memory", "80GB"), -EINVAL);
	assert_int_equal(h.ctx.warnings, 3);
	const struct dralet_counter_list *set = dralet_device_counter_set(d, 0);
	assert_string_equal(set->set, "gpu-0");
	assert_int_equal(set->n, 2);
	assert_string_equal(set->counters[1].name, "memory");
	assert_string_equal(set->counters[1].quantity, "40Gi");

	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "memory-slice-%d", i);
		accepted += dralet_device_set_counter_int(d, "gpu-0", name, 1) == 0;
	}
	assert_int_equal(accepted, 30);	/* 32 a set */
	for (int i = 1; i < 10; i++) {
		snprintf(name, sizeof(name), "set-%d", i);
		assert_int_equal(dralet_device_set_counter_int(d, name, "c", 1), i < 8 ? 0 : -EINVAL);
	}
	assert_int_equal(dralet_device_n_counter_sets(d), 8);

	assert_int_equal(dralet_device_consume_counter_int(d, "gpu-0", "multiprocessors", 16), 0);
	assert_int_equal(dralet_device_consume_counter_int(d, "set-1", "c", 1), 0);
	assert_int_equal(dralet_device_consume_counter_int(d, "set-2", "c", 1), -EINVAL);
	assert_int_equal(dralet_device_n_consumptions(d), 2);
	assert_string_equal(dralet_device_consumption(d, 0)->counters[0].quantity, "16");
	dralet_device_set_partition(d, true);
	assert_true(dralet_device_is_partition(d));
	harness_fini(&h);	/* frees the lists with the device (ASan checks) */
}

/* dralet_devnode writes the path into the caller's buffer and points the node
 * at it (no devnode owns its path); the device keeps a copy of its own. */
static void test_devnode_path_is_the_callers(void **state)
{
	char *t = board_tree("board: one-card\n"
			     "pci:\n"
			     "  - root: \"0000:00\"\n"
			     "    devices:\n"
			     "      - {bdf: 00:0b.0, id: \"8086:7d1d\", class: 0x120000, driver: intel_vpu,\n"
			     "         chardevs: [{name: accel0, class: accel, devname: accel/accel0,\n"
			     "                     dev: \"261:0\"}]}\n");
	char path[DRALET_DEVNODE_PATH_MAX], long_name[DRALET_DEVNODE_PATH_MAX], file[4096];
	struct dralet_pci_func f = sample_func();
	struct dralet_devnode node = { "/dev/stale", 1, 1 };
	struct dralet_device *d;
	struct harness h;

	(void)state;
	assert_int_equal(harness_init(&h, &harness_plain_backend, t, NULL), 0);
	assert_int_equal(dralet_devnode(&h.ctx, "accel/accel0", 261, 0, path, &node), 0);
	assert_ptr_equal(node.path, path);
	assert_string_equal(path, "/dev/accel/accel0");
	assert_int_equal(node.major, 261);	/* a placeholder file: the numbers given */
	h.ctx.sink = &h.sink;
	assert_int_equal(dralet_device_new(&h.ctx, &f, "accel", NULL, &d), 0);
	assert_int_equal(dralet_device_add_node(d, &node), 0);
	path[0] = '\0';	/* the caller's buffer is reused: the device's copy stays */
	assert_string_equal(dralet_device_node(d, 0)->path, "/dev/accel/accel0");

	/* missing: 0 and no path; too long for the buffer: -ENAMETOOLONG, no path */
	assert_int_equal(dralet_devnode(&h.ctx, "accel/accel9", 261, 9, path, &node), 0);
	assert_null(node.path);
	memset(long_name, 'a', 252);	/* "/dev/" + 252 bytes do not fit in 256 */
	long_name[252] = '\0';
	snprintf(file, sizeof(file), "%s/dev/%s", t, long_name);
	FILE *placeholder = fopen(file, "w");	/* the node appears (udev's part) */
	assert_non_null(placeholder);
	fclose(placeholder);
	assert_int_equal(dralet_devnode(&h.ctx, long_name, 1, 2, path, &node), -ENAMETOOLONG);
	assert_null(node.path);
	assert_int_equal(dralet_devnode(&h.ctx, "..", 0, 0, path, &node), -EINVAL);
	assert_null(node.path);
	harness_fini(&h);
	tree_remove(t);
}

struct persisted {
	int writes;
	size_t values;
};

static int count_writes(void *userdata, const struct dralet_undo *undo)
{
	struct persisted *p = userdata;

	p->writes++;
	p->values = undo->n;
	return 0;
}

static int refuse_write(void *userdata, const struct dralet_undo *undo)
{
	(void)userdata;
	(void)undo;
	return -EIO;
}

/* dralet_undo_set_all: every value in one durable write; none, no write; a
 * failed write is the call's error. */
static void test_undo_values_in_one_write(void **state)
{
	struct persisted p = { 0 };
	struct dralet_undo undo = { .persist = count_writes, .persist_userdata = &p };
	const struct dralet_undo_value three[] = {
		{ "pciAddress", "0000:17:00.1" }, { "driver", "iavf" }, { "rebound", "kernel" },
	};

	(void)state;
	assert_int_equal(dralet_undo_set_all(&undo, three, 3), 0);
	assert_int_equal(p.writes, 1);
	assert_int_equal(p.values, 3);
	assert_string_equal(dralet_undo_get(&undo, "driver"), "iavf");
	assert_int_equal(dralet_undo_set_all(&undo, NULL, 0), 0);
	assert_int_equal(p.writes, 1);
	assert_int_equal(dralet_undo_set(&undo, "driver", "vfio-pci"), 0);	/* replaces */
	assert_int_equal(p.writes, 2);
	assert_int_equal(p.values, 3);
	assert_string_equal(dralet_undo_get(&undo, "driver"), "vfio-pci");
	assert_int_equal(dralet_undo_set_all(&undo, (const struct dralet_undo_value[]){ { "", "x" } },
					     1), -EINVAL);
	assert_int_equal(p.writes, 2);
	undo.persist = refuse_write;
	assert_int_equal(dralet_undo_set(&undo, "vfSettings", "x"), -EIO);
	undo_clear(&undo);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_and_common_attributes),
		cmocka_unit_test(test_limits_and_values),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_devnode_path_is_the_callers),
		cmocka_unit_test(test_undo_values_in_one_write),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
