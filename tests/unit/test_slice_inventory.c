/* SPDX-License-Identifier: Apache-2.0 */
/* slices_build() over a discovered inventory: the daemon's and `dralet slices`' path. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/core/config.h"
#include "agent/core/inventory.h"
#include "agent/slices/slices.h"
#include "agent/core/registry.h"
#include "board_snippet.h"
#include "harness.h"

static int probe(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
		 const struct dralet_pci_id *id)
{
	struct dralet_device *d;
	int r = dralet_device_new(ctx, f, "acc", NULL, &d);
	(void)id;
	if (r < 0)
		return r;
	dralet_device_set_string(d, "model", "Test Accelerator");
	dralet_device_set_capacity_bytes(d, "memory", 16ull << 30);
	if (f->address[strlen(f->address) - 1] == '3')	/* every function 3 is sick */
		dralet_device_set_health(d, DRALET_HEALTH_UNHEALTHY);
	return 0;
}

static const struct dralet_pci_id ids[] = { DRALET_PCI_CLASS(0x120000, 0xff0000), { 0 } };
static const struct dralet_backend test_backend = {
	DRALET_BACKEND_ABI, "testaccel", "accel", "accel.dralet.dev", ids, .probe = probe };

static struct json_object *path(struct json_object *o, const char *p)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", p);
	for (char *tok = strtok(buf, "."); tok && o; tok = strtok(NULL, "."))
		o = (tok[0] >= '0' && tok[0] <= '9') ? json_object_array_get_idx(o, (size_t)atoi(tok))
						      : json_object_object_get(o, tok);
	return o;
}

/* slices_build() with its records' texts parsed into one json array. */
static int build(const struct inventory *inv, const char *driver, const char *node,
		 const char *uid, const struct slice_options *opts, struct json_object **ret)
{
	struct slice_list *list = NULL;
	int r = slices_build(inv, driver, node, uid, opts, &list);
	if (r == 0) {
		assert_int_equal(slice_list_to_json(list, ret), 0);
		slice_list_unref(list);
	}
	return r;
}

static void test_inventory_to_slices(void **state)
{
	(void)state;
	/* 300 functions: 75 host bridges with a 4-function device each */
	static char board[75 * 512];
	size_t o = (size_t)snprintf(board, sizeof(board), "board: slices-test\npci:\n");
	for (int bus = 1; bus <= 75; bus++) {
		o += (size_t)snprintf(board + o, sizeof(board) - o,
				      "  - root: \"0000:%02x\"\n    devices:\n", bus);
		for (int fn = 0; fn < 4; fn++)
			o += (size_t)snprintf(board + o, sizeof(board) - o,
					      "      - {bdf: %02x:00.%d, id: \"1234:0001\", "
					      "class: 0x120000}\n", bus, fn);
	}
	assert_true(o < sizeof(board));
	char *dir = board_tree(board);
	char sys[4096], dev[4096], proc[4096];
	snprintf(sys, sizeof(sys), "%s/sys", dir);
	snprintf(dev, sizeof(dev), "%s/dev", dir);
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	struct hal_roots roots = { sys, dev, proc };
	const struct dralet_backend *const list[] = { &test_backend, NULL };
	struct registry *reg;
	struct config *cfg = NULL;
	struct inventory *inv;
	char err[256];
	assert_int_equal(config_load(NULL, &cfg, err, sizeof(err)), 0);
	assert_int_equal(registry_new_with(list, NULL, NULL, NULL, &reg), 0);
	assert_int_equal(inventory_discover(&roots, cfg, reg, &inv), 0);
	assert_int_equal(inventory_n_devices(inv, "accel.dralet.dev"), 300);

	struct json_object *slices = NULL;
	assert_int_equal(build(inv, "accel.dralet.dev", "node-1", "uid-7", NULL, &slices), 0);
	assert_int_equal(json_object_array_length(slices), 3);
	size_t sizes[] = { 128, 128, 44 };
	const char *prev = "";
	for (size_t s = 0; s < 3; s++) {
		struct json_object *devs = path(slices, s == 0 ? "0.spec.devices" : s == 1 ? "1.spec.devices" : "2.spec.devices");
		assert_int_equal(json_object_array_length(devs), sizes[s]);
		for (size_t i = 0; i < sizes[s]; i++) {
			const char *name = json_object_get_string(path(json_object_array_get_idx(devs, i), "name"));
			assert_true(strcmp(prev, name) < 0);
			prev = name;
		}
	}
	struct json_object *d0 = path(slices, "0.spec.devices.0");
	assert_string_equal(json_object_get_string(path(d0, "name")), "acc-0000-01-00-0");
	assert_string_equal(json_object_get_string(path(d0, "attributes.model.string")), "Test Accelerator");
	assert_string_equal(json_object_get_string(path(d0, "capacity.memory.value")), "16Gi");
	assert_non_null(json_object_object_get(path(d0, "attributes"), "resource.kubernetes.io/pcieRoot"));
	assert_null(path(slices, "0.spec.devices.3.taints"));	/* taints off by default */
	assert_string_equal(json_object_get_string(path(slices, "0.metadata.ownerReferences.0.uid")), "uid-7");
	json_object_put(slices);

	/* with DRADeviceTaints: the unhealthy functions carry the taint, 64 per slice */
	struct slice_options opts = { .device_taints = true };
	assert_int_equal(build(inv, "accel.dralet.dev", "node-1", NULL, &opts, &slices), 0);
	assert_int_equal(json_object_array_length(slices), 5);
	struct json_object *d3 = path(slices, "0.spec.devices.3");
	assert_string_equal(json_object_get_string(path(d3, "name")), "acc-0000-01-00-3");
	assert_string_equal(json_object_get_string(path(d3, "taints.0.key")), SLICE_TAINT_UNHEALTHY_KEY);
	assert_null(path(slices, "0.metadata.ownerReferences"));
	json_object_put(slices);

	/* unknown driver: no slices; bad node name: -EINVAL */
	assert_int_equal(build(inv, "other.dralet.dev", "node-1", NULL, NULL, &slices), 0);
	assert_int_equal(json_object_array_length(slices), 0);
	json_object_put(slices);
	slices = (struct json_object *)0x1;
	assert_int_equal(build(inv, "accel.dralet.dev", "Node_1", NULL, NULL, &slices), -EINVAL);
	assert_ptr_equal(slices, (struct json_object *)0x1);

	inventory_free(inv);
	registry_free(reg);
	config_free(cfg);
	tree_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inventory_to_slices),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
