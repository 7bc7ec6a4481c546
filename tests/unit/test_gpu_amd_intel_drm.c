/* SPDX-License-Identifier: Apache-2.0 */
/*
 * amdgpu, intel-gpu and drm backends on board snippets: MI300X whole and
 * CPX-partitioned (KFD topology), Intel Data Center GPU Max on xe and an
 * integrated i915 GPU, an ASPEED BMC VGA; ownership scores, garbage files,
 * prepare edits and health.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "board_snippet.h"
#include "test_gpu_util.h"
#include "test_tree.h"
#include "backends/gpu/gpu_backends.h"

#define RP "pci0000:00/0000:00:01.0"
#define AMD "0000:c1:00.0"
#define XE "0000:3a:00.0"
#define IGPU "0000:00:02.0"
#define BMC "0000:02:00.0"

/* MI300X whole (SPX): amdgpu with card1/renderD128 and its KFD node; Data
 * Center GPU Max 1550 on xe with two tiles of HBM; an integrated GPU on
 * i915 (no local memory); the BMC's ASPEED AST2600 behind its PCI bridge. */
static const char board[] =
	"board: gpu-drm\n"
	"numa:\n"
	"  - {node: 0, cpus: \"0-7\"}\n"
	"  - {node: 1, cpus: \"8-15\"}\n"
	"pci:\n"
	"  - root: \"0000:00\"\n"
	"    devices:\n"
	"      - bdf: 00:01.0\n"
	"        id: \"1022:14ab\"\n"
	"        devices:\n"
	"          - bdf: c1:00.0\n"
	"            id: \"1002:74a1\"\n"
	"            class: 0x120000\n"	/* a processing accelerator */
	"            driver: amdgpu\n"
	"            numa: 1\n"
	"            drm: {card: 1, render: 128}\n"
	"            kfd: {properties: \"simd_per_cu 4\\ngfx_target_version 90402\\n"
	"local_mem_size 206158430208\\nnum_xcc 8\\n\"}\n"
	"            files:\n"
	"              product_name: AMD Instinct MI300X OAM\n"
	"              unique_id: 5a3b7e1c9d0f2468\n"
	"              serial_number: \"692251001124\"\n"
	"              mem_info_vram_total: \"206158430208\"\n"
	"              current_compute_partition: SPX\n"
	"              available_compute_partition: SPX, DPX, QPX, CPX\n"
	"              current_memory_partition: NPS1\n"
	"      - {bdf: 00:02.0, id: \"8086:4680\", class: 0x030000, driver: i915,\n"
	"         drm: {card: 0, render: 129}}\n"
	"      - bdf: 00:1c.0\n"
	"        id: \"8086:7ab8\"\n"
	"        devices:\n"
	"          - bdf: 01:00.0\n"
	"            id: \"1a03:1150\"\n"
	"            type: pci-bridge\n"
	"            devices:\n"
	"              - {bdf: 02:00.0, id: \"1a03:2000\", class: 0x030000, driver: ast,\n"
	"                 boot_vga: true, drm: {card: 3, render: false}}\n"
	"      - bdf: 00:03.0\n"
	"        id: \"8086:7ab9\"\n"
	"        devices:\n"
	"          - bdf: 3a:00.0\n"
	"            id: \"8086:0bd5\"\n"
	"            class: 0x038000\n"
	"            driver: xe\n"
	"            sriov: {total: 63, num: 0, vf_id: \"8086:0bd5\"}\n"
	"            drm: {card: 2, render: 130}\n"
	"            files:\n"
	"              tile0/physical_vram_size_bytes: \"68719476736\"\n"
	"              tile1/physical_vram_size_bytes: \"68719476736\"\n";

static void kfd_node(const char *d, unsigned node, unsigned location, unsigned render,
		     unsigned simds, unsigned long long mem)
{
	char rel[256], text[1024];

	snprintf(rel, sizeof(rel), "sys/class/kfd/kfd/topology/nodes/%u/properties", node);
	snprintf(text, sizeof(text),
		 "cpu_cores_count 0\nsimd_count %u\nmem_banks_count 1\nsimd_per_cu 4\n"
		 "gfx_target_version 90402\nvendor_id 4098\ndevice_id 29857\nlocation_id %u\n"
		 "domain 0\ndrm_render_minor %u\nlocal_mem_size %llu\nnum_xcc %u\n",
		 simds, location, render, mem, simds / 152);
	tree_write(d, rel, text);
}

