/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A VF's life in a claim, against the board simulator's model of the
 * kernel (node_model.h, test_sriov_board.h): VfConfig driver moves (kernel driver -> vfio-pci
 * and back, vfio-pci -> kernel driver and back, no driver -> vfio-pci), VF
 * settings through the PF and their restore, the IOMMU group rule, undo
 * state on disk (persisted by each dralet_undo_set) before any change, failures that put
 * everything back, unprepare of a VF that is gone, idempotent unprepare.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "backends/net/net.h"
#include "backends/sriov/sriov.h"
#include "hal/pci_sriov.h"
#include "node_model.h"
#include "test_backend.h"
#include "test_sriov_board.h"

#define NIC "0000:17:00.0"
#define NVME "0000:18:00.0"
#define API "\"apiVersion\":\"sriov.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\""

struct fixture {
	struct node_model k;
	struct harness h;
};

static struct fixture *fixture_new(unsigned nic_vfs, unsigned nvme_vfs)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[256];

	node_model_init(&f->k, SRIOV_BOARD);
	if (nic_vfs)
		assert_int_equal(hal_sriov_set_numvfs(&f->k.node, NIC, nic_vfs, 1, err,
						      sizeof(err)), (int)nic_vfs);
	if (nvme_vfs)
		assert_int_equal(hal_sriov_set_numvfs(&f->k.node, NVME, nvme_vfs, 0, err,
						      sizeof(err)), (int)nvme_vfs);
	assert_int_equal(harness_init(&f->h, &backend_sriov, f->k.dir,
				      "{\"pfs\":\"" NIC "," NVME "\"}"), 0);
	f->h.ctx.node = &f->k.node;
	assert_int_equal(harness_probe_all(&f->h), 0);
	f->k.n_log = 0;
	return f;
}

static void fixture_free(struct fixture *f)
{
	harness_fini(&f->h);
	node_model_fini(&f->k);
	free(f);
}

static const char *driver_of(struct fixture *f, const char *address)
{
	static char buf[64];

	if (hal_pci_driver(&f->k.real, address, buf, sizeof(buf)) < 0)
		return "(gone)";
	return buf;
}

static const char *override_of(struct fixture *f, const char *address)
{
	static char buf[64];

	hal_pci_driver_override(&f->k.real, address, buf, sizeof(buf));
	return buf;
}

/* The checkpoint as the claims engine keeps it: dralet_undo_set_all persists
 * the undo state, before the backend goes on; each call is one write. */
struct checkpoint {
	struct dralet_undo saved;
	int writes;
};

static int persist_copy(void *userdata, const struct dralet_undo *undo)
{
	struct checkpoint *ck = userdata;

	/* the binding is restored only once everything it needs is on disk */
	if (dralet_undo_get(undo, "rebound"))
		assert_non_null(dralet_undo_get(undo, "driverOverride"));
	assert_int_equal(undo_copy(&ck->saved, undo), 0);
	ck->writes++;
	return 0;
}

static int persist_fails(void *userdata, const struct dralet_undo *undo)
{
	(void)userdata;
	(void)undo;
	return -EIO;
}

