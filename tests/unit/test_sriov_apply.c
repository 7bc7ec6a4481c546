/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SR-IOV policies carried out against the board simulator's model of the
 * kernel (node_model.h, test_sriov_board.h): VFs created (autoprobe as the VF driver needs),
 * counts changed through 0, idempotence (a second run writes nothing), VFs
 * prepared for claims protected (refusals that name the VF and the claim,
 * their drivers and settings untouched), the kernel's ENOSPC on one PF not
 * stopping another, VF settings through the PF, dry runs, one PF at a time;
 * the prepared VFs read from claims checkpoints; `sriov status` JSON.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/claims/checkpoint_file.h"
#include "agent/claims/claims_lock.h"
#include "agent/core/config.h"
#include "agent/sriov/apply.h"
#include "agent/sriov/prepared.h"
#include "agent/sriov/status.h"
#include "harness.h"
#include "hal/pci_binding.h"
#include "hal/pci_sriov.h"
#include "agent/kube/store.h"
#include "agent/sriov/enforce.h"
#include "node_model.h"
#include "test_sriov_board.h"

#define RP0 "pci0000:16/0000:16:02.0"
#define NIC "0000:17:00.0"
#define NVME "0000:18:00.0"

struct fixture {
	struct node_model k;
	struct config *cfg;
	struct hal_scan *scan;
	struct sriov_prepared prep;
};

static void set_policies(struct fixture *f, const char *yaml)
{
	char path[PATH_MAX + 32], err[1024] = "";

	assert_int_equal(tree_write(f->k.dir, "config.yaml", yaml), 0);
	snprintf(path, sizeof(path), "%s/config.yaml", f->k.dir);
	config_free(f->cfg);
	f->cfg = NULL;
	if (config_load(path, &f->cfg, err, sizeof(err)) < 0)
		fail_msg("config: %s", err);
}

static void rescan(struct fixture *f)
{
	struct hal_scan_options o = { .no_names = true };

	hal_scan_free(f->scan);
	f->scan = NULL;
	assert_int_equal(hal_scan(&f->k.roots, &o, &f->scan), 0);
}

static struct fixture *fixture_new(void)
{
	struct fixture *f = calloc(1, sizeof(*f));

	node_model_init(&f->k, SRIOV_BOARD);
	f->k.faults[0].pf = NIC;
	f->k.faults[1].pf = NVME;
	rescan(f);
	return f;
}

static void fixture_free(struct fixture *f)
{
	hal_scan_free(f->scan);
	config_free(f->cfg);
	sriov_prepared_clear(&f->prep);
	node_model_fini(&f->k);
	free(f);
}

static struct sriov_report *apply(struct fixture *f, const char *only, bool dry_run)
{
	struct sriov_apply_options o = { .only_pf = only, .dry_run = dry_run };
	struct sriov_report *rep = NULL;

	assert_int_equal(sriov_apply(&f->k.node, f->cfg->sriov, f->scan, &f->prep, &o, &rep), 0);
	return rep;
}

static const struct sriov_pf_report *pf_report(const struct sriov_report *rep, const char *pf)
{
	for (size_t i = 0; i < rep->n; i++)
		if (!strcmp(rep->pfs[i].pf, pf))
			return &rep->pfs[i];
	fail_msg("no report for %s", pf);
	return NULL;
}

static unsigned numvfs(struct fixture *f, const char *pf)
{
	struct hal_pf_state st;
	unsigned n;

	assert_int_equal(hal_pf_state_read(&f->k.real, pf, &st), 0);
	n = st.num_vfs;
	assert_int_equal(st.n_vfs, n);
	hal_pf_state_clear(&st);
	return n;
}

static const char *driver_of(struct fixture *f, const char *address)
{
	static char buf[64];

	hal_pci_driver(&f->k.real, address, buf, sizeof(buf));
	return buf;
}