static char *build_tree(bool cpx)
{
	char *d = board_tree(board);

	/* amdgpu's module files: boards write /sys/module for nvidia only */
	tree_write(d, "sys/module/amdgpu/version", "6.7.0");
	tree_write(d, "sys/module/amdgpu/srcversion", "4E2F5C0D7A7A2B4E9D1C0A3");
	if (!cpx)
		return d;
	/* CPX, which boards do not express (one KFD node per GPU): the 8
	 * partitions replace the GPU's KFD node 2 (after the CPU nodes 0 and
	 * 1), with their own render nodes from amdgpu_xcp devices */
	t_write(d, RP, AMD, "current_compute_partition", "CPX");
	for (unsigned i = 0; i < 8; i++) {
		char rel[64];
		kfd_node(d, 9 - i, 0xc1 << 8, 128 + i, 152, 25769803776ull);
		snprintf(rel, sizeof(rel), "dev/dri/renderD%u", 128 + i);
		tree_write(d, rel, "");
	}
	return d;
}

static void assert_node(const struct dralet_device *dev, const char *path, unsigned major,
			unsigned minor)
{
	int i = node_index(dev, path);

	if (i < 0)
		fail_msg("device %s has no node %s", dralet_device_name(dev), path);
	assert_int_equal(dralet_device_node(dev, (size_t)i)->major, major);
	assert_int_equal(dralet_device_node(dev, (size_t)i)->minor, minor);
}

