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

struct fixture {
	struct node_model k;
	struct harness h;
	char state[4200];
};

static void harness_up(struct fixture *f, const struct dralet_backend *b, const char *options)
{
	assert_int_equal(harness_init(&f->h, b, f->k.dir, options), 0);
	f->h.ctx.node = &f->k.node;
	f->h.ctx.state_dir = f->state;
	assert_int_equal(harness_probe_all(&f->h), 0);
}

static void harness_down(struct fixture *f)
{
	f->h.ctx.state_dir = NULL;	/* the fixture's */
	harness_fini(&f->h);
}

static struct fixture *fixture_new(const char *options)
{
	struct fixture *f = calloc(1, sizeof(*f));

	node_model_init(&f->k, BOARD);
	snprintf(f->state, sizeof(f->state), "%s/state", f->k.dir);
	assert_int_equal(mkdir(f->state, 0755), 0);
	harness_up(f, &gpu_intel_backend, options);
	f->k.n_log = 0;
	return f;
}

static void fixture_free(struct fixture *f)
{
	harness_down(f);
	node_model_fini(&f->k);
	free(f);
}

static const char *driver_of(struct fixture *f, const char *address)
{
	static char buf[4][64];
	static int i;
	char *b = buf[i++ % 4];

	if (hal_pci_driver(&f->k.real, address, b, 64) < 0)
		return "(gone)";
	return b;
}

static const char *override_of(struct fixture *f, const char *address)
{
	static char buf[64];

	hal_pci_driver_override(&f->k.real, address, buf, sizeof(buf));
	return buf;
}

static bool marked(struct fixture *f)
{
	char path[4300];

	snprintf(path, sizeof(path), "%s/gpu-vfio-" GPU, f->state);
	return access(path, F_OK) == 0;
}

/* The checkpoint: each dralet_undo_set_all is one write, and the GPU is
 * still on its driver when it happens. */
struct checkpoint {
	struct fixture *f;
	struct dralet_undo saved;
	int writes;
};

static int persist_copy(void *userdata, const struct dralet_undo *undo)
{
	struct checkpoint *ck = userdata;

	assert_string_equal(driver_of(ck->f, GPU), "i915");
	assert_string_equal(driver_of(ck->f, AUDIO), "snd_hda_intel");
	assert_false(marked(ck->f));
	assert_int_equal(undo_copy(&ck->saved, undo), 0);
	ck->writes++;
	return 0;
}

static void test_published_twice_one_counter(void **state)
{
	struct fixture *f = fixture_new("{\"vfio\":\"true\"}");
	struct dralet_device *native = harness_device(&f->h, NATIVE);
	struct dralet_device *form = harness_device(&f->h, FORM);
	const struct dralet_counter_list *set, *use;

	(void)state;
	assert_non_null(native);
	assert_non_null(form);
	assert_string_equal(attr_string(native, "type"), "gpu");
	assert_string_equal(attr_string(form, "type"), "vfio");
	assert_string_equal(attr_string(form, "driver"), "vfio-pci");
	assert_string_equal(attr_string(form, "nativeDriver"), "i915");
	assert_int_equal(attr_int(form, "iommuGroup", -1), 40);
	assert_true(dralet_device_is_partition(form));
	assert_false(dralet_device_is_partition(native));
	assert_int_equal(dralet_device_n_counter_sets(native), 1);
	set = dralet_device_counter_set(native, 0);
	assert_string_equal(set->set, NATIVE);
	assert_int_equal(set->n, 1);
	assert_string_equal(set->counters[0].name, "gpu");
	assert_string_equal(set->counters[0].quantity, "1");
	for (int i = 0; i < 2; i++) {
		struct dralet_device *d = i ? form : native;
		assert_int_equal(dralet_device_n_consumptions(d), 1);
		use = dralet_device_consumption(d, 0);
		assert_string_equal(use->set, NATIVE);
		assert_string_equal(use->counters[0].name, "gpu");
		assert_string_equal(use->counters[0].quantity, "1");
	}
	assert_int_equal(dralet_device_n_nodes(form), 0);	/* nothing is on vfio yet */
	assert_non_null(harness_device(&f->h, "gpu-0000-04-00-0-vfio"));
	fixture_free(f);

	/* off by default: no vfio form, no counters */
	f = fixture_new(NULL);
	assert_non_null(harness_device(&f->h, NATIVE));
	assert_null(harness_device(&f->h, FORM));
	assert_int_equal(dralet_device_n_counter_sets(harness_device(&f->h, NATIVE)), 0);
	fixture_free(f);
}

