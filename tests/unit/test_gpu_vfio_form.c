/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The vfio form of a GPU (backends/gpu/gpu_vfio_form.c) against the board
 * simulator's model of the kernel (node_model.h): an Intel GPU on i915 with
 * its HDMI audio function on snd_hda_intel in one IOMMU group (with its root
 * port, a bridge), and a second GPU with SR-IOV VFs enabled.
 *
 *   - published twice with option vfio "true" (once without), both forms
 *     consuming one counter of a set the native form owns;
 *   - prepare records the group's bindings (one checkpoint write, before any
 *     rebinding) and the mark, moves both functions to vfio-pci, leaves the
 *     bridge, hands over /dev/vfio/<group> and /dev/vfio/vfio; unprepare from
 *     the recorded state alone puts both back and removes the mark, and
 *     writes nothing the second time;
 *   - crashes: after the rebinding, and half-way (the audio function moved,
 *     the GPU unbound): a new process publishes the marked GPU's vfio form
 *     under the same name through the gpu-vfio backend, whose unprepare
 *     gives the group back;
 *   - refusals that change nothing: VFs enabled, a host process holding the
 *     GPU's DRM node.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dralet/counters.h>
#include <dralet/pci_ctl.h>

#include "backends/gpu/gpu_backends.h"
#include "hal/pci_binding.h"
#include "node_model.h"
#include "vfio_fixture.h"
#include "test_backend.h"

#define GPU "0000:03:00.0"
#define AUDIO "0000:03:00.1"
#define BRIDGE "0000:00:01.0"
#define SRIOV_GPU "0000:04:00.0"
#define NATIVE "gpu-0000-03-00-0"
#define FORM "gpu-0000-03-00-0-vfio"
#define WAS GPU "=i915,none " AUDIO "=snd_hda_intel,none"

static const char BOARD[] =
	"board: vfio-gpu\n"
	"pci:\n"
	"  - root: \"0000:00\"\n"
	"    devices:\n"
	"      - bdf: 00:01.0\n"
	"        id: \"8086:347a\"\n"
	"        iommu_group: 40\n"
	"        devices:\n"
	"          - bdf: 03:00.0\n"
	"            id: \"8086:56c0\"\n"
	"            class: 0x030000\n"
	"            driver: i915\n"
	"            drm: true\n"
	"            iommu_group: 40\n"
	"          - bdf: 03:00.1\n"
	"            id: \"8086:4f92\"\n"
	"            class: 0x040300\n"
	"            driver: snd_hda_intel\n"
	"            iommu_group: 40\n"
	"      - bdf: 00:02.0\n"
	"        id: \"8086:347a\"\n"
	"        devices:\n"
	"          - bdf: 04:00.0\n"
	"            id: \"8086:56c0\"\n"
	"            class: 0x030000\n"
	"            driver: i915\n"
	"            iommu_group: 50\n"
	"            sriov: {total: 4, num: 2, vf_id: \"8086:56c0\", vf_driver: i915,\n"
	"                    vfs: {\"0-3\": {iommu_group: 60}}}\n";

static struct vfio_fixture *fixture_new(const char *options)
{
	return vfio_fixture_new(BOARD, &gpu_intel_backend, options, "gpu-vfio-" GPU);
}

/* On their drivers until the checkpoint is written. */
static const char *const BOUND[] = { GPU, "i915", AUDIO, "snd_hda_intel", NULL };

static void test_published_twice_one_counter(void **state)
{
	struct vfio_fixture *f = fixture_new("{\"vfio\":\"true\"}");
	struct dralet_device *native = harness_device(&f->h, NATIVE);
	struct dralet_device *form = harness_device(&f->h, FORM);

	(void)state;
	assert_non_null(native);
	assert_non_null(form);
	assert_string_equal(attr_string(native, "type"), "gpu");
	assert_string_equal(attr_string(form, "type"), "vfio");
	assert_string_equal(attr_string(form, "driver"), "vfio-pci");
	assert_string_equal(attr_string(form, "nativeDriver"), "i915");
	assert_int_equal(attr_int(form, "iommuGroup", -1), 40);
	vfio_assert_one_counter(native, form, "gpu");
	assert_int_equal(dralet_device_n_nodes(form), 0);	/* nothing is on vfio yet */
	assert_non_null(harness_device(&f->h, "gpu-0000-04-00-0-vfio"));
	vfio_fixture_free(f);

	/* off by default: no vfio form, no counters */
	f = fixture_new(NULL);
	assert_non_null(harness_device(&f->h, NATIVE));
	assert_null(harness_device(&f->h, FORM));
	assert_int_equal(dralet_device_n_counter_sets(harness_device(&f->h, NATIVE)), 0);
	vfio_fixture_free(f);
}

