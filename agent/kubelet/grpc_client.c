/* SPDX-License-Identifier: Apache-2.0 */
/* Blocking gRPC client over a unix socket (see client.h). */
#include "agent/kubelet/grpc_client.h"

#include <errno.h>
#include <fcntl.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct client_stream {
	int32_t id;
	bool closed;
	uint32_t rst_code;
	int http_status;
	bool content_type_grpc;
	int grpc_status;		/* -1 until the header arrives */
	char *message;
	struct grpc_deframer deframer;
	int callback_error;
	const struct grpc_client_call_opts *opts;
	struct grpc_client_result *result;
	/* request body */
	uint8_t *body;
	size_t body_len, body_off;
};

struct grpc_client {
	int fd;
	nghttp2_session *session;
	size_t max_message;
	bool got_settings;
	bool broken;
	struct client_stream *stream;	/* the call in progress */
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int remaining(int64_t deadline)
{
	int64_t left;

	if (deadline < 0)
		return -1;
	left = deadline - now_ms();
	return left < 0 ? 0 : (int)(left > 1000000 ? 1000000 : left);
}

/* ---- nghttp2 callbacks ---- */

static struct client_stream *current(struct grpc_client *c, int32_t id)
{
	return c->stream && c->stream->id == id ? c->stream : NULL;
}

static int on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name,
		     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
		     void *user_data)
{
	struct grpc_client *c = user_data;
	struct client_stream *s = current(c, frame->hd.stream_id);

	(void)session;
	(void)flags;
	if (!s || frame->hd.type != NGHTTP2_HEADERS)
		return 0;
	if (namelen == 7 && !memcmp(name, ":status", 7)) {
		s->http_status = 0;
		for (size_t i = 0; i < valuelen && i < 3; i++)
			s->http_status = s->http_status * 10 + (value[i] - '0');
	} else if (namelen == 12 && !memcmp(name, "content-type", 12)) {
		s->content_type_grpc = valuelen >= 16 && !memcmp(value, "application/grpc", 16);
	} else if (namelen == 11 && !memcmp(name, "grpc-status", 11)) {
		int st = 0;

		for (size_t i = 0; i < valuelen && i < 4; i++)
			st = st * 10 + (value[i] >= '0' && value[i] <= '9' ? value[i] - '0' : 0);
		s->grpc_status = st;
	} else if (namelen == 12 && !memcmp(name, "grpc-message", 12)) {
		free(s->message);
		s->message = malloc(valuelen + 1);
		if (s->message)
			grpc_message_decode((const char *)value, valuelen, s->message);
	}
	return 0;
}

static int on_response_message(void *userdata, const uint8_t *msg, size_t len)
{
	struct client_stream *s = userdata;
	struct grpc_client_result *res = s->result;

	res->n_messages++;
	if (s->opts->on_message) {
		int r = s->opts->on_message(s->opts->userdata, msg, len);

		if (r < 0) {
			s->callback_error = r;
			return r;
		}
		return 0;
	}
	if (res->n_messages > 1)
		return 0;
	res->response = malloc(len ? len : 1);
	if (!res->response)
		return -ENOMEM;
	if (len)
		memcpy(res->response, msg, len);
	res->response_len = len;
	return 0;
}

static int on_data_chunk_recv(nghttp2_session *session, uint8_t flags, int32_t stream_id,
			      const uint8_t *data, size_t len, void *user_data)
{
	struct grpc_client *c = user_data;
	struct client_stream *s = current(c, stream_id);
	int r;

	(void)flags;
	if (!s || s->grpc_status >= 0)
		return 0;
	r = grpc_deframer_feed(&s->deframer, data, len, on_response_message, s);
	if (r < 0) {
		if (!s->callback_error) {
			s->grpc_status = grpc_deframer_error_status(r);
			free(s->message);
			s->message = strdup(r == -EMSGSIZE ? "response message too large"
							   : "invalid response framing");
		}
		nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, stream_id, NGHTTP2_CANCEL);
	}
	return 0;
}

static int on_stream_close(nghttp2_session *session, int32_t stream_id, uint32_t error_code,
			   void *user_data)
{
	struct grpc_client *c = user_data;
	struct client_stream *s = current(c, stream_id);

	(void)session;
	if (s) {
		s->closed = true;
		s->rst_code = error_code;
	}
	return 0;
}

static int on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *user_data)
{
	struct grpc_client *c = user_data;

	(void)session;
	if (frame->hd.type == NGHTTP2_SETTINGS && !(frame->hd.flags & NGHTTP2_FLAG_ACK))
		c->got_settings = true;
	return 0;
}

