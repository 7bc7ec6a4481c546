/* SPDX-License-Identifier: Apache-2.0 */
/* The device model: names, common attributes, limits, capacities, nodes. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_and_common_attributes),
		cmocka_unit_test(test_limits_and_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
