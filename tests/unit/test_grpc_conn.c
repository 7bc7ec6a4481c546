/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The gRPC connection core driven in memory by an nghttp2 client session:
 * no sockets. Covers dispatch, async replies, streaming, errors the
 * transport answers itself, deadlines, cancellation, backpressure, GOAWAY.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <nghttp2/nghttp2.h>
#include <uv.h>

#include "agent/kubelet/grpc_internal.h"

#define MAX_STREAMS 16

struct client_stream {
	int32_t id;
	int http_status;
	int grpc_status;	/* -1: none */
	char message[256];
	uint8_t data[65536];
	size_t data_len;
	bool closed;
	uint32_t close_code;
	/* request body */
	const uint8_t *body;
	size_t body_len, body_off;
};

struct harness {
	uv_loop_t loop;
	struct grpc_server *srv;
	struct grpc_conn *conn;
	nghttp2_session *client;
	uint8_t *to_client;
	size_t to_client_len;
	bool io_full;		/* what io->write answers */
	unsigned writes;
	bool finished;
	struct client_stream streams[MAX_STREAMS];
	size_t n_streams;
	/* handler side */
	struct grpc_call *held[MAX_STREAMS];
	size_t n_held;
	unsigned cancels;
	enum grpc_status last_cancel_reason;
	unsigned pings_acked;
};

/* ---- server side io ---- */

static bool io_write(void *io_data, uint8_t *buf, size_t len)
{
	struct harness *h = io_data;

	h->to_client = realloc(h->to_client, h->to_client_len + len);
	memcpy(h->to_client + h->to_client_len, buf, len);
	h->to_client_len += len;
	h->writes++;
	free(buf);
	return h->io_full;
}

static void io_finished(void *io_data)
{
	struct harness *h = io_data;

	h->finished = true;
}

static const struct grpc_conn_io test_io = { io_write, io_finished };

/* ---- client side ---- */

static struct client_stream *find_stream(struct harness *h, int32_t id)
{
	for (size_t i = 0; i < h->n_streams; i++)
		if (h->streams[i].id == id)
			return &h->streams[i];
	return NULL;
}

static int c_on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name,
		       size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
		       void *ud)
{
	struct client_stream *cs = find_stream(ud, f->hd.stream_id);

	(void)s;
	(void)flags;
	if (!cs)
		return 0;
	if (namelen == 7 && !memcmp(name, ":status", 7))
		cs->http_status = atoi((const char *)value);
	else if (namelen == 11 && !memcmp(name, "grpc-status", 11))
		cs->grpc_status = atoi((const char *)value);
	else if (namelen == 12 && !memcmp(name, "grpc-message", 12))
		grpc_message_decode((const char *)value,
				    valuelen < sizeof(cs->message) ? valuelen
								   : sizeof(cs->message) - 1,
				    cs->message);
	return 0;
}

static int c_on_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data,
		     size_t len, void *ud)
{
	struct client_stream *cs = find_stream(ud, id);

	(void)s;
	(void)flags;
	if (cs && cs->data_len + len <= sizeof(cs->data)) {
		memcpy(cs->data + cs->data_len, data, len);
		cs->data_len += len;
	}
	return 0;
}

static int c_on_close(nghttp2_session *s, int32_t id, uint32_t code, void *ud)
{
	struct client_stream *cs = find_stream(ud, id);

	(void)s;
	if (cs) {
		cs->closed = true;
		cs->close_code = code;
	}
	return 0;
}

static int c_on_frame_recv(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
	struct harness *h = ud;

	(void)s;
	if (f->hd.type == NGHTTP2_PING && (f->hd.flags & NGHTTP2_FLAG_ACK))
		h->pings_acked++;
	return 0;
}