static ssize_t read_body(nghttp2_session *session, int32_t stream_id, uint8_t *buf, size_t length,
			 uint32_t *data_flags, nghttp2_data_source *source, void *user_data)
{
	struct client_stream *s = source->ptr;
	size_t n = s->body_len - s->body_off;

	(void)session;
	(void)stream_id;
	(void)user_data;
	if (n > length)
		n = length;
	if (n)
		memcpy(buf, s->body + s->body_off, n);
	s->body_off += n;
	if (s->body_off == s->body_len)
		*data_flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

/* ---- I/O ---- */

static int write_all(struct grpc_client *c, const uint8_t *data, size_t len, int64_t deadline)
{
	while (len > 0) {
		ssize_t n = send(c->fd, data, len, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n > 0) {
			data += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd p = { .fd = c->fd, .events = POLLOUT };
			int r = poll(&p, 1, remaining(deadline));

			if (r == 0)
				return -ETIMEDOUT;
			if (r < 0 && errno != EINTR)
				return -errno;
			continue;
		}
		return n < 0 ? -errno : -ECONNRESET;
	}
	return 0;
}

static int client_flush(struct grpc_client *c, int64_t deadline)
{
	for (;;) {
		const uint8_t *data;
		ssize_t n = nghttp2_session_mem_send(c->session, &data);
		int r;

		if (n < 0)
			return -EPROTO;
		if (n == 0)
			return 0;
		r = write_all(c, data, (size_t)n, deadline);
		if (r < 0)
			return r;
	}
}

/* Reads once (waiting until @deadline) and feeds nghttp2. */
static int client_read(struct grpc_client *c, int64_t deadline)
{
	uint8_t buf[16384];
	struct pollfd p = { .fd = c->fd, .events = POLLIN };
	ssize_t n;
	int r;

	r = poll(&p, 1, remaining(deadline));
	if (r == 0)
		return -ETIMEDOUT;
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n == 0)
		return -ECONNRESET;
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (nghttp2_session_mem_recv(c->session, buf, (size_t)n) < 0)
		return -EPROTO;
	return 0;
}

int grpc_client_connect(const char *path, int timeout_ms, struct grpc_client **ret_client)
{
	nghttp2_session_callbacks *cbs = NULL;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct grpc_client *c;
	int64_t deadline = timeout_ms > 0 ? now_ms() + timeout_ms : -1;
	int r;

	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	strcpy(sun.sun_path, path);
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->max_message = GRPC_DEFAULT_MAX_MESSAGE;
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		r = -errno;
		free(c);
		return r;
	}
	if (timeout_ms > 0) {
		/* A full listen backlog blocks connect(2); bound that wait too. */
		struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };

		setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	if (connect(c->fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		r = errno == EAGAIN || errno == EINPROGRESS ? -ETIMEDOUT : -errno;
		goto fail;
	}
	if (nghttp2_session_callbacks_new(&cbs)) {
		r = -ENOMEM;
		goto fail;
	}
	nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data_chunk_recv);
	nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_stream_close);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame_recv);
	r = nghttp2_session_client_new(&c->session, cbs, c);
	nghttp2_session_callbacks_del(cbs);
	if (r) {
		c->session = NULL;
		r = -ENOMEM;
		goto fail;
	}
	nghttp2_settings_entry settings[] = {
		{ NGHTTP2_SETTINGS_ENABLE_PUSH, 0 },
		{ NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20 },
	};
	nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, settings, 2);
	r = client_flush(c, deadline);
	while (r == 0 && !c->got_settings)
		r = client_read(c, deadline);
	if (r < 0)
		goto fail;
	*ret_client = c;
	return 0;
fail:
	grpc_client_free(c);
	return r;
}

void grpc_client_free(struct grpc_client *c)
{
	if (!c)
		return;
	if (c->session)
		nghttp2_session_del(c->session);
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}

void grpc_client_set_max_message(struct grpc_client *c, size_t max)
{
	c->max_message = max;
}

void grpc_client_result_clear(struct grpc_client_result *res)
{
	if (!res)
		return;
	free(res->message);
	free(res->response);
	memset(res, 0, sizeof(*res));
}

/* grpc doc/http-grpc-status-mapping.md */
static int status_from_http(int http)
{
	switch (http) {
	case 400: return GRPC_STATUS_INTERNAL;
	case 401: return GRPC_STATUS_UNAUTHENTICATED;
	case 403: return GRPC_STATUS_PERMISSION_DENIED;
	case 404: return GRPC_STATUS_UNIMPLEMENTED;
	case 429: case 502: case 503: case 504: return GRPC_STATUS_UNAVAILABLE;
	default: return GRPC_STATUS_UNKNOWN;
	}
}

