/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The apiserver store through its C API against the test apiserver
 * (tests/apiserver/apiserver.py, started here): claims (v1, the v1beta2
 * fallback of 1.33 clusters, not found), a publish that converges, one
 * streaming list (a watch that lists first) for all drivers (another driver's slices left alone), and
 * destroy with requests in flight (no callback, no leak). Skipped without
 * /usr/bin/python3 or openssl.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/slices/build.h"
#include "agent/kube/client.h"
#include "agent/kube/store_open.h"
#include "agent/slices/sync.h"

struct server {
	pid_t pid;
	char dir[64];
	char kubeconfig[128];
};

static void write_claim(const char *dir, const char *ns, const char *name)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/claims/%s", dir, ns);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/claims/%s/%s.json", dir, ns, name);
	FILE *f = fopen(path, "w");
	fprintf(f, "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":"
		   "{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"u-%s\"},\"spec\":{\"devices\":"
		   "{\"requests\":[]}},\"status\":{\"allocation\":{\"devices\":{\"results\":[]}}}}",
		name, ns, name);
	fclose(f);
}

static bool server_start(struct server *s, bool serve_v1)
{
	if (access("/usr/bin/python3", X_OK) || system("openssl version >/dev/null 2>&1"))
		return false;
	snprintf(s->dir, sizeof(s->dir), "/tmp/dralet-apisrv-XXXXXX");
	assert_non_null(mkdtemp(s->dir));
	write_claim(s->dir, "ns1", "claim-a");
	char claims[128], ready[128];
	snprintf(claims, sizeof(claims), "%s/claims", s->dir);
	snprintf(ready, sizeof(ready), "%s/ready.json", s->dir);
	s->pid = fork();
	assert_true(s->pid >= 0);
	if (s->pid == 0) {
		execl("/usr/bin/python3", "python3", "tests/apiserver/apiserver.py", "--dir", s->dir,
		      "--claims", claims, serve_v1 ? "--bookmark-interval" : "--no-v1-claims",
		      serve_v1 ? "1" : NULL, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 300; i++) {
		if (access(ready, R_OK) == 0)
			break;
		usleep(20000);
	}
	assert_int_equal(access(ready, R_OK), 0);
	snprintf(s->kubeconfig, sizeof(s->kubeconfig), "%s/kubeconfig", s->dir);
	return true;
}

static void server_stop(struct server *s)
{
	kill(s->pid, SIGTERM);
	waitpid(s->pid, NULL, 0);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", s->dir);
	assert_int_equal(system(cmd), 0);
}

struct claim_result {
	int calls, err;
	char name[64], api_version[64], message[512];
};

static void on_claim(void *userdata, int err, struct json_object *claim, const char *message)
{
	struct claim_result *r = userdata;
	r->calls++;
	r->err = err;
	snprintf(r->message, sizeof(r->message), "%s", message ? message : "");
	if (claim) {
		struct json_object *meta, *v;
		json_object_object_get_ex(claim, "metadata", &meta);
		json_object_object_get_ex(meta, "name", &v);
		snprintf(r->name, sizeof(r->name), "%s", json_object_get_string(v));
		json_object_object_get_ex(claim, "apiVersion", &v);
		snprintf(r->api_version, sizeof(r->api_version), "%s", json_object_get_string(v));
	}
}

static void run_until(uv_loop_t *loop, const int *flag, int want)
{
	for (int i = 0; i < 2000 && *flag < want; i++)
		uv_run(loop, UV_RUN_ONCE);
	assert_true(*flag >= want);
}

static void drain(uv_loop_t *loop, struct store *st)
{
	st->ops->destroy(st);
	uv_run(loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(loop), 0);
}

static void test_claims_v1(void **state)
{
	(void)state;
	struct server srv;
	if (!server_start(&srv, true))
		skip();
	uv_loop_t loop;
	uv_loop_init(&loop);
	struct store_options o = { .kubeconfig = srv.kubeconfig, .node_name = "node-1" };
	struct store *st = NULL;
	char err[512];
	assert_int_equal(store_open(&loop, &o, &st, err, sizeof(err)), 0);
	assert_string_equal(st->ops->name, "apiserver");
	struct claim_result a = { 0 }, b = { 0 };
	st->ops->get_claim(st, "ns1", "claim-a", on_claim, &a);
	st->ops->get_claim(st, "ns1", "nope", on_claim, &b);
	run_until(&loop, &b.calls, 1);
	run_until(&loop, &a.calls, 1);
	assert_int_equal(a.err, 0);
	assert_string_equal(a.name, "claim-a");
	assert_string_equal(a.api_version, "resource.k8s.io/v1");
	assert_int_equal(b.err, -ENOENT);
	assert_non_null(strstr(b.message, "not found"));
	drain(&loop, st);
	server_stop(&srv);
}

static void test_claims_v1beta2_fallback(void **state)
{
	(void)state;
	struct server srv;
	if (!server_start(&srv, false))
		skip();
	uv_loop_t loop;
	uv_loop_init(&loop);
	struct store_options o = { .kubeconfig = srv.kubeconfig, .node_name = "node-1" };
	struct store *st = NULL;
	char err[512];
	assert_int_equal(store_open(&loop, &o, &st, err, sizeof(err)), 0);
	for (int round = 0; round < 2; round++) {	/* the second goes to v1beta2 directly */
		struct claim_result a = { 0 }, b = { 0 };
		st->ops->get_claim(st, "ns1", "claim-a", on_claim, &a);
		run_until(&loop, &a.calls, 1);
		assert_int_equal(a.err, 0);
		assert_string_equal(a.name, "claim-a");
		assert_string_equal(a.api_version, "resource.k8s.io/v1");	/* same shape */
		st->ops->get_claim(st, "ns1", "nope", on_claim, &b);
		run_until(&loop, &b.calls, 1);
		assert_int_equal(b.err, -ENOENT);
	}
	drain(&loop, st);
	server_stop(&srv);
}

struct synced {
	int calls;
	int64_t generation;
};

static void on_synced(void *userdata, const char *driver, int64_t generation)
{
	struct synced *s = userdata;
	assert_string_equal(driver, "gpu.dralet.dev");
	s->calls++;
	s->generation = generation;
}

static struct slice_list *desired(size_t n)
{
	struct dralet_attr a = { .name = "model", .type = DRALET_ATTR_STRING, .string_value = "x" };
	struct slice_device_in devs[300];
	char names[300][16];
	for (size_t i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "gpu-%03zu", i);
		devs[i] = (struct slice_device_in){ .name = names[i], .attrs = &a, .n_attrs = 1 };
	}
	struct slice_list *out = NULL;
	assert_int_equal(slice_build("gpu.dralet.dev", "node-1", NULL, devs, n, NULL, NULL, NULL, &out), 0);
	return out;
}