static void test_create_and_idempotent(void **state)
{
	struct fixture *f = fixture_new();
	struct sriov_report *rep;

	(void)state;
	set_policies(f, "sriov:\n  policies:\n"
		     "  - {name: nic, pfSelector: {pfNames: [ens1f0]}, numVfs: 4}\n"
		     "  - {name: nvme, pfSelector: {vendor: \"1b36\", device: \"0010\"}, numVfs: 2,"
		     " vfDriver: none}\n");
	rep = apply(f, NULL, false);
	assert_int_equal(rep->n, 2);
	assert_true(rep->vfs_changed);
	const struct sriov_pf_report *nic = pf_report(rep, NIC), *nvme = pf_report(rep, NVME);
	assert_int_equal(nic->outcome, SRIOV_PF_CHANGED);
	assert_string_equal(nic->policy, "nic");
	assert_int_equal(nic->before, 0);
	assert_int_equal(nic->after, 4);
	assert_int_equal(nvme->outcome, SRIOV_PF_CHANGED);
	assert_int_equal(numvfs(f, NIC), 4);
	assert_string_equal(driver_of(f, "0000:17:00.1"), "iavf");	/* autoprobe on */
	assert_string_equal(driver_of(f, "0000:17:00.4"), "iavf");
	/* vfDriver none: autoprobe off before the VFs exist, so nothing binds */
	int probe = node_model_find_log(&f->k, 0, NVME "/sriov_drivers_autoprobe=0");
	assert_true(probe >= 0);
	assert_true(probe < node_model_find_log(&f->k, 0, NVME "/sriov_numvfs=2"));
	assert_string_equal(driver_of(f, "0000:18:00.1"), "");
	sriov_report_free(rep);

	/* a second run changes nothing and writes nothing */
	rescan(f);
	size_t before = f->k.n_log;
	rep = apply(f, NULL, false);
	assert_false(rep->changed);
	assert_int_equal(pf_report(rep, NIC)->outcome, SRIOV_PF_UNCHANGED);
	assert_int_equal(pf_report(rep, NVME)->outcome, SRIOV_PF_UNCHANGED);
	assert_int_equal(f->k.n_log, before);
	sriov_report_free(rep);

	/* a new count goes through 0 */
	set_policies(f, "sriov:\n  policies:\n"
		     "  - {name: nic, pfSelector: {pfNames: [ens1f0]}, numVfs: 2}\n");
	before = f->k.n_log;
	rep = apply(f, NULL, false);
	assert_int_equal(rep->n, 1);	/* a PF no policy selects is left alone */
	assert_int_equal(pf_report(rep, NIC)->after, 2);
	int zero = node_model_find_log(&f->k, before, NIC "/sriov_numvfs=0");
	assert_true(zero >= 0);
	assert_true(zero < node_model_find_log(&f->k, before, NIC "/sriov_numvfs=2"));
	assert_int_equal(numvfs(f, NIC), 2);
	assert_int_equal(numvfs(f, NVME), 2);
	sriov_report_free(rep);
	fixture_free(f);
}

