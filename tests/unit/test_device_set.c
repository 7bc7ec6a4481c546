/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The per-driver device set: its list, its references, and a rediscovery's
 * swap while a holder keeps the old set (and so the old inventory) alive.
 */
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
#include "agent/core/device_set.h"
#include "agent/core/inventory.h"
#include "agent/core/registry.h"
#include "board_snippet.h"
#include "harness.h"

/* ---- a set over a plain list ---- */

static void test_list(void **state)
{
	struct harness h;
	struct dralet_pci_func funcs[3];
	struct dralet_device *devs[3], *unsorted[2], *twice[2];
	struct device_set *set, *empty, *bad = NULL;

	(void)state;
	assert_int_equal(harness_init(&h, &harness_plain_backend, NULL, NULL), 0);
	assert_int_equal(harness_add_devices(&h, funcs, 3, devs), 0);
	assert_int_equal(device_set_new("accel.dralet.dev", devs, 3, &set), 0);
	assert_string_equal(device_set_driver(set), "accel.dralet.dev");
	assert_int_equal(device_set_n(set), 3);
	assert_ptr_equal(device_set_devices(set)[2], devs[2]);
	assert_null(device_set_devices(set)[3]);	/* NULL-terminated */
	assert_ptr_equal(device_set_find(set, dralet_device_name(devs[1])), devs[1]);
	assert_null(device_set_find(set, "no-such-device"));
	/* the claims engine looks devices up by name: sorted, no duplicates */
	unsorted[0] = devs[1];
	unsorted[1] = devs[0];
	assert_int_equal(device_set_new("accel.dralet.dev", unsorted, 2, &bad), -EINVAL);
	twice[0] = twice[1] = devs[0];
	assert_int_equal(device_set_new("accel.dralet.dev", twice, 2, &bad), -EINVAL);
	assert_null(bad);
	assert_int_equal(device_set_new("accel.dralet.dev", NULL, 0, &empty), 0);
	assert_int_equal(device_set_n(empty), 0);
	assert_null(device_set_find(empty, "x"));
	/* a holder's reference keeps the set after its maker drops its own */
	assert_ptr_equal(device_set_ref(set), set);
	device_set_unref(set);
	assert_ptr_equal(device_set_find(set, dralet_device_name(devs[0])), devs[0]);
	device_set_unref(set);
	device_set_unref(empty);
	assert_null(device_set_ref(NULL));
	device_set_unref(NULL);
	harness_fini(&h);
}

/* ---- sets of a discovery: they keep the inventory alive ---- */

static int removed;	/* devices freed: the backend's remove op */

static int probe(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
		 const struct dralet_pci_id *id)
{
	struct dralet_device *d;

	(void)id;
	return dralet_device_new(ctx, f, "dev", NULL, &d);
}

static void count_removed(struct dralet_backend_ctx *ctx, struct dralet_device *dev)
{
	(void)ctx;
	(void)dev;
	removed++;
}

static const struct dralet_pci_id class_12[] = { DRALET_PCI_CLASS(0x120000, 0xff0000), { 0 } };
static const struct dralet_pci_id class_02[] = { DRALET_PCI_CLASS(0x020000, 0xff0000), { 0 } };
static const struct dralet_backend accel = {
	.abi = DRALET_BACKEND_ABI, .name = "accel", .family = "accel",
	.default_driver = "a.example.com", .ids = class_12, .probe = probe,
	.remove = count_removed,
};
static const struct dralet_backend nics = {
	.abi = DRALET_BACKEND_ABI, .name = "nics", .family = "net",
	.default_driver = "b.example.com", .ids = class_02, .probe = probe,
	.remove = count_removed,
};

struct node {
	char *dir;
	char sys[4096], dev[4096], proc[4096];
	struct hal_roots roots;
	struct registry *reg;
	struct config *cfg;
};

static void node_open(struct node *n)
{
	const struct dralet_backend *const list[] = { &accel, &nics, NULL };
	char path[] = "/tmp/dralet-device-set-XXXXXX", err[256];
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "{}", 2), 2);
	close(fd);
	assert_int_equal(config_load(path, &n->cfg, err, sizeof(err)), 0);
	unlink(path);
	n->dir = board_tree("board: device-set\npci:\n  - root: \"0000:00\"\n    devices:\n"
			    "      - {bdf: 00:04.0, id: \"1234:5678\", class: 0x120000}\n"
			    "      - {bdf: 00:05.0, id: \"1234:5678\", class: 0x120000}\n"
			    "      - {bdf: 00:08.0, id: \"8086:1572\", class: 0x020000}\n");
	snprintf(n->sys, sizeof(n->sys), "%s/sys", n->dir);
	snprintf(n->dev, sizeof(n->dev), "%s/dev", n->dir);
	snprintf(n->proc, sizeof(n->proc), "%s/proc", n->dir);
	n->roots = (struct hal_roots){ n->sys, n->dev, n->proc };
	assert_int_equal(registry_new_with(list, NULL, NULL, NULL, &n->reg), 0);
}

static void node_close(struct node *n)
{
	registry_free(n->reg);
	config_free(n->cfg);
	tree_remove(n->dir);
}

static const char *const drivers[] = { "a.example.com", "b.example.com", "none.example.com" };

static void discover_sets(struct node *n, struct device_set **sets)
{
	struct inventory *inv;

	assert_int_equal(inventory_discover(&n->roots, n->cfg, n->reg, &inv), 0);
	assert_int_equal(device_sets_from_inventory(inv, drivers, 3, sets), 0);
}

static void test_swap_while_a_holder_keeps_the_old_set(void **state)
{
	struct device_set *first[3], *second[3], *holder;
	struct node n;

	(void)state;
	node_open(&n);
	removed = 0;
	discover_sets(&n, first);
	assert_int_equal(device_set_n(first[0]), 2);
	assert_int_equal(device_set_n(first[1]), 1);
	assert_int_equal(device_set_n(first[2]), 0);	/* a driver without devices */
	assert_string_equal(device_set_driver(first[2]), "none.example.com");
	assert_string_equal(dralet_device_name(device_set_devices(first[0])[0]),
			    "dev-0000-00-04-0");
	/* a holder (an engine that could not take the new set) keeps the old one */
	holder = device_set_ref(first[0]);

	/* a rediscovery: the new sets go in, the daemon drops the old ones */
	discover_sets(&n, second);
	for (int i = 0; i < 3; i++)
		device_set_unref(first[i]);
	/* the first inventory lives on: the holder still reads its devices */
	assert_int_equal(removed, 0);
	assert_ptr_not_equal(device_set_devices(holder)[0], device_set_devices(second[0])[0]);
	assert_string_equal(dralet_device_name(device_set_find(holder, "dev-0000-00-05-0")),
			    "dev-0000-00-05-0");
	/* ... until the holder lets go: then the whole first discovery goes */
	device_set_unref(holder);
	assert_int_equal(removed, 3);
	for (int i = 0; i < 3; i++)
		device_set_unref(second[i]);
	assert_int_equal(removed, 6);
	node_close(&n);
}

static void test_no_drivers_frees_the_inventory(void **state)
{
	struct inventory *inv;
	struct node n;

	(void)state;
	node_open(&n);
	removed = 0;
	assert_int_equal(inventory_discover(&n.roots, n.cfg, n.reg, &inv), 0);
	assert_int_equal(device_sets_from_inventory(inv, NULL, 0, NULL), 0);
	assert_int_equal(removed, 3);
	node_close(&n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_swap_while_a_holder_keeps_the_old_set),
		cmocka_unit_test(test_no_drivers_frees_the_inventory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
