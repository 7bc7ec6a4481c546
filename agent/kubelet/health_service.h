/* SPDX-License-Identifier: Apache-2.0 */
/*
 * /v1.DRAResourceHealth/NodeWatchResources and its v1alpha1 twin (the same
 * messages) for one DRA driver (kubelet-contract.md section 3): a
 * server-streaming call that gets the
 * complete health list of the driver's devices at once and again on every
 * health_watch_broadcast(), until the client goes away or the service shuts
 * down. Any number of watchers; one whose send queue is full (it does not
 * read) is ended with RESOURCE_EXHAUSTED instead of growing memory.
 *
 * Loop thread only.
 */
#ifndef DRALET_HEALTH_WATCH_SERVICE_H
#define DRALET_HEALTH_WATCH_SERVICE_H

#include <stddef.h>
#include <stdint.h>

struct grpc_server;
struct health_table;
struct health_watch;

/*
 * Adds NodeWatchResources (v1 and v1alpha1) to @srv. @table is borrowed and
 * read on every send until health_watch_shutdown(); @pool (the node's pool
 * name) is copied; every status says @timeout_s (health_message_pack). The service must outlive @srv (free it after the server closed).
 * Returns 0 and *ret_watch, or -ENOMEM / an error of grpc_server_add_method.
 */
int health_watch_new(struct grpc_server *srv, const char *pool, const struct health_table *table,
		     int64_t timeout_s, struct health_watch **ret_watch);

/* Sends the complete list to every watcher. Accepts NULL. */
void health_watch_broadcast(struct health_watch *w);

/* Open watch calls (tests, logs). */
size_t health_watch_n_watchers(const struct health_watch *w);

/*
 * Ends every watch call with OK (the kubelet opens a new one after a few
 * seconds) and answers later calls UNAVAILABLE; the table is not read any
 * more. Call it before closing the server, so that its graceful shutdown
 * does not wait for streams that never end.
 */
void health_watch_shutdown(struct health_watch *w);

/* Frees the service, once @srv is closed. Accepts NULL. */
void health_watch_free(struct health_watch *w);

#endif