static ssize_t c_read_body(nghttp2_session *s, int32_t id, uint8_t *buf, size_t length,
			   uint32_t *flags, nghttp2_data_source *src, void *ud)
{
	struct client_stream *cs = src->ptr;
	size_t n = cs->body_len - cs->body_off;

	(void)s;
	(void)id;
	(void)ud;
	if (n > length)
		n = length;
	memcpy(buf, cs->body + cs->body_off, n);
	cs->body_off += n;
	if (cs->body_off == cs->body_len)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

/* Moves bytes both ways until nothing happens; runs due timers too. */
static void pump(struct harness *h)
{
	for (int round = 0; round < 1000; round++) {
		bool progress = false;
		const uint8_t *data;
		ssize_t n;

		while ((n = nghttp2_session_mem_send(h->client, &data)) > 0) {
			progress = true;
			if (!h->finished)
				grpc_conn_recv(h->conn, data, (size_t)n);
		}
		if (h->to_client_len) {
			uint8_t *buf = h->to_client;
			size_t len = h->to_client_len;

			h->to_client = NULL;
			h->to_client_len = 0;
			assert_int_equal(nghttp2_session_mem_recv(h->client, buf, len), (ssize_t)len);
			free(buf);
			progress = true;
		}
		uv_run(&h->loop, UV_RUN_NOWAIT);
		if (!progress)
			return;
	}
	fail_msg("pump does not settle");
}

static int32_t request(struct harness *h, const char *path, const void *msg, size_t len,
		       const char *timeout, const char *content_type, bool raw)
{
	struct client_stream *cs = &h->streams[h->n_streams++];
	nghttp2_nv nv[8];
	size_t n = 0;

#define NV(k, v) (nghttp2_nv){ (uint8_t *)(k), (uint8_t *)(v), strlen(k), strlen(v), 0 }
	nv[n++] = NV(":method", "POST");
	nv[n++] = NV(":scheme", "http");
	nv[n++] = NV(":path", path);
	nv[n++] = NV(":authority", "a/b/c.sock");	/* a raw path, as grpc-go 1.33 sends */
	nv[n++] = NV("content-type", content_type ? content_type : "application/grpc");
	nv[n++] = NV("te", "trailers");
	if (timeout)
		nv[n++] = NV("grpc-timeout", timeout);
#undef NV
	memset(cs, 0, sizeof(*cs));
	cs->grpc_status = -1;
	if (raw) {
		/* the caller framed the body itself */
		cs->body = msg;
		cs->body_len = len;
	} else {
		static uint8_t bodies[MAX_STREAMS][70000];
		uint8_t *b = bodies[h->n_streams - 1];

		assert_true(len + 5 <= sizeof(bodies[0]));
		grpc_frame_prefix(b, (uint32_t)len);
		memcpy(b + 5, msg, len);
		cs->body = b;
		cs->body_len = len + 5;
	}
	nghttp2_data_provider prd = { .source.ptr = cs, .read_callback = c_read_body };
	cs->id = nghttp2_submit_request(h->client, NULL, nv, n, &prd, NULL);
	assert_true(cs->id > 0);
	return cs->id;
}

/* ---- handlers ---- */

static void h_echo(struct grpc_call *call, const uint8_t *req, size_t len, void *ud)
{
	(void)ud;
	assert_int_equal(grpc_call_reply(call, GRPC_STATUS_OK, req, len, NULL), 0);
}

static void h_cancelled(struct grpc_call *call, void *ud)
{
	struct harness *h = ud;

	h->cancels++;
	h->last_cancel_reason = grpc_call_cancel_reason(call);
	for (size_t i = 0; i < h->n_held; i++)
		if (h->held[i] == call)
			h->held[i] = NULL;
	assert_int_equal(grpc_call_reply(call, GRPC_STATUS_OK, "late", 4, NULL), -ECANCELED);
}

static void h_hold(struct grpc_call *call, const uint8_t *req, size_t len, void *ud)
{
	struct harness *h = ud;

	(void)req;
	(void)len;
	h->held[h->n_held++] = call;
	assert_int_equal(grpc_call_on_cancel(call, h_cancelled, h), 0);
}

static void h_fail(struct grpc_call *call, const uint8_t *req, size_t len, void *ud)
{
	(void)req;
	(void)len;
	(void)ud;
	grpc_call_reply(call, GRPC_STATUS_FAILED_PRECONDITION, "ignored", 7,
			"bad: 100% \"broken\"\n");
}

static void h_stream(struct grpc_call *call, const uint8_t *req, size_t len, void *ud)
{
	struct harness *h = ud;

	(void)req;
	(void)len;
	h->held[h->n_held++] = call;
	grpc_call_on_cancel(call, h_cancelled, h);
}

static int setup(void **state)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct grpc_server_limits limits;
	nghttp2_session_callbacks *cbs;

	grpc_server_default_limits(&limits);
	limits.max_message = 1000;
	limits.max_stream_output = 4096;
	assert_int_equal(uv_loop_init(&h->loop), 0);
	assert_int_equal(grpc_server_new(&h->loop, &limits, &h->srv), 0);
	assert_int_equal(grpc_server_add_method(h->srv, "/t.T/Echo", GRPC_UNARY, h_echo, h), 0);
	assert_int_equal(grpc_server_add_method(h->srv, "/t.T/Hold", GRPC_UNARY, h_hold, h), 0);
	assert_int_equal(grpc_server_add_method(h->srv, "/t.T/Fail", GRPC_UNARY, h_fail, h), 0);
	assert_int_equal(grpc_server_add_method(h->srv, "/t.T/Stream", GRPC_SERVER_STREAMING,
						h_stream, h), 0);
	assert_int_equal(grpc_server_add_method(h->srv, "/t.T/Echo", GRPC_UNARY, h_echo, h),
			 -EEXIST);
	assert_int_equal(grpc_server_add_method(h->srv, "t.T/X", GRPC_UNARY, h_echo, h), -EINVAL);
	assert_true(grpc_server_serves(h->srv, "t.T"));
	assert_false(grpc_server_serves(h->srv, "t"));
	assert_false(grpc_server_serves(h->srv, "t.T/Echo"));
	assert_int_equal(grpc_conn_new(h->srv, &test_io, h, &h->conn), 0);

	nghttp2_session_callbacks_new(&cbs);
	nghttp2_session_callbacks_set_on_header_callback(cbs, c_on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, c_on_data);
	nghttp2_session_callbacks_set_on_stream_close_callback(cbs, c_on_close);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, c_on_frame_recv);
	assert_int_equal(nghttp2_session_client_new(&h->client, cbs, h), 0);
	nghttp2_session_callbacks_del(cbs);
	nghttp2_submit_settings(h->client, NGHTTP2_FLAG_NONE, NULL, 0);
	grpc_conn_flush(h->conn);	/* server SETTINGS first */
	assert_true(h->to_client_len > 0);
	pump(h);
	assert_true(grpc_conn_handshake_done(h->conn));
	*state = h;
	return 0;
}

