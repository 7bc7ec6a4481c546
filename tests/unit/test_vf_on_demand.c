/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SR-IOV VFs on demand (backends/sriov/on_demand.h): the pure planner
 * (ledger text, take / make / refuse, giving the count back), the policy
 * key, and the sriov backend against the board simulator's model of the
 * kernel (node_model.h, test_sriov_board.h): the devices and counters
 * published for an on-demand PF, a prepare that makes the VFs through 0,
 * a second that takes a made VF, the refusal while another VF is
 * prepared, the count given back after the last unprepare, and the undo
 * state alone putting the PF back after a crash (ledger there or not).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <sys/stat.h>

#include <dralet/counters.h>

#include "agent/claims/checkpoint.h"
#include "agent/core/sriov_policy_config.h"
#include "agent/sriov/policy.h"
#include "agent/sriov/prepared.h"
#include "backends/sriov/on_demand.h"
#include "backends/sriov/on_demand_plan.h"
#include "backends/sriov/sriov.h"
#include "hal/pci_sriov.h"
#include "node_model.h"
#include "test_backend.h"
#include "test_sriov_board.h"

#define NIC "0000:17:00.0"
#define API "\"apiVersion\":\"sriov.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\""

/* ---- the planner ---- */

static void test_ledger_text(void **state)
{
	struct vfod_ledger l, back;
	char text[512];

	(void)state;
	assert_int_equal(vfod_ledger_parse(NULL, &l), 0);
	assert_false(l.has_original);
	assert_int_equal(l.n, 0);
	l.has_original = true;
	l.original = 1;
	assert_int_equal(vfod_ledger_add(&l, 2, "uid-b", "default/b"), 0);
	assert_int_equal(vfod_ledger_add(&l, 2, "uid-b", "default/b"), 0);	/* once */
	assert_int_equal(vfod_ledger_add(&l, 0, "uid-a", "default/a"), 0);
	assert_int_equal(vfod_ledger_add(&l, 1, "uid c", "default/c"), -EINVAL);
	assert_true(vfod_ledger_format(&l, text, sizeof(text)) > 0);
	assert_string_equal(text, "original 1\nvf 2 uid-b default/b\nvf 0 uid-a default/a\n");
	assert_int_equal(vfod_ledger_parse(text, &back), 0);
	assert_int_equal(back.n, 2);
	assert_int_equal(back.original, 1);
	assert_string_equal(vfod_ledger_holder(&back, 0)->claim, "default/a");
	assert_true(vfod_ledger_remove(&back, 2, "uid-b"));
	assert_false(vfod_ledger_remove(&back, 2, "uid-b"));
	assert_int_equal(back.n, 1);
	assert_int_equal(vfod_ledger_parse("vf x\n", &back), -EINVAL);
	assert_int_equal(vfod_ledger_parse("original 1 2\n", &back), -EINVAL);
}