static void test_prepare_moves_the_group_and_back(void **state)
{
	struct fixture *f = fixture_new("{\"vfio\":\"true\"}");
	struct dralet_device *form = harness_device(&f->h, FORM);
	struct checkpoint ck = { .f = f };
	struct t_req t;
	size_t before;

	(void)state;
	t_req_init(&t, NULL);
	t.undo.persist = persist_copy;
	t.undo.persist_userdata = &ck;
	assert_int_equal(gpu_intel_backend.prepare(&f->h.ctx, form, &t.req), 0);
	assert_string_equal(driver_of(f, GPU), "vfio-pci");
	assert_string_equal(driver_of(f, AUDIO), "vfio-pci");
	assert_string_equal(override_of(f, GPU), "vfio-pci");
	assert_int_equal(node_model_find_log(&f->k, 0, BRIDGE), -1);
	assert_int_equal(ck.writes, 1);
	assert_string_equal(dralet_undo_get(&ck.saved, "vfio.group"), WAS);
	assert_string_equal(dralet_undo_get(&ck.saved, "vfio.gpu"), GPU);
	assert_true(marked(f));
	assert_non_null(t_edit_node(&t, "/dev/vfio/40"));
	assert_non_null(t_edit_node(&t, "/dev/vfio/vfio"));
	assert_null(t_edit_node(&t, "/dev/dri/card0"));
	assert_string_equal(t_env(&t, "DRALET_GPU_0000_03_00_0_VFIO_IOMMU_GROUP"), "40");

	/* unprepare from the state on disk alone */
	assert_int_equal(gpu_intel_backend.unprepare(&f->h.ctx, form, &t.req.claim, &ck.saved), 0);
	assert_string_equal(driver_of(f, GPU), "i915");
	assert_string_equal(driver_of(f, AUDIO), "snd_hda_intel");
	assert_string_equal(override_of(f, GPU), "");
	assert_string_equal(override_of(f, AUDIO), "");
	assert_false(marked(f));
	before = f->k.n_log;
	assert_int_equal(gpu_intel_backend.unprepare(&f->h.ctx, form, &t.req.claim, &ck.saved), 0);
	assert_int_equal(f->k.n_log, before);
	undo_clear(&ck.saved);
	t_req_clear(&t);
	fixture_free(f);
}

/* A new process after a crash: the gpu-vfio backend publishes the marked
 * GPU's vfio form under its name, and its unprepare gives the group back. */
static void restart_and_unprepare(struct fixture *f, const struct dralet_undo *saved)
{
	struct dralet_device *form;
	struct dralet_claim_ref claim = { "uid-1", "default", "claim" };

	harness_down(f);
	harness_up(f, &gpu_vfio_backend, NULL);
	form = harness_device(&f->h, FORM);
	assert_non_null(form);
	assert_string_equal(attr_string(form, "nativeDriver"), "i915");
	assert_null(harness_device(&f->h, NATIVE));
	assert_int_equal(gpu_vfio_backend.unprepare(&f->h.ctx, form, &claim, saved), 0);
	assert_string_equal(driver_of(f, GPU), "i915");
	assert_string_equal(driver_of(f, AUDIO), "snd_hda_intel");
	assert_string_equal(override_of(f, GPU), "");
	assert_false(marked(f));
	/* the native form is back for the next discovery */
	harness_down(f);
	harness_up(f, &gpu_intel_backend, "{\"vfio\":\"true\"}");
	assert_non_null(harness_device(&f->h, NATIVE));
	assert_non_null(harness_device(&f->h, FORM));
}

