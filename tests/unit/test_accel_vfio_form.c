/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The vfio form of an accelerator (backends/accel/accel_vfio_form.c on
 * backends/common/vfio_form.c) against the board simulator's model of the
 * kernel (node_model.h): an NPU on habanalabs (/dev/accel/accel0) with a
 * companion function on xhci_hcd in one IOMMU group (with its root port, a
 * bridge); a QAT 4xxx PF with one VF enabled (the VF is the device); a QAT
 * PF shared by queues; an accelerator whose IOMMU group holds a NIC with
 * SR-IOV VFs enabled.
 *
 *   - published twice with option vfio "true" (once without), both forms
 *     consuming counter "accel" of a set the native form owns; a QAT VF too,
 *     with its VF identity and services; no vfio form for a function shared
 *     by queues (sharing "true");
 *   - prepare records the group's bindings (one checkpoint write, before any
 *     rebinding) and the mark, moves both functions to vfio-pci (the NPU to
 *     option vfioDriver), leaves the bridge, hands over /dev/vfio/<group> and
 *     /dev/vfio/vfio, not /dev/accel/accel0; unprepare from the recorded
 *     state alone puts both back and removes the mark, and writes nothing
 *     the second time;
 *   - crashes: after the rebinding, and half-way (the companion moved, the
 *     NPU unbound): a new process publishes the marked function's vfio form
 *     only, under the same name, and its unprepare gives the group back;
 *   - refusals that change nothing: VFs enabled in the group, a host process
 *     holding the NPU's accel node.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dralet/counters.h>
#include <dralet/pci_ctl.h>
#include <dralet/sharing.h>

#include "backends/accel/accel.h"
#include "hal/pci_binding.h"
#include "node_model.h"
#include "vfio_fixture.h"
#include "test_backend.h"

#define NPU "0000:03:00.0"
#define USB "0000:03:00.1"
#define BRIDGE "0000:00:01.0"
#define NATIVE "accel-0000-03-00-0"
#define FORM "accel-0000-03-00-0-vfio"
#define QAT_VF_FORM "accel-0000-6b-00-1-vfio"
#define SHARED "accel-0000-6c-00-0"
#define NEXT_TO_VFS "accel-0000-05-00-0-vfio"
#define WAS NPU "=habanalabs,none " USB "=xhci_hcd,none"
#define ON "{\"vfio\":\"true\"}"

static const char BOARD[] =
	"board: vfio-accel\n"
	"pci:\n"
	"  - root: \"0000:00\"\n"
	"    devices:\n"
	"      - bdf: 00:01.0\n"
	"        id: \"8086:347a\"\n"
	"        iommu_group: 40\n"
	"        devices:\n"
	"          - bdf: 03:00.0\n"
	"            id: \"1da3:1020\"\n"
	"            class: 0x120000\n"
	"            driver: habanalabs\n"
	"            iommu_group: 40\n"
	"            chardevs: [{name: accel0, class: accel, devname: accel/accel0,\n"
	"                        dev: \"261:0\"}]\n"
	"          - bdf: 03:00.1\n"
	"            id: \"1da3:1021\"\n"
	"            class: 0x0c0330\n"
	"            driver: xhci_hcd\n"
	"            iommu_group: 40\n"
	"      - bdf: 00:02.0\n"
	"        id: \"8086:347a\"\n"
	"        devices:\n"
	"          - bdf: 05:00.0\n"
	"            id: \"1e60:2864\"\n"
	"            class: 0x120000\n"
	"            driver: hailo\n"
	"            iommu_group: 50\n"
	"          - bdf: 05:00.1\n"
	"            id: \"8086:1592\"\n"
	"            class: 0x020000\n"
	"            driver: ice\n"
	"            iommu_group: 50\n"
	"            sriov: {total: 4, num: 1, vf_id: \"8086:1889\", vf_driver: iavf,\n"
	"                    vfs: {\"0-3\": {iommu_group: 51}}}\n"
	"  - root: \"0000:6b\"\n"
	"    devices:\n"
	"      - bdf: 6b:00.0\n"
	"        id: \"8086:4940\"\n"
	"        class: 0x0b4000\n"
	"        driver: 4xxx\n"
	"        iommu_group: 70\n"
	"        files: {qat/cfg_services: \"sym;asym\", qat/state: up}\n"
	"        sriov: {total: 16, num: 1, vf_id: \"8086:4941\", vf_driver: 4xxxvf,\n"
	"                vfs: {\"0-15\": {iommu_group: 71}}}\n"
	"  - root: \"0000:6c\"\n"
	"    devices:\n"
	"      - bdf: 6c:00.0\n"
	"        id: \"8086:4940\"\n"
	"        class: 0x0b4000\n"
	"        driver: 4xxx\n"
	"        iommu_group: 80\n"
	"        files: {qat/cfg_services: dc, qat/state: up, qat/num_rps: \"64\"}\n";

