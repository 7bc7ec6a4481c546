/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The claims engine with a fake backend and an in-test store: per-claim
 * errors, idempotency, adminAccess, device conflicts, multi-device rollback,
 * parallel work, per-UID serialization, and recovery at start.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <uv.h>

#include <dralet/sharing.h>

#include "harness.h"
#include "log_capture.h"
#include "agent/claims/cdi_files.h"
#include "agent/claims/checkpoint_file.h"
#include "agent/claims/engine.h"
#include "agent/claims/stale_check.h"
#include "agent/lib/atomic_file.h"
#include "agent/core/device_set.h"
#include "agent/kube/store.h"

#define DRV "gpu.test.dev"
#define VENDOR "k8s." DRV
#define POOL "node-1"
#define BOOT "boot-1"
#define NDEV 4

/* ---- the fake backend ---- */

static struct {
	const char *fail_device;	/* prepare of this device fails */
	void (*on_fail)(void);		/* called when it does */
	void (*on_unprepare)(void);	/* called by every unprepare */
	unsigned sleep_ms;
	atomic_int gather;		/* prepare waits until this many calls are in
					 * the backend at once (overlap shown without a
					 * clock); 30 s at most, then nobody waits */
	atomic_int prepares, unprepares, validates, healths;
	atomic_int in_flight[NDEV];
	atomic_bool overlap;		/* two calls on one device at once */
	atomic_bool bad_undo;		/* unprepare without prepare's undo state */
	atomic_bool bad_health;		/* a health check that did not say Healthy */
	atomic_int max_parallel, parallel;
	bool no_undo;			/* prepare records no undo state (changes nothing) */
	char last_share[64];		/* the share_id and memory the last prepare got */
	char last_consumed[64];
} fake;

/* fsync, counted: this definition is the one libdralet.a links to */
static atomic_int n_fsync;
int fsync(int fd)
{
	atomic_fetch_add(&n_fsync, 1);
	return (int)syscall(SYS_fsync, fd);
}

static int dev_index(struct dralet_device *dev)
{
	return dralet_device_pci(dev)->bus - 1;
}

static int fake_validate(struct dralet_backend_ctx *ctx, const char *config)
{
	struct json_object *o = json_tokener_parse(config);
	int r = 0;

	atomic_fetch_add(&fake.validates, 1);
	if (!o || !json_object_is_type(o, json_type_object)) {
		dralet_ctx_error(ctx, "config is not a JSON object");
		json_object_put(o);
		return -EINVAL;
	}
	json_object_object_foreach(o, key, val) {
		(void)val;
		if (strcmp(key, "mode") && strcmp(key, "vlan") && strcmp(key, "apiVersion") &&
		    strcmp(key, "kind")) {
			dralet_ctx_error(ctx, "unknown field \"%s\"", key);
			r = -EINVAL;
			break;
		}
	}
	json_object_put(o);
	return r;
}

static void enter(struct dralet_device *dev)
{
	int p = atomic_fetch_add(&fake.parallel, 1) + 1, m;

	if (atomic_fetch_add(&fake.in_flight[dev_index(dev)], 1) != 0)
		atomic_store(&fake.overlap, true);
	while (p > (m = atomic_load(&fake.max_parallel)) &&
	       !atomic_compare_exchange_weak(&fake.max_parallel, &m, p))
		;
}

static void leave(struct dralet_device *dev)
{
	atomic_fetch_sub(&fake.in_flight[dev_index(dev)], 1);
	atomic_fetch_sub(&fake.parallel, 1);
}

static int fake_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			struct dralet_prepare_req *req)
{
	struct dralet_devnode node = { .major = 240, .minor = (unsigned)dev_index(dev) };
	char path[64];

	enter(dev);
	atomic_fetch_add(&fake.prepares, 1);
	if (fake.sleep_ms)
		usleep(fake.sleep_ms * 1000);
	for (int i = 0; atomic_load(&fake.parallel) < atomic_load(&fake.gather); i++) {
		if (i == 3000)
			atomic_store(&fake.gather, 0);
		usleep(10000);
	}
	if (fake.fail_device && !strcmp(fake.fail_device, dralet_device_name(dev))) {
		dralet_ctx_error(ctx, "injected failure");
		if (fake.on_fail)
			fake.on_fail();
		leave(dev);
		return -EIO;
	}
	snprintf(path, sizeof(path), "/dev/fake%d", dev_index(dev));
	node.path = path;
	dralet_edits_add_node(req->edits, &node, "rw");
	dralet_edits_add_env(req->edits, "FAKE_MODE", req->config ? req->config : "none");
	snprintf(fake.last_share, sizeof(fake.last_share), "%s",
		 req->share_id ? req->share_id : "");
	snprintf(fake.last_consumed, sizeof(fake.last_consumed), "%s",
		 req->n_consumed ? req->consumed[0].quantity : "");
	if (!fake.no_undo)
		dralet_undo_set(req->undo, "token", req->claim.uid);
	leave(dev);
	return 0;
}

static int fake_unprepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			  const struct dralet_claim_ref *claim, const struct dralet_undo *undo)
{
	const char *token = dralet_undo_get(undo, "token");

	(void)ctx;
	enter(dev);
	atomic_fetch_add(&fake.unprepares, 1);
	if (fake.on_unprepare)
		fake.on_unprepare();
	if (!fake.no_undo && (!token || strcmp(token, claim->uid)))
		atomic_store(&fake.bad_undo, true);
	leave(dev);
	return 0;
}

static int fake_health(struct dralet_backend_ctx *ctx, struct dralet_device *dev)
{
	int r = DRALET_HEALTH_HEALTHY;

	(void)ctx;
	enter(dev);
	atomic_fetch_add(&fake.healths, 1);
	if (fake.sleep_ms)
		usleep(fake.sleep_ms * 1000);
	if (fake.fail_device && !strcmp(fake.fail_device, dralet_device_name(dev)))
		r = -EIO;
	leave(dev);
	return r;
}

static int fake_probe(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
		      const struct dralet_pci_id *id)
{
	(void)ctx;
	(void)f;
	(void)id;
	return 0;
}

static const struct dralet_pci_id fake_ids[] = { DRALET_PCI_DEVICE(0x10de, 0x2330), { 0 } };

static const struct dralet_config_key fake_admin_keys[] = {
	{ "vlan", "puts the device on any VLAN" },
	{ NULL, NULL },
};

static const struct dralet_backend fake_backend = {
	.abi = DRALET_BACKEND_ABI,
	.name = "fakegpu",
	.family = "gpu",
	.default_driver = DRV,
	.ids = fake_ids,
	.probe = fake_probe,
	.validate_config = fake_validate,
	.prepare = fake_prepare,
	.unprepare = fake_unprepare,
	.health = fake_health,
	.admin_config_keys = fake_admin_keys,
};

/* ---- devices ---- */

static struct harness h;
static struct dralet_pci_func funcs[NDEV];
static struct dralet_device *devices[NDEV];
static char dev_names[NDEV][64];

static void make_devices(void)
{
	assert_int_equal(harness_init(&h, &fake_backend, NULL, NULL), 0);
	h.ctx.sink = &h.sink;
	for (int i = 0; i < NDEV; i++) {
		struct dralet_pci_func *f = &funcs[i];
		memset(f, 0, sizeof(*f));
		snprintf(f->address, sizeof(f->address), "0000:%02x:00.0", i + 1);
		f->bus = (unsigned)i + 1;
		f->vendor_id = 0x10de;
		f->device_id = 0x2330;
		f->numa_node = -1;
		f->iommu_group = -1;
		f->vf_index = -1;
		snprintf(f->pcie_root, sizeof(f->pcie_root), "pci0000:00");
		assert_int_equal(dralet_device_new(&h.ctx, f, "gpu", NULL, &devices[i]), 0);
		snprintf(dev_names[i], sizeof(dev_names[i]), "%s", dralet_device_name(devices[i]));
		assert_int_equal(dralet_device_set_string(devices[i], "uuid", "GPU-original"), 0);
	}
	h.ctx.sink = NULL;
}

/* ---- the in-test store ---- */

struct test_store {
	struct store base;
	uv_loop_t *loop;
	struct json_object *claims;	/* "ns/name" -> claim */
	int gets;
	int warns;			/* Events about the Node, the last one's reason and message: */
	char warn_reason[64], warn_message[2048];
	int claim_events;		/* Events about a claim, and the last one: */
	char claim_event[2048];		/* "<type> <reason> <apiVersion> <kind> <ns>/<name> <uid>: <message>" */
	struct json_object *statuses;	/* "ns/name/driver" -> the last devices array */
	int status_writes;
	const char *fail_key;		/* "ns/name" whose get fails (-EIO, a 5xx) */
};

struct pending_get {
	uv_timer_t timer;
	struct test_store *s;
	char key[256];
	store_claim_cb cb;
	void *userdata;
};

static void on_get_closed(uv_handle_t *hd)
{
	free(hd->data);
}

static void on_get_timer(uv_timer_t *t)
{
	struct pending_get *g = t->data;
	struct json_object *c = NULL;

	if (g->s->fail_key && !strcmp(g->s->fail_key, g->key))
		g->cb(g->userdata, -EIO, NULL, "HTTP 500: injected");
	else if (json_object_object_get_ex(g->s->claims, g->key, &c))
		g->cb(g->userdata, 0, c, NULL);
	else
		g->cb(g->userdata, -ENOENT, NULL, "resourceclaims not found");
	uv_close((uv_handle_t *)t, on_get_closed);
}

static void test_get_claim(struct store *st, const char *ns, const char *name, store_claim_cb cb,
			   void *userdata)
{
	struct test_store *s = (struct test_store *)st;
	struct pending_get *g = calloc(1, sizeof(*g));

	s->gets++;
	g->s = s;
	snprintf(g->key, sizeof(g->key), "%s/%s", ns, name);
	g->cb = cb;
	g->userdata = userdata;
	uv_timer_init(s->loop, &g->timer);
	g->timer.data = g;
	uv_timer_start(&g->timer, on_get_timer, 0, 0);
}

static void test_record_event(struct store *st, const struct kube_object_ref *obj,
			      const char *type, const char *reason, const char *message)
{
	struct test_store *s = (struct test_store *)st;

	if (obj) {
		s->claim_events++;
		snprintf(s->claim_event, sizeof(s->claim_event), "%s %s %s %s %s/%s %s: %s", type,
			 reason, obj->api_version, obj->kind, obj->namespace_, obj->name, obj->uid,
			 message);
		return;
	}
	assert_string_equal(type, "Warning");
	s->warns++;
	snprintf(s->warn_reason, sizeof(s->warn_reason), "%s", reason);
	snprintf(s->warn_message, sizeof(s->warn_message), "%s", message);
}

static void test_set_claim_status(struct store *st, const char *ns, const char *name,
				  const char *driver, struct json_object *entries)
{
	struct test_store *s = (struct test_store *)st;
	char key[512];

	s->status_writes++;
	snprintf(key, sizeof(key), "%s/%s/%s", ns, name, driver);
	json_object_object_add(s->statuses, key, json_object_get(entries));
}

static const struct store_ops test_store_ops = {
	.name = "test", .get_claim = test_get_claim, .record_event = test_record_event,
	.set_claim_status = test_set_claim_status,
};

