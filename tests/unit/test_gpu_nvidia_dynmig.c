/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NVIDIA dynamic MIG on board snippets with the fake NVML: the counter set
 * of a MIG-mode GPU without instances and its profile x placement
 * partitions; prepare making the GPU and compute instance (undo state
 * before each create), overlapping placements refused by NVML, a compute
 * instance failure rolling the GPU instance back, unprepare from the undo
 * state alone (also with the instance ids never recorded: a crash between
 * create and record), a GPU with others' instances left to static MIG, and
 * the option that turns it off.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <dralet/counters.h>

#include "board_snippet.h"
#include "test_gpu_util.h"
#include "agent/core/edits.h"
#include "backends/gpu/gpu_backends.h"

#define GPU0 "0000:18:00.0"
#define GPU1 "0000:2a:00.0"
#define UUID0 "GPU-11111111-2222-3333-4444-555555555555"
#define UUID1 "GPU-66666666-7777-8888-9999-000000000000"
#define SET0 "gpu-0000-18-00-0"

/* Two H100s in MIG mode: GPU0 without instances (dynamic), GPU1 with a
 * 1g.10gb instance someone made (static). */
static const char board[] =
	"board: gpu-dynmig\n"
	"numa:\n"
	"  - {node: 0, cpus: \"0-7\"}\n"
	"pci:\n"
	"  - root: \"0000:18\"\n"
	"    numa: 0\n"
	"    devices:\n"
	"      - {bdf: 18:00.0, id: \"10de:2330\", class: 0x030200, driver: nvidia,\n"
	"         nvidia: {minor: 0, uuid: " UUID0 ", nvml: {memory: 85520809984, mig_mode: true}}}\n"
	"  - root: \"0000:2a\"\n"
	"    numa: 0\n"
	"    devices:\n"
	"      - bdf: 2a:00.0\n"
	"        id: \"10de:2330\"\n"
	"        class: 0x030200\n"
	"        driver: nvidia\n"
	"        nvidia:\n"
	"          minor: 1\n"
	"          uuid: " UUID1 "\n"
	"          nvml: {memory: 85520809984, mig_mode: true}\n"
	"          mig: [{profile: 1g.10gb, placement: 6, gi: 9,\n"
	"                 uuid: MIG-aaaaaaaa-0000-0000-0000-000000000001}]\n";

struct env {
	struct harness h;
	struct dralet_edits edits;
	struct dralet_undo undo;
	struct dralet_prepare_req req;
	char *dir;
	char mark[4200];	/* GPU0's dynamic MIG mark */
};

static void start(struct harness *h, const char *dir, const char *extra)
{
	char data[4096], *so = build_path("tests/lib/fake-nvml.so"), *opts;

	snprintf(data, sizeof(data), "%s/nvml.json", dir);
	setenv("FAKE_NVML_DATA", data, 1);
	unsetenv("FAKE_NVML_STATE");
	assert_true(asprintf(&opts, "{\"nvmlLibrary\":\"%s\",\"migStateDir\":\"%s/mig\"%s}", so,
			     dir, extra ? extra : "") > 0);
	assert_int_equal(harness_init(h, &gpu_nvidia_backend, dir, opts), 0);
	assert_int_equal(harness_probe_all(h), 0);
	free(opts);
	free(so);
}

static void setup(struct env *e)
{
	memset(e, 0, sizeof(*e));
	e->dir = board_tree(board);
	snprintf(e->mark, sizeof(e->mark), "%s/mig/nvidia-dynamic-mig-" GPU0, e->dir);
	start(&e->h, e->dir, NULL);
	e->req.claim = (struct dralet_claim_ref){ "7f1c2b3a-0000-4000-8000-000000000001", "team-a",
						  "mig-claim" };
	e->req.request = "mig";
	e->req.edits = &e->edits;
	e->req.undo = &e->undo;
}