static struct vfio_fixture *fixture_new(const char *options)
{
	return vfio_fixture_new(BOARD, &backend_accel, options, "accel-vfio-" NPU);
}

/* On their drivers until the checkpoint is written. */
static const char *const BOUND[] = { NPU, "habanalabs", USB, "xhci_hcd", NULL };

static void test_published_twice_one_counter(void **state)
{
	struct vfio_fixture *f = fixture_new("{\"vfio\":\"true\",\"sharing\":\"true\"}");
	struct dralet_device *native = harness_device(&f->h, NATIVE);
	struct dralet_device *form = harness_device(&f->h, FORM);
	struct dralet_device *vf = harness_device(&f->h, "accel-0000-6b-00-1");
	struct dralet_device *vf_form = harness_device(&f->h, QAT_VF_FORM);

	(void)state;
	assert_non_null(native);
	assert_non_null(form);
	assert_string_equal(attr_string(native, "type"), "accel");
	assert_string_equal(attr_string(form, "type"), "vfio");
	assert_string_equal(attr_string(form, "driver"), "vfio-pci");
	assert_string_equal(attr_string(form, "nativeDriver"), "habanalabs");
	assert_string_equal(attr_string(form, "pciClass"), "0x1200");
	assert_int_equal(attr_int(form, "iommuGroup", -1), 40);
	assert_int_equal(dralet_device_n_nodes(form), 0);	/* nothing is on vfio yet */
	vfio_assert_one_counter(native, form, "accel");

	/* a QAT VF: its own group, its identity and services on both forms */
	assert_non_null(vf);
	assert_non_null(vf_form);
	vfio_assert_one_counter(vf, vf_form, "accel");
	assert_int_equal(attr_bool(vf_form, "isVF"), 1);
	assert_string_equal(attr_string(vf_form, "pfPciAddress"), "0000:6b:00.0");
	assert_string_equal(attr_string(vf_form, "services"), "sym;asym");
	assert_string_equal(attr_string(vf_form, "nativeDriver"), "4xxxvf");
	assert_null(harness_device(&f->h, "accel-0000-6b-00-0-vfio"));	/* PF with VFs */

	/* shared by queues: no vfio form, and no counter on the shares */
	assert_true(dralet_device_allows_multiple(harness_device(&f->h, SHARED)));
	assert_null(harness_device(&f->h, SHARED "-vfio"));
	assert_int_equal(dralet_device_n_consumptions(harness_device(&f->h, SHARED)), 0);
	vfio_fixture_free(f);

	/* off by default: no vfio form, no counters */
	f = fixture_new(NULL);
	assert_non_null(harness_device(&f->h, NATIVE));
	assert_null(harness_device(&f->h, FORM));
	assert_null(harness_device(&f->h, QAT_VF_FORM));
	assert_int_equal(dralet_device_n_counter_sets(harness_device(&f->h, NATIVE)), 0);
	vfio_fixture_free(f);

	/* without sharing the QAT PF has its vfio form */
	f = fixture_new(ON);
	assert_non_null(harness_device(&f->h, SHARED "-vfio"));
	vfio_fixture_free(f);
}