static void test_vfio_policy(void **state)
{
	struct fixture *f = fixture_new();
	struct sriov_report *rep;

	(void)state;
	set_policies(f, "sriov:\n  policies:\n"
		     "  - {name: nic, pfSelector: {drivers: [ice]}, numVfs: 3, vfDriver: vfio-pci}\n");
	rep = apply(f, NULL, false);
	assert_int_equal(pf_report(rep, NIC)->outcome, SRIOV_PF_CHANGED);
	assert_int_equal(pf_report(rep, NIC)->vfs_rebound, 3);
	/* never on iavf first: autoprobe was off */
	assert_int_equal(node_model_find_log(&f->k, 0, "driver/unbind"), -1);
	for (int i = 1; i <= 3; i++) {
		char a[16];
		snprintf(a, sizeof(a), "0000:17:00.%d", i);
		assert_string_equal(driver_of(f, a), "vfio-pci");
	}
	sriov_report_free(rep);
	/* back to the kernel's driver, without re-creating the VFs */
	set_policies(f, "sriov:\n  policies:\n"
		     "  - {name: nic, pfSelector: {drivers: [ice]}, numVfs: 3}\n");
	rescan(f);
	size_t before = f->k.n_log;
	rep = apply(f, NULL, false);
	assert_int_equal(pf_report(rep, NIC)->vfs_rebound, 3);
	assert_false(pf_report(rep, NIC)->vfs_changed);
	assert_int_equal(node_model_find_log(&f->k, before, "sriov_numvfs"), -1);
	assert_true(node_model_find_log(&f->k, before, NIC "/sriov_drivers_autoprobe=1") >= 0);
	assert_string_equal(driver_of(f, "0000:17:00.2"), "iavf");
	sriov_report_free(rep);
	/* converged: nothing more to write */
	rescan(f);
	before = f->k.n_log;
	rep = apply(f, NULL, false);
	assert_false(rep->changed);
	assert_int_equal(f->k.n_log, before);
	sriov_report_free(rep);
	fixture_free(f);
}

/* A store that keeps the Events it is given (sriov_enforce's @events). */
struct event_store {
	struct store base;
	int n;
	char type[16], reason[64], message[1024];
	bool about_node;
};

static void keep_event(struct store *st, const struct kube_object_ref *obj, const char *type,
		       const char *reason, const char *message)
{
	struct event_store *s = (struct event_store *)st;

	s->n++;
	s->about_node = !obj;
	snprintf(s->type, sizeof(s->type), "%s", type);
	snprintf(s->reason, sizeof(s->reason), "%s", reason);
	snprintf(s->message, sizeof(s->message), "%s", message);
}

static const struct store_ops event_store_ops = { .name = "events", .record_event = keep_event };

static void test_prepared_vfs_are_protected(void **state)
{
	struct fixture *f = fixture_new();
	struct sriov_prepared_vf claimed = { .address = "0000:17:00.2", .claim = "team-a/vf-claim",
					     .driver = "sriov.dralet.dev" };
	struct sriov_report *rep;
	char err[256];

	(void)state;
	set_policies(f, "sriov:\n  policies:\n"
		     "  - {name: nic, pfSelector: {drivers: [ice]}, numVfs: 3}\n");
	sriov_report_free(apply(f, NULL, false));
	/* VF 1 went to vfio-pci for a claim */
	assert_int_equal(hal_pci_set_driver(&f->k.node, "0000:17:00.2", "vfio-pci", err,
					    sizeof(err)), 0);
	assert_int_equal(sriov_prepared_add(&f->prep, &claimed), 0);

	/* 0 VFs (or any other count): refused, nothing written to sriov_numvfs */
	set_policies(f, "sriov:\n  policies:\n"
		     "  - {name: nic, pfSelector: {drivers: [ice]}, numVfs: 0}\n");
	rescan(f);
	size_t before = f->k.n_log;
	rep = apply(f, NULL, false);
	const struct sriov_pf_report *p = pf_report(rep, NIC);
	assert_int_equal(p->outcome, SRIOV_PF_REFUSED);
	assert_non_null(strstr(p->message, "PF " NIC));
	assert_non_null(strstr(p->message, "VF 1 (0000:17:00.2) is prepared for claim "
				 "team-a/vf-claim"));
	assert_int_equal(node_model_find_log(&f->k, before, "sriov_numvfs"), -1);
	assert_int_equal(numvfs(f, NIC), 3);
	/* the claim's VF keeps the driver the claim gave it */
	assert_string_equal(driver_of(f, "0000:17:00.2"), "vfio-pci");
	sriov_report_free(rep);

	set_policies(f, "sriov:\n  policies:\n"
		     "  - {name: nic, pfSelector: {drivers: [ice]}, numVfs: 5}\n");
	rep = apply(f, NULL, false);
	assert_int_equal(pf_report(rep, NIC)->outcome, SRIOV_PF_REFUSED);
	assert_non_null(strstr(pf_report(rep, NIC)->message, "only through 0"));
	sriov_report_free(rep);

	/* the daemon's enforcement also tells the cluster: a Warning Event about the Node */
	struct event_store events = { .base.ops = &event_store_ops };
	struct sriov_apply_counts counts = { 0 };
	bool changed = true, refused = false;
	assert_int_equal(sriov_enforce(&f->k.roots, NULL, f->cfg->sriov, f->scan, &f->prep, &events.base,
				       &counts, &changed, &refused), 0);
	assert_true(refused);
	assert_false(changed);
	/* and counts it for /metrics */
	assert_int_equal(counts.n, 1);
	assert_string_equal(counts.pfs[0].pf, NIC);
	assert_int_equal(counts.pfs[0].by_outcome[SRIOV_PF_REFUSED], 1);
	sriov_apply_counts_clear(&counts);
	assert_int_equal(events.n, 1);
	assert_true(events.about_node);
	assert_string_equal(events.type, "Warning");
	assert_string_equal(events.reason, SRIOV_EVENT_REFUSED);
	assert_non_null(strstr(events.message, "PF " NIC ": policy nic wants 5 VFs"));
	assert_non_null(strstr(events.message, "VF 1 (0000:17:00.2) prepared for claim "
					       "team-a/vf-claim"));
	assert_int_equal(numvfs(f, NIC), 3);

	/* unprepared: the count changes on the next run */
	sriov_prepared_clear(&f->prep);
	rep = apply(f, NULL, false);
	assert_int_equal(pf_report(rep, NIC)->outcome, SRIOV_PF_CHANGED);
	assert_int_equal(numvfs(f, NIC), 5);
	sriov_report_free(rep);
	fixture_free(f);
}