static void teardown(struct env *e)
{
	edits_clear(&e->edits);
	undo_clear(&e->undo);
	harness_fini(&e->h);
	tree_remove(e->dir);
}

static int prepare(struct env *e, const char *device)
{
	struct dralet_device *dev = harness_device(&e->h, device);

	assert_non_null(dev);
	edits_clear(&e->edits);
	undo_clear(&e->undo);
	e->h.ctx.error[0] = '\0';
	return gpu_nvidia_backend.prepare(&e->h.ctx, dev, &e->req);
}

/* The instances the fake NVML's state file holds (its text). */
static char *state(const struct env *e)
{
	char path[4096];
	FILE *f;
	char *buf = calloc(1, 8192);

	snprintf(path, sizeof(path), "%s/nvml-mig-state.json", e->dir);
	if ((f = fopen(path, "r"))) {
		(void)!fread(buf, 1, 8191, f);
		fclose(f);
	}
	return buf;
}

static size_t count_instances(const struct env *e)
{
	char *s = state(e);
	size_t n = 0;
	for (char *p = s; (p = strstr(p, "\"gi\"")); p++)
		n++;
	free(s);
	return n;
}

static const char *counter(const struct dralet_counter_list *l, const char *name)
{
	for (size_t i = 0; l && i < l->n; i++)
		if (!strcmp(l->counters[i].name, name))
			return l->counters[i].quantity;
	return NULL;
}

static void test_publish_counters_and_partitions(void **state_)
{
	struct env e;
	size_t partitions = 0;

	(void)state_;
	setup(&e);
	struct dralet_device *gpu = harness_device(&e.h, "gpu-0000-18-00-0");
	assert_non_null(gpu);
	assert_false(dralet_device_is_partition(gpu));
	assert_int_equal(attr_bool(gpu, "migEnabled", false), true);
	assert_int_equal(dralet_device_n_counter_sets(gpu), 1);
	const struct dralet_counter_list *set = dralet_device_counter_set(gpu, 0);
	assert_string_equal(set->set, SET0);
	/* the most any profile uses at once: 7 x 16 SMs, 80 GiB, 8 memory slices */
	assert_string_equal(counter(set, "multiprocessors"), "112");
	assert_string_equal(counter(set, "memory"), "80Gi");
	assert_string_equal(counter(set, "memory-slice-0"), "1");
	assert_string_equal(counter(set, "memory-slice-7"), "1");
	assert_null(counter(set, "memory-slice-8"));
	assert_null(counter(set, "encoders"));	/* no profile has one */
	/* the whole GPU consumes all of it */
	assert_int_equal(dralet_device_n_consumptions(gpu), 1);
	assert_int_equal(dralet_device_consumption(gpu, 0)->n, set->n);

	for (size_t i = 0; i < e.h.sink.n; i++)
		partitions += dralet_device_is_partition(e.h.sink.items[i]);
	/* H100: 1g.10gb x7, 1g.10gb+me x7, 1g.20gb x4, 2g.20gb x3, 3g.40gb x2, 4g x1, 7g x1 */
	assert_int_equal(partitions, 25);
	struct dralet_device *p = harness_device(&e.h, "mig-0000-18-00-0-3g-40gb-4");
	assert_non_null(p);
	assert_true(dralet_device_is_partition(p));
	assert_string_equal(attr_string(p, "type"), "mig");
	assert_string_equal(attr_string(p, "migProfile"), "3g.40gb");
	assert_string_equal(attr_string(p, "parentUUID"), UUID0);
	assert_int_equal(attr_int(p, "placementStart", -1), 4);
	assert_int_equal(attr_int(p, "placementSize", -1), 4);
	assert_string_equal(capacity(p, "memory"), "40Gi");
	const struct dralet_counter_list *use = dralet_device_consumption(p, 0);
	assert_string_equal(use->set, SET0);
	assert_string_equal(counter(use, "multiprocessors"), "48");
	assert_string_equal(counter(use, "memory-slice-4"), "1");
	assert_string_equal(counter(use, "memory-slice-7"), "1");
	assert_null(counter(use, "memory-slice-3"));
	assert_true(dralet_device_n_attrs(p) + dralet_device_n_capacities(p) <= 32);
	/* a media-engine profile takes the GPU's one OFA/JPEG share */
	struct dralet_device *me = harness_device(&e.h, "mig-0000-18-00-0-1g-10gb-me-2");
	assert_non_null(me);
	assert_string_equal(counter(set, "ofa-engines"), "1");
	assert_string_equal(counter(dralet_device_consumption(me, 0), "ofa-engines"), "1");

	/* GPU1 has someone's instance: static MIG as before, no counters */
	struct dralet_device *s = harness_device(&e.h, "mig-0000-2a-00-0-1g-10gb-6");
	assert_non_null(s);
	assert_false(dralet_device_is_partition(s));
	assert_int_equal(dralet_device_n_consumptions(s), 0);
	assert_null(harness_device(&e.h, "gpu-0000-2a-00-0"));
	assert_null(harness_device(&e.h, "mig-0000-2a-00-0-1g-10gb-0"));
	teardown(&e);
}

