/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The backend contract (include/dralet/backend.h, agent/core/backend_call.h):
 * NULL operations get the agent's defaults once, at registration; the match
 * table comes first and the filter sees the entry that matched and its score;
 * probe is told the same entry; a backend built for another SDK ABI is
 * refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/core/backend_call.h"
#include "agent/core/config.h"
#include "agent/core/device_set.h"
#include "agent/core/inventory.h"
#include "agent/core/registry.h"
#include "board_snippet.h"
#include "harness.h"

#define MAX_SEEN 8

/* What the filter and probe of the test backends were told, per function. */
struct seen {
	char address[32];
	const struct dralet_pci_id *id;
	int score;
};

static struct seen filtered[MAX_SEEN], probed[MAX_SEEN];
static size_t n_filtered, n_probed;

static void see(struct seen *list, size_t *n, const struct dralet_pci_func *f,
		const struct dralet_pci_id *id, int score)
{
	assert_true(*n < MAX_SEEN);
	snprintf(list[*n].address, sizeof(list[*n].address), "%s", f->address);
	list[*n].id = id;
	list[*n].score = score;
	(*n)++;
}

static const struct seen *find_seen(const struct seen *list, size_t n, const char *address)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(list[i].address, address))
			return &list[i];
	return NULL;
}

static int probe_healthy(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
			 const struct dralet_pci_id *id)
{
	struct dralet_device *d;
	int r = dralet_device_new(ctx, f, "dev", NULL, &d);

	see(probed, &n_probed, f, id, 0);
	if (r == 0)
		dralet_device_set_health(d, DRALET_HEALTH_HEALTHY);
	return r;
}

/* Device 1234:0bad is refused, 1234:0e11 fails; the rest keep their score. */
static int filter_recording(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
			    const struct dralet_pci_id *id, int score)
{
	(void)ctx;
	see(filtered, &n_filtered, f, id, score);
	if (f->device_id == 0x0bad)
		return 0;
	if (f->device_id == 0x0e11)
		return -EIO;
	return score;
}

static const struct dralet_pci_id three_ids[] = {
	DRALET_PCI_CLASS(0x120000, 0xff0000),
	DRALET_PCI_VENDOR_CLASS(0x1234, 0x120000, 0xff0000),
	DRALET_PCI_DEVICE(0x1234, 0x5678),
	DRALET_PCI_DEVICE(0x1234, 0x0bad),
	DRALET_PCI_DEVICE(0x1234, 0x0e11),
	{ 0, 0, 0, 0 },
};

/* Only what registration requires: every optional operation is NULL. */
static const struct dralet_backend bare = {
	.abi = DRALET_BACKEND_ABI, .name = "bare", .family = "accel",
	.default_driver = "bare.example.com", .ids = three_ids, .probe = probe_healthy,
};

/* Prepare changes what discovery publishes (as an FPGA programmed) when the
 * claim asks; unprepare always does. */
static int prepare_changing(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			    struct dralet_prepare_req *req)
{
	(void)dev;
	if (!strcmp(req->request, "program"))
		dralet_ctx_node_changed(ctx);
	return 0;
}

static int unprepare_changing(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			      const struct dralet_claim_ref *claim, const struct dralet_undo *undo)
{
	(void)dev;
	(void)claim;
	(void)undo;
	dralet_ctx_node_changed(ctx);
	return 0;
}

static const struct dralet_backend changing = {
	.abi = DRALET_BACKEND_ABI, .name = "changing", .family = "accel",
	.default_driver = "changing.example.com", .ids = three_ids, .probe = probe_healthy,
	.prepare = prepare_changing, .unprepare = unprepare_changing,
};

static const struct dralet_backend filtered_backend = {
	.abi = DRALET_BACKEND_ABI, .name = "filtered", .family = "accel",
	.default_driver = "filtered.example.com", .ids = three_ids,
	.filter = filter_recording, .probe = probe_healthy,
};