static void test_kernel_errors_stay_with_their_pf(void **state)
{
	struct fixture *f = fixture_new();
	struct sriov_report *rep;

	(void)state;
	f->k.faults[0].enospc_above = 2;	/* the NIC runs out of MSI-X vectors above 2 VFs */
	set_policies(f, "sriov:\n  policies:\n"
		     "  - {name: nic, pfSelector: {drivers: [ice]}, numVfs: 4}\n"
		     "  - {name: nvme, pfSelector: {drivers: [nvme]}, numVfs: 8}\n"
		     "  - {name: nvme2, pfSelector: {drivers: [nvme]}, numVfs: 2}\n");
	rep = apply(f, NULL, false);
	const struct sriov_pf_report *nic = pf_report(rep, NIC), *nvme = pf_report(rep, NVME);
	assert_int_equal(nic->outcome, SRIOV_PF_FAILED);
	assert_non_null(strstr(nic->message, NIC));
	assert_non_null(strstr(nic->message, "ran out of resources"));
	/* above sriov_totalvfs: refused before the kernel is asked */
	assert_int_equal(nvme->outcome, SRIOV_PF_REFUSED);
	assert_non_null(strstr(nvme->message, "supports 4"));
	assert_string_equal(nvme->also, "nvme2");
	assert_int_equal(numvfs(f, NIC), 0);
	sriov_report_free(rep);

	/* the NVMe's fix does not depend on the NIC */
	set_policies(f, "sriov:\n  policies:\n"
		     "  - {name: nic, pfSelector: {drivers: [ice]}, numVfs: 4}\n"
		     "  - {name: nvme, pfSelector: {drivers: [nvme]}, numVfs: 3}\n");
	rep = apply(f, NULL, false);
	assert_int_equal(pf_report(rep, NIC)->outcome, SRIOV_PF_FAILED);
	assert_int_equal(pf_report(rep, NVME)->outcome, SRIOV_PF_CHANGED);
	assert_int_equal(numvfs(f, NVME), 3);
	sriov_report_free(rep);

	/* VFs in use elsewhere (EBUSY) and a driver refusing a count (EINVAL) */
	f->k.faults[1].disable_error = -EBUSY;
	set_policies(f, "sriov:\n  policies:\n"
		     "  - {name: nvme, pfSelector: {drivers: [nvme]}, numVfs: 1}\n");
	rep = apply(f, NVME, false);
	assert_int_equal(pf_report(rep, NVME)->outcome, SRIOV_PF_FAILED);
	assert_non_null(strstr(pf_report(rep, NVME)->message, NVME ": cannot disable its 3 VFs: "
			       "VFs are enabled or in use"));
	assert_int_equal(numvfs(f, NVME), 3);
	sriov_report_free(rep);
	f->k.faults[1].disable_error = 0;
	f->k.faults[1].enable_error = -EINVAL;
	rep = apply(f, NVME, false);
	assert_int_equal(pf_report(rep, NVME)->outcome, SRIOV_PF_FAILED);
	assert_non_null(strstr(pf_report(rep, NVME)->message, NVME ": enabling 1 VFs failed: "
			       "the PF driver refused the count"));
	assert_true(pf_report(rep, NVME)->vfs_changed);	/* the 3 went: rediscover */
	assert_int_equal(numvfs(f, NVME), 0);
	sriov_report_free(rep);

	/* the PF loses its driver: no VFs can be made */
	set_policies(f, "sriov:\n  policies:\n"
		     "  - {name: nic, pfSelector: {drivers: [ice]}, numVfs: 4}\n");
	char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/sys/devices/" RP0 "/" NIC "/driver", f->k.dir);
	unlink(p);
	rep = apply(f, NIC, false);
	assert_int_equal(rep->n, 1);
	assert_int_equal(pf_report(rep, NIC)->outcome, SRIOV_PF_REFUSED);
	assert_non_null(strstr(pf_report(rep, NIC)->message, "no driver is bound"));
	sriov_report_free(rep);
	fixture_free(f);
}

