/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A gRPC client that never reads (raw HTTP/2 over a unix socket, windows as
 * large as HTTP/2 allows), to test what a server does with a peer that
 * stops reading: it sends requests of one empty message each and then only
 * holds the connection open.
 */
#ifndef DRALET_TEST_STUCK_CLIENT_H
#define DRALET_TEST_STUCK_CLIENT_H

struct stuck_client;

/* Connects to @socket_path and sends @n requests for @grpc_path. Returns 0
 * and *ret, or -errno / an nghttp2 error code (negative). */
int stuck_client_open(const char *socket_path, const char *grpc_path, unsigned n,
		      struct stuck_client **ret);

/* Closes the connection. Accepts NULL. */
void stuck_client_close(struct stuck_client *c);

#endif
