/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test-only daemon for the gRPC integration tests: opens the kubelet
 * endpoint of a fake driver (registration + DRA socket) with the real
 * library code and adds test methods to the DRA server:
 *
 *   /dralet.test.Test/Echo    unary: answers the request bytes
 *   /dralet.test.Test/Slow    unary: request is "<ms>"; answers after that
 *                             long from a timer (asynchronous reply)
 *   /dralet.test.Test/Work    unary: request is "<ms>"; sleeps on a libuv
 *                             worker thread, replies from after-work;
 *                             "gate": waits there until the next Release
 *   /dralet.test.Test/Gate    unary: held (counted in Stats "held") until
 *                             the next Release, then answers "done"; lets
 *                             a test show calls overlap without a clock
 *   /dralet.test.Test/Release unary: answers every held Gate call and
 *                             opens the gated Work calls; answers how many
 *                             Gate calls it released
 *   /dralet.test.Test/Hang    unary: never answers until cancelled
 *   /dralet.test.Test/Stream  server streaming: "<count> <size> <every_ms>"
 *   /dralet.test.Test/Stats   unary: JSON counters (cancellations ...)
 *   NodePrepareResources / NodeUnprepareResources (v1 and v1beta1): a fake
 *   driver giving every claim one device; a claim named "fail" fails.
 *
 * Prints "READY <registration socket> <dra socket>" when serving; SIGTERM
 * or SIGINT close the endpoint gracefully and exit 0. SIGUSR1 does what
 * Release does (for held calls while no new call can get in: a closing
 * server).
 */
#include <errno.h>
#include <getopt.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "agent/kubelet/grpc_server.h"
#include "agent/kubelet/registration.h"
#include "agent/lib/log.h"
#include "proto/kubelet_pb.h"

struct stats {
	unsigned cancelled, deadline, unavailable, served;
	unsigned registered, rejected;
};

static struct stats stats;	/* test program: one instance */
static atomic_uint release_gen;	/* bumped by every Release (worker threads read it) */
static atomic_uint working;	/* gated Work calls waiting on a worker thread */

/* ---- Echo, Slow, Hang, Work ---- */

static void on_echo(struct grpc_call *call, const uint8_t *req, size_t len, void *ud)
{
	(void)ud;
	stats.served++;
	grpc_call_reply(call, GRPC_STATUS_OK, req, len, NULL);
}

static void count_cancel(struct grpc_call *call)
{
	switch (grpc_call_cancel_reason(call)) {
	case GRPC_STATUS_DEADLINE_EXCEEDED: stats.deadline++; break;
	case GRPC_STATUS_UNAVAILABLE: stats.unavailable++; break;
	default: stats.cancelled++; break;
	}
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

	stats.served++;
	grpc_call_reply(s->call, GRPC_STATUS_OK, "done", 4, NULL);
	uv_close((uv_handle_t *)&s->timer, slow_closed);
}

static void slow_cancel(struct grpc_call *call, void *ud)
{
	struct slow *s = ud;

	count_cancel(call);
	uv_timer_stop(&s->timer);
	grpc_call_reply(call, GRPC_STATUS_CANCELLED, NULL, 0, NULL);	/* releases it */
	uv_close((uv_handle_t *)&s->timer, slow_closed);
}

static void on_slow(struct grpc_call *call, const uint8_t *req, size_t len, void *ud)
{
	uv_loop_t *loop = ud;
	char buf[32] = { 0 };
	struct slow *s = calloc(1, sizeof(*s));

	memcpy(buf, req, len < sizeof(buf) - 1 ? len : sizeof(buf) - 1);
	s->call = call;
	uv_timer_init(loop, &s->timer);
	s->timer.data = s;
	grpc_call_on_cancel(call, slow_cancel, s);
	uv_timer_start(&s->timer, slow_fire, strtoull(buf, NULL, 10), 0);
}

static void hang_cancel(struct grpc_call *call, void *ud)
{
	(void)ud;
	count_cancel(call);
	grpc_call_reply(call, GRPC_STATUS_CANCELLED, NULL, 0, NULL);
}

static void on_hang(struct grpc_call *call, const uint8_t *req, size_t len, void *ud)
{
	(void)req;
	(void)len;
	(void)ud;
	grpc_call_on_cancel(call, hang_cancel, NULL);
}

