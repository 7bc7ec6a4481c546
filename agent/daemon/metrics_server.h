/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The operator's HTTP endpoint (docs/operations.md): /metrics (Prometheus text),
 * /healthz (liveness) and /readyz (readiness). libmicrohttpd serves on its own
 * thread. /metrics is made on the event loop (uv_async), so what collect reads
 * needs no locks; a loop that does not answer within @timeout_ms gets 503.
 * /healthz and /readyz are answered by the server thread from what the loop
 * last said: healthy while the loop's heartbeat (a 1 s timer) is younger than
 * @timeout_ms, and before the loop first runs (the agent is starting: a startup
 * probe covers that); ready as metrics_server_set_ready last said.
 *
 * Threads: everything on the loop thread; collect runs on it.
 * Errors: -EINVAL (bad address), -EADDRINUSE and other -errno from binding.
 */
#ifndef DRALET_METRICS_SERVER_H
#define DRALET_METRICS_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "agent/lib/prom_text.h"

struct metrics_server_config {
	uv_loop_t *loop;
	const char *address;	/* "HOST:PORT", ":PORT" (every address), "[V6]:PORT" */
	unsigned timeout_ms;	/* how long a request waits for the loop (0: 5000) */
	/* the metrics, appended to @out; loop thread */
	void (*collect)(void *userdata, struct prom_buf *out);
	/* the port is taken (a rolling update's previous instance, on the node's
	 * network): start anyway and try again every second; NULL: fail instead.
	 * Called with the port once it listens (loop thread). */
	void (*on_listening)(void *userdata, unsigned port);
	void *userdata;
};

struct metrics_server;

int metrics_server_start(const struct metrics_server_config *cfg, struct metrics_server **ret);
/* Ready or not, and why not (copied). */
void metrics_server_set_ready(struct metrics_server *s, bool ready, const char *why);
/* The port it listens on (for ":0"); 0 while it waits for a taken port. */
unsigned metrics_server_port(const struct metrics_server *s);
/* Stops serving (pending requests get 503) and frees it; calls @done on the loop
 * once the async handle is closed (NULL: none). */
void metrics_server_stop(struct metrics_server *s, void (*done)(void *), void *userdata);

#endif