static void test_vf_settings(void **state)
{
	struct fixture *f = fixture_new();
	struct sriov_prepared_vf claimed = { .address = "0000:17:00.3", .claim = "ns/c" };
	struct sriov_report *rep;

	(void)state;
	set_policies(f, "sriov:\n  policies:\n"
		     "  - name: nic\n    pfSelector: {pfNames: [ens1f0]}\n    numVfs: 3\n"
		     "    vfSettings: {macBase: \"02:00:00:00:00:f0\", vlan: 10, trust: true,"
		     " spoofChk: true}\n"
		     "  - name: nvme\n    pfSelector: {drivers: [nvme]}\n    numVfs: 1\n"
		     "    vfDriver: none\n    vfSettings: {vlan: 10}\n");
	rep = apply(f, NULL, false);
	assert_int_equal(pf_report(rep, NIC)->outcome, SRIOV_PF_CHANGED);
	assert_int_equal(pf_report(rep, NIC)->vfs_set, 3);
	for (unsigned i = 0; i < 3; i++) {
		struct dralet_vf_settings *s = node_model_vf(&f->k, NIC, i);
		assert_int_equal(s->mac[5], 0xf0 + i);
		assert_int_equal(s->vlan, 10);
		assert_int_equal(s->trust, 1);
	}
	/* spoof check was on already: not sent */
	assert_int_equal(node_model_find_log(&f->k, 0, "spoofchk"), -1);
	/* settings on a PF without an interface: reported, the count still applied */
	assert_int_equal(pf_report(rep, NVME)->outcome, SRIOV_PF_FAILED);
	assert_non_null(strstr(pf_report(rep, NVME)->message, "network interface"));
	assert_int_equal(numvfs(f, NVME), 1);
	sriov_report_free(rep);

	/* again: nothing to send; a prepared VF's settings are the claim's */
	rescan(f);
	node_model_vf(&f->k, NIC, 2)->vlan = 99;	/* the claim set its own VLAN */
	node_model_vf(&f->k, NIC, 0)->vlan = 11;	/* someone changed an unclaimed one */
	sriov_prepared_add(&f->prep, &claimed);
	size_t before = f->k.n_log;
	rep = apply(f, NIC, false);
	assert_int_equal(pf_report(rep, NIC)->vfs_set, 1);
	assert_int_equal(node_model_vf(&f->k, NIC, 0)->vlan, 10);
	assert_int_equal(node_model_vf(&f->k, NIC, 2)->vlan, 99);
	assert_true(node_model_find_log(&f->k, before, "vf_set if7 vf0 vlan") >= 0);
	sriov_report_free(rep);
	fixture_free(f);
}

