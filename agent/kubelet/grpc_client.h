/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A small blocking gRPC client over a unix socket (nghttp2 client session,
 * poll(2) loop), for `dralet ctl` and tests. One call at a time per
 * connection; calls on one connection run one after another. Not for the
 * daemon's loop thread (it blocks).
 */
#ifndef DRALET_GRPC_CLIENT_H
#define DRALET_GRPC_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/kubelet/grpc_frame.h"

struct grpc_client;

/*
 * Connects to the unix socket @path and exchanges the HTTP/2 preface and
 * SETTINGS within @timeout_ms. On success *ret_client owns the connection
 * (free with grpc_client_free). Returns 0 or -errno (-ENAMETOOLONG,
 * -ECONNREFUSED, -ENOENT, -ETIMEDOUT, -EPROTO: the peer is not HTTP/2).
 */
int grpc_client_connect(const char *path, int timeout_ms, struct grpc_client **ret_client);
void grpc_client_free(struct grpc_client *client);

/* Largest response message accepted (default 4 MiB, like grpc-go). */
void grpc_client_set_max_message(struct grpc_client *client, size_t max);

/* Called once per response message (streaming); a negative return cancels
 * the call and is returned by grpc_client_invoke. @msg is borrowed. */
typedef int (*grpc_client_message_cb)(void *userdata, const uint8_t *msg, size_t len);

struct grpc_client_call_opts {
	const char *path;		/* "/package.Service/Method" */
	const void *request;		/* message bytes (framed here) */
	size_t request_len;
	int timeout_ms;			/* deadline; <= 0: none */
	/* NULL = "application/grpc"; other values exercise servers in tests */
	const char *content_type;
	/* NULL = derived from timeout_ms; a raw grpc-timeout value otherwise */
	const char *grpc_timeout;
	/* Send @request as-is, without the 5-byte prefix (framing tests). */
	bool raw_request;
	/* NULL: keep the first message in the result (unary). */
	grpc_client_message_cb on_message;
	void *userdata;
};

struct grpc_client_result {
	int status;		/* grpc-status, or one synthesized (HTTP error, RST_STREAM, deadline) */
	char *message;		/* decoded grpc-message (or why a status was synthesized), or NULL */
	uint8_t *response;	/* first response message (unary), or NULL */
	size_t response_len;
	size_t n_messages;	/* response messages received */
	int http_status;	/* :status, 0 if none arrived */
};

/* Frees what a result owns and zeroes it; NULL is fine. */
void grpc_client_result_clear(struct grpc_client_result *result);

/*
 * Runs one call to completion. Returns 0 when the call has a status in
 * *ret_result (OK or not; a passed deadline is DEADLINE_EXCEEDED, the stream
 * is cancelled), or -errno when the connection failed (-ECONNRESET,
 * -EPROTO, -ENOMEM; the client is unusable afterwards). *ret_result is
 * filled only on 0; the caller clears it with grpc_client_result_clear.
 */
int grpc_client_invoke(struct grpc_client *client, const struct grpc_client_call_opts *opts,
		       struct grpc_client_result *ret_result);

/* Unary shorthand for grpc_client_invoke. */
int grpc_client_call(struct grpc_client *client, const char *path, const void *request,
		     size_t len, int timeout_ms, struct grpc_client_result *ret_result);

#endif
