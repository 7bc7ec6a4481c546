/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gRPC calls served, by method and status code: counted by the gRPC core
 * (grpc_server_set_metrics) once per call, when its status is decided (the
 * handler's reply, a rejection, or the cancellation that beat the reply).
 * Methods a server does not serve count as "unknown", so the table stays as
 * small as the methods registered.
 *
 * Ownership: the caller owns the table (zero-initialized) and frees it with
 * grpc_metrics_clear once no server counts into it any more.
 * Threading: loop thread only, like the gRPC server (no locks).
 */
#ifndef DRALET_GRPC_METRICS_H
#define DRALET_GRPC_METRICS_H

#include <stddef.h>
#include <stdint.h>

#define GRPC_METRICS_N_CODES 17	/* OK .. UNAUTHENTICATED */
#define GRPC_METRICS_UNKNOWN_METHOD "unknown"

struct grpc_method_counts {
	char *method;				/* "/package.Service/Method" or "unknown" */
	uint64_t by_code[GRPC_METRICS_N_CODES];
};

struct grpc_metrics {
	struct grpc_method_counts *methods;	/* in order of first call */
	size_t n;
};

/* Counts one call of @method (NULL: unknown) ending with @code (a status
 * outside 0..16 counts as UNKNOWN, 2). Out of memory: not counted. */
void grpc_metrics_count(struct grpc_metrics *m, const char *method, int code);

void grpc_metrics_clear(struct grpc_metrics *m);

#endif