static void test_dry_run(void **state)
{
	struct fixture *f = fixture_new();
	struct sriov_report *rep;

	(void)state;
	set_policies(f, "sriov:\n  policies:\n"
		     "  - {name: nic, pfSelector: {drivers: [ice]}, numVfs: 4}\n");
	rep = apply(f, NULL, true);
	assert_int_equal(pf_report(rep, NIC)->outcome, SRIOV_PF_CHANGED);
	assert_int_equal(pf_report(rep, NIC)->after, 4);
	assert_int_equal(f->k.n_log, 0);
	assert_int_equal(numvfs(f, NIC), 0);
	sriov_report_free(rep);
	fixture_free(f);
}

static int add_claim(struct checkpoint *ck, const char *uid, const char *name,
		     const char *address, enum ckpt_state state)
{
	struct ckpt_claim *c = calloc(1, sizeof(*c));

	c->uid = strdup(uid);
	c->namespace_ = strdup("team-a");
	c->name = strdup(name);
	c->state = state;
	c->devices = calloc(1, sizeof(*c->devices));
	c->n_devices = 1;
	c->devices[0].pool = strdup("node1");
	c->devices[0].device = strdup("vf-x");
	c->devices[0].cdi_class = strdup("sriov");
	c->devices[0].cdi_id = strdup("k8s.sriov.dralet.dev/sriov=x");
	c->devices[0].identity.pci_address = strdup(address);
	return checkpoint_add(ck, c);
}

static void test_prepared_from_checkpoints(void **state)
{
	struct fixture *f = fixture_new();
	struct checkpoint *ck = checkpoint_new("sriov.dralet.dev", "boot");
	char plugins[PATH_MAX + 16], dir[PATH_MAX + 64], err[512];
	struct sriov_prepared p = { 0 };

	(void)state;
	assert_int_equal(add_claim(ck, "u1", "one", "0000:17:00.1", CKPT_PREPARE_COMPLETED), 0);
	assert_int_equal(add_claim(ck, "u2", "two", "0000:17:00.2", CKPT_PREPARE_STARTED), 0);
	snprintf(plugins, sizeof(plugins), "%s/plugins", f->k.dir);
	snprintf(dir, sizeof(dir), "%s/sriov.dralet.dev", plugins);
	static const char *const drivers[] = { "sriov.dralet.dev", "gpu.dralet.dev" };
	tree_mkdir(f->k.dir, "plugins/sriov.dralet.dev");
	tree_mkdir(f->k.dir, "plugins/gpu.dralet.dev");	/* no checkpoint yet */
	/* another vendor's plugin keeps a file of its own name: not read */
	tree_write(f->k.dir, "plugins/gpu.example.com/checkpoint.json", "{\"v1\": {}}");
	assert_int_equal(checkpoint_file_save(dir, ck), 0);
	assert_int_equal(sriov_prepared_load_drivers(plugins, drivers, 2, &p, err, sizeof(err)), 0);
	assert_int_equal(p.n, 2);
	const struct sriov_prepared_vf *v = sriov_prepared_find(&p, "0000:17:00.2");
	assert_non_null(v);
	assert_string_equal(v->claim, "team-a/two");
	assert_string_equal(v->driver, "sriov.dralet.dev");
	assert_true(v->in_flight);
	assert_false(sriov_prepared_find(&p, "0000:17:00.1")->in_flight);
	sriov_prepared_clear(&p);
	/* a corrupt checkpoint is an error: its claims would go unprotected */
	snprintf(dir, sizeof(dir), "plugins/sriov.dralet.dev/%s", CHECKPOINT_FILE_NAME);
	tree_write(f->k.dir, dir, "{garbage");
	assert_true(sriov_prepared_load_drivers(plugins, drivers, 2, &p, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, CHECKPOINT_FILE_NAME));
	sriov_prepared_clear(&p);
	/* no plugins directory at all: nothing prepared */
	assert_int_equal(sriov_prepared_load_drivers("/nonexistent/dralet", drivers, 2, &p, err,
						     sizeof(err)), 0);
	checkpoint_free(ck);
	fixture_free(f);
}