static void test_prepare_moves_the_group_and_back(void **state)
{
	struct vfio_fixture *f = fixture_new(ON);
	struct dralet_device *form = harness_device(&f->h, FORM);
	struct vfio_checkpoint ck = { .f = f, .bound = BOUND };
	struct t_req t;
	size_t before;

	(void)state;
	t_req_init(&t, NULL);
	vfio_checkpoint_watch(&ck, &t.undo);
	assert_int_equal(backend_accel.prepare(&f->h.ctx, form, &t.req), 0);
	assert_string_equal(vfio_driver_of(f, NPU), "vfio-pci");
	assert_string_equal(vfio_override_of(f, NPU), "vfio-pci");
	assert_string_equal(vfio_driver_of(f, USB), "vfio-pci");
	assert_int_equal(node_model_find_log(&f->k, 0, BRIDGE), -1);
	assert_int_equal(ck.writes, 1);
	assert_string_equal(dralet_undo_get(&ck.saved, "vfio.group"), WAS);
	assert_string_equal(dralet_undo_get(&ck.saved, "vfio.accel"), NPU);
	assert_true(vfio_marked(f));
	assert_non_null(t_edit_node(&t, "/dev/vfio/40"));
	assert_non_null(t_edit_node(&t, "/dev/vfio/vfio"));
	assert_null(t_edit_node(&t, "/dev/accel/accel0"));
	assert_string_equal(t_env(&t, "DRALET_ACCEL_0000_03_00_0_VFIO_IOMMU_GROUP"), "40");
	assert_string_equal(t_env(&t, "DRALET_ACCEL_0000_03_00_0_VFIO_PCI_ADDRESS"), NPU);
	assert_string_equal(t_env(&t, "DRALET_ACCEL_0000_03_00_0_VFIO_DRIVER"), "vfio-pci");

	/* unprepare from the state on disk alone */
	assert_int_equal(backend_accel.unprepare(&f->h.ctx, form, &t.req.claim, &ck.saved), 0);
	assert_string_equal(vfio_driver_of(f, NPU), "habanalabs");
	assert_string_equal(vfio_driver_of(f, USB), "xhci_hcd");
	assert_string_equal(vfio_override_of(f, NPU), "");
	assert_string_equal(vfio_override_of(f, USB), "");
	assert_false(vfio_marked(f));
	before = f->k.n_log;
	assert_int_equal(backend_accel.unprepare(&f->h.ctx, form, &t.req.claim, &ck.saved), 0);
	assert_int_equal(f->k.n_log, before);
	undo_clear(&ck.saved);
	t_req_clear(&t);
	vfio_fixture_free(f);
}

/* Option vfioDriver names the driver the function goes to; one that does not
 * take it fails the prepare, and the group is back as it was. */
static void test_failed_rebinding_rolls_back(void **state)
{
	struct vfio_fixture *f = fixture_new("{\"vfio\":\"true\",\"vfioDriver\":\"no-such-vfio\"}");
	struct t_req t;

	(void)state;
	t_req_init(&t, NULL);
	assert_true(backend_accel.prepare(&f->h.ctx, harness_device(&f->h, FORM), &t.req) < 0);
	assert_true(node_model_find_log(&f->k, 0, NPU) >= 0);	/* it was tried */
	assert_string_equal(vfio_driver_of(f, NPU), "habanalabs");
	assert_string_equal(vfio_driver_of(f, USB), "xhci_hcd");
	assert_string_equal(vfio_override_of(f, NPU), "");
	assert_string_equal(vfio_override_of(f, USB), "");
	assert_false(vfio_marked(f));
	t_req_clear(&t);
	vfio_fixture_free(f);
}

/* A new process after a crash: the marked function is published in its
 * vfio form only, under its name, and its unprepare gives the group back. */
static void restart_and_unprepare(struct vfio_fixture *f, const struct dralet_undo *saved)
{
	struct dralet_device *form;
	struct dralet_claim_ref claim = { "uid-1", "default", "claim" };

	vfio_fixture_restart(f, &backend_accel, ON);
	form = harness_device(&f->h, FORM);
	assert_non_null(form);
	assert_string_equal(attr_string(form, "type"), "vfio");
	assert_string_equal(attr_string(form, "nativeDriver"), "habanalabs");
	assert_null(harness_device(&f->h, NATIVE));
	assert_int_equal(dralet_device_n_counter_sets(form), 1);
	assert_string_equal(dralet_device_counter_set(form, 0)->set, NATIVE);
	assert_int_equal(backend_accel.unprepare(&f->h.ctx, form, &claim, saved), 0);
	assert_string_equal(vfio_driver_of(f, NPU), "habanalabs");
	assert_string_equal(vfio_driver_of(f, USB), "xhci_hcd");
	assert_string_equal(vfio_override_of(f, NPU), "");
	assert_false(vfio_marked(f));
	/* the native form is back for the next discovery */
	vfio_fixture_restart(f, &backend_accel, ON);
	assert_non_null(harness_device(&f->h, NATIVE));
	assert_non_null(harness_device(&f->h, FORM));
}