static void test_ownership(void **state)
{
	struct harness h;
	char *d = build_tree(false);

	(void)state;
	assert_int_equal(harness_init(&h, &gpu_drm_backend, d, NULL), 0);
	const struct { const char *address; int nvidia, amd, intel, drm; } want[] = {
		{ AMD, 0, DRALET_SCORE_VENDOR_CLASS, 0, 0 },	/* class 0x12: not display */
		{ XE, 0, 0, DRALET_SCORE_VENDOR_CLASS, DRALET_SCORE_CLASS },
		{ IGPU, 0, 0, DRALET_SCORE_VENDOR_CLASS, DRALET_SCORE_CLASS },
		{ BMC, 0, 0, 0, DRALET_SCORE_CLASS },
		{ "0000:01:00.0", 0, 0, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++) {
		const struct dralet_pci_func *f = hal_scan_find(h.scan, want[i].address);
		assert_non_null(f);
		assert_int_equal(harness_score(&h, &gpu_nvidia_backend, f), want[i].nvidia);
		assert_int_equal(harness_score(&h, &gpu_amdgpu_backend, f), want[i].amd);
		assert_int_equal(harness_score(&h, &gpu_intel_backend, f), want[i].intel);
		assert_int_equal(harness_score(&h, &gpu_drm_backend, f), want[i].drm);
	}
	harness_fini(&h);
	tree_remove(d);
}

static void test_amd_whole_gpu(void **state)
{
	struct harness h;
	char *d = build_tree(false);

	(void)state;
	assert_int_equal(harness_init(&h, &gpu_amdgpu_backend, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	assert_int_equal(h.sink.n, 1);
	struct dralet_device *g = harness_device(&h, "gpu-0000-c1-00-0");
	assert_non_null(g);
	assert_string_equal(attr_string(g, "type"), "amdgpu");
	assert_string_equal(attr_string(g, "productName"), "AMD Instinct MI300X OAM");
	assert_string_equal(attr_string(g, "uniqueID"), "5a3b7e1c9d0f2468");
	assert_string_equal(attr_string(g, "serialNumber"), "692251001124");
	assert_string_equal(attr_string(g, "driverVersion"), "6.7.0");
	assert_string_equal(attr_string(g, "driverVersionFull"), "6.7.0");
	assert_string_equal(attr_string(g, "driverSrcVersion"), "4E2F5C0D7A7A2B4E9D1C0A3");
	assert_string_equal(attr_string(g, "partitionProfile"), "spx_nps1");
	assert_string_equal(attr_string(g, "computePartition"), "spx");
	assert_string_equal(attr_string(g, "memoryPartition"), "nps1");
	assert_string_equal(attr_string(g, "gfxVersion"), "gfx942");
	assert_string_equal(attr_string(g, "deviceID"), "0x74a1");
	assert_int_equal(attr_int(g, "cardIndex", -1), 1);
	assert_int_equal(attr_int(g, "renderIndex", -1), 128);
	assert_int_equal(attr_int(g, DRALET_ATTR_NUMA_NODE, -1), 1);
	assert_string_equal(capacity(g, "memory"), "192Gi");
	assert_string_equal(capacity(g, "computeUnits"), "304");
	assert_string_equal(capacity(g, "simdUnits"), "1216");
	assert_node(g, "/dev/dri/card1", 226, 1);
	assert_node(g, "/dev/dri/renderD128", 226, 128);
	assert_node(g, "/dev/kfd", 506, 0);
	assert_int_equal(dralet_device_n_nodes(g), 3);
	assert_int_equal(gpu_amdgpu_backend.health(&h.ctx, g), DRALET_HEALTH_HEALTHY);
	harness_fini(&h);
	tree_remove(d);
}

static void test_amd_cpx_partitions(void **state)
{
	struct harness h;
	char *d = build_tree(true);

	(void)state;
	assert_int_equal(harness_init(&h, &gpu_amdgpu_backend, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	assert_int_equal(h.sink.n, 8);
	assert_null(harness_device(&h, "gpu-0000-c1-00-0"));
	for (unsigned i = 0; i < 8; i++) {
		char name[64], render[32];
		snprintf(name, sizeof(name), "partition-0000-c1-00-0-cpx-%u", i);
		struct dralet_device *p = harness_device(&h, name);
		if (!p)
			fail_msg("no device %s", name);
		assert_string_equal(dralet_device_kind(p), "partition");
		assert_string_equal(attr_string(p, "type"), "amdgpu-partition");
		assert_string_equal(attr_string(p, "partitionProfile"), "cpx_nps1");
		assert_int_equal(attr_int(p, "partitionIndex", -1), i);
		assert_int_equal(attr_int(p, "renderIndex", -1), 128 + i);
		/* partitions share the parent's PCI identity: same-parent selection */
		assert_string_equal(attr_string(p, DRALET_ATTR_PCI_BUS_ID), AMD);
		assert_string_equal(capacity(p, "memory"), "24Gi");
		assert_string_equal(capacity(p, "computeUnits"), "38");
		snprintf(render, sizeof(render), "/dev/dri/renderD%u", 128 + i);
		assert_node(p, render, 226, 128 + i);
		assert_node(p, "/dev/kfd", 506, 0);
	}
	harness_fini(&h);
	tree_remove(d);
}

static void test_amd_garbage_files(void **state)
{
	struct harness h;
	struct capture c;
	char *d = build_tree(false), *log;

	(void)state;
	/* what no driver writes, so no board says */
	t_write(d, RP, AMD, "mem_info_vram_total", "lots");
	t_write(d, RP, AMD, "product_name", "\x01\x02\x03");
	t_write(d, RP, AMD, "current_compute_partition", "S P X!");
	tree_write(d, "sys/class/kfd/kfd/topology/nodes/2/properties", "garbage\n\xff\xfe\n");
	tree_write(d, "sys/class/kfd/kfd/topology/nodes/zz/properties", "simd_count 4\n");
	capture_begin(&c);
	assert_int_equal(harness_init(&h, &gpu_amdgpu_backend, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	log = capture_end(&c);
	assert_non_null(strstr(log, "mem_info_vram_total is not a number"));
	assert_non_null(strstr(log, "product_name is not text"));
	struct dralet_device *g = harness_device(&h, "gpu-0000-c1-00-0");
	assert_non_null(g);
	assert_string_equal(capacity(g, "memory"), "0");	/* unknown */
	assert_null(attr_string(g, "partitionProfile"));
	assert_null(capacity(g, "computeUnits"));
	harness_fini(&h);
	free(log);
	tree_remove(d);
}

static void test_intel(void **state)
{
	struct harness h;
	char *d = build_tree(false);

	(void)state;
	assert_int_equal(harness_init(&h, &gpu_intel_backend, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	assert_int_equal(h.sink.n, 2);
	struct dralet_device *g = harness_device(&h, "gpu-0000-3a-00-0");
	assert_non_null(g);
	assert_string_equal(attr_string(g, "type"), "gpu");
	assert_string_equal(attr_string(g, "driver"), "xe");
	assert_string_equal(attr_string(g, "pciId"), "0x0bd5");
	assert_string_equal(attr_string(g, "family"), "Data Center GPU Max");
	assert_true(attr_bool(g, "sriov", false));
	assert_string_equal(capacity(g, "memory"), "128Gi");
	assert_string_equal(capacity(g, "millicores"), "1k");
	assert_int_equal(attr_int(g, "cardIndex", -1), 2);
	assert_int_equal(attr_int(g, "renderIndex", -1), 130);
	assert_node(g, "/dev/dri/card2", 226, 2);
	assert_node(g, "/dev/dri/renderD130", 226, 130);

	struct dralet_device *i = harness_device(&h, "gpu-0000-00-02-0");
	assert_non_null(i);
	assert_string_equal(attr_string(i, "driver"), "i915");
	assert_false(attr_bool(i, "sriov", true));
	assert_null(attr_string(i, "family"));
	assert_string_equal(capacity(i, "memory"), "0");	/* unknown */
	assert_int_equal(dralet_device_n_nodes(i), 2);
	harness_fini(&h);
	tree_remove(d);
}

static void test_generic_drm_aspeed(void **state)
{
	struct harness h;
	char *d = build_tree(false);

	(void)state;
	assert_int_equal(harness_init(&h, &gpu_drm_backend, d, NULL), 0);
	struct dralet_device *g = NULL;
	h.ctx.sink = &h.sink;
	assert_int_equal(harness_probe(&h, hal_scan_find(h.scan, BMC)), 0);
	g = harness_device(&h, "gpu-0000-02-00-0");
	assert_non_null(g);
	/* a card without a render node drives a display only: no GPU class */
	assert_string_equal(attr_string(g, "type"), "display");
	assert_string_equal(attr_string(g, "driver"), "ast");
	assert_true(attr_bool(g, "bootVGA", false));
	assert_string_equal(attr_string(g, "vendorID"), "0x1a03");
	assert_int_equal(attr_int(g, "cardIndex", -1), 3);
	assert_null(dralet_device_find_attr(g, "renderIndex"));
	assert_node(g, "/dev/dri/card3", 226, 3);
	assert_int_equal(dralet_device_n_nodes(g), 1);
	/* scenario selectors on memory and migProfile never hit a missing key */
	assert_string_equal(capacity(g, "memory"), "0");
	assert_string_equal(attr_string(g, "migProfile"), "");
	/* the same backend on a function with a render node publishes a GPU */
	assert_int_equal(harness_probe(&h, hal_scan_find(h.scan, AMD)), 0);
	g = harness_device(&h, "gpu-0000-c1-00-0");
	assert_non_null(g);
	assert_string_equal(attr_string(g, "type"), "gpu");
	harness_fini(&h);
	tree_remove(d);
}

static void test_prepare_and_health(void **state)
{
	struct harness h;
	struct dralet_edits e = { 0 };
	struct dralet_undo u = { 0 };
	struct dralet_prepare_req req = {
		.claim = { "c0ffee00-0000-4000-8000-000000000002", "ml", "mi300" },
		.request = "gpus",
		.edits = &e,
		.undo = &u,
	};
	char *d = build_tree(true), rel[512];

	(void)state;
	assert_int_equal(harness_init(&h, &gpu_amdgpu_backend, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	struct dralet_device *p3 = harness_device(&h, "partition-0000-c1-00-0-cpx-3");
	struct dralet_device *p4 = harness_device(&h, "partition-0000-c1-00-0-cpx-4");
	assert_int_equal(gpu_amdgpu_backend.prepare(&h.ctx, p3, &req), 0);
	assert_int_equal(gpu_amdgpu_backend.prepare(&h.ctx, p4, &req), 0);
	assert_non_null(edit_node(&e, "/dev/dri/renderD131"));
	assert_non_null(edit_node(&e, "/dev/dri/renderD132"));
	assert_int_equal(edit_node(&e, "/dev/kfd")->node.major, 506);
	assert_int_equal(e.n_nodes, 3);
	assert_string_equal(edit_env(&e, "DRALET_PARTITION_0000_C1_00_0_CPX_3_INDEX"), "3");
	assert_string_equal(edit_env(&e, "DRALET_PARTITION_0000_C1_00_0_CPX_4_PROFILE"), "cpx_nps1");
	assert_string_equal(edit_env(&e, "DRALET_PARTITION_0000_C1_00_0_CPX_4_PCI_ADDRESS"), AMD);
	/* static partitions record no undo state: nothing to undo */
	assert_int_equal(u.n, 0);
	assert_int_equal(gpu_amdgpu_backend.unprepare(&h.ctx, p3, &req.claim, &u), 0);
	assert_int_equal(h.ops.unprepare(&h.ctx, p3, &req.claim, &u), 0);

	req.config = "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"GpuConfig\","
		     "\"sharing\":{\"strategy\":\"TimeSlicing\"}}";
	assert_int_equal(gpu_amdgpu_backend.prepare(&h.ctx, p3, &req), -EOPNOTSUPP);
	assert_non_null(strstr(h.ctx.error, "not supported by this device"));
	req.admin_access = true;	/* watching the device changes nothing: allowed */
	assert_int_equal(gpu_amdgpu_backend.prepare(&h.ctx, p3, &req), 0);

	/* health: the driver unbound, then the function removed */
	assert_int_equal(gpu_amdgpu_backend.health(&h.ctx, p3), DRALET_HEALTH_HEALTHY);
	t_bind(d, RP, AMD, NULL);
	assert_int_equal(gpu_amdgpu_backend.health(&h.ctx, p3), DRALET_HEALTH_UNHEALTHY);
	t_bind(d, RP, AMD, "vfio-pci");
	assert_int_equal(gpu_amdgpu_backend.health(&h.ctx, p3), DRALET_HEALTH_UNHEALTHY);
	snprintf(rel, sizeof(rel), "%s/sys/devices/" RP "/" AMD "/vendor", d);
	assert_int_equal(unlink(rel), 0);
	assert_int_equal(gpu_amdgpu_backend.health(&h.ctx, p4), DRALET_HEALTH_UNHEALTHY);
	edits_clear(&e);
	undo_clear(&u);
	harness_fini(&h);
	tree_remove(d);
}

static void test_device_without_nodes_cannot_be_prepared(void **state)
{
	struct harness h;
	struct dralet_edits e = { 0 };
	struct dralet_undo u = { 0 };
	struct dralet_prepare_req req = { .edits = &e, .undo = &u };
	char *d = board_tree("board: bochs\npci:\n  - root: \"0000:05\"\n    devices:\n"
			     "      - {bdf: 05:00.0, id: \"1234:1111\", class: 0x030000,\n"
			     "         driver: bochs-drm, drm: {card: 0, render: false}}\n");
	char path[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/dev/dri/card0", d);
	unlink(path);	/* udev never created the node */
	assert_int_equal(harness_init(&h, &gpu_drm_backend, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	struct dralet_device *g = harness_device(&h, "gpu-0000-05-00-0");
	assert_non_null(g);
	assert_int_equal(gpu_drm_backend.prepare(&h.ctx, g, &req), -ENODEV);
	assert_non_null(strstr(h.ctx.error, "has no device nodes"));
	edits_clear(&e);
	undo_clear(&u);
	harness_fini(&h);
	tree_remove(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ownership),
		cmocka_unit_test(test_amd_whole_gpu),
		cmocka_unit_test(test_amd_cpx_partitions),
		cmocka_unit_test(test_amd_garbage_files),
		cmocka_unit_test(test_intel),
		cmocka_unit_test(test_generic_drm_aspeed),
		cmocka_unit_test(test_prepare_and_health),
		cmocka_unit_test(test_device_without_nodes_cannot_be_prepared),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