/* Any function; raises device 1234:9999 above every table score (as the
 * SR-IOV backend does for the VFs of selected PFs), refuses the rest. */
static int filter_boost(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
			const struct dralet_pci_id *id, int score)
{
	(void)ctx;
	(void)id;
	(void)score;
	return f->device_id == 0x9999 ? DRALET_SCORE_DEVICE + 5 : 0;
}

static const struct dralet_pci_id any_ids[] = { DRALET_PCI_ANY_FUNCTION, { 0, 0, 0, 0 } };

static const struct dralet_backend boost = {
	.abi = DRALET_BACKEND_ABI, .name = "boost", .family = "accel",
	.default_driver = "filtered.example.com", .ids = any_ids, .filter = filter_boost,
	.probe = probe_healthy,
};

struct node {
	char *dir;
	char sys[4096], dev[4096], proc[4096];
	struct hal_roots roots;
	struct config *cfg;
	struct registry *reg;
	struct inventory *inv;
};

static void node_up(struct node *n, const struct dralet_backend *const *list)
{
	char err[256];

	n_filtered = n_probed = 0;
	n->dir = board_tree("board: backend-call\npci:\n  - root: \"0000:00\"\n    devices:\n"
			    "      - {bdf: 00:04.0, id: \"1234:5678\", class: 0x120000}\n"
			    "      - {bdf: 00:05.0, id: \"1234:9999\", class: 0x120000}\n"
			    "      - {bdf: 00:06.0, id: \"4321:0001\", class: 0x120000}\n"
			    "      - {bdf: 00:07.0, id: \"1234:0bad\", class: 0x120000}\n"
			    "      - {bdf: 00:08.0, id: \"1234:0e11\", class: 0x120000}\n"
			    "      - {bdf: 00:09.0, id: \"8086:0002\", class: 0x030000}\n");
	snprintf(n->sys, sizeof(n->sys), "%s/sys", n->dir);
	snprintf(n->dev, sizeof(n->dev), "%s/dev", n->dir);
	snprintf(n->proc, sizeof(n->proc), "%s/proc", n->dir);
	n->roots = (struct hal_roots){ n->sys, n->dev, n->proc };
	assert_int_equal(config_load(NULL, &n->cfg, err, sizeof(err)), 0);
	assert_int_equal(registry_new_with(list, NULL, NULL, NULL, &n->reg), 0);
	assert_int_equal(inventory_discover(&n->roots, n->cfg, n->reg, &n->inv), 0);
}

static void node_down(struct node *n)
{
	inventory_free(n->inv);
	registry_free(n->reg);
	config_free(n->cfg);
	tree_remove(n->dir);
}

static const char *owner_of(struct node *n, const char *address)
{
	const struct hal_scan *scan = inventory_scan(n->inv);

	for (size_t i = 0; i < scan->n_funcs; i++)
		if (!strcmp(scan->funcs[i]->address, address))
			return inventory_function_owner(n->inv, i, NULL);
	fail_msg("no function %s", address);
	return NULL;
}