static void test_kernel_driver_to_vfio_and_back(void **state)
{
	struct fixture *f = fixture_new(4, 0);
	struct dralet_device *v0 = harness_device(&f->h, "vf-0000-17-00-1");
	struct checkpoint ck = { 0 };
	struct dralet_undo *saved = &ck.saved;
	struct t_req t;

	(void)state;
	assert_non_null(v0);
	assert_string_equal(driver_of(f, "0000:17:00.1"), "iavf");
	t_req_init(&t, "{" API ",\"driver\":\"vfio-pci\"}");
	t.undo.persist = persist_copy;
	t.undo.persist_userdata = &ck;
	assert_int_equal(backend_sriov.prepare(&f->h.ctx, v0, &t.req), 0);
	assert_string_equal(driver_of(f, "0000:17:00.1"), "vfio-pci");
	assert_string_equal(override_of(f, "0000:17:00.1"), "vfio-pci");
	/* the edits name the group the VF has alone */
	const struct dralet_devnode *g = t_edit_node(&t, "/dev/vfio/100");
	assert_non_null(g);
	assert_int_equal(g->major, 509);	/* vfio's dynamic major on boards */
	assert_int_equal(g->minor, 0);		/* the first vfio group */
	assert_non_null(t_edit_node(&t, "/dev/vfio/vfio"));
	assert_string_equal(t_env(&t, "DRALET_VF_0000_17_00_1_IOMMU_GROUP"), "100");
	assert_string_equal(t_env(&t, "DRALET_VF_0000_17_00_1_VFIO_GROUP"), "/dev/vfio/100");
	assert_string_equal(t_env(&t, "DRALET_VF_0000_17_00_1_PCI_ADDRESS"), "0000:17:00.1");
	assert_string_equal(t_env(&t, "DRALET_VF_0000_17_00_1_DRIVER"), "vfio-pci");
	assert_null(t_env(&t, "DRALET_VF_0000_17_00_1_NETDEV"));
	/* the state before, on disk before the first write */
	assert_string_equal(dralet_undo_get(saved, "driver"), "iavf");
	assert_string_equal(dralet_undo_get(saved, "driverOverride"), "none");
	assert_string_equal(dralet_undo_get(saved, "rebound"), "vfio-pci");
	assert_int_equal(ck.writes, 1);	/* every value in one checkpoint write */
	assert_string_equal(dralet_undo_get(&t.undo, "pciAddress"), "0000:17:00.1");

	/* unprepare from the state on disk alone (a new process) */
	size_t before = f->k.n_log;
	assert_int_equal(backend_sriov.unprepare(&f->h.ctx, v0, &t.req.claim, saved), 0);
	assert_string_equal(driver_of(f, "0000:17:00.1"), "iavf");
	assert_string_equal(override_of(f, "0000:17:00.1"), "");
	assert_true(f->k.n_log > before);
	/* idempotent: nothing written the second time */
	before = f->k.n_log;
	assert_int_equal(backend_sriov.unprepare(&f->h.ctx, v0, &t.req.claim, saved), 0);
	assert_int_equal(f->k.n_log, before);
	undo_clear(saved);
	t_req_clear(&t);
	fixture_free(f);
}

static void test_vfio_to_kernel_driver_and_back(void **state)
{
	struct fixture *f = fixture_new(4, 0);
	struct dralet_device *v1 = harness_device(&f->h, "vf-0000-17-00-2");
	char err[256];
	struct t_req t;

	(void)state;
	/* a policy put it on vfio-pci */
	assert_int_equal(hal_pci_set_driver(&f->k.node, "0000:17:00.2", "vfio-pci", err,
					    sizeof(err)), 0);
	t_req_init(&t, "{" API ",\"driver\":\"\"}");
	assert_int_equal(backend_sriov.prepare(&f->h.ctx, v1, &t.req), 0);
	assert_string_equal(driver_of(f, "0000:17:00.2"), "iavf");
	assert_string_equal(override_of(f, "0000:17:00.2"), "");
	assert_string_equal(t_env(&t, "DRALET_VF_0000_17_00_2_NETDEV"), "ens1f0v1");
	char mac[32];
	assert_true(f->k.real.read(f->k.real.userdata, "class/net/ens1f0v1/address", mac,
				   sizeof(mac)) > 0);
	assert_string_equal(t_env(&t, "DRALET_VF_0000_17_00_2_MAC"), mac);
	assert_string_equal(t_env(&t, "DRALET_VF_0000_17_00_2_DRIVER"), "iavf");
	assert_int_equal(t.edits.n_nodes, 0);
	assert_int_equal(backend_sriov.unprepare(&f->h.ctx, v1, &t.req.claim, &t.undo), 0);
	assert_string_equal(driver_of(f, "0000:17:00.2"), "vfio-pci");
	assert_string_equal(override_of(f, "0000:17:00.2"), "vfio-pci");
	t_req_clear(&t);

	/* no VfConfig: handed over as it is, nothing to put back */
	t_req_init(&t, NULL);
	size_t before = f->k.n_log;
	assert_int_equal(backend_sriov.prepare(&f->h.ctx, v1, &t.req), 0);
	assert_non_null(t_edit_node(&t, "/dev/vfio/101"));
	assert_int_equal(f->k.n_log, before);
	assert_null(dralet_undo_get(&t.undo, "rebound"));
	assert_int_equal(backend_sriov.unprepare(&f->h.ctx, v1, &t.req.claim, &t.undo), 0);
	assert_int_equal(f->k.n_log, before);
	t_req_clear(&t);
	fixture_free(f);
}