static void test_plan(void **state)
{
	struct vfod_ledger l;
	struct vfod_plan p;
	unsigned count;

	(void)state;
	vfod_ledger_parse(NULL, &l);
	/* nothing made, nothing held: make the policy's count */
	vfod_plan_prepare(&l, NIC, 1, 0, 3, "u1", "ns/a", &p);
	assert_int_equal(p.action, VFOD_CREATE);
	assert_int_equal(p.count, 3);
	assert_int_equal(p.original, 0);
	/* made and free: taken */
	vfod_plan_prepare(&l, NIC, 1, 3, 3, "u1", "ns/a", &p);
	assert_int_equal(p.action, VFOD_TAKE);
	/* beyond the policy */
	vfod_plan_prepare(&l, NIC, 3, 0, 3, "u1", "ns/a", &p);
	assert_int_equal(p.action, VFOD_REFUSE);
	assert_non_null(strstr(p.reason, "beyond the 3 VFs"));
	/* held by another claim */
	l.has_original = true;
	l.original = 1;
	vfod_ledger_add(&l, 0, "u1", "ns/a");
	vfod_plan_prepare(&l, NIC, 0, 1, 3, "u2", "ns/b", &p);
	assert_int_equal(p.action, VFOD_REFUSE);
	assert_non_null(strstr(p.reason, "VF 0 is held by claim ns/a"));
	/* this claim's own again (a retried prepare) */
	vfod_plan_prepare(&l, NIC, 0, 1, 3, "u1", "ns/a", &p);
	assert_int_equal(p.action, VFOD_TAKE);
	assert_int_equal(p.original, 1);	/* the ledger's, not the count now */
	/* not made while VF 0 is prepared: re-creating would remove it */
	vfod_plan_prepare(&l, NIC, 2, 1, 3, "u2", "ns/b", &p);
	assert_int_equal(p.action, VFOD_REFUSE);
	assert_non_null(strstr(p.reason, "VF 2 does not exist yet (sriov_numvfs is 1)"));
	assert_non_null(strstr(p.reason, "VF 0 prepared for claim ns/a"));
	/* giving back: only after the last, and only when the count differs */
	assert_false(vfod_plan_give_back(&l, 3, 0, &count));
	vfod_ledger_remove(&l, 0, "u1");
	assert_true(vfod_plan_give_back(&l, 3, 0, &count));
	assert_int_equal(count, 1);	/* the ledger's original */
	assert_false(vfod_plan_give_back(&l, 1, 0, &count));
	l.has_original = false;		/* no ledger: the undo state's */
	assert_true(vfod_plan_give_back(&l, 3, 2, &count));
	assert_int_equal(count, 2);
}

/* ---- the policy key ---- */

static void test_policy_keeps_count(void **state)
{
	struct sriov_policy pol = { .name = "od", .num_vfs = 3, .on_demand = true };
	struct hal_pf_state st = { .driver = "ice", .total_vfs = 8, .num_vfs = 1 };
	struct sriov_count_plan plan;

	(void)state;
	sriov_plan_count(&pol, NIC, &st, NULL, &plan);
	assert_int_equal(plan.action, SRIOV_COUNT_KEEP);	/* the prepares' count */
	assert_int_equal(plan.to, 1);
	pol.on_demand = false;
	sriov_plan_count(&pol, NIC, &st, NULL, &plan);
	assert_int_equal(plan.action, SRIOV_COUNT_SET);
}

/* ---- the backend on a simulated board ---- */

struct fixture {
	struct node_model k;
	struct harness h;
	const char *addresses[1];
	struct sriov_policy pol;
	struct sriov_policies pols;
	char state[64];
};

static struct fixture *fixture_new(unsigned vfs_before)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[256];

	node_model_init(&f->k, SRIOV_BOARD);
	if (vfs_before)
		assert_int_equal(hal_sriov_set_numvfs(&f->k.node, NIC, vfs_before, 0, err,
						      sizeof(err)), (int)vfs_before);
	assert_int_equal(harness_init(&f->h, &backend_sriov, f->k.dir, NULL), 0);
	f->addresses[0] = NIC;
	f->pol = (struct sriov_policy){ .name = "nic-on-demand", .num_vfs = 3, .on_demand = true,
					.vf_driver = SRIOV_VF_DRIVER_VFIO };
	f->pol.pf.pci_addresses = f->addresses;
	f->pol.pf.n_pci_addresses = 1;
	f->pols = (struct sriov_policies){ &f->pol, 1 };
	snprintf(f->state, sizeof(f->state), "%s/state", f->k.dir);
	f->h.ctx.node = &f->k.node;
	f->h.ctx.sriov = &f->pols;
	f->h.ctx.state_dir = f->state;
	/* what init does under the agent, with the policies it started with */
	f->h.ctx.sink = &f->h.sink;
	assert_int_equal(sriov_on_demand_publish(&f->h.ctx), 0);
	f->h.ctx.sink = NULL;
	assert_int_equal(harness_probe_all(&f->h), 0);
	return f;
}

static void fixture_free(struct fixture *f)
{
	f->h.ctx.state_dir = NULL;
	harness_fini(&f->h);
	node_model_fini(&f->k);
	free(f);
}

static unsigned numvfs(struct fixture *f)
{
	unsigned n = 99;

	assert_int_equal(hal_pci_read_uint(&f->k.real, NIC, "sriov_numvfs", &n), 0);
	return n;
}