static void server_closed(struct grpc_server *srv, void *ud)
{
	(void)srv;
	*(bool *)ud = true;
}

static int teardown(void **state)
{
	struct harness *h = *state;
	bool closed = false;

	grpc_conn_free(h->conn);
	nghttp2_session_del(h->client);
	free(h->to_client);
	grpc_server_close(h->srv, server_closed, &closed);
	assert_int_equal(uv_run(&h->loop, UV_RUN_DEFAULT), 0);
	assert_true(closed);
	assert_int_equal(uv_loop_close(&h->loop), 0);
	free(h);
	return 0;
}

static const uint8_t *reply_message(struct client_stream *cs, size_t *len)
{
	assert_true(cs->data_len >= 5);
	*len = (size_t)cs->data[1] << 24 | (size_t)cs->data[2] << 16 | (size_t)cs->data[3] << 8 |
	       cs->data[4];
	assert_int_equal(cs->data_len, *len + 5);
	return cs->data + 5;
}

/* ---- tests ---- */

static void test_unary_echo(void **state)
{
	struct harness *h = *state;
	size_t len;

	request(h, "/t.T/Echo", "hello", 5, "1S", NULL, false);
	request(h, "/t.T/Echo", "", 0, NULL, "application/grpc+proto", false);
	pump(h);
	assert_true(h->streams[0].closed);
	assert_int_equal(h->streams[0].http_status, 200);
	assert_int_equal(h->streams[0].grpc_status, 0);
	assert_memory_equal(reply_message(&h->streams[0], &len), "hello", 5);
	assert_int_equal(len, 5);
	assert_int_equal(h->streams[1].grpc_status, 0);
	reply_message(&h->streams[1], &len);
	assert_int_equal(len, 0);
}