/* ---- fixture ---- */

struct env {
	uv_loop_t loop;
	struct test_store store;
	char dir[64], state_dir[128], cdi_dir[128];
	struct claims_engine *e;
	struct claims_recovery_stats stats;
};

static struct env *env_;

static int open_engine(struct env *x, const char *boot)
{
	struct claims_engine_config cfg = {
		.loop = &x->loop,
		.store = &x->store.base,
		.driver = DRV,
		.pool = POOL,
		.state_dir = x->state_dir,
		.cdi_dir = x->cdi_dir,
		.boot_id = boot,
	};
	int r;

	assert_int_equal(device_set_new(DRV, devices, NDEV, &cfg.devices), 0);
	r = claims_engine_new(&cfg, &x->e, &x->stats);
	device_set_unref(cfg.devices);	/* the engine holds its own reference */
	return r;
}

static int setup(void **state)
{
	struct env *x = calloc(1, sizeof(*x));

	memset(&fake, 0, sizeof(fake));
	make_devices();
	uv_loop_init(&x->loop);
	x->store.base.ops = &test_store_ops;
	x->store.loop = &x->loop;
	x->store.claims = json_object_new_object();
	x->store.statuses = json_object_new_object();
	snprintf(x->dir, sizeof(x->dir), "/tmp/dralet-engine-XXXXXX");
	assert_non_null(mkdtemp(x->dir));
	snprintf(x->state_dir, sizeof(x->state_dir), "%s/plugins/" DRV, x->dir);
	snprintf(x->cdi_dir, sizeof(x->cdi_dir), "%s/cdi", x->dir);
	assert_int_equal(open_engine(x, BOOT), 0);
	env_ = x;
	*state = x;
	return 0;
}

static void close_engine(struct env *x)
{
	claims_engine_free(x->e);
	x->e = NULL;
}

static int teardown(void **state)
{
	struct env *x = *state;
	char cmd[256];

	close_engine(x);
	uv_run(&x->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&x->loop), 0);
	json_object_put(x->store.claims);
	json_object_put(x->store.statuses);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", x->dir);
	assert_int_equal(system(cmd), 0);
	harness_fini(&h);
	free(x);
	return 0;
}

/* Adds a claim to the store. @results: JSON array text of results (driver
 * filled in when missing is not done: give it). @config: array text or NULL. */
static void put_claim(struct env *x, const char *ns, const char *name, const char *uid,
		      const char *results, const char *config)
{
	char key[256], *text;

	snprintf(key, sizeof(key), "%s/%s", ns, name);
	if (results)
		assert_true(asprintf(&text, "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":"
				     "\"ResourceClaim\",\"metadata\":{\"namespace\":\"%s\",\"name\":"
				     "\"%s\",\"uid\":\"%s\"},\"spec\":{},\"status\":{\"allocation\":"
				     "{\"devices\":{\"results\":%s,\"config\":%s}}}}", ns, name, uid,
				     results, config ? config : "[]") > 0);
	else
		assert_true(asprintf(&text, "{\"metadata\":{\"namespace\":\"%s\",\"name\":\"%s\","
				     "\"uid\":\"%s\"},\"status\":{}}", ns, name, uid) > 0);
	json_object_object_add(x->store.claims, key, json_tokener_parse(text));
	free(text);
}

static char *result_json(const char *request, int dev, bool admin)
{
	char *s;

	assert_true(asprintf(&s, "{\"request\":\"%s\",\"driver\":\"" DRV "\",\"pool\":\"" POOL
			     "\",\"device\":\"%s\"%s}", request, dev_names[dev],
			     admin ? ",\"adminAccess\":true" : "") > 0);
	return s;
}

static void put_simple(struct env *x, const char *name, const char *uid, int dev, bool admin)
{
	char *r = result_json("gpu", dev, admin), results[512];

	snprintf(results, sizeof(results), "[%s]", r);
	put_claim(x, "ns", name, uid, results, NULL);
	free(r);
}

/* ---- running calls ---- */

struct outcome {
	bool done;
	size_t n;
	char *uid[16];
	char *error[16];
	size_t n_devices[16];
	char *device0[16];
	char *cdi0[16];
	char *requests0[16];	/* request names of the first device, joined with ',' */
	char *share0[16];	/* the first device's shareID */
};

static void on_done(void *userdata, const struct claims_result *res, size_t n)
{
	struct outcome *o = userdata;

	o->done = true;
	o->n = n;
	for (size_t i = 0; i < n && i < 16; i++) {
		o->uid[i] = strdup(res[i].uid);
		o->error[i] = res[i].error ? strdup(res[i].error) : NULL;
		o->n_devices[i] = res[i].n_devices;
		if (res[i].n_devices) {
			const struct claims_device_result *d = &res[i].devices[0];
			char buf[256] = "";
			o->device0[i] = strdup(d->device);
			o->cdi0[i] = d->n_cdi_ids ? strdup(d->cdi_ids[0]) : NULL;
			o->share0[i] = d->share_id ? strdup(d->share_id) : NULL;
			for (size_t j = 0; j < d->n_request_names; j++) {
				if (j)
					strcat(buf, ",");
				strcat(buf, d->request_names[j]);
			}
			o->requests0[i] = strdup(buf);
		}
	}
}

static void outcome_free(struct outcome *o)
{
	for (size_t i = 0; i < 16; i++) {
		free(o->uid[i]);
		free(o->error[i]);
		free(o->device0[i]);
		free(o->cdi0[i]);
		free(o->requests0[i]);
		free(o->share0[i]);
	}
	memset(o, 0, sizeof(*o));
}

static void wait_for(struct env *x, struct outcome *o)
{
	while (!o->done)
		uv_run(&x->loop, UV_RUN_ONCE);
}

static void run(struct env *x, bool unprepare, const struct claims_ref *refs, size_t n,
		struct outcome *o)
{
	memset(o, 0, sizeof(*o));
	if (unprepare)
		assert_int_equal(claims_unprepare(x->e, refs, n, on_done, o), 0);
	else
		assert_int_equal(claims_prepare(x->e, refs, n, on_done, o), 0);
	wait_for(x, o);
}

static bool spec_exists(struct env *x, const char *uid)
{
	char file[256];

	snprintf(file, sizeof(file), VENDOR "-gpu_%s.json", uid);
	return cdi_files_exists(x->cdi_dir, file);
}

#define UID_A "aaaaaaaa-0000-4000-8000-000000000001"
#define UID_B "bbbbbbbb-0000-4000-8000-000000000002"
#define UID_C "cccccccc-0000-4000-8000-000000000003"
#define UID_D "dddddddd-0000-4000-8000-000000000004"
#define UID_E "eeeeeeee-0000-4000-8000-000000000005"
#define UID_F "ffffffff-0000-4000-8000-000000000006"
#define UID_0 "0a1b2c3d-0000-4000-8000-123456789abc"	/* digit first: CDI 0.5.0 */

/* ---- tests ---- */

static void test_prepare_idempotent_unprepare(void **state)
{
	struct env *x = *state;
	struct claims_ref ref = { "ns", "a", UID_A };
	struct outcome o;
	char path[512], want[256];
	struct stat st;

	put_simple(x, "a", UID_A, 0, false);
	run(x, false, &ref, 1, &o);
	assert_int_equal(o.n, 1);
	assert_null(o.error[0]);
	assert_int_equal(o.n_devices[0], 1);
	assert_string_equal(o.device0[0], dev_names[0]);
	snprintf(want, sizeof(want), VENDOR "/gpu=" UID_A "-%s", dev_names[0]);
	assert_string_equal(o.cdi0[0], want);
	assert_string_equal(o.requests0[0], "gpu");
	assert_true(spec_exists(x, UID_A));
	snprintf(path, sizeof(path), "%s/" VENDOR "-gpu_" UID_A ".json", x->cdi_dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(fake.prepares, 1);
	assert_int_equal(claims_engine_n_claims(x->e), 1);
	outcome_free(&o);

	/* again: same answer, no hardware, no store read */
	int gets = x->store.gets;
	run(x, false, &ref, 1, &o);
	assert_null(o.error[0]);
	assert_string_equal(o.cdi0[0], want);
	assert_int_equal(fake.prepares, 1);
	assert_int_equal(x->store.gets, gets);
	outcome_free(&o);

	/* the spec vanished (tmpfs): a prepare writes it again, still no hardware */
	assert_int_equal(unlink(path), 0);
	run(x, false, &ref, 1, &o);
	assert_null(o.error[0]);
	assert_true(spec_exists(x, UID_A));
	assert_int_equal(fake.prepares, 1);
	outcome_free(&o);

	run(x, true, &ref, 1, &o);
	assert_null(o.error[0]);
	assert_int_equal(fake.unprepares, 1);
	assert_false(fake.bad_undo);
	assert_false(spec_exists(x, UID_A));
	assert_int_equal(claims_engine_n_claims(x->e), 0);
	outcome_free(&o);

	/* unprepare again, and of a claim never seen: success, nothing called */
	struct claims_ref two[2] = { ref, { "ns", "never", UID_F } };
	run(x, true, two, 2, &o);
	assert_int_equal(o.n, 2);
	assert_null(o.error[0]);
	assert_null(o.error[1]);
	assert_int_equal(fake.unprepares, 1);
	outcome_free(&o);
}

/* fsyncs of one prepare and one unprepare, and the checkpoint writes: a claim
 * whose backend changes nothing costs one checkpoint write each way; with
 * the boot ID known only the checkpoint and the CDI spec are fsynced, once
 * each, and no directory (engine.c, durable_enough); without it everything is,
 * directories too. One that changes the node writes ahead both ways. */
static void test_fsyncs_per_operation(void **state)
{
	struct env *x = *state;
	static const struct { const char *boot; bool undo; int writes, prepare, unprepare; } cases[] = {
		/* prepare: CDI spec + checkpoint; unprepare: checkpoint */
		{ BOOT, false, 1, 2, 1 },
		/* + the metadata file; the directories of the three, of the checkpoint */
		{ "", false, 1, 2 + 3, 2 },
		/* write-ahead both ways: one more checkpoint write each */
		{ BOOT, true, 2, 3, 2 },
	};
	struct claims_ref ref = { "ns", "a", UID_A };
	struct outcome o;

	put_simple(x, "a", UID_A, 0, false);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t writes;
		int before;

		close_engine(x);
		assert_int_equal(open_engine(x, cases[i].boot), 0);
		fake.no_undo = !cases[i].undo;
		writes = claims_engine_checkpoint_writes(x->e);
		before = atomic_load(&n_fsync);
		run(x, false, &ref, 1, &o);
		assert_null(o.error[0]);
		outcome_free(&o);
		assert_int_equal(atomic_load(&n_fsync) - before, cases[i].prepare);
		assert_int_equal(claims_engine_checkpoint_writes(x->e) - writes, cases[i].writes);
		writes = claims_engine_checkpoint_writes(x->e);
		before = atomic_load(&n_fsync);
		run(x, true, &ref, 1, &o);
		assert_null(o.error[0]);
		outcome_free(&o);
		assert_int_equal(atomic_load(&n_fsync) - before, cases[i].unprepare);
		assert_int_equal(claims_engine_checkpoint_writes(x->e) - writes, cases[i].writes);
		assert_false(spec_exists(x, UID_A));
		assert_int_equal(claims_engine_n_claims(x->e), 0);
	}
	assert_false(fake.bad_undo);
}