static const char *driver_of(struct fixture *f, const char *address)
{
	static char buf[64];

	if (hal_pci_driver(&f->k.real, address, buf, sizeof(buf)) < 0)
		return "(gone)";
	return buf;
}

static bool ledger_exists(struct fixture *f)
{
	char path[160];
	struct stat st;

	snprintf(path, sizeof(path), "%s/sriov-on-demand-" NIC, f->state);
	return stat(path, &st) == 0;
}

static void claim_req(struct t_req *t, const char *uid, const char *name)
{
	t_req_init(t, "{" API "}");
	t->req.claim = (struct dralet_claim_ref){ uid, "default", name };
}

static void test_published(void **state)
{
	struct fixture *f = fixture_new(1);
	struct dralet_device *v0 = harness_device(&f->h, "vf-0000-17-00-0-vf0");
	struct dralet_device *v2 = harness_device(&f->h, "vf-0000-17-00-0-vf2");

	(void)state;
	assert_non_null(v0);
	assert_non_null(v2);
	assert_null(harness_device(&f->h, "vf-0000-17-00-0-vf3"));
	/* the made VF is not published a second time under its own address */
	assert_null(harness_device(&f->h, "vf-0000-17-00-1"));
	/* ... but it is the sriov backend's, whatever its pfs option says */
	assert_int_equal(harness_score(&f->h, &backend_sriov,
				       dralet_ctx_find_pci(&f->h.ctx, "0000:17:00.1")), SRIOV_SCORE);
	/* VF 0 is made: its own facts, not a partition; VF 2 is a possibility */
	assert_int_equal(attr_bool(v0, "created"), 1);
	assert_false(dralet_device_is_partition(v0));
	assert_string_equal(attr_string(v0, "resource.kubernetes.io/pciBusID"), "0000:17:00.1");
	assert_int_equal(attr_bool(v2, "created"), 0);
	assert_true(dralet_device_is_partition(v2));
	assert_null(attr_string(v2, "resource.kubernetes.io/pciBusID"));
	assert_null(attr_string(v2, "productName"));	/* not the PF's */
	assert_int_equal(attr_int(v2, "vfID", -1), 2);
	assert_string_equal(attr_string(v2, "pfPciAddress"), NIC);
	/* VF 0 owns the PF's counter: 3 VFs; each device takes one */
	assert_int_equal(dralet_device_n_counter_sets(v0), 1);
	assert_string_equal(dralet_device_counter_set(v0, 0)->set, "vfs-0000-17-00-0");
	assert_string_equal(dralet_device_counter_set(v0, 0)->counters[0].quantity, "3");
	assert_int_equal(dralet_device_n_counter_sets(v2), 0);
	assert_int_equal(dralet_device_n_consumptions(v2), 1);
	assert_string_equal(dralet_device_consumption(v2, 0)->set, "vfs-0000-17-00-0");
	assert_string_equal(dralet_device_consumption(v2, 0)->counters[0].name, "vfs");
	assert_string_equal(dralet_device_consumption(v2, 0)->counters[0].quantity, "1");
	fixture_free(f);
}