static void test_async_reply_and_concurrency(void **state)
{
	struct harness *h = *state;
	size_t len;

	request(h, "/t.T/Hold", "a", 1, NULL, NULL, false);
	request(h, "/t.T/Hold", "b", 1, NULL, NULL, false);
	pump(h);
	assert_int_equal(h->n_held, 2);
	/* a held call does not block others on the same connection */
	request(h, "/t.T/Echo", "c", 1, NULL, NULL, false);
	pump(h);
	assert_true(h->streams[2].closed);
	assert_false(h->streams[0].closed);
	/* answer out of order, from "later" */
	assert_false(grpc_call_cancelled(h->held[1]));
	assert_int_equal(grpc_call_remaining_ms(h->held[1]), UINT64_MAX);
	assert_string_equal(grpc_call_path(h->held[1]), "/t.T/Hold");
	assert_int_equal(grpc_call_reply(h->held[1], GRPC_STATUS_OK, "B", 1, NULL), 0);
	pump(h);
	assert_true(h->streams[1].closed);
	assert_memory_equal(reply_message(&h->streams[1], &len), "B", 1);
	assert_int_equal(grpc_call_reply(h->held[0], GRPC_STATUS_OK, "A", 1, NULL), 0);
	pump(h);
	assert_true(h->streams[0].closed);
	assert_int_equal(h->cancels, 0);
}

static void test_error_status_and_message(void **state)
{
	struct harness *h = *state;

	request(h, "/t.T/Fail", "x", 1, NULL, NULL, false);
	pump(h);
	assert_int_equal(h->streams[0].grpc_status, GRPC_STATUS_FAILED_PRECONDITION);
	assert_string_equal(h->streams[0].message, "bad: 100% \"broken\"\n");
	assert_int_equal(h->streams[0].data_len, 0);	/* Trailers-Only */
}

static void test_unknown_method(void **state)
{
	struct harness *h = *state;

	request(h, "/t.T/Nope", "x", 1, NULL, NULL, false);
	pump(h);
	assert_true(h->streams[0].closed);
	assert_int_equal(h->streams[0].http_status, 200);
	assert_int_equal(h->streams[0].grpc_status, GRPC_STATUS_UNIMPLEMENTED);
	assert_string_equal(h->streams[0].message, "unknown method /t.T/Nope");
	/* the connection is still fine */
	request(h, "/t.T/Echo", "y", 1, NULL, NULL, false);
	pump(h);
	assert_int_equal(h->streams[1].grpc_status, 0);
}

static void test_not_grpc_is_415(void **state)
{
	struct harness *h = *state;

	request(h, "/t.T/Echo", "x", 1, NULL, "application/json", false);
	request(h, "/t.T/Echo", "x", 1, NULL, "application/grpcx", false);
	pump(h);
	assert_int_equal(h->streams[0].http_status, 415);
	assert_int_equal(h->streams[0].grpc_status, -1);
	assert_int_equal(h->streams[1].http_status, 415);
}

static void test_bad_timeout(void **state)
{
	struct harness *h = *state;

	request(h, "/t.T/Echo", "x", 1, "123456789S", NULL, false);
	request(h, "/t.T/Echo", "x", 1, "1 S", NULL, false);
	pump(h);
	assert_int_equal(h->streams[0].grpc_status, GRPC_STATUS_INTERNAL);
	assert_string_equal(h->streams[0].message, "malformed grpc-timeout");
	assert_int_equal(h->streams[1].grpc_status, GRPC_STATUS_INTERNAL);
}

static void test_oversize_request(void **state)
{
	struct harness *h = *state;
	static uint8_t big[1001];

	request(h, "/t.T/Echo", big, 1000, NULL, NULL, false);	/* at the cap: fine */
	request(h, "/t.T/Echo", big, 1001, NULL, NULL, false);
	pump(h);
	assert_int_equal(h->streams[0].grpc_status, 0);
	assert_int_equal(h->streams[1].grpc_status, GRPC_STATUS_RESOURCE_EXHAUSTED);
}

