/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Raw bytes into a gRPC server connection (the core nghttp2 session that
 * server.c puts behind each socket): the input follows the client preface,
 * so it starts at the first frame. Handlers answer synchronously, later
 * (after the input), by streaming, or with errors; the transport pushes
 * back now and then. The connection is freed at the end of each input and
 * every timer closed, so leaks show up.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "agent/kubelet/grpc_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_HELD 256

static uv_loop_t loop;
static struct grpc_server *srv;
static struct grpc_call *held[MAX_HELD];
static size_t n_held;
static unsigned writes, full_every;
static bool finished;

static void forget(struct grpc_call *call)
{
	for (size_t i = 0; i < n_held; i++)
		if (held[i] == call)
			held[i] = NULL;
}

static void on_cancel(struct grpc_call *call, void *ud)
{
	(void)ud;
	forget(call);
	grpc_call_reply(call, GRPC_STATUS_OK, NULL, 0, NULL);
}

static void h_echo(struct grpc_call *call, const uint8_t *req, size_t len, void *ud)
{
	(void)ud;
	grpc_call_reply(call, GRPC_STATUS_OK, req, len, NULL);
}

static void h_error(struct grpc_call *call, const uint8_t *req, size_t len, void *ud)
{
	(void)ud;
	grpc_call_replyf(call, (enum grpc_status)(len % 17), "error %.*s", (int)(len < 40 ? len : 40),
			 req ? (const char *)req : "");
}

static void h_hold(struct grpc_call *call, const uint8_t *req, size_t len, void *ud)
{
	(void)req;
	(void)len;
	(void)ud;
	if (n_held == MAX_HELD) {
		grpc_call_reply(call, GRPC_STATUS_UNAVAILABLE, NULL, 0, "busy");
		return;
	}
	held[n_held++] = call;
	grpc_call_on_cancel(call, on_cancel, NULL);
}

static void h_stream(struct grpc_call *call, const uint8_t *req, size_t len, void *ud)
{
	(void)ud;
	for (size_t i = 0; i < len % 5; i++)
		grpc_call_send(call, req, len);
	h_hold(call, req, len, NULL);
}

static bool io_write(void *io_data, uint8_t *buf, size_t len)
{
	(void)io_data;
	(void)len;
	free(buf);
	writes++;
	return full_every && writes % full_every == 0;
}

static void io_finished(void *io_data)
{
	(void)io_data;
	finished = true;
}

static const struct grpc_conn_io io = { io_write, io_finished };

static void setup(void)
{
	struct grpc_server_limits limits;

	uv_loop_init(&loop);
	grpc_server_default_limits(&limits);
	limits.max_message = 64 * 1024;
	limits.max_conn_request_bytes = 256 * 1024;
	limits.max_stream_output = 64 * 1024;
	grpc_server_new(&loop, &limits, &srv);
	grpc_server_add_method(srv, "/f.F/Echo", GRPC_UNARY, h_echo, NULL);
	grpc_server_add_method(srv, "/f.F/Error", GRPC_UNARY, h_error, NULL);
	grpc_server_add_method(srv, "/f.F/Hold", GRPC_UNARY, h_hold, NULL);
	grpc_server_add_method(srv, "/f.F/Stream", GRPC_SERVER_STREAMING, h_stream, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
	struct grpc_conn *conn;
	size_t split;

	if (!srv)
		setup();
	if (size < 2)
		return 0;
	full_every = data[0] % 4;	/* 0: never push back */
	split = size > 2 ? (size_t)data[1] % (size - 1) + 1 : 1;
	data += 2;
	size -= 2;
	writes = 0;
	finished = false;
	n_held = 0;
	if (grpc_conn_new(srv, &io, NULL, &conn) < 0)
		return 0;
	grpc_conn_flush(conn);
	if (grpc_conn_recv(conn, (const uint8_t *)preface, sizeof(preface) - 1) == 0 &&
	    grpc_conn_recv(conn, data, split < size ? split : size) == 0 && split < size)
		grpc_conn_recv(conn, data + split, size - split);
	/* Answer what is held, alternating kinds, after the input. */
	for (size_t i = 0; i < n_held; i++) {
		struct grpc_call *call = held[i];

		if (!call)
			continue;
		held[i] = NULL;
		if (i % 3 == 0)
			grpc_call_reply(call, GRPC_STATUS_OK, "late", 4, NULL);
		else if (i % 3 == 1)
			grpc_call_reply(call, GRPC_STATUS_INTERNAL, NULL, 0, "late \xff error");
		else
			grpc_call_reply(call, GRPC_STATUS_OK, NULL, 0, NULL);
	}
	grpc_conn_flush(conn);
	if (!finished)
		grpc_conn_shutdown(conn);
	grpc_conn_flush(conn);
	grpc_conn_free(conn);
	while (uv_run(&loop, UV_RUN_NOWAIT))
		;
	return 0;
}
