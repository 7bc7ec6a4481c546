/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to the gRPC core (agent/kubelet/grpc_*): the server's state, the per-stream call object and
 * the connection core (one nghttp2 server session, no socket) that server.c
 * wraps in a libuv pipe. Tests and fuzzers drive the core directly.
 */
#ifndef DRALET_GRPC_INTERNAL_H
#define DRALET_GRPC_INTERNAL_H

#include <nghttp2/nghttp2.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "agent/kubelet/grpc_frame.h"
#include "agent/kubelet/grpc_metrics.h"
#include "agent/kubelet/grpc_server.h"

struct grpc_conn;
struct server_conn;

struct grpc_method {
	char *path;
	enum grpc_method_kind kind;
	grpc_handler handler;
	void *userdata;
};

struct grpc_server {
	uv_loop_t *loop;
	struct grpc_server_limits limits;
	struct grpc_method *methods;
	size_t n_methods;

	uv_pipe_t listener;
	bool listener_open;	/* uv handle initialised, needs uv_close */
	char *path;
	uint64_t sock_dev, sock_ino;	/* the socket we bound, to remove only ours */

	struct server_conn *conns;	/* doubly linked */
	unsigned n_conns;

	uv_timer_t grace_timer;
	bool closing;
	unsigned handles_open;	/* listener + grace timer still to be closed */
	grpc_server_close_cb close_cb;
	void *close_userdata;
	struct grpc_metrics *metrics;	/* borrowed; NULL: not counted */
};

/* Counts the call's status into the server's metrics, once per call. */
void grpc_call_count(struct grpc_call *call, int status);

const struct grpc_method *grpc_server_find_method(const struct grpc_server *srv,
						  const char *path, size_t len);

/* A deadline timer, separate from the call so the call can be freed at
 * once while the timer waits for its close callback. */
struct call_timer {
	uv_timer_t handle;
	struct grpc_call *call;	/* NULL once detached */
};

/* One HTTP/2 stream carrying one gRPC call. */
struct grpc_call {
	unsigned refs;			/* stream (until closed) + handler (until reply) */
	struct grpc_conn *conn;		/* NULL once the stream is gone */
	uv_loop_t *loop;
	int32_t stream_id;
	struct grpc_call *prev, *next;	/* the connection's calls */

	struct grpc_metrics *metrics;	/* the server's, copied at creation */
	bool counted;			/* its status is in the metrics */

	/* request */
	char *path;
	grpc_handler handler;
	void *handler_userdata;
	enum grpc_method_kind kind;
	bool known_method;
	bool method_post;
	bool content_type_grpc;
	bool content_type_seen;
	bool bad_timeout;
	bool has_deadline;
	uint64_t deadline_ms;		/* uv_now() based */
	size_t header_bytes;
	struct grpc_deframer deframer;
	uint8_t *request;		/* the single request message */
	size_t request_len;
	bool have_request;
	size_t rx_bytes;		/* request bytes counted against the connection */
	bool rejected;			/* the transport answered already; ignore input */
	bool rst_after_response;	/* RST_STREAM(NO_ERROR) once the response is sent */
	bool remote_closed;		/* END_STREAM received */
	bool dispatched;		/* the handler owns a reference */
	bool replied;			/* grpc_call_reply done */

	/* response */
	bool response_submitted;	/* HEADERS (with a data provider) submitted */
	bool data_deferred;		/* provider returned NGHTTP2_ERR_DEFERRED */
	bool out_eof;			/* trailers follow once out is drained */
	uint8_t *out;
	size_t out_off, out_len, out_cap;
	size_t max_output;		/* limits.max_stream_output */
	int trailer_status;
	char *trailer_message;		/* percent-encoded, or NULL */

	atomic_bool cancelled;
	enum grpc_status cancel_reason;
	grpc_cancel_cb cancel_cb;
	void *cancel_userdata;
	struct call_timer *timer;
};

/* ---- the connection core ---- */

struct grpc_conn_io {
	/*
	 * Takes ownership of @buf (@len bytes, malloc'ed) to send. Returns true
	 * when the transport wants no more output for now; the core then
	 * stops until grpc_conn_flush() is called again.
	 */
	bool (*write)(void *io_data, uint8_t *buf, size_t len);
	/* The session is over (GOAWAY exchanged, nothing left to send or
	 * read): close the transport, then grpc_conn_free(). */
	void (*finished)(void *io_data);
};

/* Creates the session and queues the server SETTINGS (sent on the first
 * flush). @io and @io_data are borrowed for the life of the core. */
int grpc_conn_new(struct grpc_server *srv, const struct grpc_conn_io *io, void *io_data,
		  struct grpc_conn **ret_conn);

/*
 * Feeds bytes read from the peer, then flushes. Returns 0, or a negative
 * nghttp2 error when the connection is unusable (protocol error, the peer
 * flooded it): close the transport.
 */
int grpc_conn_recv(struct grpc_conn *conn, const uint8_t *data, size_t len);

/* Produces pending output through io->write until it says stop; calls
 * io->finished when the session is over. */
void grpc_conn_flush(struct grpc_conn *conn);

/* True once the client's preface and first SETTINGS arrived. */
bool grpc_conn_handshake_done(const struct grpc_conn *conn);

/* True while no call is open on the connection (nothing would be lost by
 * closing it): the shell's idle timeout and eviction ask this. */
bool grpc_conn_idle(const struct grpc_conn *conn);

/* True while the core holds output the transport refused (backpressure). */
bool grpc_conn_blocked(const struct grpc_conn *conn);

/* Graceful: GOAWAY now, no new streams, finish when the calls are done. */
void grpc_conn_shutdown(struct grpc_conn *conn);

/*
 * Cancels every call still open (reason UNAVAILABLE, cancel callbacks run)
 * and frees the session. Must not be called from inside the core's own
 * callbacks (io->write / io->finished); NULL is fine.
 */
void grpc_conn_free(struct grpc_conn *conn);

/* Call helpers shared by conn.c and call.c */
void grpc_call_unref(struct grpc_call *call);
void grpc_call_cancel(struct grpc_call *call, enum grpc_status reason);
/* Submits an error response for a call the handler never saw. */
void grpc_conn_reject(struct grpc_conn *conn, struct grpc_call *call, enum grpc_status status,
		      const char *message);
/* The session of a call's connection, NULL once detached. */
nghttp2_session *grpc_conn_session(struct grpc_conn *conn);
/* Flush now, or after the current nghttp2 callback returns. */
void grpc_conn_kick(struct grpc_conn *conn);
/* Shared by reply paths: submits the response for @call (see call.c). */
int grpc_call_submit_error(struct grpc_call *call, int status, const char *message);
int grpc_call_start_response(struct grpc_call *call);
ssize_t grpc_call_read_data(nghttp2_session *session, int32_t stream_id, uint8_t *buf,
			    size_t length, uint32_t *data_flags, nghttp2_data_source *source,
			    void *user_data);

#endif
