/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NIC VFs shared by bandwidth and QAT functions shared by queues
 * (consumable capacity, docs/sharing.md): the capacity and its request
 * policy as published (and not without option sharing "true"), against the
 * policy rules of include/dralet/sharing.h; prepare of two shares of one VF
 * raising the VF's transmit cap in the board simulator's kernel model
 * (node_model.h) by each share's bandwidth, unprepare taking each back,
 * the rollback of a crash between the undo record and the change, a share
 * with a VfConfig refused; a QAT VF's queues and its share's environment.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dralet/sharing.h>

#include "agent/core/capacity_policy.h"
#include "backends/accel/accel.h"
#include "backends/common/vf_bandwidth.h"
#include "backends/net/net.h"
#include "hal/pci_sriov.h"
#include "node_model.h"
#include "test_backend.h"
#include "test_sriov_board.h"

#define NIC "0000:17:00.0"
#define VF0 "vf-0000-17-00-1"
#define SHARE_A "5a5a5a5a-0000-4000-8000-00000000000a"
#define SHARE_B "5a5a5a5a-0000-4000-8000-00000000000b"

struct fixture {
	struct node_model k;
	struct harness h;
};

static void fixture_init(struct fixture *f, const char *options)
{
	char err[256];

	memset(f, 0, sizeof(*f));
	node_model_init(&f->k, SRIOV_BOARD);
	assert_int_equal(hal_sriov_set_numvfs(&f->k.node, NIC, 2, 1, err, sizeof(err)), 2);
	assert_int_equal(harness_init(&f->h, &backend_nic_vf, f->k.dir, options), 0);
	f->h.ctx.node = &f->k.node;
	assert_int_equal(harness_probe_all(&f->h), 0);
}

static void fixture_fini(struct fixture *f)
{
	harness_fini(&f->h);
	node_model_fini(&f->k);
}

static unsigned cap_of(struct fixture *f, unsigned vf)
{
	return node_model_vf(&f->k, NIC, vf)->max_tx_mbps;
}

static void share_req(struct t_req *t, const char *uid, const char *share,
		      const struct dralet_capacity *consumed, const char *config)
{
	t_req_init(t, config);
	t->req.claim.uid = uid;
	t->req.share_id = share;
	t->req.consumed = consumed;
	t->req.n_consumed = consumed ? 1 : 0;
}

static void test_published(void **state)
{
	struct fixture f;

	(void)state;
	fixture_init(&f, "{\"sharing\":\"true\"}");
	struct dralet_device *vf = harness_device(&f.h, VF0);
	assert_non_null(vf);
	assert_true(dralet_device_allows_multiple(vf));
	const struct dralet_capacity *c = NULL;
	for (size_t i = 0; i < dralet_device_n_capacities(vf); i++)
		if (!strcmp(dralet_device_capacity(vf, i)->name, "bandwidth"))
			c = dralet_device_capacity(vf, i);
	assert_non_null(c);
	assert_string_equal(c->quantity, "25G");	/* the PF's 25000 Mb/s, in bit/s */
	const struct dralet_capacity_policy *p = dralet_device_capacity_policy(vf, "bandwidth");
	assert_non_null(p);
	assert_string_equal(p->default_value, "25G");
	assert_string_equal(p->range_min, "100M");
	assert_string_equal(p->range_max, "25G");
	assert_string_equal(p->range_step, "100M");
	assert_null(capacity_policy_problem(p, c->quantity));
	fixture_fini(&f);

	/* off by default, and with "false" */
	fixture_init(&f, NULL);
	assert_false(dralet_device_allows_multiple(harness_device(&f.h, VF0)));
	assert_int_equal(dralet_device_n_capacities(harness_device(&f.h, VF0)), 0);
	fixture_fini(&f);
	fixture_init(&f, "{\"sharing\":\"false\"}");
	assert_false(dralet_device_allows_multiple(harness_device(&f.h, VF0)));
	fixture_fini(&f);
}

static void test_step(void **state)
{
	(void)state;
	assert_int_equal(vf_bandwidth_step_mbps(25000), 100);
	assert_int_equal(vf_bandwidth_step_mbps(1000), 100);
	assert_int_equal(vf_bandwidth_step_mbps(2500), 100);
	assert_int_equal(vf_bandwidth_step_mbps(10), 1);
	assert_int_equal(vf_bandwidth_step_mbps(1250), 1);
	/* the policies those steps make are valid ones */
	const struct dralet_capacity_policy odd = { .default_value = "1250M", .range_min = "1M",
						    .range_max = "1250M", .range_step = "1M" };
	assert_null(capacity_policy_problem(&odd, "1250M"));
	const struct dralet_capacity_policy bad = { .default_value = "1250M", .range_min = "100M",
						    .range_max = "1250M", .range_step = "100M" };
	assert_non_null(capacity_policy_problem(&bad, "1250M"));
}

