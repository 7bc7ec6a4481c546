/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Inside the apiserver store (store_apiserver.c describes it): shared by
 * store_apiserver.c (the ops table, lifetime, request helpers),
 * store_apiserver_informer.c (one streaming list, or list + watch, of the
 * node's slices into the drivers' caches), store_apiserver_sync.c (planning and the write rounds) and
 * store_apiserver_reads.c (the Node, ResourceClaims) and
 * store_apiserver_events.c (Events).
 * Everything runs on the store's loop thread.
 */
#ifndef DRALET_KUBE_STORE_APISERVER_INTERNAL_H
#define DRALET_KUBE_STORE_APISERVER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "agent/kube/client.h"
#include "agent/kube/store_open.h"
#include "agent/kube/watch.h"
#include "agent/lib/backoff.h"
#include "agent/lib/err_msg.h"
#include "agent/slices/sync.h"

#define SLICES_PATH "/apis/resource.k8s.io/v1/resourceslices"
#define REQUEST_TIMEOUT_MS 30000u
#define BACKOFF_BASE_MS 200u
#define BACKOFF_MAX_MS 30000u
/* A driver's write rounds: 5 ms doubling (the upstream ResourceSlice
 * controller's per-item retry, client-go workqueue
 * DefaultTypedControllerRateLimiter), never sooner than BACKOFF_BASE_MS
 * (client-go's default client limit, DefaultQPS 5, spaces its requests so) */
#define SYNC_BACKOFF_BASE_MS 5u
#define RETRY_AFTER_CAP_MS 300000u

struct store_api;
struct claim_ctx;

enum phase { PHASE_DELETE, PHASE_UPDATE, PHASE_CREATE, PHASE_DONE };

/* One write of a round. Its body is made when the round is planned (the
 * records the plan read may change before the write starts). */
struct op_ctx {
	struct drv *d;
	size_t index;
	struct kube_request *req;
	char *body;		/* until the request starts; kept to its answer when
				 * it carries alpha fields (see note_dropped) */
	bool gated;
};

enum watch_next { WATCH_NEXT_REWATCH, WATCH_NEXT_RELIST };

struct drv {
	struct store_api *s;
	char *driver;
	struct slice_list *desired;	/* a reference; NULL before the first publish */
	struct slice_list *cache;	/* published records, one per name */
	bool listed;			/* cache is valid (a node-wide list filled it) */
	bool in_list;			/* the node-wide list in progress fills list_acc */
	struct slice_list *list_acc;	/* this driver's items of that list */
	bool counters;			/* desired carries counters: its layout needs
					 * the server's version */

	/* sync */
	uv_timer_t sync_timer;
	uint64_t pending_since;		/* 0: no debounced sync pending */
	bool retry_pending;		/* sync timer is a backoff */
	bool sync_running, sync_again, synced_once;
	struct slice_plan *plan;
	struct op_ctx *ops;
	enum phase phase;
	size_t outstanding;
	bool failed, conflict, rejected;	/* of the round running */
	uint64_t desired_version;	/* bumped by every publish */
	uint64_t round_version;		/* the desired_version the running round writes */
	uint64_t rejected_version;	/* a 422 for this version: wait for the next publish */
	bool progress;			/* a write of this round succeeded */
	uint32_t retry_after_ms;
	bool have_retry_after;
	bool unpaced;			/* a failure of the round came without the
					 * server's Retry-After */
	struct backoff sync_backoff;
	unsigned conflicts;
	unsigned unconverged;		/* rounds that wrote without converging */
	bool stalled;			/* gave up after MAX_UNCONVERGED_ROUNDS */
	int64_t generation;
};


struct store_api {
	struct store base;
	uv_loop_t *loop;
	struct kube_client *client;
	char *node_name, *node_uid;
	struct kube_request *node_req;
	uv_timer_t node_timer;
	uv_timer_t release_timer;	/* store_release_memory() once things are quiet */
	struct backoff node_backoff;
	struct drv **drivers;
	size_t n_drivers;
	/* The informer (store_apiserver_informer.c): one streaming list (a
	 * watch that lists first), or one list and one watch, of the node's
	 * ResourceSlices for every driver, split by spec.driver. In stats, a
	 * streaming list counts as a watch, not as a list. */
	struct {
		char *selector;			/* escaped field selector */
		char *rv;			/* last resourceVersion seen */
		bool rv_from_list;		/* rv is a list's, no watch event since */
		/* watches expired at once from a fresh list's rv in a row: while
		 * any, a list that works does not reset the backoff */
		unsigned expired_at_once;
		char *list_rv;
		/* parts of the list in progress read: pages, or a streaming list's
		 * initial events */
		unsigned list_pages;
		bool list_again;		/* a driver came after its first part */
		bool streaming;			/* watch_req is a streaming list before
						 * the end of its initial events */
		bool stream_refused;		/* the server refused a streaming list
						 * (no WatchList): list + watch for good */
		bool stream_error;		/* the streaming list got an ERROR event */
		bool list_plain_once;		/* the next list is a plain one */
		bool relist_now;		/* the stream stopped to list again */
		struct kube_request *list_req, *watch_req;
		struct kube_watch_parser *parser;
		uint64_t watch_started;
		bool watch_expired;		/* 410 seen in the stream */
		struct backoff backoff;
		uv_timer_t timer;
		enum watch_next next;
	} inf;
	struct claim_ctx *claims;
	struct status_write *status_writes;	/* store_apiserver_status.c */
	struct {				/* store_apiserver_events.c */
		struct event_recorder *recorder;
		struct event_send *head, *tail;	/* waiting */
		size_t n;
		struct event_send *in_flight;
		struct kube_request *req;
	} events;
	bool claims_beta;		/* resource.k8s.io/v1 not served: use v1beta2 */
	unsigned dropped_gates;		/* feature gates the server does not have */
	unsigned told_gates;		/* of which on_gates_dropped heard */
	void (*on_server_version)(void *userdata, unsigned minor);
	/* GET /version: asked once, by the first publish with counters */
	enum { VERSION_UNASKED, VERSION_ASKING, VERSION_ANSWERED } version;
	void (*on_gates_dropped)(void *userdata, unsigned gates);
	uint32_t debounce_ms;
	store_synced_cb on_synced;
	void *userdata;
	struct store_stats stats;
	unsigned pending_closes;
	bool destroying;
	uint32_t rng;
};