static void test_option_off(void **state_)
{
	struct harness h;
	char *d = board_tree(board);

	(void)state_;
	start(&h, d, ",\"dynamicMig\":\"false\"");
	/* MIG mode without instances: as before, nothing for GPU0 */
	assert_null(harness_device(&h, "gpu-0000-18-00-0"));
	assert_null(harness_device(&h, "mig-0000-18-00-0-1g-10gb-0"));
	assert_non_null(harness_device(&h, "mig-0000-2a-00-0-1g-10gb-6"));
	harness_fini(&h);
	tree_remove(d);
}

static void test_prepare_and_unprepare(void **state_)
{
	struct env e;

	(void)state_;
	setup(&e);
	assert_int_equal(prepare(&e, "mig-0000-18-00-0-1g-10gb-3"), 0);
	/* the undo state names the GPU, profile, placement and both instances */
	assert_string_equal(dralet_undo_get(&e.undo, "nvidia.mig.gpu"), GPU0);
	assert_string_equal(dralet_undo_get(&e.undo, "nvidia.mig.profile"), "0");
	assert_string_equal(dralet_undo_get(&e.undo, "nvidia.mig.start"), "3");
	assert_string_equal(dralet_undo_get(&e.undo, "nvidia.mig.gi"), "1");
	assert_string_equal(dralet_undo_get(&e.undo, "nvidia.mig.ci"), "0");
	assert_int_equal(count_instances(&e), 1);
	/* the container gets the GPU's nodes and the instance's capability nodes
	 * (gi access 3 + 9 * gi, ci access +1 + ci) */
	assert_non_null(edit_node(&e.edits, "/dev/nvidia0"));
	assert_non_null(edit_node(&e.edits, "/dev/nvidia-caps/nvidia-cap12"));
	assert_non_null(edit_node(&e.edits, "/dev/nvidia-caps/nvidia-cap13"));
	assert_string_equal(edit_env(&e.edits, "NVIDIA_VISIBLE_DEVICES"), "void");
	const char *uuid = NULL;
	for (size_t i = 0; i < e.edits.n_env && !uuid; i++)
		if (strstr(e.edits.env[i], "_UUID=MIG-"))
			uuid = e.edits.env[i];
	assert_non_null(uuid);

	/* an overlapping placement (slices 2-3) is refused by NVML, nothing kept */
	struct dralet_undo first = { 0 };
	assert_int_equal(undo_copy(&first, &e.undo), 0);
	assert_int_equal(prepare(&e, "mig-0000-18-00-0-1g-20gb-2"), -EBUSY);
	assert_non_null(strstr(e.h.ctx.error, "cannot make the MIG GPU instance 1g.20gb at "
					      "placement 2"));
	assert_int_equal(count_instances(&e), 1);
	/* another placement is fine */
	assert_int_equal(prepare(&e, "mig-0000-18-00-0-2g-20gb-4"), 0);
	assert_int_equal(count_instances(&e), 2);
	struct dralet_undo second = { 0 };
	assert_int_equal(undo_copy(&second, &e.undo), 0);

	/* unprepare in a new process: a fresh backend, the undo state alone */
	harness_fini(&e.h);
	start(&e.h, e.dir, NULL);
	assert_int_equal(gpu_nvidia_backend.unprepare(&e.h.ctx, NULL, &e.req.claim, &first), 0);
	assert_int_equal(count_instances(&e), 1);
	assert_int_equal(gpu_nvidia_backend.unprepare(&e.h.ctx, NULL, &e.req.claim, &second), 0);
	assert_int_equal(count_instances(&e), 0);
	/* again: already gone is fine */
	assert_int_equal(gpu_nvidia_backend.unprepare(&e.h.ctx, NULL, &e.req.claim, &second), 0);
	undo_clear(&first);
	undo_clear(&second);
	teardown(&e);
}