/* An apply reads the prepared VFs under the drivers' claims locks: while a
 * rolling update's other instance runs an operation (holds one driver's
 * lock) the daemon's try holds nothing and says try again; once taken, it
 * sees the claims that instance wrote, and no instance can start one. */
static void test_prepared_under_the_claims_locks(void **state)
{
	struct fixture *f = fixture_new();
	struct checkpoint *ck = checkpoint_new("sriov.dralet.dev", "boot");
	char plugins[PATH_MAX + 16], dir[PATH_MAX + 64], err[512] = "";
	static const char *const drivers[] = { "sriov.dralet.dev", "gpu.dralet.dev" };
	struct claims_lock *other, *gpu, **locks = NULL;
	struct sriov_prepared p = { 0 };

	(void)state;
	snprintf(plugins, sizeof(plugins), "%s/plugins", f->k.dir);
	snprintf(dir, sizeof(dir), "%s/sriov.dralet.dev", plugins);
	assert_int_equal(claims_lock_open(dir, &other), 0);
	assert_int_equal(claims_lock_try(other), 0);	/* the other instance's prepare */
	assert_int_equal(add_claim(ck, "u1", "one", "0000:17:00.1", CKPT_PREPARE_STARTED), 0);
	assert_int_equal(checkpoint_file_save(dir, ck), 0);
	assert_int_equal(sriov_prepared_lock_drivers(plugins, drivers, 2, false, &locks, &p, err,
						     sizeof(err)), -EWOULDBLOCK);
	assert_int_equal(p.n, 0);
	snprintf(dir, sizeof(dir), "%s/gpu.dralet.dev", plugins);
	assert_int_equal(claims_lock_open(dir, &gpu), 0);	/* made by the try */
	assert_int_equal(claims_lock_try(gpu), 0);		/* nothing kept held */
	claims_lock_free(gpu);

	claims_lock_release(other);			/* its operation is over */
	assert_int_equal(sriov_prepared_lock_drivers(plugins, drivers, 2, false, &locks, &p, err,
						     sizeof(err)), 0);
	assert_int_equal(p.n, 1);
	assert_true(sriov_prepared_find(&p, "0000:17:00.1")->in_flight);
	assert_int_equal(claims_lock_try(other), -EWOULDBLOCK);	/* it waits for the apply */
	claims_locks_free(locks, 2);
	assert_int_equal(claims_lock_try(other), 0);
	sriov_prepared_clear(&p);
	claims_lock_free(other);
	checkpoint_free(ck);
	fixture_free(f);
}