static void test_prepare_moves_the_group_and_back(void **state)
{
	struct vfio_fixture *f = fixture_new("{\"vfio\":\"true\"}");
	struct dralet_device *form = harness_device(&f->h, FORM);
	struct vfio_checkpoint ck = { .f = f, .bound = BOUND };
	struct t_req t;
	size_t before;

	(void)state;
	t_req_init(&t, NULL);
	vfio_checkpoint_watch(&ck, &t.undo);
	assert_int_equal(gpu_intel_backend.prepare(&f->h.ctx, form, &t.req), 0);
	assert_string_equal(vfio_driver_of(f, GPU), "vfio-pci");
	assert_string_equal(vfio_driver_of(f, AUDIO), "vfio-pci");
	assert_string_equal(vfio_override_of(f, GPU), "vfio-pci");
	assert_int_equal(node_model_find_log(&f->k, 0, BRIDGE), -1);
	assert_int_equal(ck.writes, 1);
	assert_string_equal(dralet_undo_get(&ck.saved, "vfio.group"), WAS);
	assert_string_equal(dralet_undo_get(&ck.saved, "vfio.gpu"), GPU);
	assert_true(vfio_marked(f));
	assert_non_null(t_edit_node(&t, "/dev/vfio/40"));
	assert_non_null(t_edit_node(&t, "/dev/vfio/vfio"));
	assert_null(t_edit_node(&t, "/dev/dri/card0"));
	assert_string_equal(t_env(&t, "DRALET_GPU_0000_03_00_0_VFIO_IOMMU_GROUP"), "40");

	/* unprepare from the state on disk alone */
	assert_int_equal(gpu_intel_backend.unprepare(&f->h.ctx, form, &t.req.claim, &ck.saved), 0);
	assert_string_equal(vfio_driver_of(f, GPU), "i915");
	assert_string_equal(vfio_driver_of(f, AUDIO), "snd_hda_intel");
	assert_string_equal(vfio_override_of(f, GPU), "");
	assert_string_equal(vfio_override_of(f, AUDIO), "");
	assert_false(vfio_marked(f));
	before = f->k.n_log;
	assert_int_equal(gpu_intel_backend.unprepare(&f->h.ctx, form, &t.req.claim, &ck.saved), 0);
	assert_int_equal(f->k.n_log, before);
	undo_clear(&ck.saved);
	t_req_clear(&t);
	vfio_fixture_free(f);
}

/* A new process after a crash: the gpu-vfio backend publishes the marked
 * GPU's vfio form under its name, and its unprepare gives the group back. */
static void restart_and_unprepare(struct vfio_fixture *f, const struct dralet_undo *saved)
{
	struct dralet_device *form;
	struct dralet_claim_ref claim = { "uid-1", "default", "claim" };

	vfio_fixture_restart(f, &gpu_vfio_backend, NULL);
	form = harness_device(&f->h, FORM);
	assert_non_null(form);
	assert_string_equal(attr_string(form, "nativeDriver"), "i915");
	assert_null(harness_device(&f->h, NATIVE));
	assert_int_equal(gpu_vfio_backend.unprepare(&f->h.ctx, form, &claim, saved), 0);
	assert_string_equal(vfio_driver_of(f, GPU), "i915");
	assert_string_equal(vfio_driver_of(f, AUDIO), "snd_hda_intel");
	assert_string_equal(vfio_override_of(f, GPU), "");
	assert_false(vfio_marked(f));
	/* the native form is back for the next discovery */
	vfio_fixture_restart(f, &gpu_intel_backend, "{\"vfio\":\"true\"}");
	assert_non_null(harness_device(&f->h, NATIVE));
	assert_non_null(harness_device(&f->h, FORM));
}