struct work {
	uv_work_t req;
	struct grpc_call *call;
	unsigned ms;
	bool gated;		/* waits for release_gen to move past gen */
	unsigned gen;
	bool saw_cancel;
};

static void work_run(uv_work_t *req)
{
	struct work *w = req->data;

	/* Worker thread: only grpc_call_cancelled() is allowed here. */
	if (w->gated) {
		atomic_fetch_add(&working, 1);
		while (atomic_load(&release_gen) == w->gen && !grpc_call_cancelled(w->call))
			usleep(10000);
		w->saw_cancel = grpc_call_cancelled(w->call);
		atomic_fetch_sub(&working, 1);
		return;
	}
	for (unsigned i = 0; i < w->ms; i += 10) {
		if (grpc_call_cancelled(w->call)) {
			w->saw_cancel = true;
			return;
		}
		usleep(10000);
	}
}

static void work_done(uv_work_t *req, int status)
{
	struct work *w = req->data;

	(void)status;
	if (grpc_call_cancelled(w->call))
		count_cancel(w->call);
	else
		stats.served++;
	grpc_call_reply(w->call, GRPC_STATUS_OK, "worked", 6, NULL);
	free(w);
}

static void on_work(struct grpc_call *call, const uint8_t *req, size_t len, void *ud)
{
	uv_loop_t *loop = ud;
	struct work *w = calloc(1, sizeof(*w));
	char buf[32] = { 0 };

	memcpy(buf, req, len < sizeof(buf) - 1 ? len : sizeof(buf) - 1);
	w->call = call;
	w->ms = (unsigned)strtoul(buf, NULL, 10);
	w->gated = !strcmp(buf, "gate");
	w->gen = atomic_load(&release_gen);
	w->req.data = w;
	uv_queue_work(loop, &w->req, work_run, work_done);
}

/* ---- Gate, Release ---- */

#define MAX_HELD 64

static struct grpc_call *held[MAX_HELD];	/* Gate calls waiting for a Release */
static unsigned n_held;

static void held_remove(struct grpc_call *call)
{
	for (unsigned i = 0; i < n_held; i++)
		if (held[i] == call) {
			held[i] = held[--n_held];
			return;
		}
}

static void gate_cancel(struct grpc_call *call, void *ud)
{
	(void)ud;
	count_cancel(call);
	held_remove(call);
	grpc_call_reply(call, GRPC_STATUS_CANCELLED, NULL, 0, NULL);
}

static void on_gate(struct grpc_call *call, const uint8_t *req, size_t len, void *ud)
{
	(void)req;
	(void)len;
	(void)ud;
	if (n_held == MAX_HELD) {
		grpc_call_reply(call, GRPC_STATUS_RESOURCE_EXHAUSTED, NULL, 0, "too many held");
		return;
	}
	held[n_held++] = call;
	grpc_call_on_cancel(call, gate_cancel, NULL);
}

/* Answers the held Gate calls and opens the gated Work calls; returns how
 * many Gate calls it answered. */
static unsigned release_all(void)
{
	unsigned n = n_held;

	atomic_fetch_add(&release_gen, 1);
	while (n_held) {
		struct grpc_call *g = held[--n_held];

		stats.served++;
		grpc_call_reply(g, GRPC_STATUS_OK, "done", 4, NULL);
	}
	return n;
}

static void on_release(struct grpc_call *call, const uint8_t *req, size_t len, void *ud)
{
	char buf[16];
	unsigned n = release_all();
	int r;

	(void)req;
	(void)len;
	(void)ud;
	r = snprintf(buf, sizeof(buf), "%u", n);
	grpc_call_reply(call, GRPC_STATUS_OK, buf, (size_t)r, NULL);
}

/* ---- Stream ---- */

struct streamer {
	uv_timer_t timer;
	struct grpc_call *call;
	unsigned left;
	size_t size;
	uint8_t *payload;
};

static void streamer_closed(uv_handle_t *h)
{
	struct streamer *s = h->data;

	free(s->payload);
	free(s);
}

static void streamer_tick(uv_timer_t *t)
{
	struct streamer *s = t->data;

	if (s->left == 0) {
		stats.served++;
		grpc_call_reply(s->call, GRPC_STATUS_OK, NULL, 0, NULL);
		uv_close((uv_handle_t *)&s->timer, streamer_closed);
		return;
	}
	int r = grpc_call_send(s->call, s->payload, s->size);

	if (r == -ENOBUFS)
		return;	/* the client does not read: try again next tick */
	s->left--;
}