static inline struct store_api *to_api(struct store *st)
{
	return (struct store_api *)st;
}

/* ---- store_apiserver.c ---- */
/* A xorshift number for jitter. */
uint32_t api_rnd(struct store_api *s);
/* Slice trees were made and freed (a list, a write round, watch events): give
 * their pages back once the burst is over. */
void api_release_soon(struct store_api *s);
/* *dst = a copy of @src (NULL for NULL); keeps the old value on ENOMEM. */
void api_set_str(char **dst, const char *src);
/* The driver named @driver (NULL: none, or @driver NULL). */
struct drv *drv_lookup(struct store_api *s, const char *driver);
/* Starts one request (kube_request_start) and logs it. */
int api_start(struct store_api *s, const char *method, const char *path, const char *body,
	      uint32_t timeout_ms, unsigned retries, kube_data_cb on_data, kube_done_cb done,
	      void *ud, struct kube_request **ret_req);
/* Why a request failed: the connection error, or the HTTP status and the
 * server's Status message. */
void api_describe_failure(const struct kube_response *resp, struct err_msg *why);
/* Connection errors, 5xx and 429. */
bool api_retryable(const struct kube_response *resp);
/* The delay after a failed answer @resp (NULL: no answer): its Retry-After
 * when it has one (backoff_paced: @b grows only after 10 in a row), else the
 * next delay of @b. */
uint32_t api_retry_delay(struct store_api *s, struct backoff *b, const struct kube_response *resp);

/* ---- store_apiserver_status.c ---- */
void api_set_claim_status(struct store *st, const char *namespace_, const char *name,
			  const char *driver, struct json_object *devices);
/* Drops the writes (after kube_client_free cancelled their requests). */
void status_writes_free(struct store_api *s);

/* ---- store_apiserver_informer.c ---- */
/* 0 or -ENOMEM: the selector and the watch parser of @s (its timer is the
 * caller's to init); informer_free() frees them. */
int informer_init(struct store_api *s);
void informer_free(struct store_api *s);
/* Lists the node's slices again (cancels the watch): a streaming list,
 * which goes on as the watch, or (a server without WatchList) a list, then
 * a watch. */
void informer_list(struct store_api *s);
/* Watches from the last resourceVersion (lists when there is none). */
void informer_watch(struct store_api *s);
/* Lists again after @delay_ms (the watch stops now). */
void informer_relist_after(struct store_api *s, uint32_t delay_ms);
/* @d is new: its cache gets filled by the next list (started here unless
 * one is under way or due). */
void informer_add_driver(struct store_api *s, struct drv *d);
/* The cache of published records: get (borrowed) or NULL, delete by name,
 * keep @rec (taken) in @list in place of the record of its name. */
const struct slice_record *cache_get(struct drv *d, const char *name);
void cache_del(struct drv *d, const char *name);
void cache_keep(struct drv *d, struct slice_list *list, struct slice_record *rec);
/* resourceVersions are opaque, but etcd's are integers: compare when both
 * are, so an old watch event never overwrites a newer object we wrote. */
bool rv_older(const char *a, const char *b);
bool rv_equal(const char *a, const char *b);

/* ---- store_apiserver_sync.c ---- */
/* Asks for a sync round of @d: at once when @immediate, else debounced. */
void drv_want_sync(struct drv *d, bool immediate);
/* Ends the round of @d, if any: frees its plan and write bodies (also at
 * destroy). */
void drv_end_round(struct drv *d);

/* ---- store_apiserver_reads.c ---- */
/* Takes the Node's UID from the client's service account token when it
 * names this node (agent/kube/sa_token.h): 0, or -ENOENT (then node_fetch). */
int node_uid_from_token(struct store_api *s);
/* Reads the Node's UID (the owner of new slices), retrying until it has it;
 * then every published driver syncs. Asked for by the first round that
 * creates a slice; does nothing while a read is under way or due. */
void node_fetch(struct store_api *s);
void api_get_claim(struct store *st, const char *ns, const char *name, store_claim_cb cb,
		   void *userdata);
/* ---- store_apiserver_events.c ---- */
#define EVENT_QUEUE_MAX 100	/* Events waiting to be sent; more are dropped */
void api_record_event(struct store *st, const struct kube_object_ref *obj, const char *type,
		      const char *reason, const char *message);
/* The recorder (0 or -ENOMEM). */
int api_events_init(struct store_api *s);
/* Drops what waits (after kube_client_free cancelled the request in flight). */
void api_events_free(struct store_api *s);
/* Frees the claim reads in flight without calling back (at destroy). */
void claim_reads_free(struct store_api *s);

#endif