static void test_crash_after_the_rebinding(void **state)
{
	struct vfio_fixture *f = fixture_new("{\"vfio\":\"true\"}");
	struct vfio_checkpoint ck = { .f = f, .bound = BOUND };
	struct t_req t;

	(void)state;
	t_req_init(&t, NULL);
	vfio_checkpoint_watch(&ck, &t.undo);
	assert_int_equal(gpu_intel_backend.prepare(&f->h.ctx, harness_device(&f->h, FORM), &t.req),
			 0);
	t_req_clear(&t);	/* the process is gone; the checkpoint stays */
	restart_and_unprepare(f, &ck.saved);
	undo_clear(&ck.saved);
	vfio_fixture_free(f);
}

static void test_crash_half_way(void **state)
{
	struct vfio_fixture *f = fixture_new("{\"vfio\":\"true\"}");
	struct vfio_checkpoint ck = { .f = f, .bound = BOUND };
	struct t_req t;

	(void)state;
	/* the state a crash inside vfio_group_bind leaves: recorded, marked, the
	 * audio function on vfio-pci, the GPU unbound with its override set */
	t_req_init(&t, NULL);
	vfio_checkpoint_watch(&ck, &t.undo);
	vfio_leave_half_bound(f, &t.undo, "vfio.gpu", GPU, AUDIO, WAS);
	restart_and_unprepare(f, &ck.saved);
	undo_clear(&ck.saved);
	t_req_clear(&t);
	vfio_fixture_free(f);
}

static void test_refusals_change_nothing(void **state)
{
	struct vfio_fixture *f = fixture_new("{\"vfio\":\"true\"}");
	struct t_req t;

	(void)state;
	/* VFs enabled */
	t_req_init(&t, NULL);
	assert_int_equal(gpu_intel_backend.prepare(&f->h.ctx,
						   harness_device(&f->h, "gpu-0000-04-00-0-vfio"),
						   &t.req), -EBUSY);
	assert_non_null(strstr(dralet_ctx_error_message(&f->h.ctx), "SR-IOV VFs"));
	assert_null(dralet_undo_get(&t.undo, "vfio.group"));
	t_req_clear(&t);

	/* a host process has the GPU's DRM node open */
	vfio_hold_node(f, "Xorg", "dri/card0");
	t_req_init(&t, NULL);
	assert_int_equal(gpu_intel_backend.prepare(&f->h.ctx, harness_device(&f->h, FORM), &t.req),
			 -EBUSY);
	assert_non_null(strstr(dralet_ctx_error_message(&f->h.ctx), "process 4242 (Xorg)"));
	assert_null(dralet_undo_get(&t.undo, "vfio.group"));
	t_req_clear(&t);
	assert_int_equal(f->k.n_log, 0);
	assert_false(vfio_marked(f));
	assert_string_equal(vfio_driver_of(f, GPU), "i915");
	vfio_fixture_free(f);
}

static void test_undo_text_round_trip(void **state)
{
	struct vfio_fixture *f = fixture_new("{\"vfio\":\"true\"}");
	struct dralet_undo bad = { 0 };

	(void)state;
	assert_int_equal(dralet_undo_set(&bad, "vfio.gpu", GPU), 0);
	assert_int_equal(dralet_undo_set(&bad, "vfio.group", GPU "=i915"), 0);
	assert_int_equal(gpu_intel_backend.unprepare(&f->h.ctx, harness_device(&f->h, FORM),
						     NULL, &bad), -EINVAL);
	assert_int_equal(f->k.n_log, 0);
	undo_clear(&bad);
	vfio_fixture_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_published_twice_one_counter),
		cmocka_unit_test(test_prepare_moves_the_group_and_back),
		cmocka_unit_test(test_crash_after_the_rebinding),
		cmocka_unit_test(test_crash_half_way),
		cmocka_unit_test(test_refusals_change_nothing),
		cmocka_unit_test(test_undo_text_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