static void streamer_cancel(struct grpc_call *call, void *ud)
{
	struct streamer *s = ud;

	count_cancel(call);
	uv_timer_stop(&s->timer);
	grpc_call_reply(call, GRPC_STATUS_CANCELLED, NULL, 0, NULL);
	uv_close((uv_handle_t *)&s->timer, streamer_closed);
}

static void on_stream(struct grpc_call *call, const uint8_t *req, size_t len, void *ud)
{
	uv_loop_t *loop = ud;
	char buf[64] = { 0 };
	unsigned count = 0, every = 0;
	size_t size = 0;
	struct streamer *s;

	memcpy(buf, req, len < sizeof(buf) - 1 ? len : sizeof(buf) - 1);
	if (sscanf(buf, "%u %zu %u", &count, &size, &every) != 3 || size > 8 << 20) {
		grpc_call_reply(call, GRPC_STATUS_INVALID_ARGUMENT, NULL, 0,
				"want \"<count> <size> <every_ms>\"");
		return;
	}
	s = calloc(1, sizeof(*s));
	s->payload = malloc(size ? size : 1);
	memset(s->payload, 's', size);
	s->call = call;
	s->left = count;
	s->size = size;
	uv_timer_init(loop, &s->timer);
	s->timer.data = s;
	grpc_call_on_cancel(call, streamer_cancel, s);
	uv_timer_start(&s->timer, streamer_tick, 0, every ? every : 1);
}

static void on_stats(struct grpc_call *call, const uint8_t *req, size_t len, void *ud)
{
	struct grpc_server **dra = ud;
	char buf[320];
	int n;

	(void)req;
	(void)len;
	n = snprintf(buf, sizeof(buf),
		     "{\"cancelled\": %u, \"deadline\": %u, \"unavailable\": %u, \"served\": %u, "
		     "\"registered\": %u, \"rejected\": %u, \"connections\": %u, "
		     "\"held\": %u, \"working\": %u}",
		     stats.cancelled, stats.deadline, stats.unavailable, stats.served,
		     stats.registered, stats.rejected, grpc_server_n_connections(*dra), n_held,
		     atomic_load(&working));
	grpc_call_reply(call, GRPC_STATUS_OK, buf, (size_t)n, NULL);
}

/* ---- a fake DRA driver (wire-identical v1/v1beta1 messages) ---- */

static void on_prepare(struct grpc_call *call, const uint8_t *req, size_t len, void *ud)
{
	dra_v1_prepare_request *pr = (dra_v1_prepare_request *)protobuf_c_message_unpack(
		&dra_v1_prepare_request_descriptor, NULL, len, req);
	dra_v1_prepare_response resp = DRA_V1_PREPARE_RESPONSE_INIT;

	(void)ud;
	if (!pr) {
		grpc_call_reply(call, GRPC_STATUS_INVALID_ARGUMENT, NULL, 0, "bad request");
		return;
	}
	size_t n = pr->n_claims;
	dra_v1_prepare_entry *entries = calloc(n + 1, sizeof(*entries));
	dra_v1_prepare_entry **ep = calloc(n + 1, sizeof(*ep));
	dra_v1_prepare_result *results = calloc(n + 1, sizeof(*results));
	dra_v1_device *devs = calloc(n + 1, sizeof(*devs));
	dra_v1_device **devp = calloc(n + 1, sizeof(*devp));
	char (*cdi)[160] = calloc(n + 1, sizeof(*cdi));
	char **cdip = calloc(n + 1, sizeof(*cdip));
	char *reqname = (char *)"gpu";

	for (size_t i = 0; i < n; i++) {
		dra_v1_prepare_entry e = DRA_V1_PREPARE_ENTRY_INIT;
		dra_v1_prepare_result r = DRA_V1_PREPARE_RESULT_INIT;
		dra_v1_device d = DRA_V1_DEVICE_INIT;

		entries[i] = e;
		results[i] = r;
		devs[i] = d;
		entries[i].key = pr->claims[i]->uid;
		entries[i].value = &results[i];
		if (!strcmp(pr->claims[i]->name, "fail")) {
			results[i].error = (char *)"injected failure";
		} else {
			snprintf(cdi[i], sizeof(cdi[i]), "example.com/gpu=%s-gpu-0",
				 pr->claims[i]->uid);
			cdip[i] = cdi[i];
			devs[i].pool_name = (char *)"node-1";
			devs[i].device_name = (char *)"gpu-0";
			devs[i].n_request_names = 1;
			devs[i].request_names = &reqname;
			devs[i].n_cdi_device_ids = 1;
			devs[i].cdi_device_ids = &cdip[i];
			devp[i] = &devs[i];
			results[i].n_devices = 1;
			results[i].devices = &devp[i];
		}
		ep[i] = &entries[i];
	}
	resp.n_claims = n;
	resp.claims = ep;
	size_t plen = protobuf_c_message_get_packed_size(&resp.base);
	uint8_t *buf = malloc(plen + 1);

	protobuf_c_message_pack(&resp.base, buf);
	stats.served++;
	grpc_call_reply(call, GRPC_STATUS_OK, buf, plen, NULL);
	free(buf);
	free(entries);
	free(ep);
	free(results);
	free(devs);
	free(devp);
	free(cdi);
	free(cdip);
	protobuf_c_message_free_unpacked(&pr->base, NULL);
}

