/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NodeWatchResources over a real unix socket: the loop (broadcasting every
 * few milliseconds) runs on the test's main thread, watchers on others.
 * Concurrent watchers each get complete lists; a cancelled watcher is
 * forgotten; one that does not read is ended with RESOURCE_EXHAUSTED; a
 * shutdown ends every watcher with OK and refuses new ones.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <uv.h>

#include "agent/kubelet/grpc_client.h"
#include "agent/kubelet/grpc_server.h"
#include "agent/health/health_table.h"
#include "agent/kubelet/health_service.h"
#include "harness.h"
#include "proto/kubelet_pb.h"
#include "stuck_client.h"

#define N_DEVICES 64
#define DEADLINE_MS 20000

struct fixture {
	struct harness h;
	struct dralet_pci_func funcs[N_DEVICES];
	struct health_table table;
	char pool[201];			/* long, so that a stuck reader fills up fast */
	uv_loop_t loop;
	uv_timer_t tick;
	struct grpc_server *srv;
	struct health_watch *watch;
	char dir[64], path[100];
	atomic_uint watchers;		/* as the loop last saw them */
	atomic_uint max_watchers;
	atomic_bool shut_down;
	unsigned shutdown_at;		/* shut the service down once this many watch */
	bool closed;
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_tick(uv_timer_t *t)
{
	struct fixture *f = t->data;
	unsigned n;

	health_watch_broadcast(f->watch);
	n = (unsigned)health_watch_n_watchers(f->watch);
	atomic_store(&f->watchers, n);
	if (n > atomic_load(&f->max_watchers))
		atomic_store(&f->max_watchers, n);
	if (f->shutdown_at && n >= f->shutdown_at && !atomic_load(&f->shut_down)) {
		health_watch_shutdown(f->watch);
		atomic_store(&f->shut_down, true);
	}
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct dralet_device *devices[N_DEVICES];
	struct grpc_server_limits limits;

	assert_non_null(f);
	assert_int_equal(harness_init(&f->h, &harness_plain_backend, NULL, NULL), 0);
	assert_int_equal(harness_add_devices(&f->h, f->funcs, N_DEVICES, devices), 0);
	assert_int_equal(health_table_set_devices(&f->table, devices, N_DEVICES, 1700000000), 0);
	memset(f->pool, 'p', sizeof(f->pool) - 1);
	assert_int_equal(uv_loop_init(&f->loop), 0);
	strcpy(f->dir, "/tmp/dralet-health-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/dra.sock", f->dir);
	grpc_server_default_limits(&limits);
	limits.max_stream_output = 64 * 1024;
	limits.shutdown_grace_ms = 100;
	assert_int_equal(grpc_server_new(&f->loop, &limits, &f->srv), 0);
	assert_int_equal(health_watch_new(f->srv, f->pool, &f->table, 30, &f->watch), 0);
	assert_int_equal(grpc_server_listen(f->srv, f->path), 0);
	uv_timer_init(&f->loop, &f->tick);
	f->tick.data = f;
	uv_timer_start(&f->tick, on_tick, 2, 2);
	*state = f;
	return 0;
}

static void on_server_closed(struct grpc_server *srv, void *ud)
{
	(void)srv;
	((struct fixture *)ud)->closed = true;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	health_watch_shutdown(f->watch);
	uv_close((uv_handle_t *)&f->tick, NULL);
	grpc_server_close(f->srv, on_server_closed, f);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_true(f->closed);
	health_watch_free(f->watch);
	assert_int_equal(uv_loop_close(&f->loop), 0);
	health_table_clear(&f->table);
	harness_fini(&f->h);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* Runs the loop until @done says so (or the deadline passes). */
static void run_until(struct fixture *f, bool (*done)(struct fixture *f, void *arg), void *arg)
{
	int64_t end = now_ms() + DEADLINE_MS;

	while (!done(f, arg) && now_ms() < end)
		uv_run(&f->loop, UV_RUN_ONCE);
}

/* ---- watchers (client threads) ---- */

struct watcher {
	struct fixture *f;
	pthread_t thread;
	unsigned stop_at_watchers;	/* cancel once the loop saw this many (0: never) */
	unsigned messages, bad_messages;
	int err;
	struct grpc_client_result res;
	atomic_bool done;
};

static int on_message(void *userdata, const uint8_t *msg, size_t len)
{
	struct watcher *w = userdata;
	health_watch_response *resp = (health_watch_response *)protobuf_c_message_unpack(
		&health_watch_response_descriptor, NULL, len, msg);

	w->messages++;
	if (!resp || resp->n_devices != N_DEVICES ||
	    strcmp(resp->devices[0]->device->pool_name, w->f->pool) ||
	    strcmp(resp->devices[5]->device->device_name, "accel-0000-06-00-0") ||
	    resp->devices[5]->health != HEALTH_STATUS_HEALTHY ||
	    resp->devices[5]->last_updated_time != 1700000000)
		w->bad_messages++;
	if (resp)
		protobuf_c_message_free_unpacked(&resp->base, NULL);
	if (w->stop_at_watchers && w->messages >= 3 &&
	    atomic_load(&w->f->max_watchers) >= w->stop_at_watchers)
		return -ECANCELED;
	return 0;
}

static void *watch_main(void *arg)
{
	struct watcher *w = arg;
	struct grpc_client *cl;
	struct grpc_client_call_opts opts = {
		.path = KUBELET_PATH_WATCH_HEALTH,
		.request = "",
		.timeout_ms = DEADLINE_MS,
		.on_message = on_message,
		.userdata = w,
	};

	w->err = grpc_client_connect(w->f->path, DEADLINE_MS, &cl);
	if (w->err == 0) {
		w->err = grpc_client_invoke(cl, &opts, &w->res);
		grpc_client_free(cl);
	}
	atomic_store(&w->done, true);
	return NULL;
}

static void start_watcher(struct watcher *w, struct fixture *f, unsigned stop_at_watchers)
{
	w->f = f;
	w->stop_at_watchers = stop_at_watchers;
	assert_int_equal(pthread_create(&w->thread, NULL, watch_main, w), 0);
}

static bool watchers_done(struct fixture *f, void *arg)
{
	struct watcher *w = arg;

	(void)f;
	return atomic_load(&w[0].done) && atomic_load(&w[1].done);
}

static bool nobody_watches(struct fixture *f, void *arg)
{
	(void)arg;
	return health_watch_n_watchers(f->watch) == 0;
}

static void test_concurrent_watchers(void **state)
{
	struct fixture *f = *state;
	struct watcher w[2];

	memset(w, 0, sizeof(w));
	start_watcher(&w[0], f, 2);
	start_watcher(&w[1], f, 2);
	run_until(f, watchers_done, w);
	for (int i = 0; i < 2; i++) {
		pthread_join(w[i].thread, NULL);
		assert_int_equal(w[i].err, -ECANCELED);	/* we stopped reading */
		assert_true(w[i].messages >= 3);
		assert_int_equal(w[i].bad_messages, 0);
		grpc_client_result_clear(&w[i].res);
	}
	assert_int_equal(atomic_load(&f->max_watchers), 2);
	run_until(f, nobody_watches, NULL);	/* the cancellations arrive */
	assert_int_equal(health_watch_n_watchers(f->watch), 0);
}

static void test_shutdown_ends_watchers(void **state)
{
	struct fixture *f = *state;
	struct watcher w[2];

	memset(w, 0, sizeof(w));
	f->shutdown_at = 2;
	start_watcher(&w[0], f, 0);
	start_watcher(&w[1], f, 0);
	run_until(f, watchers_done, w);
	for (int i = 0; i < 2; i++) {
		pthread_join(w[i].thread, NULL);
		assert_int_equal(w[i].err, 0);
		assert_int_equal(w[i].res.status, GRPC_STATUS_OK);
		assert_true(w[i].messages >= 1);
		assert_int_equal(w[i].bad_messages, 0);
		grpc_client_result_clear(&w[i].res);
	}
	/* later calls are refused */
	memset(w, 0, sizeof(w));
	start_watcher(&w[0], f, 0);
	w[1].done = true;
	run_until(f, watchers_done, w);
	pthread_join(w[0].thread, NULL);
	assert_int_equal(w[0].err, 0);
	assert_int_equal(w[0].res.status, GRPC_STATUS_UNAVAILABLE);
	assert_int_equal(w[0].messages, 0);
	grpc_client_result_clear(&w[0].res);
}

/* ---- a watcher that never reads ---- */

struct stuck {
	struct fixture *f;
	pthread_t thread;
	int setup_err;
	atomic_bool release, done;
};

static void *stuck_main(void *arg)
{
	struct stuck *st = arg;
	struct stuck_client *c = NULL;
	int64_t end = now_ms() + DEADLINE_MS;

	st->setup_err = stuck_client_open(st->f->path, KUBELET_PATH_WATCH_HEALTH, 1, &c);
	/* never read; wait until the server gave up on us */
	while (!atomic_load(&st->release) && now_ms() < end)
		usleep(10000);
	stuck_client_close(c);
	atomic_store(&st->done, true);
	return NULL;
}

static bool stuck_ended(struct fixture *f, void *arg)
{
	(void)arg;
	return atomic_load(&f->max_watchers) == 1 && health_watch_n_watchers(f->watch) == 0;
}

static bool stuck_done(struct fixture *f, void *arg)
{
	(void)f;
	return atomic_load(&((struct stuck *)arg)->done);
}

static void test_watcher_that_does_not_read(void **state)
{
	struct fixture *f = *state;
	struct stuck st = { .f = f };

	assert_int_equal(pthread_create(&st.thread, NULL, stuck_main, &st), 0);
	run_until(f, stuck_ended, NULL);
	assert_int_equal(atomic_load(&f->max_watchers), 1);
	assert_int_equal(health_watch_n_watchers(f->watch), 0);
	atomic_store(&st.release, true);
	run_until(f, stuck_done, &st);
	pthread_join(st.thread, NULL);
	assert_int_equal(st.setup_err, 0);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);	/* as the daemon does: peers may vanish */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_concurrent_watchers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shutdown_ends_watchers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watcher_that_does_not_read, setup, teardown),
	};
	return cmocka_run_group_tests_name("health_watch", tests, NULL, NULL);
}