static void finish_status(struct client_stream *s, bool timed_out)
{
	struct grpc_client_result *res = s->result;
	char buf[80];

	res->http_status = s->http_status;
	if (timed_out) {
		res->status = GRPC_STATUS_DEADLINE_EXCEEDED;
		res->message = strdup("deadline exceeded");
		free(s->message);
		return;
	}
	if (s->grpc_status >= 0) {
		res->status = s->grpc_status;
		res->message = s->message;
		return;
	}
	free(s->message);
	if (s->http_status != 200 && s->http_status != 0) {
		res->status = status_from_http(s->http_status);
		snprintf(buf, sizeof(buf), "HTTP status %d", s->http_status);
	} else if (s->rst_code == NGHTTP2_REFUSED_STREAM) {
		res->status = GRPC_STATUS_UNAVAILABLE;
		snprintf(buf, sizeof(buf), "stream refused");
	} else if (s->rst_code == NGHTTP2_CANCEL) {
		res->status = GRPC_STATUS_CANCELLED;
		snprintf(buf, sizeof(buf), "stream cancelled by the server");
	} else {
		res->status = GRPC_STATUS_INTERNAL;
		snprintf(buf, sizeof(buf), "stream closed without grpc-status (HTTP/2 error %u)",
			 s->rst_code);
	}
	res->message = strdup(buf);
}

int grpc_client_invoke(struct grpc_client *c, const struct grpc_client_call_opts *o,
		       struct grpc_client_result *ret)
{
	struct grpc_client_result res = { 0 };
	struct client_stream s = { .grpc_status = -1, .opts = o, .result = &res };
	int64_t deadline = o->timeout_ms > 0 ? now_ms() + o->timeout_ms : -1;
	char timeout_buf[16];
	const char *timeout = o->grpc_timeout;
	nghttp2_nv nv[8];
	size_t n = 0;
	bool timed_out = false;
	int r = 0;

#define NV(k, v) (nghttp2_nv){ (uint8_t *)(k), (uint8_t *)(v), strlen(k), strlen(v), 0 }
	if (c->broken)
		return -ECONNRESET;
	if (!timeout && o->timeout_ms > 0) {
		grpc_timeout_format((uint64_t)o->timeout_ms, timeout_buf);
		timeout = timeout_buf;
	}
	nv[n++] = NV(":method", "POST");
	nv[n++] = NV(":scheme", "http");
	nv[n++] = NV(":path", o->path);
	nv[n++] = NV(":authority", "localhost");
	nv[n++] = NV("content-type", o->content_type ? o->content_type : "application/grpc");
	nv[n++] = NV("te", "trailers");
	nv[n++] = NV("user-agent", "dralet-grpc-client");
	if (timeout)
		nv[n++] = NV("grpc-timeout", timeout);
#undef NV
	s.body_len = o->raw_request ? o->request_len : GRPC_FRAME_PREFIX + o->request_len;
	s.body = malloc(s.body_len ? s.body_len : 1);
	if (!s.body)
		return -ENOMEM;
	if (o->raw_request) {
		if (o->request_len)
			memcpy(s.body, o->request, o->request_len);
	} else {
		grpc_frame_prefix(s.body, (uint32_t)o->request_len);
		if (o->request_len)
			memcpy(s.body + GRPC_FRAME_PREFIX, o->request, o->request_len);
	}
	grpc_deframer_init(&s.deframer, c->max_message);
	nghttp2_data_provider prd = { .source.ptr = &s, .read_callback = read_body };

	s.id = nghttp2_submit_request(c->session, NULL, nv, n, &prd, NULL);
	if (s.id < 0) {
		r = s.id == NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE ? -ECONNRESET : -ENOMEM;
		goto out;
	}
	c->stream = &s;
	while (!s.closed) {
		r = client_flush(c, deadline);
		if (r == 0 && !s.closed)
			r = client_read(c, deadline);
		if (r == -ETIMEDOUT) {
			timed_out = true;
			nghttp2_submit_rst_stream(c->session, NGHTTP2_FLAG_NONE, s.id,
						  NGHTTP2_CANCEL);
			r = client_flush(c, now_ms() + 100);
			if (r == -ETIMEDOUT)
				r = 0;
			break;
		}
		if (r < 0)
			break;
		if (!nghttp2_session_want_read(c->session) && !s.closed) {
			r = -ECONNRESET;	/* GOAWAY without our stream finishing */
			break;
		}
	}
	c->stream = NULL;
	if (r < 0) {
		c->broken = true;
		free(s.message);
		grpc_client_result_clear(&res);
		goto out;
	}
	if (s.callback_error) {
		free(s.message);
		grpc_client_result_clear(&res);
		r = s.callback_error;
		goto out;
	}
	/* A server cancels at the deadline; report that as the client would
	 * have (PROTOCOL-HTTP2.md, Client Cancellation). */
	if (!timed_out && s.grpc_status < 0 && s.rst_code == NGHTTP2_CANCEL && deadline >= 0 &&
	    now_ms() >= deadline)
		timed_out = true;
	finish_status(&s, timed_out);
	*ret = res;
out:
	grpc_deframer_reset(&s.deframer);
	free(s.body);
	return r;
}

int grpc_client_call(struct grpc_client *c, const char *path, const void *request, size_t len,
		     int timeout_ms, struct grpc_client_result *ret)
{
	struct grpc_client_call_opts o = {
		.path = path,
		.request = request,
		.request_len = len,
		.timeout_ms = timeout_ms,
	};

	return grpc_client_invoke(c, &o, ret);
}
