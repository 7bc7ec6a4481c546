/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/kubelet/health_service.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "agent/kubelet/grpc_server.h"
#include "agent/health/health_message.h"
#include "agent/lib/log.h"
#include "proto/kubelet_pb.h"

struct health_watch {
	char *pool;
	const struct health_table *table;	/* NULL after shutdown */
	int64_t timeout_s;
	struct grpc_call **calls;		/* the open watch calls */
	size_t n_calls, cap_calls;
};

static bool forget(struct health_watch *w, struct grpc_call *call)
{
	for (size_t i = 0; i < w->n_calls; i++) {
		if (w->calls[i] == call) {
			w->calls[i] = w->calls[--w->n_calls];
			return true;
		}
	}
	return false;
}

/* Ends a watcher: it is forgotten first, so a cancellation that the reply
 * triggers finds nothing to do. */
static void end_call(struct health_watch *w, struct grpc_call *call, enum grpc_status status,
		     const char *message)
{
	if (forget(w, call))
		grpc_call_reply(call, status, NULL, 0, message);
}

static void on_cancel(struct grpc_call *call, void *userdata)
{
	end_call(userdata, call, GRPC_STATUS_CANCELLED, NULL);
}

/* Sends @msg to @call; a watcher that cannot take it is ended. */
static void send_to(struct health_watch *w, struct grpc_call *call, const uint8_t *msg,
		    size_t len)
{
	int r = grpc_call_send(call, msg, len);

	if (r == -ENOBUFS) {
		log_warn("health watch on pool %s: the client does not read its messages; "
			 "ending the call", w->pool);
		end_call(w, call, GRPC_STATUS_RESOURCE_EXHAUSTED,
			 "the client does not read the health updates");
	} else if (r < 0) {
		end_call(w, call, r == -ECANCELED ? GRPC_STATUS_CANCELLED : GRPC_STATUS_INTERNAL,
			 strerror(-r));
	}
}

void health_watch_broadcast(struct health_watch *w)
{
	struct grpc_call **snapshot;
	uint8_t *msg;
	size_t len, n = w ? w->n_calls : 0;

	if (!n || !w->table)
		return;
	/* a send may end other calls of the same connection (it flushes the
	 * socket): walk a copy and skip calls that are gone meanwhile */
	snapshot = malloc(n * sizeof(*snapshot));
	if (!snapshot || health_message_pack(w->table, w->pool, w->timeout_s, &msg, &len) < 0) {
		log_error("health watch on pool %s: out of memory; the update is not sent", w->pool);
		free(snapshot);
		return;
	}
	memcpy(snapshot, w->calls, n * sizeof(*snapshot));
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < w->n_calls; j++) {
			if (w->calls[j] == snapshot[i]) {
				send_to(w, snapshot[i], msg, len);
				break;
			}
		}
	}
	free(msg);
	free(snapshot);
}

static void on_watch(struct grpc_call *call, const uint8_t *request, size_t len, void *userdata)
{
	struct health_watch *w = userdata;
	uint8_t *msg;
	size_t msg_len;

	(void)request;	/* NodeWatchResourcesRequest is empty */
	(void)len;
	if (!w->table) {
		grpc_call_reply(call, GRPC_STATUS_UNAVAILABLE, NULL, 0, "the driver is stopping");
		return;
	}
	if (w->n_calls == w->cap_calls) {
		size_t cap = w->cap_calls ? 2 * w->cap_calls : 4;
		struct grpc_call **calls = realloc(w->calls, cap * sizeof(*calls));
		if (!calls) {
			grpc_call_reply(call, GRPC_STATUS_RESOURCE_EXHAUSTED, NULL, 0, "out of memory");
			return;
		}
		w->calls = calls;
		w->cap_calls = cap;
	}
	if (grpc_call_on_cancel(call, on_cancel, w) < 0) {
		grpc_call_reply(call, GRPC_STATUS_CANCELLED, NULL, 0, NULL);
		return;
	}
	w->calls[w->n_calls++] = call;
	if (health_message_pack(w->table, w->pool, w->timeout_s, &msg, &msg_len) < 0) {
		end_call(w, call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
		return;
	}
	send_to(w, call, msg, msg_len);
	free(msg);
}

int health_watch_new(struct grpc_server *srv, const char *pool, const struct health_table *table,
		     int64_t timeout_s, struct health_watch **ret_watch)
{
	struct health_watch *w = calloc(1, sizeof(*w));
	int r;

	if (!w || !(w->pool = strdup(pool))) {
		free(w);
		return -ENOMEM;
	}
	w->table = table;
	w->timeout_s = timeout_s;
	r = grpc_server_add_method(srv, KUBELET_PATH_WATCH_HEALTH_V1, GRPC_SERVER_STREAMING,
				   on_watch, w);
	if (r == 0)
		r = grpc_server_add_method(srv, KUBELET_PATH_WATCH_HEALTH, GRPC_SERVER_STREAMING,
					   on_watch, w);
	if (r < 0) {
		health_watch_free(w);
		return r;
	}
	*ret_watch = w;
	return 0;
}

size_t health_watch_n_watchers(const struct health_watch *w)
{
	return w->n_calls;
}

void health_watch_shutdown(struct health_watch *w)
{
	if (!w)
		return;
	w->table = NULL;
	while (w->n_calls)
		end_call(w, w->calls[w->n_calls - 1], GRPC_STATUS_OK, NULL);
}

void health_watch_free(struct health_watch *w)
{
	if (!w)
		return;
	free(w->calls);
	free(w->pool);
	free(w);
}
