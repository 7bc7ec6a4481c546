/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The gRPC server over real unix sockets: the loop runs on the test's main
 * thread, clients (the blocking client, raw sockets) on a second thread.
 * Assertions happen on the main thread after the client thread is joined.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <uv.h>

#include "agent/kubelet/grpc_client.h"
#include "agent/kubelet/grpc_metrics.h"
#include "agent/kubelet/grpc_server.h"
#include "stuck_client.h"

struct fixture {
	uv_loop_t loop;
	struct grpc_server *srv;
	char dir[64];
	char path[128];
	bool closed;
	unsigned cancels;
	enum grpc_status cancel_reason;
	bool close_in_handler;
	struct grpc_call *hung;
	struct grpc_metrics metrics;	/* the server counts its calls here */
};

/* Calls of @method counted with @code (-1: with any code). */
static uint64_t counted(const struct fixture *f, const char *method, int code)
{
	uint64_t n = 0;

	for (size_t i = 0; i < f->metrics.n; i++)
		for (int c = 0; c < GRPC_METRICS_N_CODES; c++)
			if (!strcmp(f->metrics.methods[i].method, method) && (code < 0 || c == code))
				n += f->metrics.methods[i].by_code[c];
	return n;
}

/* ---- running a client on another thread ---- */

struct bg {
	uv_async_t async;
	uv_thread_t thread;
	void (*fn)(struct fixture *f, void *arg);
	struct fixture *f;
	void *arg;
};

static void bg_main(void *p)
{
	struct bg *b = p;

	b->fn(b->f, b->arg);
	uv_async_send(&b->async);
}

static void bg_done(uv_async_t *a)
{
	uv_stop(a->loop);
}

static void run_client(struct fixture *f, void (*fn)(struct fixture *, void *), void *arg)
{
	struct bg b = { .fn = fn, .f = f, .arg = arg };

	assert_int_equal(uv_async_init(&f->loop, &b.async, bg_done), 0);
	assert_int_equal(uv_thread_create(&b.thread, bg_main, &b), 0);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	uv_thread_join(&b.thread);
	uv_close((uv_handle_t *)&b.async, NULL);
	uv_run(&f->loop, UV_RUN_NOWAIT);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- handlers ---- */

static void on_closed(struct grpc_server *srv, void *ud);

static void h_echo(struct grpc_call *call, const uint8_t *req, size_t len, void *ud)
{
	(void)ud;
	grpc_call_reply(call, GRPC_STATUS_OK, req, len, NULL);
}

struct slow {
	uv_timer_t timer;
	struct grpc_call *call;
};

static void slow_closed(uv_handle_t *h)
{
	free(h->data);
}

static void slow_fire(uv_timer_t *t)
{
	struct slow *s = t->data;

	grpc_call_reply(s->call, GRPC_STATUS_OK, "slow", 4, NULL);
	uv_close((uv_handle_t *)t, slow_closed);
}

static void h_slow(struct grpc_call *call, const uint8_t *req, size_t len, void *ud)
{
	struct fixture *f = ud;
	struct slow *s = calloc(1, sizeof(*s));

	(void)req;
	(void)len;
	s->call = call;
	uv_timer_init(&f->loop, &s->timer);
	s->timer.data = s;
	uv_timer_start(&s->timer, slow_fire, 200, 0);
	if (f->close_in_handler)
		grpc_server_close(f->srv, on_closed, f);
}

static void hang_cancel(struct grpc_call *call, void *ud)
{
	struct fixture *f = ud;

	f->cancels++;
	f->cancel_reason = grpc_call_cancel_reason(call);
	f->hung = NULL;
	grpc_call_reply(call, GRPC_STATUS_OK, NULL, 0, NULL);
}

static void h_hang(struct grpc_call *call, const uint8_t *req, size_t len, void *ud)
{
	struct fixture *f = ud;

	(void)req;
	(void)len;
	f->hung = call;
	grpc_call_on_cancel(call, hang_cancel, f);
	if (f->close_in_handler)
		grpc_server_close(f->srv, on_closed, f);
}

static void h_stream(struct grpc_call *call, const uint8_t *req, size_t len, void *ud)
{
	static uint8_t chunk[16384];

	(void)req;
	(void)len;
	(void)ud;
	/* queue as much as the call takes; the client decides to read or not */
	while (grpc_call_send(call, chunk, sizeof(chunk)) == 0)
		;
	grpc_call_reply(call, GRPC_STATUS_OK, NULL, 0, NULL);
}

static void on_closed(struct grpc_server *srv, void *ud)
{
	struct fixture *f = ud;

	(void)srv;
	f->closed = true;
}

static void on_closed_flag(struct grpc_server *srv, void *ud)
{
	(void)srv;
	*(bool *)ud = true;
}

static int setup_with(void **state, const struct grpc_server_limits *limits)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_int_equal(uv_loop_init(&f->loop), 0);
	strcpy(f->dir, "/tmp/dralet-grpc-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/a/b/test.sock", f->dir);
	assert_int_equal(grpc_server_new(&f->loop, limits, &f->srv), 0);
	grpc_server_set_metrics(f->srv, &f->metrics);
	grpc_server_add_method(f->srv, "/t.T/Echo", GRPC_UNARY, h_echo, f);
	grpc_server_add_method(f->srv, "/t.T/Slow", GRPC_UNARY, h_slow, f);
	grpc_server_add_method(f->srv, "/t.T/Hang", GRPC_UNARY, h_hang, f);
	grpc_server_add_method(f->srv, "/t.T/Stream", GRPC_SERVER_STREAMING, h_stream, f);
	assert_int_equal(grpc_server_listen(f->srv, f->path), 0);
	*state = f;
	return 0;
}

