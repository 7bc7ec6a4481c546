/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A small gRPC server on a unix socket: HTTP/2 cleartext with prior
 * knowledge (nghttp2) driven by a libuv loop, unary and server-streaming
 * methods, messages as bytes (protobuf packing happens in service code).
 *
 * Threading: every function here, and every callback, runs on the loop
 * thread. Work that takes time (prepare, a backend call) goes to a worker
 * with uv_queue_work(); its after-work callback, which runs on the loop
 * thread, replies. Replying asynchronously is the normal case: a handler may
 * return without replying and reply later, and other calls and connections
 * are served meanwhile. grpc_call_cancelled() is the one function a worker
 * thread may call.
 *
 * The process must ignore SIGPIPE (signal(SIGPIPE, SIG_IGN)): libuv writes
 * to sockets with write(2), and a client may vanish at any time.
 *
 * Call lifecycle (the one rule): a handler receives a call and must end it
 * exactly once with grpc_call_reply(), even when it was cancelled (the client
 * went away, the deadline passed, the server is closing). Cancellation is
 * reported through the optional grpc_call_on_cancel() callback; replying to a
 * cancelled call sends nothing and returns -ECANCELED, but still releases the
 * call. The call pointer is invalid after grpc_call_reply().
 *
 * Example: a unary method answered from a worker thread.
 *
 *	struct job { uv_work_t work; struct grpc_call *call; ... };
 *
 *	static void on_prepare(struct grpc_call *call, const uint8_t *req, size_t len,
 *			       void *userdata)
 *	{
 *		struct job *j = calloc(1, sizeof(*j));
 *		j->call = call;			// unpack @req now: it is borrowed
 *		j->work.data = j;
 *		uv_queue_work(loop, &j->work, run_on_worker, after_work);
 *	}
 *	static void after_work(uv_work_t *work, int status)	// loop thread
 *	{
 *		struct job *j = work->data;
 *		grpc_call_reply(j->call, GRPC_STATUS_OK, packed, packed_len, NULL);
 *		free(j);
 *	}
 *	...
 *	grpc_server_add_method(srv, KUBELET_PATH_V1_PREPARE, GRPC_UNARY, on_prepare, ctx);
 *
 * run_on_worker may poll grpc_call_cancelled(j->call) to give up early; it
 * still ends in after_work's grpc_call_reply().
 */
#ifndef DRALET_GRPC_SERVER_H
#define DRALET_GRPC_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "agent/kubelet/grpc_frame.h"

struct grpc_server;
struct grpc_call;
struct grpc_metrics;

enum grpc_method_kind {
	GRPC_UNARY,		/* one request, one response */
	GRPC_SERVER_STREAMING,	/* one request, grpc_call_send() any number of times */
};

/*
 * A method handler. @request (@len bytes, NULL when empty) is borrowed for
 * the duration of the handler only; copy or unpack it before returning.
 */
typedef void (*grpc_handler)(struct grpc_call *call, const uint8_t *request, size_t len,
			     void *userdata);
/* The call was cancelled; reply (now or later) to release it. */
typedef void (*grpc_cancel_cb)(struct grpc_call *call, void *userdata);
/* The server is gone; it was freed right after this returns. */
typedef void (*grpc_server_close_cb)(struct grpc_server *srv, void *userdata);

struct grpc_server_limits {
	size_t max_message;		/* request cap, RESOURCE_EXHAUSTED above (4 MiB) */
	uint32_t max_concurrent_streams; /* SETTINGS_MAX_CONCURRENT_STREAMS (100) */
	/* Connections: when max_connections are open, a new one evicts the one
	 * idle (no call open, or no handshake yet) the longest; with none idle it
	 * is closed at once. One client process (SO_PEERCRED pid) may hold at
	 * most max_connections_per_client; more from it are closed at once, so a
	 * flood from one process never evicts the kubelet's. */
	unsigned max_connections;	/* (128) */
	unsigned max_connections_per_client; /* (64) */
	size_t max_header_bytes;	/* per request header list (16 KiB) */
	size_t max_conn_request_bytes;	/* request bytes buffered per connection (16 MiB) */
	size_t max_conn_output;		/* bytes queued to a socket before backpressure (256 KiB) */
	size_t max_stream_output;	/* grpc_call_send() queue per stream (8 MiB) */
	unsigned handshake_timeout_ms;	/* client preface + SETTINGS must arrive in (10 s) */
	unsigned idle_timeout_ms;	/* GOAWAY after this long without a call or a byte (5 min) */
	unsigned shutdown_grace_ms;	/* grpc_server_close waits for calls this long (25 s) */
};

/* The defaults noted above. */
void grpc_server_default_limits(struct grpc_server_limits *limits);