static void test_crash_after_the_rebinding(void **state)
{
	struct fixture *f = fixture_new("{\"vfio\":\"true\"}");
	struct checkpoint ck = { .f = f };
	struct t_req t;

	(void)state;
	t_req_init(&t, NULL);
	t.undo.persist = persist_copy;
	t.undo.persist_userdata = &ck;
	assert_int_equal(gpu_intel_backend.prepare(&f->h.ctx, harness_device(&f->h, FORM), &t.req),
			 0);
	t_req_clear(&t);	/* the process is gone; the checkpoint stays */
	restart_and_unprepare(f, &ck.saved);
	undo_clear(&ck.saved);
	fixture_free(f);
}

static void test_crash_half_way(void **state)
{
	struct fixture *f = fixture_new("{\"vfio\":\"true\"}");
	struct checkpoint ck = { .f = f };
	char err[256];
	struct t_req t;

	(void)state;
	/* the state a crash inside vfio_group_bind leaves: recorded, marked, the
	 * audio function on vfio-pci, the GPU unbound with its override set */
	t_req_init(&t, NULL);
	t.undo.persist = persist_copy;
	t.undo.persist_userdata = &ck;
	assert_int_equal(dralet_undo_set_all(&t.undo, (struct dralet_undo_value[]){
		{ "vfio.gpu", GPU }, { "vfio.group", WAS } }, 2), 0);
	tree_write(f->state, "gpu-vfio-" GPU, WAS);
	assert_int_equal(hal_pci_set_driver(&f->k.node, AUDIO, "vfio-pci", err, sizeof(err)), 0);
	assert_int_equal(hal_pci_unbind(&f->k.node, GPU, err, sizeof(err)), 0);
	assert_string_equal(driver_of(f, GPU), "");
	restart_and_unprepare(f, &ck.saved);
	undo_clear(&ck.saved);
	t_req_clear(&t);
	fixture_free(f);
}

static void test_refusals_change_nothing(void **state)
{
	struct fixture *f = fixture_new("{\"vfio\":\"true\"}");
	char fd[4300], node[4300];
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
	snprintf(node, sizeof(node), "%s/dev/dri/card0", f->k.dir);
	snprintf(fd, sizeof(fd), "%s/proc/4242/fd", f->k.dir);
	assert_int_equal(tree_mkdir(f->k.dir, "proc/4242/fd"), 0);
	assert_int_equal(tree_write(f->k.dir, "proc/4242/comm", "Xorg"), 0);
	assert_int_equal(tree_link(f->k.dir, "proc/4242/fd/7", node), 0);
	t_req_init(&t, NULL);
	assert_int_equal(gpu_intel_backend.prepare(&f->h.ctx, harness_device(&f->h, FORM), &t.req),
			 -EBUSY);
	assert_non_null(strstr(dralet_ctx_error_message(&f->h.ctx), "process 4242 (Xorg)"));
	assert_null(dralet_undo_get(&t.undo, "vfio.group"));
	t_req_clear(&t);
	assert_int_equal(f->k.n_log, 0);
	assert_false(marked(f));
	assert_string_equal(driver_of(f, GPU), "i915");
	fixture_free(f);
}

static void test_undo_text_round_trip(void **state)
{
	struct fixture *f = fixture_new("{\"vfio\":\"true\"}");
	struct dralet_undo bad = { 0 };

	(void)state;
	assert_int_equal(dralet_undo_set(&bad, "vfio.gpu", GPU), 0);
	assert_int_equal(dralet_undo_set(&bad, "vfio.group", GPU "=i915"), 0);
	assert_int_equal(gpu_intel_backend.unprepare(&f->h.ctx, harness_device(&f->h, FORM),
						     NULL, &bad), -EINVAL);
	assert_int_equal(f->k.n_log, 0);
	undo_clear(&bad);
	fixture_free(f);
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