static void test_publish_and_destroy_in_flight(void **state)
{
	(void)state;
	struct server srv;
	if (!server_start(&srv, true))
		skip();
	uv_loop_t loop;
	uv_loop_init(&loop);
	struct synced sy = { 0 };
	struct store_options o = { .kubeconfig = srv.kubeconfig, .node_name = "node-1",
				   .on_synced = on_synced, .userdata = &sy };
	struct store *st = NULL;
	char err[512];
	assert_int_equal(store_open(&loop, &o, &st, err, sizeof(err)), 0);
	struct slice_list *d = desired(200);
	assert_int_equal(st->ops->publish(st, "gpu.dralet.dev", d), 0);
	slice_list_unref(d);	/* the store keeps its own reference */
	run_until(&loop, &sy.calls, 1);
	assert_int_equal(sy.generation, 1);
	struct store_stats stats;
	store_get_stats(st, &stats);
	assert_int_equal(stats.creates, 2);
	assert_int_equal(stats.lists, 0);	/* a streaming list: one watch */
	assert_int_equal(stats.watches, 1);
	/* the metrics' counts: writes by result, requests by verb and status */
	assert_int_equal(stats.slice_writes[SLICE_OP_CREATE][STORE_WRITE_OK], 2);
	assert_int_equal(stats.slice_writes[SLICE_OP_CREATE][STORE_WRITE_ERROR], 0);
	assert_non_null(stats.requests_by);
	assert_int_equal(stats.requests_by->by_verb_status[KUBE_VERB_POST][201], 2);
	assert_int_equal(stats.requests_by->by_verb_status[KUBE_VERB_GET][200], 1);	/* node */
	/* a device appears: one bump */
	d = desired(201);
	assert_int_equal(st->ops->publish(st, "gpu.dralet.dev", d), 0);
	slice_list_unref(d);
	run_until(&loop, &sy.calls, 2);
	assert_int_equal(sy.generation, 2);
	store_get_stats(st, &stats);
	assert_int_equal(stats.updates, 2);
	assert_int_equal(stats.slice_writes[SLICE_OP_UPDATE][STORE_WRITE_OK], 2);
	assert_int_equal(stats.requests_by->by_verb_status[KUBE_VERB_PUT][200], 2);
	/* destroy with a publish and a claim in flight: no callbacks afterwards */
	struct claim_result late = { 0 };
	d = desired(5);
	assert_int_equal(st->ops->publish(st, "gpu.dralet.dev", d), 0);
	slice_list_unref(d);
	st->ops->get_claim(st, "ns1", "claim-a", on_claim, &late);
	uv_run(&loop, UV_RUN_NOWAIT);
	int calls_before = sy.calls, late_before = late.calls;
	drain(&loop, st);
	assert_int_equal(late.calls, late_before);
	assert_int_equal(sy.calls, calls_before);
	server_stop(&srv);
}

/* Synced rounds by driver. */
static const char *const DRIVERS[] = { "gpu.dralet.dev", "net.dralet.dev", "gpu.example.com" };