static void test_compute_instance_failure_rolls_back(void **state_)
{
	struct env e;

	(void)state_;
	setup(&e);
	setenv("FAKE_NVML_FAIL", "create-ci", 1);
	assert_int_equal(prepare(&e, "mig-0000-18-00-0-1g-10gb-0"), -EBUSY);
	unsetenv("FAKE_NVML_FAIL");
	assert_non_null(strstr(e.h.ctx.error, "cannot make the compute instance of GPU "
					      "instance 1"));
	assert_non_null(strstr(e.h.ctx.error, "GPU instance rolled back"));
	assert_int_equal(count_instances(&e), 0);
	/* the undo state said what was being made; undoing it is harmless */
	assert_string_equal(dralet_undo_get(&e.undo, "nvidia.mig.gi"), "1");
	assert_int_equal(gpu_nvidia_backend.unprepare(&e.h.ctx, NULL, &e.req.claim, &e.undo), 0);
	/* and the placement is free again */
	assert_int_equal(prepare(&e, "mig-0000-18-00-0-1g-10gb-0"), 0);
	assert_int_equal(count_instances(&e), 1);
	teardown(&e);
}

/* A crash after the creates, before their ids were recorded: unprepare
 * finds the GPU instance by profile and placement and its compute
 * instance by trying the ids. The GPU stays dynamic across the restart
 * (its mark); without the mark its instances look like someone else's. */