static void test_two_shares_raise_the_cap(void **state)
{
	static const struct dralet_capacity ten[] = { { "bandwidth", "10G" } };
	static const struct dralet_capacity four[] = { { "net.dralet.dev/bandwidth", "4000M" } };
	struct fixture f;
	struct t_req a, b;

	(void)state;
	fixture_init(&f, "{\"sharing\":\"true\"}");
	struct dralet_device *vf = harness_device(&f.h, VF0);
	assert_int_equal(cap_of(&f, 0), 0);	/* no cap: the kernel's default */

	share_req(&a, "uid-a", SHARE_A, ten, NULL);
	assert_int_equal(backend_nic_vf.prepare(&f.h.ctx, vf, &a.req), 0);
	assert_int_equal(cap_of(&f, 0), 10000);
	assert_string_equal(t_env(&a, "DRALET_VF_0000_17_00_1_NETDEV"), "ens1f0v0");
	assert_string_equal(t_env(&a, "DRALET_VF_0000_17_00_1_SHARE_ID"), SHARE_A);
	assert_string_equal(t_env(&a, "DRALET_VF_0000_17_00_1_SHARE_BANDWIDTH"), "10000000000");
	share_req(&b, "uid-b", SHARE_B, four, NULL);
	assert_int_equal(backend_nic_vf.prepare(&f.h.ctx, vf, &b.req), 0);
	assert_int_equal(cap_of(&f, 0), 14000);
	assert_int_equal(cap_of(&f, 1), 0);	/* the other VF untouched */

	/* unprepare takes each share's amount back, in any order, once */
	assert_int_equal(backend_nic_vf.unprepare(&f.h.ctx, vf, &a.req.claim, &a.undo), 0);
	assert_int_equal(cap_of(&f, 0), 4000);
	assert_int_equal(backend_nic_vf.unprepare(&f.h.ctx, vf, &b.req.claim, &b.undo), 0);
	assert_int_equal(cap_of(&f, 0), 0);
	t_req_clear(&a);
	t_req_clear(&b);

	/* an exclusive allocation changes no rate */
	t_req_init(&a, NULL);
	assert_int_equal(backend_nic_vf.prepare(&f.h.ctx, vf, &a.req), 0);
	assert_int_equal(cap_of(&f, 0), 0);
	assert_null(dralet_undo_get(&a.undo, "bandwidth"));
	t_req_clear(&a);
	fixture_fini(&f);
}

static void test_crash_before_the_change(void **state)
{
	static const struct dralet_capacity ten[] = { { "bandwidth", "10G" } };
	struct fixture f;
	struct t_req a, b;

	(void)state;
	fixture_init(&f, "{\"sharing\":\"true\"}");
	struct dralet_device *vf = harness_device(&f.h, VF0);
	share_req(&a, "uid-a", SHARE_A, ten, NULL);
	assert_int_equal(backend_nic_vf.prepare(&f.h.ctx, vf, &a.req), 0);
	assert_int_equal(cap_of(&f, 0), 10000);

	/* a second share crashed after recording its undo state, before the
	 * change: the rollback finds the cap as it was and leaves it */
	t_req_init(&b, NULL);
	assert_int_equal(dralet_undo_set(&b.undo, "bandwidth",
					 "pf=ens1f0 ifindex=7 vf=0 mbps=3000 before=10000"), 0);
	assert_int_equal(backend_nic_vf.unprepare(&f.h.ctx, vf, &b.req.claim, &b.undo), 0);
	assert_int_equal(cap_of(&f, 0), 10000);
	/* one that crashed after the change (not yet marked applied): taken back */
	node_model_vf(&f.k, NIC, 0)->max_tx_mbps = 13000;
	assert_int_equal(backend_nic_vf.unprepare(&f.h.ctx, vf, &b.req.claim, &b.undo), 0);
	assert_int_equal(cap_of(&f, 0), 10000);
	t_req_clear(&b);
	assert_int_equal(backend_nic_vf.unprepare(&f.h.ctx, vf, &a.req.claim, &a.undo), 0);
	assert_int_equal(cap_of(&f, 0), 0);
	t_req_clear(&a);
	fixture_fini(&f);
}