static void test_unbound_vf(void **state)
{
	struct fixture *f = fixture_new(0, 0);
	char err[256];
	struct t_req t;

	(void)state;
	/* VFs made with autoprobe off have no driver */
	assert_int_equal(hal_sriov_set_numvfs(&f->k.node, NIC, 2, 0, err, sizeof(err)), 2);
	harness_fini(&f->h);
	assert_int_equal(harness_init(&f->h, &backend_sriov, f->k.dir, "{\"pfs\":\"" NIC "\"}"), 0);
	f->h.ctx.node = &f->k.node;
	assert_int_equal(harness_probe_all(&f->h), 0);
	struct dralet_device *v0 = harness_device(&f->h, "vf-0000-17-00-1");
	assert_non_null(v0);
	assert_string_equal(driver_of(f, "0000:17:00.1"), "");

	t_req_init(&t, NULL);
	assert_int_equal(backend_sriov.prepare(&f->h.ctx, v0, &t.req), -ENODEV);
	assert_non_null(strstr(f->h.ctx.error, "no driver bound"));
	assert_non_null(strstr(f->h.ctx.error, "VfConfig.driver"));
	t_req_clear(&t);

	t_req_init(&t, "{" API ",\"driver\":\"vfio-pci\"}");
	assert_int_equal(backend_sriov.prepare(&f->h.ctx, v0, &t.req), 0);
	assert_string_equal(driver_of(f, "0000:17:00.1"), "vfio-pci");
	assert_string_equal(dralet_undo_get(&t.undo, "driver"), "none");
	assert_int_equal(backend_sriov.unprepare(&f->h.ctx, v0, &t.req.claim, &t.undo), 0);
	assert_string_equal(driver_of(f, "0000:17:00.1"), "");
	assert_string_equal(override_of(f, "0000:17:00.1"), "");
	t_req_clear(&t);
	fixture_free(f);
}

static void test_vf_settings(void **state)
{
	struct fixture *f = fixture_new(4, 0);
	struct dralet_device *v2 = harness_device(&f->h, "vf-0000-17-00-3");
	struct dralet_vf_settings *s;
	struct t_req t;

	(void)state;
	/* what the PF reports before: an admin MAC, VLAN 5 */
	s = node_model_vf(&f->k, NIC, 2);
	for (int i = 0; i < 6; i++)
		s->mac[i] = (uint8_t)(i ? 0x11 * i : 0x02);
	s->vlan = 5;
	t_req_init(&t, "{" API ",\"mac\":\"02:AA:BB:CC:DD:EE\",\"vlan\":100,\"qos\":3,"
		       "\"trust\":true,\"spoofChk\":false,\"linkState\":\"enable\","
		       "\"minTxRate\":100,\"maxTxRate\":2000}");
	assert_int_equal(backend_sriov.validate_config(&f->h.ctx, t.req.config), 0);
	assert_int_equal(backend_sriov.prepare(&f->h.ctx, v2, &t.req), 0);
	assert_memory_equal(s->mac, "\x02\xaa\xbb\xcc\xdd\xee", 6);
	assert_int_equal(s->vlan, 100);
	assert_int_equal(s->qos, 3);
	assert_int_equal(s->trust, 1);
	assert_int_equal(s->spoof_check, 0);
	assert_int_equal(s->link_state, DRALET_VF_LINK_ENABLE);
	assert_int_equal(s->min_tx_mbps, 100);
	assert_int_equal(s->max_tx_mbps, 2000);
	assert_string_equal(driver_of(f, "0000:17:00.3"), "iavf");
	assert_string_equal(t_env(&t, "DRALET_VF_0000_17_00_3_MAC"), "02:aa:bb:cc:dd:ee");
	assert_string_equal(t_env(&t, "DRALET_VF_0000_17_00_3_NETDEV"), "ens1f0v2");
	assert_string_equal(dralet_undo_get(&t.undo, "vfSettings"),
			    "pf=ens1f0 ifindex=7 vf=2 mac=02:11:22:33:44:55 vlan=5 qos=0 trust=0 "
			    "spoofChk=1 linkState=0 minTxRate=0 maxTxRate=0");
	assert_null(dralet_undo_get(&t.undo, "rebound"));

	assert_int_equal(backend_sriov.unprepare(&f->h.ctx, v2, &t.req.claim, &t.undo), 0);
	assert_memory_equal(s->mac, "\x02\x11\x22\x33\x44\x55", 6);
	assert_int_equal(s->vlan, 5);
	assert_int_equal(s->qos, 0);
	assert_int_equal(s->trust, 0);
	assert_int_equal(s->spoof_check, 1);
	assert_int_equal(s->link_state, DRALET_VF_LINK_AUTO);
	assert_int_equal(s->max_tx_mbps, 0);
	t_req_clear(&t);

	/* only what is asked for is touched and restored */
	t_req_init(&t, "{" API ",\"trust\":true}");
	assert_int_equal(backend_sriov.prepare(&f->h.ctx, v2, &t.req), 0);
	assert_string_equal(dralet_undo_get(&t.undo, "vfSettings"), "pf=ens1f0 ifindex=7 vf=2 trust=0");
	assert_int_equal(backend_sriov.unprepare(&f->h.ctx, v2, &t.req.claim, &t.undo), 0);
	t_req_clear(&t);

	/* settings and vfio together: the admin MAC is in the env for DPDK */
	t_req_init(&t, "{" API ",\"driver\":\"vfio-pci\",\"mac\":\"02:00:00:00:00:42\"}");
	assert_int_equal(backend_sriov.prepare(&f->h.ctx, v2, &t.req), 0);
	assert_string_equal(t_env(&t, "DRALET_VF_0000_17_00_3_MAC"), "02:00:00:00:00:42");
	assert_string_equal(driver_of(f, "0000:17:00.3"), "vfio-pci");
	assert_int_equal(backend_sriov.unprepare(&f->h.ctx, v2, &t.req.claim, &t.undo), 0);
	assert_string_equal(driver_of(f, "0000:17:00.3"), "iavf");
	assert_memory_equal(s->mac, "\x02\x11\x22\x33\x44\x55", 6);
	t_req_clear(&t);
	fixture_free(f);
}