static void test_unprepare_without_recorded_ids(void **state_)
{
	struct env e;
	struct dralet_undo early = { 0 };

	(void)state_;
	setup(&e);
	assert_int_equal(access(e.mark, F_OK), -1);	/* marked only once it makes instances */
	assert_int_equal(prepare(&e, "mig-0000-18-00-0-4g-40gb-0"), 0);
	assert_int_equal(access(e.mark, F_OK), 0);
	assert_int_equal(count_instances(&e), 1);
	assert_int_equal(dralet_undo_set_all(&early, (const struct dralet_undo_value[]){
		{ "nvidia.mig.gpu", GPU0 }, { "nvidia.mig.profile", "3" },
		{ "nvidia.mig.start", "0" } }, 3), 0);
	/* a new process: the mark keeps the GPU dynamic with the instance there */
	harness_fini(&e.h);
	start(&e.h, e.dir, NULL);
	assert_true(dralet_device_is_partition(harness_device(&e.h, "mig-0000-18-00-0-4g-40gb-0")));
	assert_non_null(harness_device(&e.h, "mig-0000-18-00-0-1g-10gb-0"));
	assert_int_equal(gpu_nvidia_backend.unprepare(&e.h.ctx, NULL, &e.req.claim, &early), 0);
	assert_int_equal(count_instances(&e), 0);
	assert_int_equal(access(e.mark, F_OK), -1);	/* no instances left: unmarked */

	/* without the mark a restart finds someone's instance: static MIG */
	assert_int_equal(prepare(&e, "mig-0000-18-00-0-4g-40gb-0"), 0);
	assert_int_equal(unlink(e.mark), 0);
	harness_fini(&e.h);
	start(&e.h, e.dir, NULL);
	assert_null(harness_device(&e.h, "mig-0000-18-00-0-1g-10gb-0"));
	struct dralet_device *s = harness_device(&e.h, "mig-0000-18-00-0-4g-40gb-0");
	assert_non_null(s);
	assert_false(dralet_device_is_partition(s));
	assert_int_equal(gpu_nvidia_backend.unprepare(&e.h.ctx, NULL, &e.req.claim, &e.undo), 0);
	assert_int_equal(count_instances(&e), 0);
	/* the static view of it is stale now: refused, with a new discovery asked */
	e.h.ctx.node_changed = false;
	assert_int_equal(prepare(&e, "mig-0000-18-00-0-4g-40gb-0"), -ENODEV);
	assert_non_null(strstr(e.h.ctx.error, "its MIG GPU instance 1 no longer exists"));
	assert_true(e.h.ctx.node_changed);
	/* the next discovery finds the GPU free: dynamic again */
	harness_fini(&e.h);
	start(&e.h, e.dir, NULL);
	assert_non_null(harness_device(&e.h, "mig-0000-18-00-0-1g-10gb-0"));
	undo_clear(&early);
	teardown(&e);
}

/* A GPU the backend used dynamically and released: instances an admin
 * makes on it afterwards are someone else's at the next start (static MIG),
 * not the backend's. The mark goes with the backend's last instance; while
 * one of two claims still holds an instance it stays. */
static void test_released_gpu_is_not_claimed_later(void **state_)
{
	struct env e;
	struct dralet_undo first = { 0 };

	(void)state_;
	setup(&e);
	assert_int_equal(prepare(&e, "mig-0000-18-00-0-1g-10gb-0"), 0);
	assert_int_equal(undo_copy(&first, &e.undo), 0);
	assert_int_equal(prepare(&e, "mig-0000-18-00-0-1g-10gb-1"), 0);
	assert_int_equal(count_instances(&e), 2);
	assert_int_equal(gpu_nvidia_backend.unprepare(&e.h.ctx, NULL, &e.req.claim, &first), 0);
	assert_int_equal(access(e.mark, F_OK), 0);	/* the second claim's instance is there */
	assert_int_equal(gpu_nvidia_backend.unprepare(&e.h.ctx, NULL, &e.req.claim, &e.undo), 0);
	assert_int_equal(count_instances(&e), 0);
	assert_int_equal(access(e.mark, F_OK), -1);

	/* the admin makes an instance (as nvidia-smi mig -cgi would) while the
	 * agent is down: a new process takes it for static MIG */
	undo_clear(&e.undo);
	assert_int_equal(prepare(&e, "mig-0000-18-00-0-4g-40gb-0"), 0);
	assert_int_equal(unlink(e.mark), 0);
	harness_fini(&e.h);
	start(&e.h, e.dir, NULL);
	assert_null(harness_device(&e.h, "mig-0000-18-00-0-1g-10gb-0"));
	assert_false(dralet_device_is_partition(harness_device(&e.h, "mig-0000-18-00-0-4g-40gb-0")));
	undo_clear(&first);
	teardown(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_publish_counters_and_partitions),
		cmocka_unit_test(test_option_off),
		cmocka_unit_test(test_prepare_and_unprepare),
		cmocka_unit_test(test_compute_instance_failure_rolls_back),
		cmocka_unit_test(test_unprepare_without_recorded_ids),
		cmocka_unit_test(test_released_gpu_is_not_claimed_later),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