static void on_unprepare(struct grpc_call *call, const uint8_t *req, size_t len, void *ud)
{
	dra_v1_unprepare_request *ur = (dra_v1_unprepare_request *)protobuf_c_message_unpack(
		&dra_v1_unprepare_request_descriptor, NULL, len, req);
	dra_v1_unprepare_response resp = DRA_V1_UNPREPARE_RESPONSE_INIT;

	(void)ud;
	if (!ur) {
		grpc_call_reply(call, GRPC_STATUS_INVALID_ARGUMENT, NULL, 0, "bad request");
		return;
	}
	size_t n = ur->n_claims;
	dra_v1_unprepare_entry *entries = calloc(n + 1, sizeof(*entries));
	dra_v1_unprepare_entry **ep = calloc(n + 1, sizeof(*ep));
	dra_v1_unprepare_result *results = calloc(n + 1, sizeof(*results));

	for (size_t i = 0; i < n; i++) {
		dra_v1_unprepare_entry e = DRA_V1_UNPREPARE_ENTRY_INIT;
		dra_v1_unprepare_result r = DRA_V1_UNPREPARE_RESULT_INIT;

		entries[i] = e;
		results[i] = r;
		entries[i].key = ur->claims[i]->uid;
		entries[i].value = &results[i];
		if (!strcmp(ur->claims[i]->name, "fail"))
			results[i].error = (char *)"injected failure";
		ep[i] = &entries[i];
	}
	resp.n_claims = n;
	resp.claims = ep;
	size_t plen = protobuf_c_message_get_packed_size(&resp.base);
	uint8_t *buf = malloc(plen + 1);

	protobuf_c_message_pack(&resp.base, buf);
	stats.served++;
	grpc_call_reply(call, GRPC_STATUS_OK, buf, plen, NULL);
	free(buf);
	free(entries);
	free(ep);
	free(results);
	protobuf_c_message_free_unpacked(&ur->base, NULL);
}

/* ---- main ---- */

struct app {
	uv_loop_t loop;
	uv_signal_t sigterm, sigint, sigusr1;
	struct kubelet_endpoint *ep;
	bool closing;
};

static void on_registration(void *userdata, const char *driver, bool registered,
			    const char *error)
{
	(void)userdata;
	(void)driver;
	(void)error;
	if (registered)
		stats.registered++;
	else
		stats.rejected++;
}

static void endpoint_closed(void *userdata)
{
	struct app *app = userdata;

	uv_close((uv_handle_t *)&app->sigterm, NULL);
	uv_close((uv_handle_t *)&app->sigint, NULL);
	uv_close((uv_handle_t *)&app->sigusr1, NULL);
}

static void on_sigusr1(uv_signal_t *sig, int signum)
{
	(void)sig;
	(void)signum;
	log_info("test server: SIGUSR1: released %u held call(s)", release_all());
}