static void test_null_ops_get_defaults(void **state)
{
	const struct dralet_backend *const list[] = { &bare, NULL };
	struct node n;
	char err[256] = "", why[256];

	(void)state;
	node_up(&n, list);
	const struct dralet_backend *b = registry_find(n.reg, "bare");
	assert_non_null(b);
	assert_non_null(b->filter);
	assert_non_null(b->init);
	assert_non_null(b->fini);
	assert_non_null(b->remove);
	assert_non_null(b->validate_config);
	assert_non_null(b->prepare);
	assert_non_null(b->unprepare);
	assert_non_null(b->health);
	assert_ptr_equal(b->probe, bare.probe);
	assert_ptr_equal(b->ids, bare.ids);

	/* the default filter keeps the table's score: every 0x12 function is ours */
	struct dralet_device *d = inventory_find(n.inv, "bare.example.com", "dev-0000-00-04-0");
	assert_non_null(d);
	assert_non_null(inventory_find(n.inv, "bare.example.com", "dev-0000-00-07-0"));
	assert_null(owner_of(&n, "0000:00:09.0"));

	assert_int_equal(backend_call_validate(d, "{}", err, sizeof(err)), -EOPNOTSUPP);
	assert_string_equal(err, "backend bare takes no opaque config");
	struct dralet_prepare_req req = { .claim = { "uid-1", "ns", "claim" }, .request = "req" };
	assert_int_equal(backend_call_prepare(d, NULL, &req, err, sizeof(err)), -EOPNOTSUPP);
	assert_string_equal(err, "the backend cannot prepare");
	assert_int_equal(backend_call_unprepare(d, NULL, &req.claim, NULL, err, sizeof(err)), 0);
	/* without a health op the device keeps the health it has */
	assert_int_equal(backend_call_health(d, NULL, why, sizeof(why)), DRALET_HEALTH_HEALTHY);
	assert_string_equal(why, "");
	dralet_device_set_health(d, DRALET_HEALTH_UNHEALTHY);
	assert_int_equal(backend_call_health(d, NULL, why, sizeof(why)), DRALET_HEALTH_UNHEALTHY);
	node_down(&n);	/* default fini and remove */
}

/* dralet_ctx_node_changed in a prepare or unprepare is noted on the device,
 * taken once through its device set (the claims engine asks for a
 * rediscovery then); other calls note nothing. */
static void test_node_changed_noted_once(void **state)
{
	const struct dralet_backend *const list[] = { &changing, NULL };
	struct node n;
	struct device_set *set;
	char err[256] = "";

	(void)state;
	node_up(&n, list);
	struct dralet_device *d = inventory_find(n.inv, "changing.example.com", "dev-0000-00-04-0");
	assert_non_null(d);
	assert_int_equal(device_set_new("changing.example.com", &d, 1, &set), 0);
	struct dralet_prepare_req req = { .claim = { "uid-1", "ns", "claim" }, .request = "plain" };
	assert_int_equal(backend_call_prepare(d, NULL, &req, err, sizeof(err)), 0);
	assert_false(device_set_take_node_changed(set));
	req.request = "program";
	assert_int_equal(backend_call_prepare(d, NULL, &req, err, sizeof(err)), 0);
	assert_true(device_set_take_node_changed(set));
	assert_false(device_set_take_node_changed(set));	/* taken */
	assert_int_equal(backend_call_unprepare(d, NULL, &req.claim, NULL, err, sizeof(err)), 0);
	assert_true(device_set_take_node_changed(set));
	device_set_unref(set);
	node_down(&n);
}

static void test_filter_and_probe_see_the_matched_entry(void **state)
{
	const struct dralet_backend *const list[] = { &filtered_backend, NULL };
	struct node n;
	const struct seen *s;

	(void)state;
	node_up(&n, list);
	/* the best entry, with its table score */
	s = find_seen(filtered, n_filtered, "0000:00:04.0");
	assert_non_null(s);
	assert_ptr_equal(s->id, &three_ids[2]);
	assert_int_equal(s->score, DRALET_SCORE_DEVICE);
	s = find_seen(filtered, n_filtered, "0000:00:05.0");
	assert_non_null(s);
	assert_ptr_equal(s->id, &three_ids[1]);
	assert_int_equal(s->score, DRALET_SCORE_VENDOR_CLASS);
	s = find_seen(filtered, n_filtered, "0000:00:06.0");
	assert_non_null(s);
	assert_ptr_equal(s->id, &three_ids[0]);
	assert_int_equal(s->score, DRALET_SCORE_CLASS);
	/* the table comes first: the filter never sees what no entry matches */
	assert_null(find_seen(filtered, n_filtered, "0000:00:09.0"));
	assert_null(owner_of(&n, "0000:00:09.0"));

	/* probe is told the entry the filter saw */
	s = find_seen(probed, n_probed, "0000:00:04.0");
	assert_non_null(s);
	assert_ptr_equal(s->id, &three_ids[2]);
	s = find_seen(probed, n_probed, "0000:00:06.0");
	assert_non_null(s);
	assert_ptr_equal(s->id, &three_ids[0]);

	/* a refusal (0) and a failure (-errno) leave the function, unprobed */
	assert_non_null(find_seen(filtered, n_filtered, "0000:00:07.0"));
	assert_null(find_seen(probed, n_probed, "0000:00:07.0"));
	assert_null(owner_of(&n, "0000:00:07.0"));
	assert_non_null(find_seen(filtered, n_filtered, "0000:00:08.0"));
	assert_null(find_seen(probed, n_probed, "0000:00:08.0"));
	assert_null(owner_of(&n, "0000:00:08.0"));
	assert_string_equal(owner_of(&n, "0000:00:04.0"), "filtered");
	node_down(&n);
}