struct synced_by {
	int calls[3];
};

static void on_synced_by(void *userdata, const char *driver, int64_t generation)
{
	struct synced_by *s = userdata;
	(void)generation;
	for (size_t i = 0; i < 3; i++)
		if (!strcmp(driver, DRIVERS[i]))
			s->calls[i]++;
}

static struct slice_list *desired_of(const char *driver, size_t n)
{
	struct dralet_attr a = { .name = "model", .type = DRALET_ATTR_STRING, .string_value = "x" };
	struct slice_device_in devs[8];
	char names[8][16];
	assert_true(n <= 8);
	for (size_t i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "dev-%zu", i);
		devs[i] = (struct slice_device_in){ .name = names[i], .attrs = &a, .n_attrs = 1 };
	}
	struct slice_list *out = NULL;
	assert_int_equal(slice_build(driver, "node-1", NULL, devs, n, NULL, NULL, NULL, &out), 0);
	return out;
}

/* Opens a store on node-1, publishes @n[i] devices of DRIVERS[i] for each
 * i with n[i] >= 0, runs until each of them synced, and returns its stats
 * (the request counts) after destroying it. */
static struct store_stats publish_all(const struct server *srv, const int n[3])
{
	uv_loop_t loop;
	uv_loop_init(&loop);
	struct synced_by sy = { 0 };
	struct store_options o = { .kubeconfig = srv->kubeconfig, .node_name = "node-1",
				   .on_synced = on_synced_by, .userdata = &sy };
	struct store *st = NULL;
	char err[512];
	assert_int_equal(store_open(&loop, &o, &st, err, sizeof(err)), 0);
	for (size_t i = 0; i < 3; i++) {
		if (n[i] < 0)
			continue;
		struct slice_list *d = desired_of(DRIVERS[i], (size_t)n[i]);
		assert_int_equal(st->ops->publish(st, DRIVERS[i], d), 0);
		slice_list_unref(d);
	}
	for (size_t i = 0; i < 3; i++)
		if (n[i] >= 0)
			run_until(&loop, &sy.calls[i], 1);
	struct store_stats stats;
	store_get_stats(st, &stats);
	stats.requests_by = NULL;	/* freed with the store */
	drain(&loop, st);
	return stats;
}

/* One streaming list of the node's slices (a watch) serves every driver; a stale
 * slice of a driver published without devices is deleted; another driver's
 * slice on the node is never touched; the Node is read only to create. */
static void test_one_informer_for_all_drivers(void **state)
{
	(void)state;
	struct server srv;
	if (!server_start(&srv, true))
		skip();
	/* an old instance published net.dralet.dev; another DRA driver its own */
	struct store_stats st = publish_all(&srv, (const int[3]){ -1, 2, 3 });
	assert_int_equal(st.creates, 2);
	/* this instance: gpu with devices, net without, the other driver not served */
	st = publish_all(&srv, (const int[3]){ 5, 0, -1 });
	assert_int_equal(st.lists, 0);
	assert_int_equal(st.watches, 1);
	assert_int_equal(st.creates, 1);
	assert_int_equal(st.deletes, 1);	/* the stale net slice, not the other's */
	assert_int_equal(st.updates, 0);
	assert_int_equal(st.failures, 0);
	assert_int_equal(st.requests, 4);	/* Node, watch, create, delete */
	/* the other driver's slice is still as it was: publishing it again writes
	 * nothing, and reads no Node */
	st = publish_all(&srv, (const int[3]){ -1, -1, 3 });
	assert_int_equal(st.creates + st.updates + st.deletes, 0);
	assert_int_equal(st.requests, 1);	/* the watch */
	/* nor is this instance's gpu slice touched by the other driver's store */
	st = publish_all(&srv, (const int[3]){ 5, 0, -1 });
	assert_int_equal(st.creates + st.updates + st.deletes, 0);
	assert_int_equal(st.lists, 0);
	assert_int_equal(st.requests, 1);
	server_stop(&srv);
}

static void test_open_errors(void **state)
{
	(void)state;
	uv_loop_t loop;
	uv_loop_init(&loop);
	struct store *st = (struct store *)0x1;
	char err[512] = "";
	struct store_options o = { .kubeconfig = "/nonexistent/kubeconfig", .node_name = "n" };
	assert_true(store_open(&loop, &o, &st, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "/nonexistent/kubeconfig"));
	o.kubeconfig = NULL;
	unsetenv("KUBERNETES_SERVICE_HOST");
	assert_int_equal(store_open(&loop, &o, &st, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "--kubeconfig"));
	assert_ptr_equal(st, (struct store *)0x1);
	assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_claims_v1),
		cmocka_unit_test(test_claims_v1beta2_fallback),
		cmocka_unit_test(test_publish_and_destroy_in_flight),
		cmocka_unit_test(test_one_informer_for_all_drivers),
		cmocka_unit_test(test_open_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