static void test_settings_need_a_nic(void **state)
{
	struct fixture *f = fixture_new(0, 2);
	struct dralet_device *n0 = harness_device(&f->h, "vf-0000-18-00-1");
	struct t_req t;

	(void)state;
	assert_non_null(n0);
	t_req_init(&t, "{" API ",\"mac\":\"02:00:00:00:00:01\"}");
	assert_int_equal(backend_sriov.prepare(&f->h.ctx, n0, &t.req), -EOPNOTSUPP);
	assert_non_null(strstr(f->h.ctx.error, "VfConfig.mac"));
	assert_non_null(strstr(f->h.ctx.error, NVME));
	assert_int_equal(f->k.n_log, 0);
	t_req_clear(&t);
	fixture_free(f);
}

static void test_shared_iommu_group_refused(void **state)
{
	struct fixture *f = fixture_new(0, 2);
	struct dralet_device *n0 = harness_device(&f->h, "vf-0000-18-00-1");
	struct t_req t;

	(void)state;
	t_req_init(&t, "{" API ",\"driver\":\"vfio-pci\"}");
	assert_int_equal(backend_sriov.prepare(&f->h.ctx, n0, &t.req), -EPERM);
	/* the PF on nvme is named; the bridge and the unbound sibling VF are not */
	assert_non_null(strstr(f->h.ctx.error, "IOMMU group 30 also holds 0000:18:00.0 "
				 "(bound to nvme)"));
	assert_null(strstr(f->h.ctx.error, "0000:16:03.0"));
	assert_null(strstr(f->h.ctx.error, "0000:18:00.2"));
	assert_non_null(strstr(f->h.ctx.error, "vfioCapable"));
	assert_int_equal(f->k.n_log, 0);
	assert_string_equal(driver_of(f, "0000:18:00.1"), "");
	t_req_clear(&t);
	fixture_free(f);
}

static void test_failures_put_everything_back(void **state)
{
	struct fixture *f = fixture_new(4, 0);
	struct dralet_device *v0 = harness_device(&f->h, "vf-0000-17-00-1");
	struct dralet_vf_settings *s = node_model_vf(&f->k, NIC, 0);
	struct t_req t;

	(void)state;
	/* vfio-pci not loaded: the MAC set first is restored, the VF stays on iavf */
	board_node_set_loaded(f->k.bn, "vfio-pci", false);
	t_req_init(&t, "{" API ",\"driver\":\"vfio-pci\",\"mac\":\"02:00:00:00:00:01\"}");
	assert_int_equal(backend_sriov.prepare(&f->h.ctx, v0, &t.req), -EIO);
	assert_non_null(strstr(f->h.ctx.error, "did not bind to vfio-pci"));
	assert_null(strstr(f->h.ctx.error, "putting the VF back failed"));
	assert_string_equal(driver_of(f, "0000:17:00.1"), "iavf");
	assert_string_equal(override_of(f, "0000:17:00.1"), "");
	assert_memory_equal(s->mac, "\0\0\0\0\0\0", 6);
	t_req_clear(&t);

	/* the PF refuses a setting: nothing else happens */
	board_node_set_loaded(f->k.bn, "vfio-pci", true);
	f->k.vf_set_error = -EOPNOTSUPP;
	t_req_init(&t, "{" API ",\"driver\":\"vfio-pci\",\"trust\":true}");
	assert_int_equal(backend_sriov.prepare(&f->h.ctx, v0, &t.req), -EOPNOTSUPP);
	assert_non_null(strstr(f->h.ctx.error, "does not support"));
	assert_string_equal(driver_of(f, "0000:17:00.1"), "iavf");
	t_req_clear(&t);
	f->k.vf_set_error = 0;

	/* the settings cannot be read (to restore them later): refused up front */
	f->k.vf_get_error = -EOPNOTSUPP;
	size_t before = f->k.n_log;
	t_req_init(&t, "{" API ",\"vlan\":10}");
	assert_int_equal(backend_sriov.prepare(&f->h.ctx, v0, &t.req), -EOPNOTSUPP);
	assert_non_null(strstr(f->h.ctx.error, "to restore them later"));
	assert_int_equal(f->k.n_log, before);
	t_req_clear(&t);
	f->k.vf_get_error = 0;

	/* the undo state cannot be made durable: nothing changes */
	t_req_init(&t, "{" API ",\"driver\":\"vfio-pci\"}");
	t.undo.persist = persist_fails;
	assert_int_equal(backend_sriov.prepare(&f->h.ctx, v0, &t.req), -EIO);
	assert_non_null(strstr(f->h.ctx.error, "cannot record its state"));
	assert_int_equal(f->k.n_log, before);
	t_req_clear(&t);
	fixture_free(f);
}