static void test_make_take_refuse_give_back(void **state)
{
	struct fixture *f = fixture_new(1);
	struct dralet_device *v0 = harness_device(&f->h, "vf-0000-17-00-0-vf0");
	struct dralet_device *v2 = harness_device(&f->h, "vf-0000-17-00-0-vf2");
	struct t_req a, b;

	(void)state;
	/* VF 0 is made: taken, the count stays */
	claim_req(&a, "uid-a", "a");
	assert_int_equal(backend_sriov.prepare(&f->h.ctx, v0, &a.req), 0);
	assert_int_equal(numvfs(f), 1);
	assert_string_equal(driver_of(f, "0000:17:00.1"), "vfio-pci");	/* the policy's */
	assert_non_null(t_edit_node(&a, "/dev/vfio/100"));
	assert_true(ledger_exists(f));

	/* VF 2 is not made and VF 0 is prepared: refused, nothing changes */
	claim_req(&b, "uid-b", "b");
	f->h.ctx.error[0] = '\0';
	assert_int_equal(backend_sriov.prepare(&f->h.ctx, v2, &b.req), -EBUSY);
	assert_non_null(strstr(f->h.ctx.error, "VF 2 does not exist yet"));
	assert_non_null(strstr(f->h.ctx.error, "prepared for claim default/a"));
	assert_int_equal(numvfs(f), 1);
	assert_null(dralet_undo_get(&b.undo, "sriov.onDemand.pf"));	/* nothing to undo */
	assert_string_equal(driver_of(f, "0000:17:00.1"), "vfio-pci");

	/* A gone: its VF back where it was, the count stays (it is the original) */
	assert_int_equal(backend_sriov.unprepare(&f->h.ctx, v0, &a.req.claim, &a.undo), 0);
	assert_int_equal(numvfs(f), 1);
	assert_string_equal(driver_of(f, "0000:17:00.1"), "");
	assert_false(ledger_exists(f));

	/* now B makes them: 1 -> 0 -> 3, VF 2 on vfio-pci in its own group */
	t_req_clear(&b);
	claim_req(&b, "uid-b", "b");
	f->h.ctx.node_changed = false;
	assert_int_equal(backend_sriov.prepare(&f->h.ctx, v2, &b.req), 0);
	assert_int_equal(numvfs(f), 3);
	assert_true(f->h.ctx.node_changed);	/* rediscovered: VF 2 published as made */
	assert_string_equal(driver_of(f, "0000:17:00.3"), "vfio-pci");
	assert_non_null(t_edit_node(&b, "/dev/vfio/102"));
	assert_string_equal(t_env(&b, "DRALET_VF_0000_17_00_0_VF2_PCI_ADDRESS"), "0000:17:00.3");
	assert_string_equal(dralet_undo_get(&b.undo, "sriov.onDemand.numVfs"), "1");
	assert_string_equal(dralet_undo_get(&b.undo, "sriov.onDemand.vf"), "2");
	assert_string_equal(dralet_undo_get(&b.undo, "pciAddress"), "0000:17:00.3");

	/* A again, for VF 0 (made now, free): taken while B holds VF 2 */
	t_req_clear(&a);
	claim_req(&a, "uid-a", "a");
	assert_int_equal(backend_sriov.prepare(&f->h.ctx, v0, &a.req), 0);
	assert_int_equal(numvfs(f), 3);
	/* B gone: A still holds VF 0, the count stays */
	assert_int_equal(backend_sriov.unprepare(&f->h.ctx, v2, &b.req.claim, &b.undo), 0);
	assert_int_equal(numvfs(f), 3);
	assert_true(ledger_exists(f));
	/* the last gone: the PF's 1 VF again, the ledger removed; twice is fine */
	assert_int_equal(backend_sriov.unprepare(&f->h.ctx, v0, &a.req.claim, &a.undo), 0);
	assert_int_equal(numvfs(f), 1);
	assert_false(ledger_exists(f));
	assert_int_equal(backend_sriov.unprepare(&f->h.ctx, v0, &a.req.claim, &a.undo), 0);
	assert_int_equal(numvfs(f), 1);
	t_req_clear(&a);
	t_req_clear(&b);
	fixture_free(f);
}

/* The undo state on disk when the prepare died: what the checkpoint kept. */
struct saved_undo {
	struct dralet_undo saved;
	int writes;
};

static int persist_copy(void *userdata, const struct dralet_undo *undo)
{
	struct saved_undo *ck = userdata;

	assert_int_equal(undo_copy(&ck->saved, undo), 0);
	ck->writes++;
	return 0;
}

/* A new agent over the same node and state directory (after a crash). */
static void restart(struct fixture *f)
{
	f->h.ctx.state_dir = NULL;
	harness_fini(&f->h);
	assert_int_equal(harness_init(&f->h, &backend_sriov, f->k.dir, NULL), 0);
	f->h.ctx.node = &f->k.node;
	f->h.ctx.sriov = &f->pols;
	f->h.ctx.state_dir = f->state;
	f->h.ctx.sink = &f->h.sink;
	assert_int_equal(sriov_on_demand_publish(&f->h.ctx), 0);
	f->h.ctx.sink = NULL;
}