static void test_refused_shares(void **state)
{
	static const struct dralet_capacity ten[] = { { "bandwidth", "10G" } };
	struct fixture f;
	struct t_req t;

	(void)state;
	fixture_init(&f, "{\"sharing\":\"true\"}");
	struct dralet_device *vf = harness_device(&f.h, VF0);
	/* a VfConfig changes the whole VF the other shares use */
	share_req(&t, "uid-a", SHARE_A, ten, "{\"apiVersion\":\"net.dralet.dev/v1alpha1\","
		  "\"kind\":\"VfConfig\",\"vlan\":5}");
	assert_int_equal(backend_nic_vf.prepare(&f.h.ctx, vf, &t.req), -EINVAL);
	assert_non_null(strstr(f.h.ctx.error, "VfConfig.vlan"));
	assert_int_equal(cap_of(&f, 0), 0);
	t_req_clear(&t);
	/* a share of the whole link holds the VF alone: configured like an
	 * exclusive claim, no cap, and put back at unprepare */
	static const struct dralet_capacity all[] = { { "bandwidth", "25G" } };
	share_req(&t, "uid-a", SHARE_A, all, "{\"apiVersion\":\"net.dralet.dev/v1alpha1\","
		  "\"kind\":\"VfConfig\",\"vlan\":5}");
	assert_int_equal(backend_nic_vf.prepare(&f.h.ctx, vf, &t.req), 0);
	assert_int_equal(node_model_vf(&f.k, NIC, 0)->vlan, 5);
	assert_int_equal(cap_of(&f, 0), 0);
	assert_string_equal(t_env(&t, "DRALET_VF_0000_17_00_1_SHARE_BANDWIDTH"), "25000000000");
	assert_int_equal(backend_nic_vf.unprepare(&f.h.ctx, vf, &t.req.claim, &t.undo), 0);
	assert_int_equal(node_model_vf(&f.k, NIC, 0)->vlan, 0);
	t_req_clear(&t);
	/* a share without its bandwidth */
	share_req(&t, "uid-a", SHARE_A, NULL, NULL);
	assert_int_equal(backend_nic_vf.prepare(&f.h.ctx, vf, &t.req), -EINVAL);
	assert_non_null(strstr(f.h.ctx.error, "consumes no bandwidth"));
	t_req_clear(&t);
	/* the PF's driver cannot cap a VF: said so, nothing left changed */
	f.k.vf_set_error = -EOPNOTSUPP;
	share_req(&t, "uid-a", SHARE_A, ten, NULL);
	assert_int_equal(backend_nic_vf.prepare(&f.h.ctx, vf, &t.req), -EOPNOTSUPP);
	assert_non_null(strstr(f.h.ctx.error, "cannot cap a VF's rate"));
	f.k.vf_set_error = 0;
	assert_int_equal(backend_nic_vf.unprepare(&f.h.ctx, vf, &t.req.claim, &t.undo), 0);
	assert_int_equal(cap_of(&f, 0), 0);
	t_req_clear(&t);
	fixture_fini(&f);
}

/* A QAT 4xxx PF without VFs: the device, with its ring pairs (qat/num_rps,
 * an attribute of the PF's driver; its VFs have no qat/ directory). And one
 * on an older kernel, without num_rps. */
static const char QAT_BOARD[] =
	"board: qat-test\n"
	"pci:\n"
	"  - root: \"0000:6b\"\n"
	"    devices:\n"
	"      - bdf: 6b:00.0\n"
	"        id: \"8086:4940\"\n"
	"        class: 0x0b4000\n"
	"        driver: 4xxx\n"
	"        files: {qat/cfg_services: \"sym;asym\", qat/state: up, qat/num_rps: \"64\"}\n"
	"        sriov: {total: 16, num: 0, vf_id: \"8086:4941\", vf_driver: 4xxxvf}\n"
	"      - bdf: 6b:01.0\n"
	"        id: \"8086:4940\"\n"
	"        class: 0x0b4000\n"
	"        driver: 4xxx\n"
	"        files: {qat/cfg_services: dc, qat/state: up}\n";

static void test_qat_queues(void **state)
{
	static const struct dralet_capacity three[] = { { "queues", "3" } };
	struct harness h;
	struct t_req t;
	char *d = board_tree(QAT_BOARD);

	(void)state;
	assert_int_equal(harness_init(&h, &backend_accel, d, "{\"sharing\":\"true\"}"), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	struct dralet_device *vf = harness_device(&h, "accel-0000-6b-00-0");
	assert_non_null(vf);
	/* without num_rps: not shared */
	assert_false(dralet_device_allows_multiple(harness_device(&h, "accel-0000-6b-01-0")));
	assert_true(dralet_device_allows_multiple(vf));
	const struct dralet_capacity_policy *p = dralet_device_capacity_policy(vf, "queues");
	assert_non_null(p);
	assert_string_equal(p->default_value, "64");
	assert_string_equal(p->range_min, "1");
	assert_string_equal(p->range_max, "64");
	assert_string_equal(p->range_step, "1");
	assert_null(capacity_policy_problem(p, "64"));

	share_req(&t, "uid-a", SHARE_A, three, NULL);
	assert_int_equal(backend_accel.prepare(&h.ctx, vf, &t.req), 0);
	assert_string_equal(t_env(&t, "DRALET_ACCEL_0000_6B_00_0_SHARE_QUEUES"), "3");
	assert_string_equal(t_env(&t, "DRALET_ACCEL_0000_6B_00_0_SHARE_ID"), SHARE_A);
	t_req_clear(&t);
	share_req(&t, "uid-a", SHARE_A, NULL, NULL);
	assert_int_equal(backend_accel.prepare(&h.ctx, vf, &t.req), -EINVAL);
	assert_non_null(strstr(h.ctx.error, "consumes no queues"));
	t_req_clear(&t);
	harness_fini(&h);

	assert_int_equal(harness_init(&h, &backend_accel, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	assert_false(dralet_device_allows_multiple(harness_device(&h, "accel-0000-6b-00-0")));
	harness_fini(&h);
	tree_remove(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_published),
		cmocka_unit_test(test_step),
		cmocka_unit_test(test_two_shares_raise_the_cap),
		cmocka_unit_test(test_crash_before_the_change),
		cmocka_unit_test(test_refused_shares),
		cmocka_unit_test(test_qat_queues),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
