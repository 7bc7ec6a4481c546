/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The gpu-vfio backend on a board snippet: GPUs bound to vfio-pci at
 * discovery are published in their vfio form only (type "vfio", the group
 * and container nodes); the vendor backends leave them alone; prepare hands
 * the nodes over and refuses a GPU that left vfio-pci; health follows the
 * binding.
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
#include "backends/accel/accel.h"
#include "backends/gpu/gpu_backends.h"

#define RP1 "pci0000:00/0000:00:01.0"
#define L40S "0000:01:00.0"
#define MI300 "0000:02:00.0"
#define A10 "0000:03:00.0"
#define A10_AUDIO "0000:03:00.1"
#define H100 "0000:04:00.0"

/* An L40S alone in its group and an MI300X (class 0x12) on vfio-pci; an A10
 * on vfio-pci sharing its group with its audio function (on snd_hda_intel);
 * an H100 on the nvidia driver. */
static const char board[] =
	"board: gpu-vfio\n"
	"numa:\n"
	"  - {node: 0, cpus: \"0-7\"}\n"
	"pci:\n"
	"  - root: \"0000:00\"\n"
	"    devices:\n"
	"      - bdf: 00:01.0\n"
	"        id: \"8086:2030\"\n"
	"        devices:\n"
	"          - {bdf: 01:00.0, id: \"10de:26b9\", class: 0x030200, driver: vfio-pci}\n"
	"      - bdf: 00:02.0\n"
	"        id: \"8086:2031\"\n"
	"        devices:\n"
	"          - {bdf: 02:00.0, id: \"1002:74a1\", class: 0x120000, driver: vfio-pci}\n"
	"      - bdf: 00:03.0\n"
	"        id: \"8086:2032\"\n"
	"        devices:\n"
	"          - {bdf: 03:00.0, id: \"10de:2236\", class: 0x030200, driver: vfio-pci,\n"
	"             iommu_group: 40}\n"
	"          - {bdf: 03:00.1, id: \"10de:1aef\", class: 0x040300, driver: snd_hda_intel,\n"
	"             iommu_group: 40}\n"
	"      - bdf: 00:04.0\n"
	"        id: \"8086:2033\"\n"
	"        devices:\n"
	"          - {bdf: 04:00.0, id: \"10de:2331\", class: 0x030200, driver: nvidia}\n";

static const struct dralet_pci_func *func(struct harness *h, const char *address)
{
	const struct dralet_pci_func *f = hal_scan_find(h->scan, address);

	assert_non_null(f);
	return f;
}

static void test_only_vfio_gpus_are_taken(void **state)
{
	struct harness h;
	char *d = board_tree(board);

	(void)state;
	assert_int_equal(harness_init(&h, &gpu_vfio_backend, d, NULL), 0);
	assert_true(harness_score(&h, &gpu_vfio_backend, func(&h, L40S)) > 0);
	assert_true(harness_score(&h, &gpu_vfio_backend, func(&h, A10)) > 0);
	assert_int_equal(harness_score(&h, &gpu_vfio_backend, func(&h, H100)), 0);
	assert_int_equal(harness_score(&h, &gpu_vfio_backend, func(&h, A10_AUDIO)), 0);
	/* the vendor and generic backends leave a GPU on vfio-pci alone */
	assert_int_equal(harness_score(&h, &gpu_nvidia_backend, func(&h, L40S)), 0);
	assert_int_equal(harness_score(&h, &gpu_amdgpu_backend, func(&h, MI300)), 0);
	assert_int_equal(harness_score(&h, &gpu_drm_backend, func(&h, L40S)), 0);
	/* an Instinct on vfio-pci is a vfio GPU, not a generic accelerator */
	assert_true(harness_score(&h, &gpu_vfio_backend, func(&h, MI300)) >
		    harness_score(&h, &backend_accel, func(&h, MI300)));
	harness_fini(&h);
	tree_remove(d);
}