static void on_signal(uv_signal_t *sig, int signum)
{
	struct app *app = sig->data;

	(void)signum;
	if (app->closing)
		return;
	app->closing = true;
	log_info("test server: closing");
	kubelet_endpoint_close(app->ep, endpoint_closed, app);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "driver", required_argument, NULL, 'd' },
		{ "registry-dir", required_argument, NULL, 'r' },
		{ "plugins-dir", required_argument, NULL, 'p' },
		{ "pod-uid", required_argument, NULL, 'u' },
		{ "health", no_argument, NULL, 'H' },
		{ "max-message", required_argument, NULL, 'm' },
		{ "max-connections", required_argument, NULL, 'c' },
		{ "grace-ms", required_argument, NULL, 'g' },
		{ "handshake-ms", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct kubelet_endpoint_config cfg = { .driver = "gpu.test.dralet.io" };
	struct grpc_server_limits limits;
	struct app app = { 0 };
	struct grpc_server *dra;
	int c, r;

	signal(SIGPIPE, SIG_IGN);
	grpc_server_default_limits(&limits);
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'd': cfg.driver = optarg; break;
		case 'r': cfg.registry_dir = optarg; break;
		case 'p': cfg.plugins_dir = optarg; break;
		case 'u': cfg.pod_uid = optarg; break;
		case 'H': cfg.health_service = true; break;
		case 'm': limits.max_message = strtoull(optarg, NULL, 10); break;
		case 'c': limits.max_connections = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'g': limits.shutdown_grace_ms = (unsigned)strtoul(optarg, NULL, 10); break;
		case 't': limits.handshake_timeout_ms = (unsigned)strtoul(optarg, NULL, 10); break;
		default: return 2;
		}
	}
	log_setup(getenv("DRALET_TEST_DEBUG") ? 4 : 0, false);
	cfg.limits = &limits;
	cfg.on_registration = on_registration;
	uv_loop_init(&app.loop);
	r = kubelet_endpoint_open(&app.loop, &cfg, &app.ep);
	if (r < 0) {
		uv_run(&app.loop, UV_RUN_DEFAULT);
		uv_loop_close(&app.loop);
		return 1;
	}
	dra = kubelet_endpoint_dra_server(app.ep);
	grpc_server_add_method(dra, "/dralet.test.Test/Echo", GRPC_UNARY, on_echo, NULL);
	grpc_server_add_method(dra, "/dralet.test.Test/Slow", GRPC_UNARY, on_slow, &app.loop);
	grpc_server_add_method(dra, "/dralet.test.Test/Work", GRPC_UNARY, on_work, &app.loop);
	grpc_server_add_method(dra, "/dralet.test.Test/Hang", GRPC_UNARY, on_hang, NULL);
	grpc_server_add_method(dra, "/dralet.test.Test/Gate", GRPC_UNARY, on_gate, NULL);
	grpc_server_add_method(dra, "/dralet.test.Test/Release", GRPC_UNARY, on_release, NULL);
	grpc_server_add_method(dra, "/dralet.test.Test/Stream", GRPC_SERVER_STREAMING, on_stream,
			       &app.loop);
	grpc_server_add_method(dra, "/dralet.test.Test/Stats", GRPC_UNARY, on_stats, &dra);
	grpc_server_add_method(dra, KUBELET_PATH_V1_PREPARE, GRPC_UNARY, on_prepare, NULL);
	grpc_server_add_method(dra, KUBELET_PATH_V1_UNPREPARE, GRPC_UNARY, on_unprepare, NULL);
	grpc_server_add_method(dra, KUBELET_PATH_V1BETA1_PREPARE, GRPC_UNARY, on_prepare, NULL);
	grpc_server_add_method(dra, KUBELET_PATH_V1BETA1_UNPREPARE, GRPC_UNARY, on_unprepare,
			       NULL);
	uv_signal_init(&app.loop, &app.sigterm);
	uv_signal_init(&app.loop, &app.sigint);
	app.sigterm.data = app.sigint.data = &app;
	uv_signal_start(&app.sigterm, on_signal, SIGTERM);
	uv_signal_start(&app.sigint, on_signal, SIGINT);
	uv_signal_init(&app.loop, &app.sigusr1);
	uv_signal_start(&app.sigusr1, on_sigusr1, SIGUSR1);
	printf("READY %s %s\n", kubelet_endpoint_registration_socket(app.ep),
	       kubelet_endpoint_dra_socket(app.ep));
	fflush(stdout);
	uv_run(&app.loop, UV_RUN_DEFAULT);
	r = uv_loop_close(&app.loop);
	if (r < 0)
		fprintf(stderr, "test server: loop not closed cleanly: %s\n", uv_strerror(r));
	return r < 0 ? 1 : 0;
}