static void test_unprepare_after_the_vf_went(void **state)
{
	struct fixture *f = fixture_new(4, 0);
	struct dralet_device *v0 = harness_device(&f->h, "vf-0000-17-00-1");
	char err[256];
	struct t_req t;

	(void)state;
	t_req_init(&t, "{" API ",\"driver\":\"vfio-pci\",\"vlan\":7}");
	assert_int_equal(backend_sriov.prepare(&f->h.ctx, v0, &t.req), 0);
	/* an operator removed the VFs (or the PF went) */
	assert_int_equal(hal_sriov_set_numvfs(&f->k.node, NIC, 0, -1, err, sizeof(err)), 0);
	assert_false(node_model_has(&f->k, "0000:17:00.1"));
	assert_int_equal(backend_sriov.unprepare(&f->h.ctx, v0, &t.req.claim, &t.undo), 0);
	/* an empty undo state (a rollback of a prepare that never started) changes nothing */
	struct dralet_undo empty = { 0 };
	size_t before = f->k.n_log;
	assert_int_equal(backend_sriov.unprepare(&f->h.ctx, v0, &t.req.claim, &empty), 0);
	assert_int_equal(f->k.n_log, before);
	t_req_clear(&t);
	fixture_free(f);
}

static void test_net_driver_shares_the_lifecycle(void **state)
{
	struct fixture *f = fixture_new(2, 0);
	struct harness h;
	struct t_req t;

	(void)state;
	/* the same VFs under nic-vf (net.dralet.dev) when sriov does not select them */
	assert_int_equal(harness_init(&h, &backend_nic_vf, f->k.dir, NULL), 0);
	h.ctx.node = &f->k.node;
	assert_int_equal(harness_probe_all(&h), 0);
	struct dralet_device *v0 = harness_device(&h, "vf-0000-17-00-1");
	assert_non_null(v0);
	t_req_init(&t, "{\"apiVersion\":\"net.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\","
		       "\"driver\":\"vfio-pci\",\"vlan\":12}");
	assert_int_equal(backend_nic_vf.prepare(&h.ctx, v0, &t.req), 0);
	assert_string_equal(driver_of(f, "0000:17:00.1"), "vfio-pci");
	assert_int_equal(node_model_vf(&f->k, NIC, 0)->vlan, 12);
	assert_int_equal(backend_nic_vf.unprepare(&h.ctx, v0, &t.req.claim, &t.undo), 0);
	assert_string_equal(driver_of(f, "0000:17:00.1"), "iavf");
	assert_int_equal(node_model_vf(&f->k, NIC, 0)->vlan, 0);
	t_req_clear(&t);
	harness_fini(&h);
	fixture_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_driver_to_vfio_and_back),
		cmocka_unit_test(test_vfio_to_kernel_driver_and_back),
		cmocka_unit_test(test_unbound_vf),
		cmocka_unit_test(test_vf_settings),
		cmocka_unit_test(test_settings_need_a_nic),
		cmocka_unit_test(test_shared_iommu_group_refused),
		cmocka_unit_test(test_failures_put_everything_back),
		cmocka_unit_test(test_unprepare_after_the_vf_went),
		cmocka_unit_test(test_net_driver_shares_the_lifecycle),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