static int setup(void **state)
{
	return setup_with(state, NULL);
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	if (!f->closed)
		grpc_server_close(f->srv, on_closed, f);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_true(f->closed);
	assert_int_equal(access(f->path, F_OK), -1);	/* socket removed */
	assert_int_equal(uv_loop_close(&f->loop), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	grpc_metrics_clear(&f->metrics);
	free(f);
	return 0;
}

/* ---- client bodies (client thread) ---- */

static void test_listen_errors(void **state)
{
	struct fixture *f = *state;
	struct grpc_server *srv;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char path[256];
	int fd;
	bool closed = false;

	assert_int_equal(grpc_server_new(&f->loop, NULL, &srv), 0);
	/* a regular file is never removed */
	snprintf(path, sizeof(path), "%s/file", f->dir);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	close(fd);
	assert_int_equal(grpc_server_listen(srv, path), -EEXIST);
	assert_int_equal(access(path, F_OK), 0);
	/* too long for sockaddr_un */
	memset(path, 'x', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	assert_int_equal(grpc_server_listen(srv, path), -ENAMETOOLONG);
	/* a stale socket (bound, nobody listening) is replaced */
	snprintf(path, sizeof(path), "%s/stale.sock", f->dir);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	strcpy(sun.sun_path, path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	close(fd);
	assert_int_equal(grpc_server_listen(srv, path), 0);
	grpc_server_close(srv, on_closed_flag, &closed);
	uv_run(&f->loop, UV_RUN_NOWAIT);
	uv_run(&f->loop, UV_RUN_NOWAIT);
	assert_true(closed);
	assert_int_equal(access(path, F_OK), -1);
}

/* A socket another server listens on is never replaced, nor removed when
 * the server that failed to take it closes. */
static void test_listen_refuses_live_socket(void **state)
{
	struct fixture *f = *state;
	struct grpc_server *srv;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat before, after;
	bool closed = false;
	int fd;

	assert_int_equal(stat(f->path, &before), 0);
	assert_int_equal(grpc_server_new(&f->loop, NULL, &srv), 0);
	assert_int_equal(grpc_server_listen(srv, f->path), -EADDRINUSE);
	grpc_server_close(srv, on_closed_flag, &closed);
	uv_run(&f->loop, UV_RUN_NOWAIT);
	uv_run(&f->loop, UV_RUN_NOWAIT);
	assert_true(closed);
	assert_int_equal(stat(f->path, &after), 0);
	assert_int_equal(after.st_ino, before.st_ino);	/* the same socket ... */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	strcpy(sun.sun_path, f->path);
	assert_int_equal(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);	/* ... served */
	close(fd);
}

struct calls {
	int connect_err;
	int errs[64];
	int status[64];
	size_t lens[64];
	int64_t ms[64];
	unsigned n;
	const char *path;
	const char *body;
	int timeout_ms;
};

static void do_calls(struct fixture *f, void *arg)
{
	struct calls *c = arg;
	struct grpc_client *cl;
	struct grpc_client_result res;

	/* deadlines: safety nets, not goals */
	c->connect_err = grpc_client_connect(f->path, 30000, &cl);
	if (c->connect_err < 0)
		return;
	for (unsigned i = 0; i < c->n; i++) {
		int64_t t0 = now_ms();

		c->errs[i] = grpc_client_call(cl, c->path, c->body, strlen(c->body),
					      c->timeout_ms ? c->timeout_ms : 30000, &res);
		c->ms[i] = now_ms() - t0;
		if (c->errs[i] == 0) {
			c->status[i] = res.status;
			c->lens[i] = res.response_len;
			grpc_client_result_clear(&res);
		}
	}
	grpc_client_free(cl);
}

/* ---- tests ---- */

static void test_socket_file(void **state)
{
	struct fixture *f = *state;
	struct stat st;
	char dir[160];

	assert_int_equal(stat(f->path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	snprintf(dir, sizeof(dir), "%s/a/b", f->dir);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0750);
	assert_string_equal(grpc_server_path(f->srv), f->path);
	assert_int_equal(grpc_server_listen(f->srv, f->path), -EBUSY);
}

static void test_unary_calls(void **state)
{
	struct fixture *f = *state;
	struct calls c = { .n = 20, .path = "/t.T/Echo", .body = "hello" };

	run_client(f, do_calls, &c);
	assert_int_equal(c.connect_err, 0);
	for (unsigned i = 0; i < c.n; i++) {
		assert_int_equal(c.errs[i], 0);
		assert_int_equal(c.status[i], GRPC_STATUS_OK);
		assert_int_equal(c.lens[i], 5);
	}
	assert_int_equal(counted(f, "/t.T/Echo", GRPC_STATUS_OK), c.n);
	assert_int_equal(counted(f, "/t.T/Echo", -1), c.n);
	print_message("echo over the socket: first %lld ms, last %lld ms\n",
		      (long long)c.ms[0], (long long)c.ms[c.n - 1]);
}

static void test_unknown_method(void **state)
{
	struct fixture *f = *state;
	struct calls c = { .n = 1, .path = "/t.T/Nope", .body = "" };

	run_client(f, do_calls, &c);
	assert_int_equal(c.errs[0], 0);
	assert_int_equal(c.status[0], GRPC_STATUS_UNIMPLEMENTED);
	/* counted under "unknown": the table holds only methods the server serves */
	assert_int_equal(counted(f, GRPC_METRICS_UNKNOWN_METHOD, GRPC_STATUS_UNIMPLEMENTED), 1);
	assert_int_equal(counted(f, "/t.T/Nope", -1), 0);
}

static void test_deadline(void **state)
{
	struct fixture *f = *state;
	struct calls c = { .n = 1, .path = "/t.T/Hang", .body = "", .timeout_ms = 100 };

	run_client(f, do_calls, &c);
	assert_int_equal(c.errs[0], 0);
	assert_int_equal(c.status[0], GRPC_STATUS_DEADLINE_EXCEEDED);
	/* the server noticed too (its own timer or the client's RST_STREAM) */
	while (f->cancels == 0)
		uv_run(&f->loop, UV_RUN_ONCE);
	assert_true(f->cancel_reason == GRPC_STATUS_DEADLINE_EXCEEDED ||
		    f->cancel_reason == GRPC_STATUS_CANCELLED);
	/* once, with the status that ended it, although the handler replied later */
	while (!counted(f, "/t.T/Hang", -1))
		uv_run(&f->loop, UV_RUN_ONCE);
	assert_int_equal(counted(f, "/t.T/Hang", -1), 1);
	assert_int_equal(counted(f, "/t.T/Hang", GRPC_STATUS_DEADLINE_EXCEEDED) +
			 counted(f, "/t.T/Hang", GRPC_STATUS_CANCELLED), 1);
}

static void test_metrics_table(void **state)
{
	struct grpc_metrics m = { 0 };

	(void)state;
	grpc_metrics_count(&m, "/a.A/X", GRPC_STATUS_OK);
	grpc_metrics_count(&m, "/a.A/X", GRPC_STATUS_OK);
	grpc_metrics_count(&m, "/a.A/Y", GRPC_STATUS_INTERNAL);
	grpc_metrics_count(&m, NULL, 99);	/* no method, no such code */
	grpc_metrics_count(NULL, "/a.A/X", 0);	/* no table: nothing */
	assert_int_equal(m.n, 3);
	assert_string_equal(m.methods[0].method, "/a.A/X");
	assert_int_equal(m.methods[0].by_code[GRPC_STATUS_OK], 2);
	assert_int_equal(m.methods[1].by_code[GRPC_STATUS_INTERNAL], 1);
	assert_string_equal(m.methods[2].method, GRPC_METRICS_UNKNOWN_METHOD);
	assert_int_equal(m.methods[2].by_code[GRPC_STATUS_UNKNOWN], 1);
	grpc_metrics_clear(&m);
	assert_int_equal(m.n, 0);
	grpc_metrics_clear(&m);
}

static void test_close_waits_for_calls(void **state)
{
	struct fixture *f = *state;
	struct calls c = { .n = 1, .path = "/t.T/Slow", .body = "" };

	f->close_in_handler = true;	/* closes the server while the call runs */
	run_client(f, do_calls, &c);
	assert_int_equal(c.errs[0], 0);
	assert_int_equal(c.status[0], GRPC_STATUS_OK);
	assert_true(c.ms[0] >= 150);
	assert_int_equal(access(f->path, F_OK), -1);	/* removed at close */
}

static int setup_short_grace(void **state)
{
	struct grpc_server_limits l;

	grpc_server_default_limits(&l);
	l.shutdown_grace_ms = 100;
	l.handshake_timeout_ms = 100;
	l.max_connections = 2;
	return setup_with(state, &l);
}

static void test_close_grace_expires(void **state)
{
	struct fixture *f = *state;
	struct calls c = { .n = 1, .path = "/t.T/Hang", .body = "" };

	f->close_in_handler = true;
	run_client(f, do_calls, &c);
	/* the connection was closed under the call */
	assert_true(c.errs[0] == -ECONNRESET || c.status[0] != GRPC_STATUS_OK);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_int_equal(f->cancels, 1);
	assert_int_equal(f->cancel_reason, GRPC_STATUS_UNAVAILABLE);
}

static int raw_connect(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	strcpy(sun.sun_path, path);
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Reads until EOF (or 30 s: a safety net); returns the bytes read, -1 on timeout. */
static ssize_t read_until_eof(int fd)
{
	char buf[4096];
	ssize_t total = 0;
	int64_t end = now_ms() + 30000;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, (int)(end - now_ms())) <= 0)
			return -1;
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			return total;
		total += n;
	}
}

struct raw_result {
	ssize_t got;
	struct calls after;
};

static void do_silent(struct fixture *f, void *arg)
{
	struct raw_result *r = arg;
	int fd = raw_connect(f->path);

	r->got = read_until_eof(fd);	/* our SETTINGS, then the close */
	close(fd);
}

static void test_handshake_timeout(void **state)
{
	struct fixture *f = *state;
	struct raw_result r = { 0 };

	run_client(f, do_silent, &r);
	assert_true(r.got > 0);
}

static void do_garbage(struct fixture *f, void *arg)
{
	struct raw_result *r = arg;
	int fd = raw_connect(f->path);
	static const char junk[] = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";

	if (write(fd, junk, sizeof(junk) - 1) < 0)
		r->got = -2;
	else
		r->got = read_until_eof(fd);
	close(fd);
	do_calls(f, &r->after);
}

static void test_garbage(void **state)
{
	struct fixture *f = *state;
	struct raw_result r = { .after = { .n = 1, .path = "/t.T/Echo", .body = "x" } };

	run_client(f, do_garbage, &r);
	assert_true(r.got >= 0);	/* closed, not hanging */
	assert_int_equal(r.after.errs[0], 0);
	assert_int_equal(r.after.status[0], GRPC_STATUS_OK);
}

struct limit_result {
	int connect[3];		/* a, b, c */
	int call[3];		/* an Echo on each afterwards: 0, or the error */
	int status[3];
};

static int echo_on(struct grpc_client *cl, int *status)
{
	struct grpc_client_result res;
	int r;

	if (!cl)
		return -ENOTCONN;
	r = grpc_client_call(cl, "/t.T/Echo", "x", 1, 30000, &res);
	if (r == 0) {
		*status = res.status;
		grpc_client_result_clear(&res);
	}
	return r;
}

static void do_limit(struct fixture *f, void *arg)
{
	struct limit_result *r = arg;
	struct grpc_client *cl[3] = { NULL, NULL, NULL };

	for (int i = 0; i < 3; i++)
		r->connect[i] = grpc_client_connect(f->path, 30000, &cl[i]);
	usleep(50000);	/* the eviction's close reaches the first client */
	for (int i = 2; i >= 0; i--)
		r->call[i] = echo_on(cl[i], &r->status[i]);
	for (int i = 0; i < 3; i++)
		grpc_client_free(cl[i]);
}

/* max_connections 2, all idle: the third connection evicts the first. */
static void test_connection_limit(void **state)
{
	struct fixture *f = *state;
	struct limit_result r;

	memset(&r, 0, sizeof(r));

	run_client(f, do_limit, &r);
	for (int i = 0; i < 3; i++)
		assert_int_equal(r.connect[i], 0);
	assert_int_equal(r.call[2], 0);
	assert_int_equal(r.status[2], GRPC_STATUS_OK);
	assert_int_equal(r.call[1], 0);
	assert_int_equal(r.status[1], GRPC_STATUS_OK);
	/* the longest idle was closed (not left hanging into the deadline) */
	assert_true(r.call[0] < 0 && r.call[0] != -ETIMEDOUT);
}

static int setup_per_client(void **state)
{
	struct grpc_server_limits l;

	grpc_server_default_limits(&l);
	l.shutdown_grace_ms = 100;
	l.max_connections = 8;
	l.max_connections_per_client = 2;
	return setup_with(state, &l);
}

/* Two connections per client process: its third is refused, its first two stay. */
static void test_connection_limit_per_client(void **state)
{
	struct fixture *f = *state;
	struct limit_result r;

	memset(&r, 0, sizeof(r));

	run_client(f, do_limit, &r);
	assert_int_equal(r.connect[0], 0);
	assert_int_equal(r.connect[1], 0);
	assert_true(r.connect[2] < 0);
	assert_int_equal(r.call[0], 0);
	assert_int_equal(r.status[0], GRPC_STATUS_OK);
	assert_int_equal(r.call[1], 0);
}

static int setup_idle(void **state)
{
	struct grpc_server_limits l;

	grpc_server_default_limits(&l);
	l.shutdown_grace_ms = 100;
	l.idle_timeout_ms = 100;
	return setup_with(state, &l);
}

static void do_idle(struct fixture *f, void *arg)
{
	struct raw_result *r = arg;
	int fd = raw_connect(f->path);
	static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
	static const uint8_t settings[9] = { 0, 0, 0, 4, 0, 0, 0, 0, 0 };

	/* a complete handshake, then silence: GOAWAY and close, not forever */
	if (write(fd, preface, sizeof(preface) - 1) < 0 || write(fd, settings, 9) < 0)
		r->got = -2;
	else
		r->got = read_until_eof(fd);
	close(fd);
	do_calls(f, &r->after);
}

static void test_idle_timeout(void **state)
{
	struct fixture *f = *state;
	struct raw_result r = { .after = { .n = 1, .path = "/t.T/Echo", .body = "x" } };

	run_client(f, do_idle, &r);
	assert_true(r.got > 0);		/* SETTINGS, ACK, GOAWAY, then EOF */
	assert_int_equal(r.after.errs[0], 0);
	assert_int_equal(r.after.status[0], GRPC_STATUS_OK);
}

/* A client that asks for a lot of streamed data and never reads. */
struct stuck_result {
	struct calls others;
	int setup_err;
};

static void do_stuck(struct fixture *f, void *arg)
{
	struct stuck_result *r = arg;
	struct stuck_client *c = NULL;

	r->setup_err = stuck_client_open(f->path, "/t.T/Stream", 20, &c);
	usleep(100000);	/* the server fills the socket and blocks */
	/* never read from it; others must be served meanwhile */
	do_calls(f, &r->others);
	stuck_client_close(c);
}

static int setup_stuck(void **state)
{
	struct grpc_server_limits l;

	grpc_server_default_limits(&l);
	l.max_stream_output = 256 * 1024;
	l.shutdown_grace_ms = 100;
	return setup_with(state, &l);
}

static void test_stuck_reader(void **state)
{
	struct fixture *f = *state;
	/* blocked behind the stuck reader, the calls would wait forever and run
	 * into their 30 s deadlines (timings: make bench, not this test) */
	struct stuck_result r = { .others = { .n = 10, .path = "/t.T/Echo", .body = "hi",
					      .timeout_ms = 30000 } };
	int64_t slowest = 0;

	run_client(f, do_stuck, &r);
	assert_int_equal(r.setup_err, 0);
	assert_int_equal(r.others.connect_err, 0);
	for (unsigned i = 0; i < r.others.n; i++) {
		assert_int_equal(r.others.errs[i], 0);
		assert_int_equal(r.others.status[i], GRPC_STATUS_OK);
		if (r.others.ms[i] > slowest)
			slowest = r.others.ms[i];
	}
	print_message("Echo next to a stuck reader: slowest %lld ms\n", (long long)slowest);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);	/* as the daemon does: peers may vanish */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_socket_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unary_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_listen_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_listen_refuses_live_socket, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_method, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deadline, setup, teardown),
		cmocka_unit_test(test_metrics_table),
		cmocka_unit_test_setup_teardown(test_close_waits_for_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_grace_expires, setup_short_grace,
						teardown),
		cmocka_unit_test_setup_teardown(test_handshake_timeout, setup_short_grace,
						teardown),
		cmocka_unit_test_setup_teardown(test_garbage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connection_limit, setup_short_grace,
						teardown),
		cmocka_unit_test_setup_teardown(test_connection_limit_per_client, setup_per_client,
						teardown),
		cmocka_unit_test_setup_teardown(test_idle_timeout, setup_idle, teardown),
		cmocka_unit_test_setup_teardown(test_stuck_reader, setup_stuck, teardown),
	};

	return cmocka_run_group_tests_name("grpc_server", tests, NULL, NULL);
}