static void test_bad_framing(void **state)
{
	struct harness *h = *state;
	static const uint8_t compressed[] = { 1, 0, 0, 0, 1, 'x' };
	static const uint8_t two[] = { 0, 0, 0, 0, 1, 'x', 0, 0, 0, 0, 1, 'y' };
	static const uint8_t truncated[] = { 0, 0, 0, 0, 9, 'x' };

	request(h, "/t.T/Echo", compressed, sizeof(compressed), NULL, NULL, true);
	request(h, "/t.T/Echo", two, sizeof(two), NULL, NULL, true);
	request(h, "/t.T/Echo", truncated, sizeof(truncated), NULL, NULL, true);
	request(h, "/t.T/Echo", "", 0, NULL, NULL, true);	/* no message at all */
	pump(h);
	for (int i = 0; i < 4; i++) {
		assert_true(h->streams[i].closed);
		assert_int_equal(h->streams[i].grpc_status, GRPC_STATUS_INTERNAL);
	}
	assert_string_equal(h->streams[2].message, "truncated request message");
}

static void test_deadline(void **state)
{
	struct harness *h = *state;

	request(h, "/t.T/Hold", "x", 1, "20m", NULL, false);
	pump(h);
	assert_int_equal(h->n_held, 1);
	assert_true(grpc_call_remaining_ms(h->held[0]) <= 20);
	/* let the timer fire */
	while (h->cancels == 0)
		uv_run(&h->loop, UV_RUN_ONCE);
	assert_int_equal(h->last_cancel_reason, GRPC_STATUS_DEADLINE_EXCEEDED);
	pump(h);
	/* the client gets the status, not just a reset */
	assert_true(h->streams[0].closed);
	assert_int_equal(h->streams[0].grpc_status, GRPC_STATUS_DEADLINE_EXCEEDED);
	assert_int_equal(h->streams[0].close_code, NGHTTP2_NO_ERROR);
}

static void test_client_cancel(void **state)
{
	struct harness *h = *state;
	struct grpc_call *call;

	request(h, "/t.T/Hold", "x", 1, NULL, NULL, false);
	pump(h);
	call = h->held[0];
	assert_non_null(call);
	nghttp2_submit_rst_stream(h->client, NGHTTP2_FLAG_NONE, h->streams[0].id, NGHTTP2_CANCEL);
	pump(h);
	assert_int_equal(h->cancels, 1);
	assert_int_equal(h->last_cancel_reason, GRPC_STATUS_CANCELLED);
}

static void test_streaming(void **state)
{
	struct harness *h = *state;
	struct grpc_call *call;

	request(h, "/t.T/Stream", "go", 2, NULL, NULL, false);
	pump(h);
	call = h->held[0];
	assert_int_equal(grpc_call_send(call, "one", 3), 0);
	pump(h);
	assert_int_equal(h->streams[0].data_len, 8);
	assert_false(h->streams[0].closed);
	/* with the transport full, messages queue up in the call, bounded */
	h->io_full = true;
	assert_int_equal(grpc_call_send(call, "two", 3), 0);
	assert_int_equal(grpc_call_queued_bytes(call), 0);	/* went out, then blocked */
	assert_int_equal(grpc_call_send(call, "", 0), 0);
	assert_int_equal(grpc_call_queued_bytes(call), 5);
	static uint8_t chunk[4096];
	assert_int_equal(grpc_call_send(call, chunk, sizeof(chunk)), -ENOBUFS);
	h->io_full = false;
	grpc_conn_flush(h->conn);
	assert_int_equal(grpc_call_queued_bytes(call), 0);
	assert_int_equal(grpc_call_reply(call, GRPC_STATUS_OK, "last", 4, "fine"), 0);
	pump(h);
	assert_true(h->streams[0].closed);
	assert_int_equal(h->streams[0].grpc_status, 0);
	assert_string_equal(h->streams[0].message, "fine");
	assert_int_equal(h->streams[0].data_len, 8 + 8 + 5 + 9);
	/* unary calls cannot stream */
	request(h, "/t.T/Hold", "x", 1, NULL, NULL, false);
	pump(h);
	assert_int_equal(grpc_call_send(h->held[1], "no", 2), -EINVAL);
	grpc_call_reply(h->held[1], GRPC_STATUS_ABORTED, NULL, 0, NULL);
	pump(h);
	assert_int_equal(h->streams[1].grpc_status, GRPC_STATUS_ABORTED);
}