/*
 * Creates a server on @loop (not yet listening). @limits may be NULL for the
 * defaults. On success *ret_srv owns the server; the only destructor is
 * grpc_server_close(), which needs the loop to run to finish.
 */
int grpc_server_new(uv_loop_t *loop, const struct grpc_server_limits *limits,
		    struct grpc_server **ret_srv);

/*
 * Registers @handler for @path ("/package.Service/Method", copied). Methods
 * may be added at any time; requests for unknown paths get UNIMPLEMENTED.
 * Returns 0, -EEXIST (path taken), -EINVAL (path not starting with '/') or
 * -ENOMEM.
 */
int grpc_server_add_method(struct grpc_server *srv, const char *path, enum grpc_method_kind kind,
			   grpc_handler handler, void *userdata);

/*
 * Listens on the unix socket @path (copied): creates missing parent
 * directories with mode 0750, removes a stale socket at @path (one that
 * refuses a connection; a socket some process listens on is -EADDRINUSE and
 * stays, any other kind of file there is -EEXIST), binds, sets mode 0600 and
 * listens. The socket is removed again by grpc_server_close() (only if it is
 * still ours). Returns 0, -ENAMETOOLONG (longer than a sockaddr_un allows),
 * -EBUSY (already listening), -EADDRINUSE, -EEXIST, or another -errno.
 */
int grpc_server_listen(struct grpc_server *srv, const char *path);

/* Counts every call from now on into @m (grpc_metrics.h; borrowed: it must
 * outlive the server; NULL stops counting). */
void grpc_server_set_metrics(struct grpc_server *srv, struct grpc_metrics *m);

/* The socket path given to grpc_server_listen, or NULL. */
const char *grpc_server_path(const struct grpc_server *srv);

/* True when a method of @service ("pkg.Service") is registered (health checks). */
bool grpc_server_serves(const struct grpc_server *srv, const char *service);

/* Open connections (for metrics and tests). */
unsigned grpc_server_n_connections(const struct grpc_server *srv);

/*
 * Graceful shutdown: stops listening and removes the socket, sends GOAWAY on
 * every connection, lets calls in flight finish for shutdown_grace_ms, then
 * cancels what is left and closes. @cb (may be NULL) runs when everything is
 * closed; the server is freed right after it. Calling it again is a no-op.
 */
void grpc_server_close(struct grpc_server *srv, grpc_server_close_cb cb, void *userdata);

/* ---- calls ---- */

/*
 * Ends the call. Unary: @msg (@len bytes, may be NULL/0 for an empty
 * message) is the response when @status is OK; with another status @msg is
 * ignored and the error goes out as Trailers-Only (or trailers after sent
 * messages). Server streaming: queued messages are sent, then the trailers;
 * a non-NULL @msg is sent as one last message when @status is OK.
 * @message (may be NULL) becomes grpc-message (percent-encoded here).
 * Releases the call. Returns 0, -ECANCELED (cancelled: nothing sent),
 * -ENOMEM (the stream is reset instead).
 */
int grpc_call_reply(struct grpc_call *call, enum grpc_status status, const void *msg, size_t len,
		    const char *message);

/* grpc_call_reply with a printf-formatted grpc-message. */
int grpc_call_replyf(struct grpc_call *call, enum grpc_status status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Server streaming: queues one message (copied). Returns 0, -ECANCELED,
 * -ENOBUFS (more than max_stream_output queued: the client does not read),
 * -EMSGSIZE (over 4 GiB) or -ENOMEM. Not for unary calls (-EINVAL).
 */
int grpc_call_send(struct grpc_call *call, const void *msg, size_t len);

/*
 * Registers the cancellation callback (replaces an earlier one). Returns 0,
 * or -ECANCELED when the call is already cancelled (the callback is not
 * registered and will not run).
 */
int grpc_call_on_cancel(struct grpc_call *call, grpc_cancel_cb cb, void *userdata);

/* Thread-safe: true once the call is cancelled. */
bool grpc_call_cancelled(const struct grpc_call *call);

/* Why it was cancelled: CANCELLED (client), DEADLINE_EXCEEDED, UNAVAILABLE
 * (server closing, connection lost); OK while not cancelled. */
enum grpc_status grpc_call_cancel_reason(const struct grpc_call *call);

/* The request path, e.g. "/pluginregistration.Registration/GetInfo". */
const char *grpc_call_path(const struct grpc_call *call);

/* Milliseconds left until the client's deadline; UINT64_MAX without one. */
uint64_t grpc_call_remaining_ms(const struct grpc_call *call);

/* Bytes queued by grpc_call_send and not yet handed to HTTP/2. */
size_t grpc_call_queued_bytes(const struct grpc_call *call);

#endif
