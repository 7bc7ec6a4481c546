/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AMD compute partitions made at prepare: the planner (which modes are
 * offered under which memory partition mode, which XCCs a partition owns,
 * the refusal of a memory partition change) and the amdgpu backend
 * publishing them on a board snippet with option dynamicPartitions: the
 * GPU's XCC counter set, each partition's consumption, and GPUs left alone
 * (option off, someone else's CPX).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <dralet/counters.h>

#include "board_snippet.h"
#include "test_gpu_util.h"
#include "test_tree.h"
#include "backends/gpu/amdgpu_partition.h"
#include "backends/gpu/gpu_backends.h"

static void test_plan_spx_nps1(void **state)
{
	struct amd_partition_plan p;

	(void)state;
	assert_int_equal(amd_partition_plan(&(struct amd_partition_facts){
		"spx", "SPX, DPX, QPX, CPX", "nps1", 8 }, &p), 0);
	assert_int_equal(p.n_modes, 3);
	assert_string_equal(p.modes[0].name, "dpx");
	assert_int_equal(p.modes[0].count, 2);
	assert_string_equal(p.modes[1].name, "qpx");
	assert_int_equal(p.modes[1].count, 4);
	assert_string_equal(p.modes[2].name, "cpx");
	assert_int_equal(p.modes[2].count, 8);
}

static void test_plan_refuses(void **state)
{
	struct amd_partition_plan p;

	(void)state;
	/* not in SPX (someone's partitions), XCCs unknown, nothing but SPX */
	assert_int_equal(amd_partition_plan(&(struct amd_partition_facts){
		"cpx", "SPX, DPX, QPX, CPX", "nps1", 8 }, &p), -ENOENT);
	assert_int_equal(amd_partition_plan(&(struct amd_partition_facts){
		"spx", "SPX, DPX, QPX, CPX", "nps1", 0 }, &p), -ENOENT);
	assert_int_equal(amd_partition_plan(&(struct amd_partition_facts){
		"spx", "SPX", "nps1", 8 }, &p), -ENOENT);
	/* TPX does not split 8 XCCs; unknown words and repeats are skipped */
	assert_int_equal(amd_partition_plan(&(struct amd_partition_facts){
		"spx", "TPX, FOO, CPX, cpx", "nps1", 8 }, &p), 0);
	assert_int_equal(p.n_modes, 1);
	assert_string_equal(p.modes[0].name, "cpx");
}

static void test_mode_valid_per_memory_mode(void **state)
{
	(void)state;
	assert_true(amd_mode_valid("spx", "nps1", 8));
	assert_false(amd_mode_valid("spx", "nps4", 8));
	assert_true(amd_mode_valid("dpx", "nps1", 8));
	assert_false(amd_mode_valid("dpx", "nps4", 8));	/* kernels disagree: not offered */
	assert_true(amd_mode_valid("qpx", "nps4", 8));
	assert_true(amd_mode_valid("cpx", "NPS4", 8));
	assert_false(amd_mode_valid("cpx", "nps2", 8));
	assert_false(amd_mode_valid("tpx", "nps1", 8));
	assert_true(amd_mode_valid("tpx", "nps1", 6));
	assert_false(amd_mode_valid("cpx", "", 8));
	assert_false(amd_mode_valid("qpx", "nps1", 4));	/* one XCC per quarter */
	assert_int_equal(amd_mode_count("CPX", 8), 8);
	assert_int_equal(amd_mode_count("xpx", 8), 0);
}

static void test_partition_xccs(void **state)
{
	unsigned first, n;

	(void)state;
	amd_partition_xccs(&(struct amd_mode){ "qpx", 4 }, 8, 2, &first, &n);
	assert_int_equal(first, 4);
	assert_int_equal(n, 2);
	amd_partition_xccs(&(struct amd_mode){ "cpx", 8 }, 8, 7, &first, &n);
	assert_int_equal(first, 7);
	assert_int_equal(n, 1);
}

static void test_memory_partition_change_refused(void **state)
{
	char why[400] = "";

	(void)state;
	assert_int_equal(amd_memory_partition_check("nps1", NULL, why, sizeof(why)), 0);
	assert_int_equal(amd_memory_partition_check("nps1", "", why, sizeof(why)), 0);
	assert_int_equal(amd_memory_partition_check("nps1", "NPS1", why, sizeof(why)), 0);
	assert_int_equal(amd_memory_partition_check("nps1", "NPS4", why, sizeof(why)),
			 -EOPNOTSUPP);
	assert_non_null(strstr(why, "driver reload"));
	assert_non_null(strstr(why, "NPS4"));
}

#define RP "pci0000:00/0000:00:01.0"
#define AMD "0000:c1:00.0"

static const char board[] =
	"board: amd-partitions\n"
	"numa:\n"
	"  - {node: 0, cpus: \"0-7\"}\n"
	"pci:\n"
	"  - root: \"0000:00\"\n"
	"    devices:\n"
	"      - bdf: 00:01.0\n"
	"        id: \"1022:14ab\"\n"
	"        devices:\n"
	"          - bdf: c1:00.0\n"
	"            id: \"1002:74a1\"\n"
	"            class: 0x120000\n"
	"            driver: amdgpu\n"
	"            drm: {card: 1, render: 128}\n"
	"            kfd: {properties: \"simd_per_cu 4\\nnum_xcc 8\\n\"}\n"
	"            files:\n"
	"              product_name: AMD Instinct MI300X OAM\n"
	"              mem_info_vram_total: \"206158430208\"\n"
	"              current_compute_partition: SPX\n"
	"              available_compute_partition: SPX, DPX, QPX, CPX\n"
	"              current_memory_partition: NPS1\n";

static const char *counter(const struct dralet_counter_list *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->counters[i].name, name))
			return l->counters[i].quantity;
	return NULL;
}