static void test_crash_after_the_rebinding(void **state)
{
	struct vfio_fixture *f = fixture_new(ON);
	struct vfio_checkpoint ck = { .f = f, .bound = BOUND };
	struct t_req t;

	(void)state;
	t_req_init(&t, NULL);
	vfio_checkpoint_watch(&ck, &t.undo);
	assert_int_equal(backend_accel.prepare(&f->h.ctx, harness_device(&f->h, FORM), &t.req), 0);
	assert_string_equal(vfio_driver_of(f, NPU), "vfio-pci");
	t_req_clear(&t);	/* the process is gone; the checkpoint stays */
	restart_and_unprepare(f, &ck.saved);
	undo_clear(&ck.saved);
	vfio_fixture_free(f);
}

static void test_crash_half_way(void **state)
{
	struct vfio_fixture *f = fixture_new(ON);
	struct vfio_checkpoint ck = { .f = f, .bound = BOUND };
	struct t_req t;

	(void)state;
	/* the state a crash inside vfio_group_bind leaves: recorded, marked, the
	 * companion on vfio-pci, the NPU unbound */
	t_req_init(&t, NULL);
	vfio_checkpoint_watch(&ck, &t.undo);
	vfio_leave_half_bound(f, &t.undo, "vfio.accel", NPU, USB, WAS);
	restart_and_unprepare(f, &ck.saved);
	undo_clear(&ck.saved);
	t_req_clear(&t);
	vfio_fixture_free(f);
}

static void test_refusals_change_nothing(void **state)
{
	struct vfio_fixture *f = fixture_new(ON);
	struct t_req t;

	(void)state;
	/* a NIC of the same IOMMU group has VFs enabled */
	t_req_init(&t, NULL);
	assert_non_null(harness_device(&f->h, NEXT_TO_VFS));
	assert_int_equal(backend_accel.prepare(&f->h.ctx, harness_device(&f->h, NEXT_TO_VFS),
					       &t.req), -EBUSY);
	assert_non_null(strstr(dralet_ctx_error_message(&f->h.ctx), "SR-IOV VFs"));
	assert_null(dralet_undo_get(&t.undo, "vfio.group"));
	t_req_clear(&t);

	/* a host process has the NPU's accel node open */
	vfio_hold_node(f, "hl-smi", "accel/accel0");
	t_req_init(&t, NULL);
	assert_int_equal(backend_accel.prepare(&f->h.ctx, harness_device(&f->h, FORM), &t.req),
			 -EBUSY);
	assert_non_null(strstr(dralet_ctx_error_message(&f->h.ctx), "process 4242 (hl-smi)"));
	assert_null(dralet_undo_get(&t.undo, "vfio.group"));
	t_req_clear(&t);
	assert_int_equal(f->k.n_log, 0);
	assert_false(vfio_marked(f));
	assert_string_equal(vfio_driver_of(f, NPU), "habanalabs");
	vfio_fixture_free(f);
}

/* The native form's prepare changes nothing on the host; its unprepare
 * (the backend's, shared with the vfio form) finds nothing to give back. */
static void test_native_form_untouched(void **state)
{
	struct vfio_fixture *f = fixture_new(ON);
	struct dralet_device *native = harness_device(&f->h, NATIVE);
	struct t_req t;

	(void)state;
	t_req_init(&t, NULL);
	assert_int_equal(backend_accel.prepare(&f->h.ctx, native, &t.req), 0);
	assert_non_null(t_edit_node(&t, "/dev/accel/accel0"));
	assert_null(dralet_undo_get(&t.undo, "vfio.group"));
	assert_int_equal(backend_accel.unprepare(&f->h.ctx, native, &t.req.claim, &t.undo), 0);
	assert_int_equal(f->k.n_log, 0);
	assert_string_equal(vfio_driver_of(f, NPU), "habanalabs");
	t_req_clear(&t);
	vfio_fixture_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_published_twice_one_counter),
		cmocka_unit_test(test_prepare_moves_the_group_and_back),
		cmocka_unit_test(test_failed_rebinding_rolls_back),
		cmocka_unit_test(test_crash_after_the_rebinding),
		cmocka_unit_test(test_crash_half_way),
		cmocka_unit_test(test_refusals_change_nothing),
		cmocka_unit_test(test_native_form_untouched),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