static void test_published_in_vfio_form(void **state)
{
	struct harness h;
	char *d = board_tree(board);

	(void)state;
	assert_int_equal(harness_init(&h, &gpu_vfio_backend, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	assert_int_equal(h.sink.n, 3);	/* L40S, MI300X, A10; not the H100 */
	assert_null(harness_device(&h, "gpu-0000-04-00-0"));

	struct dralet_device *g = harness_device(&h, "gpu-0000-01-00-0");
	assert_non_null(g);
	assert_string_equal(attr_string(g, "type"), "vfio");
	assert_string_equal(attr_string(g, "driver"), "vfio-pci");
	assert_string_equal(attr_string(g, "pciClass"), "0x0302");
	assert_true(attr_bool(g, "vfioCapable", false));
	assert_string_equal(capacity(g, "memory"), "0");
	assert_string_equal(attr_string(g, "migProfile"), "");
	int group = (int)attr_int(g, "iommuGroup", -1);
	char group_node[32];
	snprintf(group_node, sizeof(group_node), "/dev/vfio/%d", group);
	assert_true(group >= 0);
	assert_int_equal(dralet_device_n_nodes(g), 2);
	assert_true(node_index(g, group_node) >= 0);
	assert_int_equal(dralet_device_node(g, (size_t)node_index(g, "/dev/vfio/vfio"))->major, 10);
	assert_int_equal(dralet_device_node(g, (size_t)node_index(g, "/dev/vfio/vfio"))->minor,
			 196);
	assert_int_equal(dralet_device_health(g), DRALET_HEALTH_HEALTHY);

	/* the A10 shares its group with its audio function: published, not capable */
	struct dralet_device *a10 = harness_device(&h, "gpu-0000-03-00-0");
	assert_non_null(a10);
	assert_false(attr_bool(a10, "vfioCapable", true));
	assert_int_equal(attr_int(a10, "iommuGroup", -1), 40);
	assert_string_equal(attr_string(harness_device(&h, "gpu-0000-02-00-0"), "pciClass"),
			    "0x1200");
	harness_fini(&h);
	tree_remove(d);
}

static void test_prepare_and_health(void **state)
{
	struct harness h;
	struct dralet_edits e = { 0 };
	struct dralet_undo u = { 0 };
	struct dralet_prepare_req req = {
		.claim = { "c0ffee00-0000-4000-8000-000000000003", "vms", "vm-0" },
		.request = "gpu",
		.edits = &e,
		.undo = &u,
	};
	char *d = board_tree(board), group_env[16];

	(void)state;
	assert_int_equal(harness_init(&h, &gpu_vfio_backend, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	struct dralet_device *g = harness_device(&h, "gpu-0000-01-00-0");
	assert_int_equal(gpu_vfio_backend.prepare(&h.ctx, g, &req), 0);
	snprintf(group_env, sizeof(group_env), "%lld", (long long)attr_int(g, "iommuGroup", -1));
	assert_string_equal(edit_env(&e, "DRALET_GPU_0000_01_00_0_IOMMU_GROUP"), group_env);
	assert_string_equal(edit_env(&e, "DRALET_GPU_0000_01_00_0_PCI_ADDRESS"), L40S);
	assert_string_equal(edit_env(&e, "DRALET_GPU_0000_01_00_0_REQUEST"), "gpu");
	assert_non_null(edit_node(&e, "/dev/vfio/vfio"));
	assert_int_equal(e.n_nodes, 2);
	assert_int_equal(u.n, 0);	/* nothing changed on the host, nothing to undo */
	/* unprepare gives back only what a vfio form's prepare recorded: nothing */
	assert_int_equal(gpu_vfio_backend.unprepare(&h.ctx, g, &req.claim, &u), 0);

	/* a VM gets the whole GPU: no sharing, no MIG configuration */
	req.config = "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"GpuConfig\","
		     "\"sharing\":{\"strategy\":\"TimeSlicing\"}}";
	assert_int_equal(gpu_vfio_backend.prepare(&h.ctx, g, &req), -EOPNOTSUPP);
	req.config = "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"MigDeviceConfig\"}";
	assert_int_equal(gpu_vfio_backend.prepare(&h.ctx, g, &req), -EINVAL);
	req.config = NULL;

	/* given back to its vendor driver since discovery: refused until rediscovered */
	assert_int_equal(gpu_vfio_backend.health(&h.ctx, g), DRALET_HEALTH_HEALTHY);
	t_bind(d, RP1, L40S, "nvidia");
	assert_int_equal(gpu_vfio_backend.prepare(&h.ctx, g, &req), -EAGAIN);
	assert_non_null(strstr(h.ctx.error, "no longer on vfio-pci"));
	assert_int_equal(gpu_vfio_backend.health(&h.ctx, g), DRALET_HEALTH_UNHEALTHY);
	t_bind(d, RP1, L40S, NULL);
	assert_int_equal(gpu_vfio_backend.prepare(&h.ctx, g, &req), -EAGAIN);
	assert_non_null(strstr(h.ctx.error, "unbound"));
	edits_clear(&e);
	undo_clear(&u);
	harness_fini(&h);
	tree_remove(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_only_vfio_gpus_are_taken),
		cmocka_unit_test(test_published_in_vfio_form),
		cmocka_unit_test(test_prepare_and_health),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