/* The first JSON object of a file (a metadata file is a stream). */
static struct json_object *first_object(const char *path)
{
	char *text = NULL;
	size_t len = 0;
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o;

	assert_int_equal(atomic_file_read(path, 1 << 20, &text, &len), 0);
	o = json_tokener_parse_ex(tok, text, (int)len);
	assert_non_null(o);
	/* the second object is the same in v1alpha1 */
	assert_non_null(strstr(text + json_tokener_get_parse_end(tok),
			       "\"apiVersion\":\"metadata.resource.k8s.io/v1alpha1\""));
	json_tokener_free(tok);
	free(text);
	return o;
}

static const char *jpath(struct json_object *o, const char *const *keys)
{
	for (; *keys; keys++) {
		struct json_object *v = NULL;

		if (json_object_is_type(o, json_type_array))
			v = json_object_array_get_idx(o, (size_t)atoi(*keys));
		else
			json_object_object_get_ex(o, *keys, &v);
		o = v;
	}
	return o ? json_object_get_string(o) : NULL;
}

/* KEP-5304: a prepared claim's requests each get a metadata file, mounted by the
 * claim's CDI spec where the upstream layout puts it; unprepare removes it, and a
 * start removes the files of claims it does not know. */
static void test_device_metadata(void **state)
{
	struct env *x = *state;
	struct claims_ref a = { "ns", "a", UID_A }, b = { "ns", "b", UID_B };
	struct json_object *claim = NULL, *meta = NULL, *ann;
	struct outcome o;
	char path[1024], spec[512], *text = NULL;
	size_t len;
	struct stat st;

	put_simple(x, "a", UID_A, 0, false);
	put_simple(x, "b", UID_B, 1, false);
	/* b was made from a template for the pod's entry "shared-gpu" */
	assert_true(json_object_object_get_ex(x->store.claims, "ns/b", &claim));
	assert_true(json_object_object_get_ex(claim, "metadata", &meta));
	ann = json_object_new_object();
	json_object_object_add(ann, "resource.kubernetes.io/pod-claim-name",
			       json_object_new_string("shared-gpu"));
	json_object_object_add(meta, "annotations", ann);
	run(x, false, &a, 1, &o);
	assert_null(o.error[0]);
	outcome_free(&o);
	run(x, false, &b, 1, &o);
	assert_null(o.error[0]);
	outcome_free(&o);

	snprintf(path, sizeof(path), "%s/dra-device-metadata/ns_a/gpu/metadata.json",
		 x->state_dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	struct json_object *m = first_object(path);
	static const char *const api[] = { "apiVersion", NULL }, *const uid[] = { "metadata", "uid", NULL };
	static const char *const dev[] = { "requests", "0", "devices", "0", "name", NULL };
	static const char *const req[] = { "requests", "0", "name", NULL };
	static const char *const uuid[] = { "requests", "0", "devices", "0", "attributes", "uuid",
					    "string", NULL };
	static const char *const drv[] = { "requests", "0", "devices", "0", "driver", NULL };
	static const char *const pcn[] = { "podClaimName", NULL };
	assert_string_equal(jpath(m, api), "metadata.resource.k8s.io/v1beta1");
	assert_string_equal(jpath(m, uid), UID_A);
	assert_string_equal(jpath(m, req), "gpu");
	assert_string_equal(jpath(m, dev), dev_names[0]);
	assert_string_equal(jpath(m, drv), DRV);
	assert_string_equal(jpath(m, uuid), "GPU-original");
	assert_null(jpath(m, pcn));
	json_object_put(m);

	/* the CDI specs mount them: by claim name, or by the pod's entry for b */
	snprintf(spec, sizeof(spec), "%s/" VENDOR "-gpu_" UID_A ".json", x->cdi_dir);
	assert_int_equal(atomic_file_read(spec, 1 << 20, &text, &len), 0);
	assert_non_null(strstr(text, "\"containerPath\": \"/var/run/kubernetes.io/"
				     "dra-device-attributes/resourceclaims/a/gpu/" DRV
				     "-metadata.json\""));
	assert_non_null(strstr(text, "dra-device-metadata/ns_a/gpu/metadata.json\""));
	free(text);
	snprintf(spec, sizeof(spec), "%s/" VENDOR "-gpu_" UID_B ".json", x->cdi_dir);
	assert_int_equal(atomic_file_read(spec, 1 << 20, &text, &len), 0);
	assert_non_null(strstr(text, "dra-device-attributes/resourceclaimtemplates/shared-gpu/gpu/"
				     DRV "-metadata.json\""));
	free(text);
	snprintf(path, sizeof(path), "%s/dra-device-metadata/ns_b/gpu/metadata.json",
		 x->state_dir);
	m = first_object(path);
	assert_string_equal(jpath(m, pcn), "shared-gpu");
	json_object_put(m);

	run(x, true, &a, 1, &o);
	assert_null(o.error[0]);
	outcome_free(&o);
	snprintf(path, sizeof(path), "%s/dra-device-metadata/ns_a", x->state_dir);
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(errno, ENOENT);

	/* a start keeps b's and removes what no claim accounts for */
	close_engine(x);
	snprintf(path, sizeof(path), "%s/dra-device-metadata/ns_gone/gpu", x->state_dir);
	assert_int_equal(atomic_file_mkdirs(path, 0755), 0);
	assert_int_equal(atomic_file_write(path, "metadata.json", "{}", 2, 0644), 0);
	assert_int_equal(open_engine(x, BOOT), 0);
	snprintf(path, sizeof(path), "%s/dra-device-metadata/ns_gone", x->state_dir);
	assert_int_equal(stat(path, &st), -1);
	snprintf(path, sizeof(path), "%s/dra-device-metadata/ns_b/gpu/metadata.json",
		 x->state_dir);
	assert_int_equal(stat(path, &st), 0);
}

/* Device status (KEP-4817): a prepare hands the store one Ready entry per
 * device of the driver; a failed prepare and a cached answer hand nothing; an
 * unprepare removes the entries ([]). */
static void test_device_status(void **state)
{
	struct env *x = *state;
	struct claims_ref a = { "ns", "a", UID_A }, gone = { "ns", "gone", UID_B };
	struct json_object *list = NULL;
	static const char *const drv[] = { "0", "driver", NULL }, *const pool[] = { "0", "pool", NULL };
	static const char *const dev[] = { "0", "device", NULL };
	static const char *const type[] = { "0", "conditions", "0", "type", NULL };
	static const char *const status[] = { "0", "conditions", "0", "status", NULL };
	static const char *const reason[] = { "0", "conditions", "0", "reason", NULL };
	static const char *const when[] = { "0", "conditions", "0", "lastTransitionTime", NULL };
	static const char *const ifname[] = { "0", "networkData", "interfaceName", NULL };
	struct claims_ref plain = { "ns", "plain", UID_C };
	struct outcome o;

	/* a device without network data: nothing to say the pod does not */
	put_simple(x, "plain", UID_C, 1, false);
	run(x, false, &plain, 1, &o);
	assert_null(o.error[0]);
	outcome_free(&o);
	assert_int_equal(x->store.status_writes, 0);

	/* a network device: its entry, with the interface */
	assert_int_equal(dralet_device_set_string(devices[0], "ifName", "ens1f0v1"), 0);
	put_simple(x, "a", UID_A, 0, false);
	run(x, false, &a, 1, &o);
	assert_null(o.error[0]);
	outcome_free(&o);
	assert_int_equal(x->store.status_writes, 1);
	assert_true(json_object_object_get_ex(x->store.statuses, "ns/a/" DRV, &list));
	assert_string_equal(jpath(list, ifname), "ens1f0v1");
	assert_int_equal(json_object_array_length(list), 1);
	assert_string_equal(jpath(list, drv), DRV);
	assert_string_equal(jpath(list, pool), POOL);
	assert_string_equal(jpath(list, dev), dev_names[0]);
	assert_string_equal(jpath(list, type), "Ready");
	assert_string_equal(jpath(list, status), "True");
	assert_string_equal(jpath(list, reason), "Prepared");
	assert_int_equal(strlen(jpath(list, when)), strlen("2026-12-03T14:00:00Z"));

	/* answered from the checkpoint: written already */
	run(x, false, &a, 1, &o);
	assert_null(o.error[0]);
	outcome_free(&o);
	assert_int_equal(x->store.status_writes, 1);
	/* a claim the store does not have fails: nothing to write */
	run(x, false, &gone, 1, &o);
	assert_non_null(o.error[0]);
	outcome_free(&o);
	assert_int_equal(x->store.status_writes, 1);

	run(x, true, &a, 1, &o);
	assert_null(o.error[0]);
	outcome_free(&o);
	assert_int_equal(x->store.status_writes, 2);
	assert_true(json_object_object_get_ex(x->store.statuses, "ns/a/" DRV, &list));
	assert_int_equal(json_object_array_length(list), 0);
	/* unpreparing what is not prepared undoes nothing and writes nothing */
	run(x, true, &a, 1, &o);
	outcome_free(&o);
	assert_int_equal(x->store.status_writes, 2);
}

static void test_empty_requests(void **state)
{
	struct env *x = *state;
	struct outcome o;

	run(x, false, NULL, 0, &o);
	assert_true(o.done);
	assert_int_equal(o.n, 0);
	run(x, true, NULL, 0, &o);
	assert_int_equal(o.n, 0);
}

static void test_errors_are_per_claim(void **state)
{
	struct env *x = *state;
	char *r0 = result_json("gpu", 0, false), results[1024];
	struct claims_ref refs[7] = {
		{ "ns", "good", UID_A },
		{ "ns", "missing", UID_B },
		{ "ns", "replaced", UID_C },
		{ "ns", "unallocated", UID_D },
		{ "ns", "unknown-device", UID_E },
		{ "ns", "bad-config", UID_F },
		{ "ns", "", "x" },
	};
	struct outcome o;

	put_simple(x, "good", UID_A, 0, false);
	put_simple(x, "replaced", "99999999-0000-4000-8000-000000000000", 1, false);
	put_claim(x, "ns", "unallocated", UID_D, NULL, NULL);
	put_claim(x, "ns", "unknown-device", UID_E,
		  "[{\"request\":\"gpu\",\"driver\":\"" DRV "\",\"pool\":\"" POOL "\","
		  "\"device\":\"gpu-nope\"}]", NULL);
	snprintf(results, sizeof(results), "[%s]", r0);
	free(r0);
	r0 = result_json("gpu", 2, false);
	snprintf(results, sizeof(results), "[%s]", r0);
	put_claim(x, "ns", "bad-config", UID_F, results,
		  "[{\"source\":\"FromClass\",\"opaque\":{\"driver\":\"" DRV "\",\"parameters\":"
		  "{\"mode\":\"fast\"}}},{\"source\":\"FromClaim\",\"requests\":[\"gpu\"],"
		  "\"opaque\":{\"driver\":\"" DRV "\",\"parameters\":{\"speed\":11}}}]");
	free(r0);

	run(x, false, refs, 7, &o);
	assert_int_equal(o.n, 7);
	assert_null(o.error[0]);
	assert_int_equal(o.n_devices[0], 1);
	assert_non_null(strstr(o.error[1], "claim ns/missing"));
	assert_non_null(strstr(o.error[1], "not found"));
	assert_non_null(strstr(o.error[2], "claim ns/replaced"));
	assert_non_null(strstr(o.error[2], "got replaced"));
	assert_non_null(strstr(o.error[3], "claim ns/unallocated"));
	assert_non_null(strstr(o.error[3], "not allocated"));
	assert_non_null(strstr(o.error[4], "claim ns/unknown-device"));
	assert_non_null(strstr(o.error[4], "gpu-nope is unknown"));
	assert_non_null(strstr(o.error[5], "claim ns/bad-config"));
	assert_non_null(strstr(o.error[5], "unknown field \"speed\""));
	assert_non_null(o.error[6]);
	/* one Event on each failed claim that has a name (not the nameless one) */
	assert_int_equal(x->store.claim_events, 5);
	assert_non_null(strstr(x->store.claim_event, "Warning PrepareFailed resource.k8s.io/v1 "
						     "ResourceClaim ns/"));
	assert_int_equal(x->store.warns, 0);
	assert_int_equal(fake.prepares, 1);	/* only the good claim touched hardware */
	assert_false(spec_exists(x, UID_F));
	assert_int_equal(claims_engine_n_claims(x->e), 1);
	outcome_free(&o);
}

static void test_invalid_claim_refs(void **state)
{
	struct env *x = *state;
	char long_uid[301], long_name[255];
	struct claims_ref refs[8] = {
		{ "ns", "slash", "aaaa/bbbb" },
		{ "ns", "space", "aaaa bbbb" },
		{ "ns", "upper", "AAAAAAAA-0000-4000-8000-000000000001" },
		{ "ns", "long", long_uid },
		{ "Bad_NS", "ns", UID_A },
		{ "ns", long_name, UID_B },
		{ "ns", "Upper.Name", UID_C },
		{ "ns", "good", UID_D },
	};
	static const char *const field[7] = { "uid", "uid", "uid", "uid", "namespace", "name",
					      "name" };
	struct outcome o;

	memset(long_uid, 'a', 300);
	long_uid[300] = '\0';
	memset(long_name, 'n', 254);
	long_name[254] = '\0';
	/* the store has every one of them, allocated: only the checks stop them */
	for (int i = 0; i < 8; i++) {
		char *r0 = result_json("gpu", i % NDEV, true), results[512];
		snprintf(results, sizeof(results), "[%s]", r0);
		free(r0);
		put_claim(x, refs[i].namespace_, refs[i].name, refs[i].uid, results, NULL);
	}
	for (int unprepare = 0; unprepare < 2; unprepare++) {
		int gets = x->store.gets;

		run(x, unprepare, refs, 8, &o);
		assert_int_equal(o.n, 8);
		for (int i = 0; i < 7; i++) {
			char want[64];
			assert_non_null(o.error[i]);
			assert_string_equal(o.uid[i], refs[i].uid);	/* the kubelet's map key */
			snprintf(want, sizeof(want), "claim %s \"", field[i]);
			assert_non_null(strstr(o.error[i], want));
			assert_null(strstr(o.error[i], "out of memory"));
			assert_true(strlen(o.error[i]) < 300);
		}
		assert_non_null(strstr(o.error[3], "(300 characters) is not a Kubernetes UID"));
		assert_null(o.error[7]);
		assert_int_equal(x->store.gets, gets + (unprepare ? 0 : 1));	/* only "good" */
		outcome_free(&o);
	}
	assert_int_equal(fake.prepares, 1);
	assert_int_equal(fake.unprepares, 1);
}

static void test_config_reaches_backend(void **state)
{
	struct env *x = *state;
	char *r0 = result_json("gpu/big", 0, false), results[512], path[512], *text;
	size_t len;
	struct claims_ref ref = { "ns", "cfg", UID_0 };
	struct outcome o;

	snprintf(results, sizeof(results), "[%s]", r0);
	free(r0);
	put_claim(x, "ns", "cfg", UID_0, results,
		  "[{\"source\":\"FromClaim\",\"requests\":[\"gpu/big\"],\"opaque\":{\"driver\":\"" DRV
		  "\",\"parameters\":{\"mode\":\"claim\"}}},{\"source\":\"FromClass\",\"opaque\":"
		  "{\"driver\":\"" DRV "\",\"parameters\":{\"mode\":\"class\",\"kind\":\"K\"}}},"
		  "{\"source\":\"FromClaim\",\"opaque\":{\"driver\":\"other.dev\",\"parameters\":"
		  "{\"junk\":1}}}]");
	run(x, false, &ref, 1, &o);
	assert_null(o.error[0]);
	assert_string_equal(o.requests0[0], "gpu");	/* the base request name */
	snprintf(path, sizeof(path), "%s/" VENDOR "-gpu_" UID_0 ".json", x->cdi_dir);
	assert_int_equal(cdi_files_exists(x->cdi_dir, VENDOR "-gpu_" UID_0 ".json"), true);
	{
		FILE *f = fopen(path, "r");
		text = calloc(1, 8192);
		len = fread(text, 1, 8191, f);
		fclose(f);
	}
	assert_true(len > 0);
	assert_non_null(strstr(text, "FAKE_MODE={\\\"mode\\\":\\\"claim\\\",\\\"kind\\\":\\\"K\\\"}"));
	assert_non_null(strstr(text, "\"cdiVersion\": \"0.5.0\""));
	assert_non_null(strstr(text, "DRALET_DEVICE_GPU_0000_01_00_0=" DRV "/" POOL "/"));
	assert_non_null(strstr(text, "\"major\": 240"));
	free(text);
	outcome_free(&o);
}

/* Prepares claim @name (device @dev) with @config; returns its error or NULL
 * (the caller frees it) and unprepares it again when it succeeded. */
static char *prepare_with_config(struct env *x, const char *name, const char *uid, int dev,
				 bool admin, const char *config)
{
	char *r0 = result_json("gpu", dev, admin), results[512], *error;
	struct claims_ref ref = { "ns", name, uid };
	struct outcome o;

	snprintf(results, sizeof(results), "[%s]", r0);
	free(r0);
	put_claim(x, "ns", name, uid, results, config);
	run(x, false, &ref, 1, &o);
	error = o.error[0] ? strdup(o.error[0]) : NULL;
	outcome_free(&o);
	if (!error) {
		run(x, true, &ref, 1, &o);
		assert_null(o.error[0]);
		outcome_free(&o);
	}
	return error;
}

#define CLASS_CFG(params) "{\"source\":\"FromClass\",\"opaque\":{\"driver\":\"" DRV \
	"\",\"parameters\":" params "}}"
#define CLAIM_CFG(params) "{\"source\":\"FromClaim\",\"opaque\":{\"driver\":\"" DRV \
	"\",\"parameters\":" params "}}"

static void test_admin_config_keys(void **state)
{
	struct env *x = *state;
	char *error;

	/* a claim sets a key its backend keeps for the cluster admin: refused,
	 * with the key and why, before any backend call */
	error = prepare_with_config(x, "tenant", UID_A, 0, false,
				    "[" CLASS_CFG("{\"vlan\":10}") "," CLAIM_CFG("{\"vlan\":20}") "]");
	assert_non_null(error);
	assert_non_null(strstr(error, "claim ns/tenant"));
	assert_non_null(strstr(error, "sets \"vlan\", which puts the device on any VLAN"));
	assert_non_null(strstr(error, "DeviceClass"));
	assert_int_equal(fake.validates, 0);
	assert_int_equal(fake.prepares, 0);
	free(error);
	/* other keys stay the claim's */
	error = prepare_with_config(x, "mode", UID_B, 0, false, "[" CLAIM_CFG("{\"mode\":\"x\"}") "]");
	assert_null(error);
	/* the class sets it: fine */
	error = prepare_with_config(x, "class", UID_C, 0, false, "[" CLASS_CFG("{\"vlan\":10}") "]");
	assert_null(error);
	/* the class lets claims set it; claimSettable never reaches the backend */
	error = prepare_with_config(x, "allowed", UID_D, 0, false,
				    "[" CLASS_CFG("{\"claimSettable\":[\"vlan\"]}") ","
				    CLAIM_CFG("{\"vlan\":20}") "]");
	assert_null(error);
	/* adminAccess requests may set it */
	error = prepare_with_config(x, "admin", UID_E, 0, true, "[" CLAIM_CFG("{\"vlan\":20}") "]");
	assert_null(error);
	/* a claim cannot grant itself claimSettable */
	error = prepare_with_config(x, "self-grant", UID_F, 0, false,
				    "[" CLAIM_CFG("{\"claimSettable\":[\"vlan\"],\"vlan\":20}") "]");
	assert_non_null(error);
	assert_non_null(strstr(error, "claimSettable is for DeviceClass configs only"));
	free(error);
	assert_int_equal(fake.prepares, 4);
}

static void test_device_in_use_and_admin_access(void **state)
{
	struct env *x = *state;
	struct claims_ref a = { "ns", "a", UID_A }, b = { "ns", "b", UID_B }, m = { "ns", "mon", UID_C };
	struct outcome o;

	put_simple(x, "a", UID_A, 1, false);
	put_simple(x, "b", UID_B, 1, false);
	put_simple(x, "mon", UID_C, 1, true);
	run(x, false, &a, 1, &o);
	assert_null(o.error[0]);
	outcome_free(&o);
	run(x, false, &b, 1, &o);
	assert_non_null(o.error[0]);
	assert_non_null(strstr(o.error[0], "claim ns/b"));
	assert_non_null(strstr(o.error[0], "in use by another claim, ns/a (uid " UID_A ")"));
	outcome_free(&o);
	run(x, false, &m, 1, &o);
	assert_null(o.error[0]);	/* monitoring shares the device */
	outcome_free(&o);
	/* a's unprepare frees the device for b; the admin claim did not hold it */
	run(x, true, &a, 1, &o);
	outcome_free(&o);
	run(x, false, &b, 1, &o);
	assert_null(o.error[0]);
	outcome_free(&o);
	assert_int_equal(claims_engine_n_claims(x->e), 2);
}

/* ---- shared devices (consumable capacity) ---- */

#define SHARE_A "5a5a5a5a-0000-4000-8000-00000000000a"
#define SHARE_B "5b5b5b5b-0000-4000-8000-00000000000b"
#define SHARE_C "5c5c5c5c-0000-4000-8000-00000000000c"

/* A claim holding one share of device @dev that consumes @memory. */
static void put_share(struct env *x, const char *name, const char *uid, int dev,
		      const char *share, const char *memory)
{
	char results[1024];

	snprintf(results, sizeof(results), "[{\"request\":\"gpu\",\"driver\":\"" DRV "\","
		 "\"pool\":\"" POOL "\",\"device\":\"%s\",\"shareID\":\"%s\","
		 "\"consumedCapacity\":{\"memory\":\"%s\"}}]", dev_names[dev], share, memory);
	put_claim(x, "ns", name, uid, results, NULL);
}

static char *prepare_one(struct env *x, const char *name, const char *uid)
{
	struct claims_ref ref = { "ns", name, uid };
	struct outcome o;
	char *error;

	run(x, false, &ref, 1, &o);
	error = o.error[0] ? strdup(o.error[0]) : NULL;
	outcome_free(&o);
	return error;
}

static void unprepare_one(struct env *x, const char *name, const char *uid)
{
	struct claims_ref ref = { "ns", name, uid };
	struct outcome o;

	run(x, true, &ref, 1, &o);
	assert_null(o.error[0]);
	outcome_free(&o);
}

static void make_shared(int dev)
{
	assert_int_equal(dralet_device_set_capacity(devices[dev], "memory", "80Gi"), 0);
	assert_int_equal(dralet_device_allow_multiple(devices[dev]), 0);
}

static void test_shared_device(void **state)
{
	struct env *x = *state;
	struct claims_ref a = { "ns", "a", UID_A };
	struct outcome o;
	char want[512], *error;

	make_shared(2);
	put_share(x, "a", UID_A, 2, SHARE_A, "48Gi");
	put_share(x, "b", UID_B, 2, SHARE_B, "32Gi");
	put_share(x, "c", UID_C, 2, SHARE_C, "8Gi");
	put_simple(x, "whole", UID_D, 2, false);

	/* two claims on one device: each prepared on its own, with its share */
	run(x, false, &a, 1, &o);
	assert_null(o.error[0]);
	assert_string_equal(o.share0[0], SHARE_A);
	snprintf(want, sizeof(want), VENDOR "/gpu=" UID_A "-%s-" SHARE_A, dev_names[2]);
	assert_string_equal(o.cdi0[0], want);
	outcome_free(&o);
	assert_string_equal(fake.last_share, SHARE_A);
	assert_string_equal(fake.last_consumed, "48Gi");
	assert_null(prepare_one(x, "b", UID_B));
	assert_string_equal(fake.last_share, SHARE_B);
	assert_int_equal(fake.prepares, 2);
	assert_true(spec_exists(x, UID_A) && spec_exists(x, UID_B));

	/* a third share would overcommit the memory: refused, nothing touched */
	error = prepare_one(x, "c", UID_C);
	assert_non_null(error);
	assert_non_null(strstr(error, "overcommits the device"));
	assert_non_null(strstr(error, "capacity memory"));
	free(error);
	/* the whole device while shares hold it: refused */
	error = prepare_one(x, "whole", UID_D);
	assert_non_null(error);
	assert_non_null(strstr(error, "in use by another claim"));
	free(error);
	assert_int_equal(fake.prepares, 2);

	/* a restart keeps what each share consumes (the checkpoint has it) */
	close_engine(x);
	assert_int_equal(open_engine(x, BOOT), 0);
	error = prepare_one(x, "c", UID_C);
	assert_non_null(error);
	assert_non_null(strstr(error, "overcommits the device"));
	free(error);

	/* unprepare of one share leaves the other prepared, and makes room */
	unprepare_one(x, "a", UID_A);
	assert_int_equal(fake.unprepares, 1);
	assert_false(spec_exists(x, UID_A));
	assert_true(spec_exists(x, UID_B));
	assert_false(fake.bad_undo);
	assert_null(prepare_one(x, "c", UID_C));
	assert_int_equal(claims_engine_n_claims(x->e), 2);
	unprepare_one(x, "b", UID_B);
	unprepare_one(x, "c", UID_C);
	assert_false(fake.bad_undo);
	/* no share left: the whole device is free */
	assert_null(prepare_one(x, "whole", UID_D));
	unprepare_one(x, "whole", UID_D);
}

/* A lost checkpoint: the shares are rebuilt from their CDI specs, each with
 * its shareID (the spec names it), and hold the device. */
static void test_shares_rebuilt_from_specs(void **state)
{
	struct env *x = *state;
	struct claims_ref a = { "ns", "a", UID_A };
	struct outcome o;
	char path[512], *error;
	FILE *f;

	make_shared(2);
	put_share(x, "a", UID_A, 2, SHARE_A, "40Gi");
	put_share(x, "b", UID_B, 2, SHARE_B, "40Gi");
	put_simple(x, "whole", UID_D, 2, false);
	assert_null(prepare_one(x, "a", UID_A));
	assert_null(prepare_one(x, "b", UID_B));
	close_engine(x);
	snprintf(path, sizeof(path), "%s/checkpoint.json", x->state_dir);
	f = fopen(path, "r+");
	fseek(f, 40, SEEK_SET);
	fputc('#', f);
	fclose(f);
	assert_int_equal(open_engine(x, BOOT), 0);
	assert_true(x->stats.corrupt);
	assert_int_equal(x->stats.rebuilt, 2);
	error = prepare_one(x, "whole", UID_D);
	assert_non_null(error);
	assert_non_null(strstr(error, "in use by another claim"));
	free(error);
	/* the rebuilt entry answers with its share */
	run(x, false, &a, 1, &o);
	assert_null(o.error[0]);
	assert_string_equal(o.share0[0], SHARE_A);
	outcome_free(&o);
	unprepare_one(x, "a", UID_A);
	unprepare_one(x, "b", UID_B);	/* (their undo state went with the checkpoint) */
	assert_null(prepare_one(x, "whole", UID_D));
}

static void test_share_refusals(void **state)
{
	struct env *x = *state;
	char results[1024], *error;

	make_shared(2);
	/* a share of a device that does not allow multiple allocations */
	put_share(x, "a", UID_A, 3, SHARE_A, "1Gi");
	error = prepare_one(x, "a", UID_A);
	assert_non_null(error);
	assert_non_null(strstr(error, "does not allow multiple allocations"));
	free(error);
	/* a capacity the device does not have */
	snprintf(results, sizeof(results), "[{\"request\":\"gpu\",\"driver\":\"" DRV "\","
		 "\"pool\":\"" POOL "\",\"device\":\"%s\",\"shareID\":\"" SHARE_B "\","
		 "\"consumedCapacity\":{\"cores\":\"4\"}}]", dev_names[2]);
	put_claim(x, "ns", "b", UID_B, results, NULL);
	error = prepare_one(x, "b", UID_B);
	assert_non_null(error);
	assert_non_null(strstr(error, "capacity cores, which the device does not have"));
	free(error);
	/* more than the device has in one share (the driver's domain is understood) */
	snprintf(results, sizeof(results), "[{\"request\":\"gpu\",\"driver\":\"" DRV "\","
		 "\"pool\":\"" POOL "\",\"device\":\"%s\",\"shareID\":\"" SHARE_C "\","
		 "\"consumedCapacity\":{\"" DRV "/memory\":\"81Gi\"}}]", dev_names[2]);
	put_claim(x, "ns", "c", UID_C, results, NULL);
	error = prepare_one(x, "c", UID_C);
	assert_non_null(error);
	assert_non_null(strstr(error, "overcommits the device"));
	free(error);
	/* two shares of one device in one claim: two entries, two CDI names */
	snprintf(results, sizeof(results), "[{\"request\":\"x\",\"driver\":\"" DRV "\","
		 "\"pool\":\"" POOL "\",\"device\":\"%s\",\"shareID\":\"" SHARE_A "\","
		 "\"consumedCapacity\":{\"memory\":\"40Gi\"}},{\"request\":\"y\","
		 "\"driver\":\"" DRV "\",\"pool\":\"" POOL "\",\"device\":\"%s\","
		 "\"shareID\":\"" SHARE_B "\",\"consumedCapacity\":{\"memory\":\"40Gi\"}}]",
		 dev_names[2], dev_names[2]);
	put_claim(x, "ns", "two", UID_E, results, NULL);
	{
		struct claims_ref ref = { "ns", "two", UID_E };
		struct outcome o;
		run(x, false, &ref, 1, &o);
		assert_null(o.error[0]);
		assert_int_equal(o.n_devices[0], 2);
		outcome_free(&o);
	}
	assert_int_equal(fake.prepares, 2);
	/* ... and they fill the device */
	put_share(x, "d", UID_D, 2, SHARE_C, "1Gi");
	error = prepare_one(x, "d", UID_D);
	assert_non_null(error);
	free(error);
	unprepare_one(x, "two", UID_E);
	assert_int_equal(fake.unprepares, 2);
	assert_null(prepare_one(x, "d", UID_D));
}

static void test_multi_device_rollback(void **state)
{
	struct env *x = *state;
	char *r0 = result_json("gpu", 0, false), *r1 = result_json("gpu", 1, false);
	char *r2 = result_json("gpu", 2, false), results[1024];
	struct claims_ref ref = { "ns", "multi", UID_A }, other = { "ns", "other", UID_B };
	struct outcome o;

	snprintf(results, sizeof(results), "[%s,%s,%s]", r0, r1, r2);
	free(r0);
	free(r1);
	free(r2);
	put_claim(x, "ns", "multi", UID_A, results, NULL);
	fake.fail_device = dev_names[1];
	run(x, false, &ref, 1, &o);
	assert_non_null(o.error[0]);
	assert_non_null(strstr(o.error[0], "claim ns/multi"));
	assert_non_null(strstr(o.error[0], "injected failure"));
	assert_non_null(strstr(o.error[0], dev_names[1]));
	assert_int_equal(fake.prepares, 2);	/* the third device was never touched */
	assert_int_equal(fake.unprepares, 1);	/* the first was undone */
	assert_false(fake.bad_undo);
	assert_false(spec_exists(x, UID_A));
	assert_int_equal(claims_engine_n_claims(x->e), 0);
	outcome_free(&o);
	/* nothing stays reserved: another claim takes the first device */
	put_simple(x, "other", UID_B, 0, false);
	fake.fail_device = NULL;
	run(x, false, &other, 1, &o);
	assert_null(o.error[0]);
	outcome_free(&o);
	/* and the multi claim succeeds later once the device works, minus the taken one */
	run(x, false, &ref, 1, &o);
	assert_non_null(strstr(o.error[0], "in use by another claim"));
	outcome_free(&o);
}

static void test_parallel_and_same_uid(void **state)
{
	struct env *x = *state;
	struct claims_ref refs[4] = {
		{ "ns", "p0", UID_A }, { "ns", "p1", UID_B }, { "ns", "p2", UID_C }, { "ns", "p3", UID_D },
	};
	struct outcome o1, o2;

	for (int i = 0; i < 4; i++)
		put_simple(x, refs[i].name, refs[i].uid, i, false);
	/* each prepare waits until all four are in the backend: serialized, they
	 * the first would give up after 30 s and max_parallel would stay below 4 */
	fake.gather = 4;
	/* two calls: the second repeats two claims of the first, concurrently */
	memset(&o1, 0, sizeof(o1));
	memset(&o2, 0, sizeof(o2));
	assert_int_equal(claims_prepare(x->e, refs, 4, on_done, &o1), 0);
	assert_int_equal(claims_prepare(x->e, refs, 2, on_done, &o2), 0);
	wait_for(x, &o1);
	wait_for(x, &o2);
	for (int i = 0; i < 4; i++)
		assert_null(o1.error[i]);
	assert_null(o2.error[0]);
	assert_null(o2.error[1]);
	assert_string_equal(o1.cdi0[0], o2.cdi0[0]);
	assert_string_equal(o1.cdi0[1], o2.cdi0[1]);
	assert_int_equal(fake.prepares, 4);	/* the repeats were answered from the checkpoint */
	assert_false(fake.overlap);
	assert_int_equal(fake.max_parallel, 4);
	outcome_free(&o1);
	outcome_free(&o2);
	fake.gather = 0;
}

/* A health monitor's worker, checking every device three times. */
static void *check_all_devices(void *arg)
{
	struct env *x = arg;
	char why[256];

	for (int round = 0; round < 3; round++)
		for (int i = 0; i < NDEV; i++)
			if (claims_engine_check_health(x->e, devices[i], why, sizeof(why)) !=
			    DRALET_HEALTH_HEALTHY)
				atomic_store(&fake.bad_health, true);
	return NULL;
}

static void test_health_checks_take_the_device_lock(void **state)
{
	struct env *x = *state;
	struct claims_ref refs[4] = {
		{ "ns", "p0", UID_A }, { "ns", "p1", UID_B }, { "ns", "p2", UID_C }, { "ns", "p3", UID_D },
	};
	struct outcome o;
	pthread_t checker;

	for (int i = 0; i < 4; i++)
		put_simple(x, refs[i].name, refs[i].uid, i, false);
	fake.sleep_ms = 50;
	memset(&o, 0, sizeof(o));
	assert_int_equal(claims_prepare(x->e, refs, 4, on_done, &o), 0);
	assert_int_equal(pthread_create(&checker, NULL, check_all_devices, x), 0);
	wait_for(x, &o);
	pthread_join(checker, NULL);
	for (int i = 0; i < 4; i++)
		assert_null(o.error[i]);
	outcome_free(&o);
	assert_int_equal(fake.healths, 3 * NDEV);
	assert_false(fake.bad_health);
	assert_false(fake.overlap);	/* never at the same time as a prepare */
	fake.sleep_ms = 0;
	/* the op's error comes back as it is, with its words */
	char why[256];
	fake.fail_device = dev_names[1];
	assert_int_equal(claims_engine_check_health(x->e, devices[1], why, sizeof(why)), -EIO);
	assert_string_equal(why, "Input/output error");
	fake.fail_device = NULL;
	/* a device that is not the engine's */
	struct device_set *fewer;
	assert_int_equal(device_set_new(DRV, devices + 1, NDEV - 1, &fewer), 0);
	assert_int_equal(claims_engine_set_devices(x->e, fewer), 0);
	device_set_unref(fewer);
	assert_int_equal(claims_engine_check_health(x->e, devices[0], why, sizeof(why)), -ENODEV);
}

static void test_shutdown_refuses(void **state)
{
	struct env *x = *state;
	struct claims_ref ref = { "ns", "a", UID_A };
	struct outcome o;
	bool called = false;

	claims_engine_shutdown(x->e, (void (*)(void *))(void *)NULL, NULL);
	(void)called;
	run(x, false, &ref, 1, &o);
	assert_non_null(strstr(o.error[0], "shutting down"));
	outcome_free(&o);
}

/* ---- recovery ---- */

static void write_checkpoint_with(struct env *x, enum ckpt_state state, int dev, const char *uid)
{
	struct checkpoint *ck = NULL;
	char err[256];
	struct ckpt_claim *c;
	char id[256];

	assert_int_equal(checkpoint_file_load(x->state_dir, &ck, err, sizeof(err)), 0);
	c = calloc(1, sizeof(*c));
	c->uid = strdup(uid);
	c->namespace_ = strdup("ns");
	c->name = strdup("crashed");
	c->state = state;
	c->devices = calloc(1, sizeof(*c->devices));
	c->n_devices = 1;
	c->devices[0].pool = strdup(POOL);
	c->devices[0].device = strdup(dev_names[dev]);
	c->devices[0].requests = calloc(1, sizeof(char *));
	c->devices[0].requests[0] = strdup("gpu");
	c->devices[0].n_requests = 1;
	c->devices[0].cdi_class = strdup("gpu");
	snprintf(id, sizeof(id), VENDOR "/gpu=%s-%s", uid, dev_names[dev]);
	c->devices[0].cdi_id = strdup(id);
	c->devices[0].identity.pci_address = strdup(funcs[dev].address);
	c->devices[0].identity.vendor_id = 0x10de;
	c->devices[0].identity.device_id = 0x2330;
	c->devices[0].identity.uuid = strdup("GPU-original");
	dralet_undo_set(&c->devices[0].undo, "token", uid);
	dralet_edits_add_env(&c->devices[0].edits, "X", "1");
	assert_int_equal(checkpoint_add(ck, c), 0);
	assert_int_equal(checkpoint_file_save(x->state_dir, ck), 0);
	checkpoint_free(ck);
}

static void test_recovery(void **state)
{
	struct env *x = *state;
	struct claims_ref a = { "ns", "a", UID_A }, b = { "ns", "b", UID_B };
	struct outcome o;
	char path[512];
	FILE *f;

	put_simple(x, "a", UID_A, 0, false);
	put_simple(x, "b", UID_B, 1, false);
	run(x, false, &a, 1, &o);
	outcome_free(&o);
	run(x, false, &b, 1, &o);
	outcome_free(&o);
	close_engine(x);

	/* a lost spec, a PrepareStarted and an UnprepareStarted entry, an orphan spec */
	snprintf(path, sizeof(path), "%s/" VENDOR "-gpu_" UID_A ".json", x->cdi_dir);
	assert_int_equal(unlink(path), 0);
	write_checkpoint_with(x, CKPT_PREPARE_STARTED, 2, UID_C);
	write_checkpoint_with(x, CKPT_UNPREPARE_STARTED, 3, UID_D);
	snprintf(path, sizeof(path), "%s/" VENDOR "-gpu_" UID_E ".json", x->cdi_dir);
	f = fopen(path, "w");
	fputs("{\"cdiVersion\":\"0.5.0\",\"kind\":\"" VENDOR "/gpu\",\"devices\":[]}", f);
	fclose(f);
	fake.prepares = fake.unprepares = 0;
	assert_int_equal(open_engine(x, BOOT), 0);
	assert_false(x->stats.corrupt);
	assert_int_equal(x->stats.kept, 1);
	assert_int_equal(x->stats.rewritten, 1);
	assert_int_equal(x->stats.rolled_back, 1);
	assert_int_equal(x->stats.unprepared, 1);
	assert_int_equal(x->stats.orphans_removed, 1);
	assert_int_equal(fake.unprepares, 2);
	assert_int_equal(fake.prepares, 0);
	assert_false(fake.bad_undo);
	assert_true(spec_exists(x, UID_A));
	assert_false(spec_exists(x, UID_E));
	assert_int_equal(claims_engine_n_claims(x->e), 2);
	/* reservations came back from the checkpoint */
	put_simple(x, "c2", UID_F, 0, false);
	{
		struct claims_ref c2 = { "ns", "c2", UID_F };
		run(x, false, &c2, 1, &o);
		assert_non_null(strstr(o.error[0], "in use by another claim, ns/a"));
		outcome_free(&o);
	}
	/* re-prepare returns the same ids */
	run(x, false, &a, 1, &o);
	assert_null(o.error[0]);
	assert_int_equal(fake.prepares, 0);
	outcome_free(&o);
	close_engine(x);

	/* device b changed identity: its claim is dropped, hardware untouched */
	dralet_device_set_string(devices[1], "uuid", "GPU-replacement");
	fake.unprepares = 0;
	assert_int_equal(open_engine(x, BOOT), 0);
	assert_int_equal(x->stats.dropped, 1);
	assert_int_equal(fake.unprepares, 0);
	assert_false(spec_exists(x, UID_B));
	assert_true(spec_exists(x, UID_A));
	assert_int_equal(claims_engine_n_claims(x->e), 1);
	close_engine(x);
	dralet_device_set_string(devices[1], "uuid", "GPU-original");

	/* reboot: everything forgotten, specs removed */
	assert_int_equal(open_engine(x, "boot-2"), 0);
	assert_true(x->stats.boot_changed);
	assert_int_equal(claims_engine_n_claims(x->e), 0);
	assert_false(spec_exists(x, UID_A));
	assert_int_equal(fake.unprepares, 0);
	close_engine(x);
}

/* One corrupt byte in the checkpoint: nothing is destroyed. The claims are
 * rebuilt from their CDI specs (kept), their devices stay reserved until the
 * kubelet unprepares them, and it is said loudly. */
static void test_corrupt_checkpoint(void **state)
{
	struct env *x = *state;
	char *r1 = result_json("gpu", 1, false), *r2 = result_json("gpu", 2, false), results[1024];
	struct claims_ref a = { "ns", "a", UID_A }, b = { "ns", "b", UID_B };
	struct claims_ref mon = { "ns", "mon", UID_C }, c0 = { "ns", "c0", UID_D };
	struct claims_ref c3 = { "ns", "c3", UID_E };
	struct capture cap;
	struct outcome o;
	char path[512], want[256], *log;
	FILE *f;

	put_simple(x, "a", UID_A, 0, false);
	snprintf(results, sizeof(results), "[%s,%s]", r1, r2);
	free(r1);
	free(r2);
	put_claim(x, "ns", "b", UID_B, results, NULL);
	put_simple(x, "mon", UID_C, 3, true);
	put_simple(x, "c0", UID_D, 0, false);
	put_simple(x, "c3", UID_E, 3, false);
	run(x, false, &a, 1, &o);
	assert_null(o.error[0]);
	snprintf(want, sizeof(want), "%s", o.cdi0[0]);
	outcome_free(&o);
	run(x, false, &b, 1, &o);
	assert_null(o.error[0]);
	outcome_free(&o);
	run(x, false, &mon, 1, &o);
	assert_null(o.error[0]);
	outcome_free(&o);
	close_engine(x);
	snprintf(path, sizeof(path), "%s/checkpoint.json", x->state_dir);
	f = fopen(path, "r+");
	fseek(f, 40, SEEK_SET);
	fputc('#', f);
	fclose(f);

	fake.prepares = fake.unprepares = 0;
	capture_begin(&cap);
	assert_int_equal(open_engine(x, BOOT), 0);
	log = capture_end(&cap);
	assert_true(x->stats.corrupt);
	assert_int_equal(x->stats.rebuilt, 3);
	assert_int_equal(x->stats.orphans_removed, 0);
	assert_non_null(strstr(log, "THE CHECKPOINT"));
	assert_non_null(strstr(log, "3 claim(s) rebuilt from their CDI specs"));
	free(log);
	/* and told to the cluster: one Warning Event about the Node */
	assert_int_equal(x->store.warns, 1);
	assert_string_equal(x->store.warn_reason, "CheckpointUnreadable");
	assert_non_null(strstr(x->store.warn_message, "driver " DRV ": the checkpoint "));
	assert_non_null(strstr(x->store.warn_message, "checkpoint.json.corrupt-"));
	assert_non_null(strstr(x->store.warn_message, "3 prepared claim(s) rebuilt"));
	assert_non_null(strstr(x->store.warn_message, "0 CDI spec(s) kept"));
	{
		char note[256];
		assert_true(claims_engine_recovery_note(x->e, note, sizeof(note)));
		assert_string_equal(note, "checkpoint was unreadable: 3 claim(s) rebuilt from CDI "
					  "specs, 3 still prepared");
	}
	assert_true(spec_exists(x, UID_A));	/* nothing was removed */
	assert_true(spec_exists(x, UID_B));
	assert_true(spec_exists(x, UID_C));
	assert_int_equal(fake.unprepares, 0);
	assert_int_equal(claims_engine_n_claims(x->e), 3);

	/* the devices stay reserved; monitoring access held none */
	run(x, false, &c0, 1, &o);
	assert_non_null(strstr(o.error[0], "in use by another claim"));
	outcome_free(&o);
	run(x, false, &c3, 1, &o);
	assert_null(o.error[0]);
	outcome_free(&o);

	/* the kubelet's prepare again: same CDI ID, the requests from the store, no hardware */
	run(x, false, &a, 1, &o);
	assert_null(o.error[0]);
	assert_string_equal(o.cdi0[0], want);
	assert_string_equal(o.requests0[0], "gpu");
	assert_int_equal(fake.prepares, 1);	/* only c3 */
	outcome_free(&o);

	/* the kubelet's unprepare frees the devices and removes the spec */
	run(x, true, &b, 1, &o);
	assert_null(o.error[0]);
	outcome_free(&o);
	assert_false(spec_exists(x, UID_B));
	assert_int_equal(claims_engine_n_claims(x->e), 3);	/* a, mon, c3 */
	{
		char note[256];
		assert_true(claims_engine_recovery_note(x->e, note, sizeof(note)));
		assert_non_null(strstr(note, "3 claim(s) rebuilt from CDI specs, 2 still prepared"));
	}
	{
		char cmd[512];
		snprintf(cmd, sizeof(cmd), "ls %s | grep -q 'checkpoint.json.corrupt-'", x->state_dir);
		assert_int_equal(system(cmd), 0);
	}
	/* and a restart finds a readable checkpoint with them */
	close_engine(x);
	assert_int_equal(open_engine(x, BOOT), 0);
	assert_false(x->stats.corrupt);
	assert_int_equal(x->store.warns, 1);	/* no new Event for a readable one */
	{
		char note[16] = "x";
		assert_false(claims_engine_recovery_note(x->e, note, sizeof(note)));
		assert_string_equal(note, "");
	}
	assert_int_equal(x->stats.kept, 3);
	run(x, false, &c0, 1, &o);
	assert_non_null(strstr(o.error[0], "in use by another claim, ns/a"));
	outcome_free(&o);
}

/* The number of devices an unprepare logs is the number it unprepared. */
static void test_unprepare_logs_its_devices(void **state)
{
	struct env *x = *state;
	char *r0 = result_json("gpu", 0, false), *r1 = result_json("gpu", 1, false), results[1024];
	struct claims_ref ref = { "ns", "multi", UID_A };
	struct capture cap;
	struct outcome o;
	char *log;

	snprintf(results, sizeof(results), "[%s,%s]", r0, r1);
	free(r0);
	free(r1);
	put_claim(x, "ns", "multi", UID_A, results, NULL);
	run(x, false, &ref, 1, &o);
	assert_null(o.error[0]);
	outcome_free(&o);
	capture_begin(&cap);
	run(x, true, &ref, 1, &o);
	log = capture_end(&cap);
	assert_null(o.error[0]);
	outcome_free(&o);
	assert_non_null(strstr(log, "unprepared claim ns/multi (uid " UID_A "): 2 device(s)"));
	free(log);
}

/* Changes the CDI class of @uid's devices in the checkpoint on disk. */
static void set_cdi_class(struct env *x, const char *uid, const char *cls)
{
	struct checkpoint *ck = NULL;
	struct ckpt_claim *c;
	char err[256];

	assert_int_equal(checkpoint_file_load(x->state_dir, &ck, err, sizeof(err)), 0);
	assert_non_null(c = checkpoint_find(ck, uid));
	for (size_t i = 0; i < c->n_devices; i++) {
		free(c->devices[i].cdi_class);
		c->devices[i].cdi_class = strdup(cls);
	}
	assert_int_equal(checkpoint_file_save(x->state_dir, ck), 0);
	checkpoint_free(ck);
}

/* A CDI spec that cannot be written again is not counted as rewritten. */
static void test_failed_rewrite_is_not_counted(void **state)
{
	struct env *x = *state;
	struct capture cap;
	char *log;

	close_engine(x);
	write_checkpoint_with(x, CKPT_PREPARE_COMPLETED, 0, UID_A);
	set_cdi_class(x, UID_A, "no class!");	/* no spec file name can be made for it */
	capture_begin(&cap);
	assert_int_equal(open_engine(x, BOOT), 0);
	log = capture_end(&cap);
	assert_int_equal(x->stats.rewritten, 0);
	assert_int_equal(x->stats.rewrite_failed, 1);
	assert_non_null(strstr(log, "CDI specs rewritten 0,"));
	assert_non_null(strstr(log, "could not be rewritten 1,"));
	free(log);
}

/* Checkpoint writes fail while the state directory is a regular file
 * (mkostemp: ENOTDIR; root ignores permissions); the engine's lock file
 * stays open in the directory moved aside. */
static void break_state_dir(void)
{
	char away[256];
	FILE *f;

	snprintf(away, sizeof(away), "%s.away", env_->state_dir);
	assert_int_equal(rename(env_->state_dir, away), 0);
	assert_non_null(f = fopen(env_->state_dir, "w"));
	fclose(f);
}

static void mend_state_dir(void)
{
	char away[256];

	snprintf(away, sizeof(away), "%s.away", env_->state_dir);
	assert_int_equal(unlink(env_->state_dir), 0);
	assert_int_equal(rename(away, env_->state_dir), 0);
}

static bool checkpoint_lists(struct env *x, const char *uid)
{
	struct checkpoint *ck = NULL;
	char err[256];
	bool found;

	assert_int_equal(checkpoint_file_load(x->state_dir, &ck, err, sizeof(err)), 0);
	found = checkpoint_find(ck, uid) != NULL;
	checkpoint_free(ck);
	return found;
}

/* An unprepare succeeds only once durable: a failed checkpoint write fails
 * the call and keeps the claim (and its device) until the retry. */
static void test_unprepare_fails_until_durable(void **state)
{
	struct env *x = *state;
	struct claims_ref a = { "ns", "a", UID_A }, b = { "ns", "b", UID_B };
	struct outcome o;

	put_simple(x, "a", UID_A, 0, false);
	put_simple(x, "b", UID_B, 0, false);
	run(x, false, &a, 1, &o);
	assert_null(o.error[0]);
	outcome_free(&o);

	/* UnprepareStarted is written, the device unprepared, then writes fail */
	fake.on_unprepare = break_state_dir;
	run(x, true, &a, 1, &o);
	fake.on_unprepare = NULL;
	assert_non_null(o.error[0]);
	assert_non_null(strstr(o.error[0], "cannot write the checkpoint"));
	outcome_free(&o);
	run(x, true, &a, 1, &o);	/* the kubelet's retry: still not durable */
	assert_non_null(o.error[0]);
	outcome_free(&o);
	assert_int_equal(claims_engine_n_claims(x->e), 1);
	run(x, false, &b, 1, &o);	/* the device is still a's */
	assert_non_null(strstr(o.error[0], "in use by another claim, ns/a"));
	outcome_free(&o);
	mend_state_dir();
	assert_true(checkpoint_lists(x, UID_A));

	run(x, true, &a, 1, &o);
	assert_null(o.error[0]);
	outcome_free(&o);
	assert_int_equal(claims_engine_n_claims(x->e), 0);
	assert_false(checkpoint_lists(x, UID_A));
	assert_false(fake.bad_undo);
	run(x, false, &b, 1, &o);
	assert_null(o.error[0]);
	outcome_free(&o);
}

/* A rolled-back prepare whose entry cannot be removed from the file keeps
 * it in memory too (PrepareStarted): the next prepare of the claim undoes
 * it again, and the device is not handed to another claim meanwhile. */
static void test_rollback_keeps_entry_until_durable(void **state)
{
	struct env *x = *state;
	char *r0 = result_json("gpu", 0, false), *r1 = result_json("gpu", 1, false), results[1024];
	struct claims_ref ref = { "ns", "multi", UID_A }, b = { "ns", "b", UID_B };
	struct outcome o;

	snprintf(results, sizeof(results), "[%s,%s]", r0, r1);
	free(r0);
	free(r1);
	put_claim(x, "ns", "multi", UID_A, results, NULL);
	put_simple(x, "b", UID_B, 0, false);
	fake.fail_device = dev_names[1];
	fake.on_fail = break_state_dir;
	run(x, false, &ref, 1, &o);
	assert_non_null(strstr(o.error[0], "injected failure"));
	outcome_free(&o);
	fake.fail_device = NULL;
	fake.on_fail = NULL;
	assert_int_equal(claims_engine_n_claims(x->e), 1);
	run(x, false, &b, 1, &o);
	assert_non_null(strstr(o.error[0], "in use by another claim, ns/multi"));
	outcome_free(&o);
	mend_state_dir();
	assert_true(checkpoint_lists(x, UID_A));

	run(x, false, &ref, 1, &o);
	assert_null(o.error[0]);
	outcome_free(&o);
	assert_int_equal(claims_engine_n_claims(x->e), 1);
	assert_true(checkpoint_lists(x, UID_A));
}

/* Temporary checkpoint files a crash mid-write left are removed at start
 * (a symlink with such a name is not followed). */
static void test_stale_checkpoint_temps_removed(void **state)
{
	struct env *x = *state;
	char path[512], link[512];
	FILE *f;

	close_engine(x);
	snprintf(path, sizeof(path), "%s/.checkpoint.json.Qw3rTy", x->state_dir);
	assert_non_null(f = fopen(path, "w"));
	fputs("{\"kind\": \"DraletCheckp", f);
	fclose(f);
	snprintf(link, sizeof(link), "%s/.checkpoint.json.L1nk00", x->state_dir);
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(open_engine(x, BOOT), 0);
	assert_int_not_equal(access(path, F_OK), 0);
	assert_int_equal(faccessat(AT_FDCWD, link, F_OK, AT_SYMLINK_NOFOLLOW), 0);
}

/* Marks ns/@name reserved for a pod (the claim is in use). */
static void reserve_claim(struct env *x, const char *name)
{
	char key[128];
	struct json_object *c, *status;

	snprintf(key, sizeof(key), "ns/%s", name);
	assert_true(json_object_object_get_ex(x->store.claims, key, &c));
	assert_true(json_object_object_get_ex(c, "status", &status));
	json_object_object_add(status, "reservedFor",
			       json_tokener_parse("[{\"resource\":\"pods\",\"name\":\"p\","
						  "\"uid\":\"1\"}]"));
}

static void on_check_done(void *userdata)
{
	*(bool *)userdata = true;
}

static void check_once(struct env *x, struct stale_check *sc)
{
	bool done = false;

	assert_int_equal(stale_check_run(sc, on_check_done, &done), 0);
	assert_int_equal(stale_check_run(sc, NULL, NULL), -EBUSY);	/* one at a time */
	while (!done)
		uv_run(&x->loop, UV_RUN_ONCE);
}

/* The stale-claim check's I/O shell (stale_check.h) over the engine: a claim
 * the store says is gone is unprepared (devices, spec, entry), without a
 * status write; one reserved for nobody only at the second check (the grace
 * period, 0 here, counts from the first sight); one the store cannot answer
 * about and one in use stay; the kubelet's later unprepare succeeds. A claim
 * prepared since the previous check is not asked about (kept: "recent") until
 * the check after. */
static void test_stale_check(void **state)
{
	struct env *x = *state;
	struct claims_ref refs[] = { { "ns", "a", UID_A }, { "ns", "b", UID_B },
				     { "ns", "c", UID_C }, { "ns", "d", UID_D } };
	struct stale_check_config cfg = { x->e, &x->store.base, DRV, POOL, 0 };
	const struct stale_check_metrics *m;
	struct stale_check *sc;
	struct outcome o;
	int status_writes, unprepares;

	put_simple(x, "a", UID_A, 0, false);
	put_simple(x, "b", UID_B, 1, false);
	put_simple(x, "c", UID_C, 2, false);
	put_simple(x, "d", UID_D, 3, false);
	reserve_claim(x, "a");
	reserve_claim(x, "c");
	reserve_claim(x, "d");
	run(x, false, refs, 4, &o);
	for (int i = 0; i < 4; i++)
		assert_null(o.error[i]);
	outcome_free(&o);
	assert_int_equal(stale_check_new(&cfg, &sc), 0);
	m = stale_check_metrics(sc);
	status_writes = x->store.status_writes;

	/* d is deleted; c cannot be read */
	json_object_object_del(x->store.claims, "ns/d");
	x->store.fail_key = "ns/c";
	check_once(x, sc);
	assert_int_equal(m->runs, 1);
	assert_int_equal(m->collected[STALE_GONE], 1);
	assert_int_equal(m->collected[STALE_UNRESERVED], 0);
	assert_false(spec_exists(x, UID_D));
	assert_true(spec_exists(x, UID_B) && spec_exists(x, UID_C) && spec_exists(x, UID_A));
	assert_int_equal(claims_engine_n_claims(x->e), 3);
	assert_int_equal(x->store.status_writes, status_writes);	/* none for d */

	/* e, prepared now on d's device, is deleted at once */
	put_simple(x, "e", UID_E, 3, false);
	run(x, false, (struct claims_ref[]){ { "ns", "e", UID_E } }, 1, &o);
	assert_null(o.error[0]);
	outcome_free(&o);
	json_object_object_del(x->store.claims, "ns/e");
	int gets = x->store.gets;

	/* b has been reserved for nobody since the first check; e is new: not asked */
	check_once(x, sc);
	assert_int_equal(x->store.gets, gets + 3);	/* a, b, c */
	assert_true(spec_exists(x, UID_E));
	assert_int_equal(m->collected[STALE_UNRESERVED], 1);
	assert_false(spec_exists(x, UID_B));
	assert_true(spec_exists(x, UID_C));	/* still no answer: kept */
	assert_int_equal(claims_engine_n_claims(x->e), 3);
	assert_int_equal(m->collect_failed, 0);
	assert_false(atomic_load(&fake.bad_undo));	/* undone with their own undo state */

	/* the kubelet unprepares them later: nothing to do, success */
	unprepares = atomic_load(&fake.unprepares);
	run(x, true, (struct claims_ref[]){ refs[1], refs[3] }, 2, &o);
	assert_null(o.error[0]);
	assert_null(o.error[1]);
	outcome_free(&o);
	assert_int_equal(atomic_load(&fake.unprepares), unprepares);

	/* answered again: c is in use, a too; e, asked now, is gone */
	x->store.fail_key = NULL;
	check_once(x, sc);
	assert_int_equal(m->runs, 3);
	assert_false(spec_exists(x, UID_E));
	assert_int_equal(claims_engine_n_claims(x->e), 2);
	assert_int_equal(m->collected[STALE_GONE], 2);
	assert_int_equal(m->collected[STALE_GONE] + m->collected[STALE_UNRESERVED], 3);
	stale_check_free(sc);
	run(x, true, refs, 3, &o);
	outcome_free(&o);
}

/* ---- two instances on one state directory (a rolling update) ---- */

/* A second engine on @x's directories (the rolling update's other instance). */
static struct claims_engine *open_other(struct env *x)
{
	struct claims_engine *first = x->e, *other;

	x->e = NULL;
	assert_int_equal(open_engine(x, BOOT), 0);	/* no waiting for the first to exit */
	other = x->e;
	x->e = first;
	return other;
}

static void run_on(struct env *x, struct claims_engine *e, bool unprepare,
		   const struct claims_ref *refs, size_t n, struct outcome *o)
{
	struct claims_engine *first = x->e;

	x->e = e;
	run(x, unprepare, refs, n, o);
	x->e = first;
}

/* What one instance prepared the other knows at its next operation: a
 * repeat is answered from the checkpoint, its device is not given to another
 * claim, and the other instance unprepares it. */
static void test_instances_share_the_checkpoint(void **state)
{
	struct env *x = *state;
	struct claims_ref a = { "ns", "a", UID_A }, b = { "ns", "b", UID_B },
			  c = { "ns", "c", UID_C }, d = { "ns", "d", UID_D };
	struct claims_engine *other;
	struct outcome o, first;

	put_simple(x, "a", UID_A, 0, false);
	put_simple(x, "b", UID_B, 0, false);	/* the same device as a */
	put_simple(x, "c", UID_C, 1, false);
	run(x, false, &a, 1, &first);
	assert_null(first.error[0]);
	other = open_other(x);
	assert_int_equal(claims_engine_n_claims(other), 1);	/* its start read it */

	run_on(x, other, false, &a, 1, &o);
	assert_null(o.error[0]);
	assert_string_equal(o.cdi0[0], first.cdi0[0]);
	assert_int_equal(fake.prepares, 1);	/* idempotent across instances */
	outcome_free(&o);
	run_on(x, other, false, &b, 1, &o);
	assert_non_null(strstr(o.error[0], "in use by another claim"));
	outcome_free(&o);

	/* the first instance, after the other's turns */
	run(x, false, &c, 1, &o);
	assert_null(o.error[0]);
	outcome_free(&o);
	run_on(x, other, true, &a, 1, &o);	/* unprepared by the instance that did not prepare it */
	assert_null(o.error[0]);
	outcome_free(&o);
	assert_int_equal(fake.unprepares, 1);
	assert_false(spec_exists(x, UID_A));
	assert_false(checkpoint_lists(x, UID_A));
	assert_true(checkpoint_lists(x, UID_C));
	run(x, false, &b, 1, &o);		/* a's device is free for the first one too */
	assert_null(o.error[0]);
	assert_string_equal(o.device0[0], dev_names[0]);
	outcome_free(&o);
	assert_int_equal(claims_engine_n_claims(x->e), 2);

	/* an unprepare of a claim nobody prepared changes nothing, and the
	 * other's view follows the checkpoint */
	run_on(x, other, true, &d, 1, &o);
	assert_null(o.error[0]);
	outcome_free(&o);
	assert_int_equal(claims_engine_n_claims(other), 2);
	assert_int_equal(fake.unprepares, 1);
	assert_true(checkpoint_lists(x, UID_B) && checkpoint_lists(x, UID_C));
	assert_false(fake.overlap);
	claims_engine_free(other);
	outcome_free(&first);
}

static void on_shutdown(void *userdata)
{
	*(bool *)userdata = true;
}

/* Operations of two instances never overlap (one instance's run in parallel);
 * an operation waiting for the other instance fails at shutdown. */
static void test_instances_take_turns(void **state)
{
	struct env *x = *state;
	struct claims_ref mine[2] = { { "ns", "a", UID_A }, { "ns", "c", UID_C } };
	struct claims_ref theirs = { "ns", "b", UID_B }, late = { "ns", "d", UID_D };
	struct claims_engine *other = open_other(x);
	struct outcome o1, o2, o3;
	struct timespec t0, t1;
	bool stopped = false;
	double ms;

	put_simple(x, "a", UID_A, 0, false);
	put_simple(x, "b", UID_B, 1, false);
	put_simple(x, "c", UID_C, 2, false);
	put_simple(x, "d", UID_D, 3, false);
	fake.sleep_ms = 150;
	memset(&o1, 0, sizeof(o1));
	memset(&o2, 0, sizeof(o2));
	memset(&o3, 0, sizeof(o3));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(claims_prepare(x->e, mine, 2, on_done, &o1), 0);
	assert_int_equal(claims_prepare(other, &theirs, 1, on_done, &o2), 0);
	wait_for(x, &o1);
	wait_for(x, &o2);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	assert_null(o1.error[0]);
	assert_null(o1.error[1]);
	assert_null(o2.error[0]);
	print_message("2 + 1 claims of 150 ms on two instances in %.0f ms (max %d in parallel)\n",
		      ms, fake.max_parallel);
	assert_int_equal(fake.max_parallel, 2);	/* the other's claim never joined */
	assert_true(ms >= 2 * 150);
	outcome_free(&o1);
	outcome_free(&o2);

	/* the other instance's call waits while this one prepares; its shutdown fails it */
	assert_int_equal(claims_prepare(x->e, &mine[0], 1, on_done, &o1), 0);	/* a hit */
	fake.sleep_ms = 300;
	assert_int_equal(claims_prepare(x->e, &late, 1, on_done, &o3), 0);
	assert_int_equal(claims_prepare(other, &theirs, 1, on_done, &o2), 0);
	assert_false(o2.done);
	claims_engine_shutdown(other, on_shutdown, &stopped);
	assert_true(o2.done);
	assert_non_null(strstr(o2.error[0], "shutting down"));
	assert_true(stopped);
	wait_for(x, &o1);
	wait_for(x, &o3);
	assert_null(o3.error[0]);
	assert_false(fake.overlap);
	fake.sleep_ms = 0;
	outcome_free(&o1);
	outcome_free(&o2);
	outcome_free(&o3);
	uv_run(&x->loop, UV_RUN_NOWAIT);	/* the other's retry timer closes */
	claims_engine_free(other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_prepare_idempotent_unprepare, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device_metadata, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device_status, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_requests, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors_are_per_claim, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_claim_refs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config_reaches_backend, setup, teardown),
		cmocka_unit_test_setup_teardown(test_admin_config_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device_in_use_and_admin_access, setup, teardown),
		cmocka_unit_test_setup_teardown(test_multi_device_rollback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shared_device, setup, teardown),
		cmocka_unit_test_setup_teardown(test_share_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shares_rebuilt_from_specs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parallel_and_same_uid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_health_checks_take_the_device_lock, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_shutdown_refuses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recovery, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_checkpoint, setup, teardown),
		cmocka_unit_test_setup_teardown(test_instances_share_the_checkpoint, setup, teardown),
		cmocka_unit_test_setup_teardown(test_instances_take_turns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unprepare_logs_its_devices, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_checkpoint_temps_removed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_unprepare_fails_until_durable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rollback_keeps_entry_until_durable, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_failed_rewrite_is_not_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fsyncs_per_operation, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
