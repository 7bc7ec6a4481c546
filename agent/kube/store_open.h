/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Creating a store (store.h) from the command line's options, for the
 * daemon and for `dralet slices --publish`:
 *   --store DIR        the file store (the embedded default): slices written
 *                      to DIR/resourceslices/<name>.json, claims read from
 *                      DIR/resourceclaims/<namespace>/<name>.{json,yaml}
 *   --kubeconfig FILE  the apiserver store, configured by a kubeconfig
 *   neither            the apiserver store, in-cluster configuration
 *
 * Usage by the daemon (all on the loop thread):
 *   struct store *st;
 *   store_open(loop, &opts, &st, err, sizeof(err));
 *   ... whenever the inventory changes, for every driver name:
 *       slices_build(inv, driver, node, NULL, &slice_opts, &slices);
 *       st->ops->publish(st, driver, slices); slice_list_unref(slices);
 *   ... a driver that went away: publish(st, driver, <an empty list>)
 *   (the store keeps a reference to the list until the next publish of that
 *   driver: do not modify it after publishing; build a new one instead)
 *   st->ops->destroy(st);  then let the loop run until its handles close.
 */
#ifndef DRALET_STORE_OPEN_H
#define DRALET_STORE_OPEN_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "agent/kube/store.h"

/* Called whenever the published slices of @driver equal the desired ones
 * (after each publish that converged, and after each repair). */
typedef void (*store_synced_cb)(void *userdata, const char *driver, int64_t generation);

struct store_options {
	const char *store_dir;		/* file store when set */
	const char *kubeconfig;		/* apiserver store from a kubeconfig */
	const char *kube_context;	/* kubeconfig context (NULL: current) */
	const char *service_account_dir;	/* in-cluster files (NULL: the standard) */
	const char *node_name;		/* required: pool name, field selectors */
	uint32_t debounce_ms;		/* quiet time that merges bursts (0: 100 ms); a
					 * burst waits at most 10 times that (>= 1 s) */
	store_synced_cb on_synced;	/* optional */
	/* optional, apiserver store: the server's version 1.<minor> (0: it did
	 * not say), asked once (GET /version) when a publish first carries
	 * counters, whose layout depends on it (slices/counters_layout.h); the
	 * slices with counters are written only after the callback (which may
	 * publish again) */
	void (*on_server_version)(void *userdata, unsigned minor);
	/* optional, apiserver store: the server silently dropped the fields of
	 * @gates (slices/gates.h; all known so far), called once per new gate
	 * when the slices have converged without them, outside any write
	 * round, so the callback may publish again */
	void (*on_gates_dropped)(void *userdata, unsigned gates);
	void *userdata;
};

/* Opens the store the options name on @loop. -errno with a message. */
int store_open(uv_loop_t *loop, const struct store_options *opts, struct store **ret_store,
	       char *err, size_t errlen);

/* The two implementations (store_open picks one). */
int store_file_new(uv_loop_t *loop, const struct store_options *opts, struct store **ret_store,
		   char *err, size_t errlen);
int store_apiserver_new(uv_loop_t *loop, const struct store_options *opts,
			struct store **ret_store, char *err, size_t errlen);

/*
 * Hands the heap pages freed after a burst of short-lived slice trees (one
 * slice's tree while it is built, written or read back) to the system:
 * glibc keeps them otherwise, and the agent's resident size would stay at
 * its peak. Called by the stores once a publish or write round is over.
 */
void store_release_memory(void);

/* How a slice write ended: written (a delete of one already gone counts),
 * conflict (409, or an update of a slice gone meanwhile: read again),
 * invalid (400, 422: the server refused the object), error (anything else). */
enum store_write_result {
	STORE_WRITE_OK, STORE_WRITE_CONFLICT, STORE_WRITE_INVALID, STORE_WRITE_ERROR,
	STORE_N_WRITE_RESULTS
};
const char *store_write_result_name(enum store_write_result r);

struct kube_request_counts;

/* Counters for tests, benchmarks and metrics (both stores; zero where meaningless). */
struct store_stats {
	uint64_t requests;	/* HTTP requests sent, retries included */
	uint64_t creates, updates, deletes;	/* slice writes that succeeded */
	uint64_t lists, watches;	/* list and watch requests started (a streaming list is a watch) */
	uint64_t syncs;		/* sync rounds that ran a plan */
	uint64_t failures;	/* failed requests (any reason) */
	uint64_t token_reloads;
	/* slice writes by enum slice_op_type and result (the daemon's metrics) */
	uint64_t slice_writes[3][STORE_N_WRITE_RESULTS];
	/* the apiserver client's requests (kube/client.h); NULL for the file store */
	const struct kube_request_counts *requests_by;
	/* Events (store.h record_event): created or updated; skipped by the
	 * rate limit; dropped because the queue was full (apiserver store) */
	uint64_t events_sent, events_skipped, events_dropped;
};
void store_get_stats(struct store *s, struct store_stats *ret_stats);
/* What store_get_stats dispatches to. */
void store_file_get_stats(struct store *s, struct store_stats *ret_stats);
void store_apiserver_get_stats(struct store *s, struct store_stats *ret_stats);

#endif