static void test_publish(void **state)
{
	struct harness h;
	char *d = board_tree(board);

	(void)state;
	assert_int_equal(harness_init(&h, &gpu_amdgpu_backend, d,
				      "{\"dynamicPartitions\":\"true\"}"), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	assert_int_equal(h.sink.n, 1 + 2 + 4 + 8);
	struct dralet_device *g = harness_device(&h, "gpu-0000-c1-00-0");
	assert_non_null(g);
	assert_false(dralet_device_is_partition(g));
	assert_int_equal(dralet_device_n_counter_sets(g), 1);
	const struct dralet_counter_list *set = dralet_device_counter_set(g, 0);
	assert_string_equal(set->set, "gpu-0000-c1-00-0");
	assert_int_equal(set->n, 8);
	assert_string_equal(counter(set, "xcc-7"), "1");
	assert_int_equal(dralet_device_consumption(g, 0)->n, 8);
	assert_string_equal(attr_string(g, "computePartition"), "spx");

	struct dralet_device *q = harness_device(&h, "partition-0000-c1-00-0-qpx-2");
	assert_non_null(q);
	assert_true(dralet_device_is_partition(q));
	assert_string_equal(attr_string(q, "partitionProfile"), "qpx_nps1");
	assert_int_equal(attr_int(q, "partitionCount", -1), 4);
	const struct dralet_counter_list *use = dralet_device_consumption(q, 0);
	assert_string_equal(use->set, "gpu-0000-c1-00-0");
	assert_int_equal(use->n, 2);
	assert_non_null(counter(use, "xcc-4"));
	assert_non_null(counter(use, "xcc-5"));
	assert_string_equal(capacity(q, "memory"), "192Gi");	/* NPS1: all of it */
	assert_non_null(harness_device(&h, "partition-0000-c1-00-0-cpx-7"));
	assert_null(harness_device(&h, "partition-0000-c1-00-0-cpx-8"));
	harness_fini(&h);
	tree_remove(d);
}

static void test_left_alone(void **state)
{
	struct harness h;
	char *d = board_tree(board);

	(void)state;
	/* the option off: the whole GPU only, no counters */
	assert_int_equal(harness_init(&h, &gpu_amdgpu_backend, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	assert_int_equal(h.sink.n, 1);
	assert_int_equal(dralet_device_n_counter_sets(harness_device(&h, "gpu-0000-c1-00-0")), 0);
	harness_fini(&h);
	/* someone else's DPX (no mark): no dynamic partitions */
	t_write(d, RP, AMD, "current_compute_partition", "DPX");
	assert_int_equal(harness_init(&h, &gpu_amdgpu_backend, d,
				      "{\"dynamicPartitions\":\"true\"}"), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	assert_null(harness_device(&h, "partition-0000-c1-00-0-cpx-0"));
	assert_int_equal(dralet_device_n_counter_sets(harness_device(&h, "gpu-0000-c1-00-0")), 0);
	harness_fini(&h);
	tree_remove(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_spx_nps1),
		cmocka_unit_test(test_plan_refuses),
		cmocka_unit_test(test_mode_valid_per_memory_mode),
		cmocka_unit_test(test_partition_xccs),
		cmocka_unit_test(test_memory_partition_change_refused),
		cmocka_unit_test(test_publish),
		cmocka_unit_test(test_left_alone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