static void test_filter_adjusts_the_score(void **state)
{
	/* bare is listed first and wins ties; boost's raised score beats its
	 * vendor+class match, and boost's refusals leave the rest to bare */
	const struct dralet_backend *const list[] = { &bare, &boost, NULL };
	struct node n;

	(void)state;
	node_up(&n, list);
	assert_string_equal(owner_of(&n, "0000:00:05.0"), "boost");
	assert_string_equal(owner_of(&n, "0000:00:04.0"), "bare");
	assert_string_equal(owner_of(&n, "0000:00:06.0"), "bare");
	assert_null(owner_of(&n, "0000:00:09.0"));
	node_down(&n);
}

static void collect_error(void *userdata, const char *message)
{
	char *buf = userdata;

	snprintf(buf + strlen(buf), 1024 - strlen(buf), "%s\n", message);
}

static void test_other_abi_and_no_table_refused(void **state)
{
	struct dralet_backend old = bare, no_table = bare;
	const struct dralet_backend *const list[] = { &old, &no_table, &bare, NULL };
	struct registry *reg;
	char errors[1024] = "";

	(void)state;
	old.abi = DRALET_BACKEND_ABI - 1;
	old.name = "old";
	no_table.name = "no-table";
	no_table.ids = NULL;
	assert_int_equal(registry_new_with(list, NULL, collect_error, errors, &reg), 0);
	assert_int_equal(registry_count(reg), 1);
	assert_non_null(registry_find(reg, "bare"));
	assert_non_null(strstr(errors, "in-tree: backend old was built for SDK ABI 4, this "
				       "dralet speaks 5; rebuild it against this dralet's SDK"));
	assert_non_null(strstr(errors, "backend no-table lacks a name, family, valid default "
				       "driver, probe, or a match table"));
	registry_free(reg);
}

/* The harness calls through the same family, defaults filled. */
static void test_harness_fills_defaults(void **state)
{
	struct harness h;
	struct dralet_pci_func funcs[1];
	struct dralet_device *devs[1];
	char err[256] = "", why[256];

	(void)state;
	assert_int_equal(harness_init(&h, &harness_plain_backend, NULL, NULL), 0);
	assert_int_equal(harness_add_devices(&h, funcs, 1, devs), 0);
	assert_int_equal(backend_call_validate(devs[0], NULL, err, sizeof(err)), -EOPNOTSUPP);
	assert_string_equal(err, "backend test takes no opaque config");
	assert_int_equal(backend_call_health(devs[0], NULL, why, sizeof(why)), DRALET_HEALTH_HEALTHY);
	harness_fini(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_null_ops_get_defaults),
		cmocka_unit_test(test_node_changed_noted_once),
		cmocka_unit_test(test_filter_and_probe_see_the_matched_entry),
		cmocka_unit_test(test_filter_adjusts_the_score),
		cmocka_unit_test(test_other_abi_and_no_table_refused),
		cmocka_unit_test(test_harness_fills_defaults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