static void test_status(void **state)
{
	struct fixture *f = fixture_new();
	struct sriov_prepared_vf claimed = { .address = "0000:17:00.2", .claim = "team-a/c",
					     .driver = "sriov.dralet.dev" };
	struct json_object *j, *pfs, *pf, *vfs, *v;
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	(void)state;
	set_policies(f, "sriov:\n  policies:\n"
		     "  - {name: nic, pfSelector: {drivers: [ice]}, numVfs: 2}\n"
		     "  - {name: unused, pfSelector: {drivers: [mlx5_core]}, numVfs: 2}\n");
	sriov_report_free(apply(f, NULL, false));
	rescan(f);
	sriov_prepared_add(&f->prep, &claimed);
	set_policies(f, "sriov:\n  policies:\n"
		     "  - {name: nic, pfSelector: {drivers: [ice]}, numVfs: 0}\n"
		     "  - {name: unused, pfSelector: {drivers: [mlx5_core]}, numVfs: 2}\n");
	j = sriov_status_json(&f->k.real, f->scan, f->cfg->sriov, &f->prep);
	assert_non_null(j);
	assert_true(json_object_object_get_ex(j, "pfs", &pfs));
	assert_int_equal(json_object_array_length(pfs), 2);
	pf = json_object_array_get_idx(pfs, 0);
	assert_string_equal(json_object_get_string(json_object_object_get(pf, "address")), NIC);
	assert_string_equal(json_object_get_string(json_object_object_get(pf, "policy")), "nic");
	assert_string_equal(json_object_get_string(json_object_object_get(pf, "interface")),
			    "ens1f0");
	assert_int_equal(json_object_get_int(json_object_object_get(pf, "wantedVfs")), 0);
	assert_int_equal(json_object_get_int(json_object_object_get(pf, "actualVfs")), 2);
	assert_int_equal(json_object_get_int(json_object_object_get(pf, "totalVfs")), 8);
	assert_non_null(strstr(json_object_get_string(json_object_object_get(pf, "pending")),
			       "refused: PF " NIC));
	vfs = json_object_object_get(pf, "vfs");
	assert_int_equal(json_object_array_length(vfs), 2);
	v = json_object_array_get_idx(vfs, 1);
	assert_string_equal(json_object_get_string(json_object_object_get(v, "claim")),
			    "team-a/c");
	assert_string_equal(json_object_get_string(json_object_object_get(v, "driver")), "iavf");
	pf = json_object_array_get_idx(pfs, 1);
	assert_null(json_object_object_get(pf, "policy"));
	assert_string_equal(json_object_get_string(json_object_array_get_idx(
			    json_object_object_get(j, "unusedPolicies"), 0)), "unused");
	/* the text form */
	out = open_memstream(&text, &len);
	sriov_status_print(j, out);
	fclose(out);
	assert_non_null(strstr(text, "prepared for claim team-a/c (sriov.dralet.dev)"));
	assert_non_null(strstr(text, "pending: refused"));
	assert_non_null(strstr(text, "policy unused selects no SR-IOV PF"));
	free(text);
	json_object_put(j);
	fixture_free(f);
}

/* The real seam never talks to an interface the tree does not name: a simulated
 * board's interface index may be one of this host's. */
static void test_real_netlink_checks_the_interface(void **state)
{
	struct hal_roots roots = { "/nonexistent/sys", "/nonexistent/dev", "/nonexistent/proc" };
	struct node_ops node = node_ops_real(&roots);
	struct dralet_vf_settings s = DRALET_VF_SETTINGS_INIT;

	(void)state;
	s.trust = 1;
	assert_int_equal(node.vf_set(node.userdata, "dralet-no-such0", 1, 0, &s), -ENODEV);
	assert_int_equal(node.vf_get(node.userdata, "dralet-no-such0", 1, 0, &s), -ENODEV);
	assert_int_equal(node.vf_set(node.userdata, NULL, 1, 0, &s), -ENODEV);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_and_idempotent),
		cmocka_unit_test(test_vfio_policy),
		cmocka_unit_test(test_prepared_vfs_are_protected),
		cmocka_unit_test(test_prepared_under_the_claims_locks),
		cmocka_unit_test(test_kernel_errors_stay_with_their_pf),
		cmocka_unit_test(test_vf_settings),
		cmocka_unit_test(test_dry_run),
		cmocka_unit_test(test_prepared_from_checkpoints),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_real_netlink_checks_the_interface),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