static void test_crash_recovery(void **state)
{
	struct fixture *f = fixture_new(0);
	struct dralet_device *v1 = harness_device(&f->h, "vf-0000-17-00-0-vf1");
	struct saved_undo ck = { 0 };
	struct dralet_claim_ref c = { "uid-c", "default", "c" };
	struct dralet_undo undo = { 0 };
	struct t_req t;
	char err[128];

	(void)state;
	/* the prepare made the VFs, then the agent died */
	claim_req(&t, "uid-c", "c");
	t.undo.persist = persist_copy;
	t.undo.persist_userdata = &ck;
	assert_int_equal(backend_sriov.prepare(&f->h.ctx, v1, &t.req), 0);
	assert_int_equal(numvfs(f), 3);
	/* the PF's values went to disk in a write of their own, before the count */
	assert_true(ck.writes >= 2);
	assert_string_equal(dralet_undo_get(&ck.saved, "sriov.onDemand.numVfs"), "0");
	t_req_clear(&t);
	/* a new agent rolls back from the undo state on disk alone */
	restart(f);
	assert_true(ledger_exists(f));
	assert_int_equal(backend_sriov.unprepare(&f->h.ctx, NULL, &c, &ck.saved), 0);
	assert_int_equal(numvfs(f), 0);
	assert_false(ledger_exists(f));
	undo_clear(&ck.saved);

	/* killed between the undo write and the ledger write: no ledger, the
	 * undo state's original count (made by hand here: the kernel's 3 VFs) */
	assert_int_equal(hal_sriov_set_numvfs(&f->k.node, NIC, 3, 0, err, sizeof(err)), 3);
	assert_int_equal(dralet_undo_set_all(&undo, (const struct dralet_undo_value[]){
		{ "sriov.onDemand.pf", NIC }, { "sriov.onDemand.vf", "1" },
		{ "sriov.onDemand.numVfs", "0" } }, 3), 0);
	assert_int_equal(backend_sriov.unprepare(&f->h.ctx, NULL, &c, &undo), 0);
	assert_int_equal(numvfs(f), 0);
	assert_false(ledger_exists(f));
	undo_clear(&undo);
	fixture_free(f);
}

/* The applier protects the VF an on-demand device took: the device is
 * published under its PF (the checkpoint's identity), the VF is in the undo
 * state. */
static void test_prepared_vf_from_undo(void **state)
{
	struct checkpoint *ck = checkpoint_new("sriov.dralet.dev", "boot");
	struct ckpt_claim *c = calloc(1, sizeof(*c));
	struct sriov_prepared p = { 0 };

	(void)state;
	c->uid = strdup("u1");
	c->namespace_ = strdup("default");
	c->name = strdup("od");
	c->state = CKPT_PREPARE_COMPLETED;
	c->devices = calloc(1, sizeof(*c->devices));
	c->n_devices = 1;
	c->devices[0].pool = strdup("node1");
	c->devices[0].device = strdup("vf-0000-17-00-0-vf2");
	c->devices[0].cdi_class = strdup("sriov");
	c->devices[0].cdi_id = strdup("k8s.sriov.dralet.dev/sriov=x");
	c->devices[0].identity.pci_address = strdup(NIC);
	assert_int_equal(dralet_undo_set_all(&c->devices[0].undo,
		(const struct dralet_undo_value[]){ { "sriov.onDemand.pf", NIC },
						    { "pciAddress", "0000:17:00.3" } }, 2), 0);
	assert_int_equal(checkpoint_add(ck, c), 0);
	assert_int_equal(sriov_prepared_from_checkpoint(ck, &p), 0);
	assert_int_equal(p.n, 2);
	assert_non_null(sriov_prepared_find(&p, "0000:17:00.3"));
	assert_string_equal(sriov_prepared_find(&p, "0000:17:00.3")->claim, "default/od");
	sriov_prepared_clear(&p);
	checkpoint_free(ck);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ledger_text),
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_policy_keeps_count),
		cmocka_unit_test(test_published),
		cmocka_unit_test(test_make_take_refuse_give_back),
		cmocka_unit_test(test_crash_recovery),
		cmocka_unit_test(test_prepared_vf_from_undo),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
