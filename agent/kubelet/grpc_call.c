/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The call API handlers use (see server.h): replies, streamed messages,
 * cancellation. Responses go out as HEADERS, DATA with Length-Prefixed
 * messages from the call's output queue, then trailers submitted when the
 * queue drains; errors before any message are Trailers-Only.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/kubelet/grpc_internal.h"
#include "agent/lib/err_msg.h"

#define MAKE_NV(name, value)                                                              \
	{ (uint8_t *)(name), (uint8_t *)(value), sizeof(name) - 1, strlen(value),         \
	  NGHTTP2_NV_FLAG_NO_COPY_NAME }

/* Trailer fields: grpc-status and the optional grpc-message. */
static size_t build_status_nv(nghttp2_nv *nv, char status_buf[4], int status,
			      const char *encoded_message)
{
	size_t n = 0;

	snprintf(status_buf, 4, "%d", status);
	nv[n++] = (nghttp2_nv)MAKE_NV("grpc-status", status_buf);
	if (encoded_message && *encoded_message)
		nv[n++] = (nghttp2_nv)MAKE_NV("grpc-message", encoded_message);
	return n;
}

static char *encode_message(const char *message)
{
	size_t len, need;
	char *out;

	if (!message || !*message)
		return NULL;
	len = strlen(message);
	if (len > 1024)
		len = 1024;	/* keep trailers well under the 8 KiB clients accept */
	need = grpc_message_encode(message, len, NULL, 0);
	out = malloc(need);
	if (out)
		grpc_message_encode(message, len, out, need);
	return out;
}

int grpc_call_submit_error(struct grpc_call *call, int status, const char *message)
{
	nghttp2_session *session = grpc_conn_session(call->conn);
	char status_buf[4];
	char *encoded = encode_message(message);
	nghttp2_nv nv[4] = {
		MAKE_NV(":status", "200"),
		MAKE_NV("content-type", "application/grpc"),
	};
	size_t n;
	int r;

	/* Trailers-Only: one HEADERS frame with END_STREAM. When the client is
	 * still sending, grpc_conn_reject() follows it with RST_STREAM(NO_ERROR). */
	call->response_submitted = true;
	n = 2 + build_status_nv(nv + 2, status_buf, status, encoded);
	r = nghttp2_submit_response(session, call->stream_id, nv, n, NULL);
	free(encoded);
	return r ? -ENOMEM : 0;
}

ssize_t grpc_call_read_data(nghttp2_session *session, int32_t stream_id, uint8_t *buf,
			    size_t length, uint32_t *data_flags, nghttp2_data_source *source,
			    void *user_data)
{
	struct grpc_call *call = source->ptr;
	size_t avail = call->out_len - call->out_off;
	size_t n = avail < length ? avail : length;

	(void)user_data;
	if (n == 0 && !call->out_eof) {
		call->data_deferred = true;
		return NGHTTP2_ERR_DEFERRED;
	}
	if (n > 0)
		memcpy(buf, call->out + call->out_off, n);
	call->out_off += n;
	if (call->out_off == call->out_len) {
		call->out_off = call->out_len = 0;
		if (call->out_cap > 64 * 1024) {
			free(call->out);
			call->out = NULL;
			call->out_cap = 0;
		}
		if (call->out_eof) {
			char status_buf[4];
			nghttp2_nv nv[2];
			size_t nnv = build_status_nv(nv, status_buf, call->trailer_status,
						     call->trailer_message);

			*data_flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
			if (nghttp2_submit_trailer(session, stream_id, nv, nnv))
				return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
		}
	}
	return (ssize_t)n;
}

int grpc_call_start_response(struct grpc_call *call)
{
	nghttp2_session *session = grpc_conn_session(call->conn);
	nghttp2_nv nv[] = {
		MAKE_NV(":status", "200"),
		MAKE_NV("content-type", "application/grpc"),
	};
	nghttp2_data_provider prd = {
		.source.ptr = call,
		.read_callback = grpc_call_read_data,
	};

	if (nghttp2_submit_response(session, call->stream_id, nv, 2, &prd))
		return -ENOMEM;
	call->response_submitted = true;
	return 0;
}

/* Appends one Length-Prefixed-Message to the output queue. */
static int call_queue_message(struct grpc_call *call, const void *msg, size_t len)
{
	size_t need;

	if (len > UINT32_MAX)
		return -EMSGSIZE;
	if (call->out_off > 0) {
		memmove(call->out, call->out + call->out_off, call->out_len - call->out_off);
		call->out_len -= call->out_off;
		call->out_off = 0;
	}
	need = call->out_len + GRPC_FRAME_PREFIX + len;
	if (need > call->out_cap) {
		size_t cap = call->out_cap ? call->out_cap : 256;
		uint8_t *p;

		while (cap < need)
			cap *= 2;
		p = realloc(call->out, cap);
		if (!p)
			return -ENOMEM;
		call->out = p;
		call->out_cap = cap;
	}
	grpc_frame_prefix(call->out + call->out_len, (uint32_t)len);
	if (len)
		memcpy(call->out + call->out_len + GRPC_FRAME_PREFIX, msg, len);
	call->out_len = need;
	return 0;
}