static void test_streaming_error_after_messages(void **state)
{
	struct harness *h = *state;

	request(h, "/t.T/Stream", "go", 2, NULL, NULL, false);
	pump(h);
	assert_int_equal(grpc_call_send(h->held[0], "m", 1), 0);
	assert_int_equal(grpc_call_reply(h->held[0], GRPC_STATUS_INTERNAL, NULL, 0, "oops"), 0);
	pump(h);
	assert_int_equal(h->streams[0].data_len, 6);
	assert_int_equal(h->streams[0].grpc_status, GRPC_STATUS_INTERNAL);
	assert_string_equal(h->streams[0].message, "oops");
}

static void test_backpressure(void **state)
{
	struct harness *h = *state;
	unsigned writes;

	request(h, "/t.T/Stream", "go", 2, NULL, NULL, false);
	pump(h);
	h->io_full = true;
	assert_int_equal(grpc_call_send(h->held[0], "1", 1), 0);
	assert_true(grpc_conn_blocked(h->conn));
	writes = h->writes;
	/* while blocked, nothing more is produced */
	assert_int_equal(grpc_call_send(h->held[0], "2", 1), 0);
	assert_int_equal(h->writes, writes);
	h->io_full = false;
	grpc_conn_flush(h->conn);
	assert_false(grpc_conn_blocked(h->conn));
	assert_int_equal(grpc_call_reply(h->held[0], GRPC_STATUS_OK, NULL, 0, NULL), 0);
	pump(h);
	assert_true(h->streams[0].closed);
	assert_int_equal(h->streams[0].data_len, 12);
}

static void test_ping_acked(void **state)
{
	struct harness *h = *state;

	for (int i = 0; i < 20; i++)
		nghttp2_submit_ping(h->client, NGHTTP2_FLAG_NONE, NULL);
	pump(h);
	assert_int_equal(h->pings_acked, 20);
}

static void test_goaway_waits_for_calls(void **state)
{
	struct harness *h = *state;

	request(h, "/t.T/Hold", "x", 1, NULL, NULL, false);
	pump(h);
	grpc_conn_shutdown(h->conn);
	pump(h);
	assert_false(h->finished);	/* a call is still open */
	grpc_call_reply(h->held[0], GRPC_STATUS_OK, "x", 1, NULL);
	pump(h);
	assert_true(h->streams[0].closed);
	assert_int_equal(h->streams[0].grpc_status, 0);
	assert_true(h->finished);
}

static void test_free_cancels_calls(void **state)
{
	struct harness *h = *state;

	request(h, "/t.T/Hold", "x", 1, "10S", NULL, false);
	request(h, "/t.T/Hold", "y", 1, NULL, NULL, false);
	pump(h);
	assert_int_equal(h->n_held, 2);
	grpc_conn_free(h->conn);
	h->conn = NULL;
	assert_int_equal(h->cancels, 2);
	assert_int_equal(h->last_cancel_reason, GRPC_STATUS_UNAVAILABLE);
}

static void test_garbage_closes_connection(void **state)
{
	struct harness *h = *state;
	static const char junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	struct grpc_conn *c2;
	struct harness h2 = { 0 };

	(void)h;
	/* a fresh connection whose first bytes are not the HTTP/2 preface */
	assert_int_equal(grpc_conn_new(h->srv, &test_io, &h2, &c2), 0);
	assert_true(grpc_conn_recv(c2, (const uint8_t *)junk, sizeof(junk) - 1) < 0 ||
		    h2.finished);
	grpc_conn_free(c2);
	free(h2.to_client);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_unary_echo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_async_reply_and_concurrency, setup, teardown),
		cmocka_unit_test_setup_teardown(test_error_status_and_message, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_method, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_grpc_is_415, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_oversize_request, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_framing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deadline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_streaming, setup, teardown),
		cmocka_unit_test_setup_teardown(test_streaming_error_after_messages, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_backpressure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ping_acked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_goaway_waits_for_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_free_cancels_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage_closes_connection, setup, teardown),
	};

	return cmocka_run_group_tests_name("grpc_conn", tests, NULL, NULL);
}