/* Makes nghttp2 pull from the queue: submit HEADERS or resume DATA. */
static int call_push(struct grpc_call *call)
{
	if (!call->response_submitted)
		return grpc_call_start_response(call);
	if (call->data_deferred) {
		call->data_deferred = false;
		if (nghttp2_session_resume_data(grpc_conn_session(call->conn), call->stream_id))
			return -ENOMEM;
	}
	return 0;
}

static bool call_gone(const struct grpc_call *call)
{
	return !call->conn || atomic_load(&call->cancelled);
}

int grpc_call_send(struct grpc_call *call, const void *msg, size_t len)
{
	size_t queued;
	int r;

	if (call->kind != GRPC_SERVER_STREAMING || call->replied)
		return -EINVAL;
	if (call_gone(call))
		return -ECANCELED;
	queued = call->out_len - call->out_off;
	if (queued > 0 && queued + len > call->max_output)
		return -ENOBUFS;
	r = call_queue_message(call, msg, len);
	if (r == 0)
		r = call_push(call);
	grpc_conn_kick(call->conn);
	return r;
}

/* Queues the final status; the trailers follow the queued messages. */
static int call_finish(struct grpc_call *call, enum grpc_status status, const void *msg,
		       size_t len, const char *message)
{
	int r;

	if (status == GRPC_STATUS_OK && (msg || call->kind == GRPC_UNARY)) {
		r = call_queue_message(call, msg, len);
		if (r < 0)
			return r;
	}
	if (status != GRPC_STATUS_OK && !call->response_submitted)
		return grpc_call_submit_error(call, (int)status, message);
	call->trailer_status = (int)status;
	free(call->trailer_message);
	call->trailer_message = encode_message(message);
	call->out_eof = true;
	return call_push(call);
}

void grpc_call_count(struct grpc_call *call, int status)
{
	if (call->counted)
		return;
	call->counted = true;
	grpc_metrics_count(call->metrics, call->known_method ? call->path : NULL, status);
}

int grpc_call_reply(struct grpc_call *call, enum grpc_status status, const void *msg, size_t len,
		    const char *message)
{
	struct grpc_conn *conn;
	int r;

	if (!call || call->replied)
		return -EINVAL;
	call->replied = true;
	conn = call->conn;
	if (call_gone(call)) {
		grpc_call_count(call, (int)grpc_call_cancel_reason(call));
		r = -ECANCELED;
	} else {
		grpc_call_count(call, (int)status);
		r = call_finish(call, status, msg, len, message);
		if (r < 0)
			nghttp2_submit_rst_stream(grpc_conn_session(conn), NGHTTP2_FLAG_NONE,
						  call->stream_id, NGHTTP2_INTERNAL_ERROR);
	}
	grpc_call_unref(call);	/* the handler's reference; the stream may hold one */
	grpc_conn_kick(conn);
	return r;
}

int grpc_call_replyf(struct grpc_call *call, enum grpc_status status, const char *fmt, ...)
{
	struct err_msg message;
	va_list ap;

	va_start(ap, fmt);
	err_vprintf(ERR_MSG_ARGS(&message), 0, fmt, ap);
	va_end(ap);
	return grpc_call_reply(call, status, NULL, 0, message.text);
}

int grpc_call_on_cancel(struct grpc_call *call, grpc_cancel_cb cb, void *userdata)
{
	if (atomic_load(&call->cancelled))
		return -ECANCELED;
	call->cancel_cb = cb;
	call->cancel_userdata = userdata;
	return 0;
}

bool grpc_call_cancelled(const struct grpc_call *call)
{
	return atomic_load(&((struct grpc_call *)call)->cancelled);
}

enum grpc_status grpc_call_cancel_reason(const struct grpc_call *call)
{
	return atomic_load(&((struct grpc_call *)call)->cancelled) ? call->cancel_reason
								   : GRPC_STATUS_OK;
}

const char *grpc_call_path(const struct grpc_call *call)
{
	return call->path ? call->path : "";
}

uint64_t grpc_call_remaining_ms(const struct grpc_call *call)
{
	uint64_t now;

	if (!call->has_deadline)
		return UINT64_MAX;
	now = uv_now(call->loop);
	return call->deadline_ms > now ? call->deadline_ms - now : 0;
}

size_t grpc_call_queued_bytes(const struct grpc_call *call)
{
	return call->out_len - call->out_off;
}
