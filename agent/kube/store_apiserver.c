/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The apiserver store: publishes ResourceSlices and reads ResourceClaims
 * through kube-apiserver (kube/client.h).
 *
 * Per driver name it keeps an informer: a list, then a watch of the slices
 * with spec.driver=<driver>,spec.nodeName=<node>, into a cache of what is
 * published: slice records (slices/record.h: the text an update keeps and
 * digests of the rest, made one device at a time from list pages and write
 * answers), never trees; the desired slices are records too. A sync runs
 * the planner (slices/sync.h) over the cache and the desired slices and
 * writes the plan: deletes (with uid/resourceVersion preconditions), then
 * updates, then creates. Written objects go into the cache at once (the
 * watch echo is then a no-op), so nothing is written twice.
 *
 * Triggers: publish() (debounced, so a burst of hot-plug changes makes one
 * write round; the first publish runs at once), any change seen on the watch
 * that is not our own echo (a kubelet wipe, someone editing), the end of a
 * failed round (backoff with jitter; Retry-After honoured).
 * Failures: connection errors, 5xx, 429 -> retry the round after a backoff;
 * 409 -> list again, then retry; 422 -> log the server's causes and wait for
 * the next publish; watch 410 -> list again. A round that wrote and still is
 * not converged three times in a row (a server changing what we send) stops
 * with a warning until something changes: no update loop, no request storm.
 *
 * warn() creates a core/v1 Event about the Node (kube/event.h) with one
 * POST, retried on connection errors, 5xx and 429; never aggregated.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/lib/backoff.h"
#include "agent/kube/client.h"
#include "agent/kube/config.h"
#include "agent/kube/event.h"
#include "agent/kube/status.h"
#include "agent/kube/watch.h"
#include "agent/lib/log.h"
#include "agent/slices/json_tree.h"
#include "agent/slices/list_body.h"
#include "agent/slices/sync.h"
#include "agent/kube/store_open.h"

#define SLICES_PATH "/apis/resource.k8s.io/v1/resourceslices"
#define DEBOUNCE_DEFAULT_MS 100u
#define DEBOUNCE_MAX_MS 1000u
#define REQUEST_TIMEOUT_MS 30000u
#define BACKOFF_BASE_MS 200u
#define BACKOFF_MAX_MS 30000u
#define RETRY_AFTER_CAP_MS 300000u
#define WATCH_MIN_SECONDS 300u
#define WATCH_SPREAD_SECONDS 300u
#define MAX_UNCONVERGED_ROUNDS 3
#define RELEASE_DELAY_MS 500u		/* quiet time before the heap is trimmed */

struct store_api;

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
	char *selector;			/* escaped field selector */
	struct slice_list *desired;	/* a reference; NULL before the first publish */
	struct slice_list *cache;	/* published records, one per name */
	char *rv;			/* last resourceVersion seen */

	/* informer */
	bool listed;			/* cache is valid, a watch runs or will */
	bool unwatched;			/* no devices: listed once, not watched */
	struct slice_list *list_acc;	/* pages of a list in progress */
	char *list_rv;
	struct kube_request *list_req, *watch_req;
	struct kube_watch_parser *parser;
	uint64_t watch_started;
	bool watch_expired;		/* 410 seen in the stream */
	struct backoff watch_backoff;
	uv_timer_t watch_timer;
	enum watch_next watch_next;

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
	struct backoff sync_backoff;
	unsigned conflicts;
	unsigned unconverged;		/* rounds that wrote without converging */
	bool stalled;			/* gave up after MAX_UNCONVERGED_ROUNDS */
	int64_t generation;
};

struct claim_ctx {
	struct store_api *s;
	struct claim_ctx *next, *prev;
	store_claim_cb cb;
	void *userdata;
	char *ns, *name;
	bool beta;
	struct kube_request *req;
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
	struct claim_ctx *claims;
	bool claims_beta;		/* resource.k8s.io/v1 not served: use v1beta2 */
	unsigned dropped_gates;		/* feature gates the server does not have */
	uint32_t debounce_ms;
	store_synced_cb on_synced;
	void *userdata;
	struct store_stats stats;
	unsigned pending_closes;
	bool destroying;
	uint32_t rng;
};

static void drv_want_sync(struct drv *d, bool immediate);
static void drv_start_list(struct drv *d);
static void drv_start_watch(struct drv *d);
static void drv_run_phase(struct drv *d);
static void node_fetch(struct store_api *s);

static uint32_t rnd(struct store_api *s)
{
	uint32_t x = s->rng;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	s->rng = x ? x : 0x2545f491u;
	return s->rng;
}

static struct store_api *to_api(struct store *st)
{
	return (struct store_api *)st;
}

static void on_release_timer(uv_timer_t *t)
{
	(void)t;
	store_release_memory();
}

/* Slice trees were made and freed (a list, a write round, watch events): give
 * their pages back once the burst is over. */
static void release_soon(struct store_api *s)
{
	if (!s->destroying)
		uv_timer_start(&s->release_timer, on_release_timer, RELEASE_DELAY_MS, 0);
}

static const char *jstr(struct json_object *o, const char *a, const char *b)
{
	struct json_object *v = NULL;
	if (!o || !json_object_object_get_ex(o, a, &o))
		return NULL;
	if (b && !json_object_object_get_ex(o, b, &o))
		return NULL;
	v = o;
	return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static void set_str(char **dst, const char *src)
{
	char *copy = src ? strdup(src) : NULL;
	if (src && !copy)
		return;	/* keep the old value on ENOMEM */
	free(*dst);
	*dst = copy;
}

/* resourceVersions are opaque, but etcd's are integers: compare when both are,
 * so an old watch event never overwrites a newer object we wrote. */
static bool rv_older(const char *a, const char *b)
{
	char *ea, *eb;
	if (!a || !b)
		return false;
	unsigned long long x = strtoull(a, &ea, 10), y = strtoull(b, &eb, 10);
	return *a && *b && !*ea && !*eb && x < y;
}

static bool rv_equal(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

static int start(struct store_api *s, const char *method, const char *path, const char *body,
		 uint32_t timeout_ms, unsigned retries, kube_data_cb on_data, kube_done_cb done,
		 void *ud, struct kube_request **ret_req)
{
	struct kube_request_opts o = {
		.method = method,
		.path = path,
		.body = body,
		.timeout_ms = timeout_ms,
		.on_data = on_data,
		.retries = retries,
	};
	log_debug("apiserver: %s %s", method, path);
	return kube_request_start(s->client, &o, done, ud, ret_req);
}

static void describe_failure(const struct kube_response *resp, char *buf, size_t size)
{
	if (resp->status == 0) {
		snprintf(buf, size, "%s (%s)", strerror(-resp->error), resp->error_text);
		return;
	}
	char status[400];
	kube_status_describe(resp->body, resp->body_len, status, sizeof(status));
	snprintf(buf, size, "HTTP %ld: %s", resp->status, status);
}

static bool retryable(const struct kube_response *resp)
{
	return resp->status == 0 || resp->status >= 500 || resp->status == 429;
}

/* ---- node ---- */

static void on_node_timer(uv_timer_t *t)
{
	node_fetch(t->data);
}

static void node_done(void *ud, const struct kube_response *resp)
{
	struct store_api *s = ud;
	s->node_req = NULL;
	if (resp->status == 200) {
		struct json_object *node = kube_json_parse(resp->body, resp->body_len);
		const char *uid = jstr(node, "metadata", "uid");
		if (uid) {
			set_str(&s->node_uid, uid);
			json_object_put(node);
			log_info("apiserver: node %s has uid %s", s->node_name, s->node_uid);
			for (size_t i = 0; i < s->n_drivers; i++)
				if (s->drivers[i]->desired)
					drv_want_sync(s->drivers[i], true);
			return;
		}
		json_object_put(node);
	}
	char why[512];
	if (resp->status == 200)
		snprintf(why, sizeof(why), "answer without metadata.uid");
	else
		describe_failure(resp, why, sizeof(why));
	s->stats.failures++;
	uint32_t ra = 0;
	bool have_ra = resp->retry_after && retry_after_parse(resp->retry_after, time(NULL), &ra) == 0;
	uint32_t delay = backoff_with_retry_after(backoff_next(&s->node_backoff, rnd(s)), have_ra, ra,
						  RETRY_AFTER_CAP_MS);
	log_warn("apiserver: cannot read node %s (needed for the slices' owner reference): %s; "
		 "retrying in %u ms", s->node_name, why, delay);
	uv_timer_start(&s->node_timer, on_node_timer, delay, 0);
}

static void node_fetch(struct store_api *s)
{
	char *name = kube_escape(s->node_name), *path = NULL;
	if (!name || asprintf(&path, "/api/v1/nodes/%s", name) < 0) {
		free(name);
		uv_timer_start(&s->node_timer, on_node_timer, 1000, 0);
		return;
	}
	free(name);
	if (start(s, "GET", path, NULL, REQUEST_TIMEOUT_MS, 2, NULL, node_done, s, &s->node_req) < 0)
		uv_timer_start(&s->node_timer, on_node_timer, 1000, 0);
	free(path);
}

/* ---- the informer: list + watch ---- */

/* Keeps @rec (taken) in @list, in place of the record of its name. */
static void cache_keep(struct drv *d, struct slice_list *list, struct slice_record *rec)
{
	int r = slice_list_put(list, rec);
	if (r < 0 && r != -EINVAL)	/* the next list repairs the view */
		log_warn("apiserver: cannot keep a ResourceSlice of %s: %s", d->driver, strerror(-r));
}

/* Keeps @obj (borrowed) in @list as a record, in place of one of its name. */
static void cache_put(struct drv *d, struct slice_list *list, struct json_object *obj)
{
	struct slice_record *rec = NULL;
	if (!jstr(obj, "metadata", "name"))
		return;
	int r = slice_record_from_json(obj, SLICE_RECORD_PUBLISHED, &rec);
	if (r == 0)
		cache_keep(d, list, rec);
	else
		log_warn("apiserver: cannot keep a ResourceSlice of %s: %s", d->driver, strerror(-r));
}

static const struct slice_record *cache_get(struct drv *d, const char *name)
{
	long i = slice_list_find(d->cache, name);
	return i < 0 ? NULL : d->cache->items[i];
}

static void cache_del(struct drv *d, const char *name)
{
	long i = slice_list_find(d->cache, name);
	if (i >= 0)
		slice_list_remove(d->cache, (size_t)i);
}

static void on_watch_timer(uv_timer_t *t)
{
	struct drv *d = t->data;
	if (d->watch_next == WATCH_NEXT_RELIST || !d->rv)
		drv_start_list(d);
	else
		drv_start_watch(d);
}

static void drv_retry_informer(struct drv *d, enum watch_next next, const struct kube_response *resp)
{
	uint32_t ra = 0;
	bool have_ra = resp && resp->retry_after &&
		       retry_after_parse(resp->retry_after, time(NULL), &ra) == 0;
	uint32_t delay = backoff_with_retry_after(backoff_next(&d->watch_backoff, rnd(d->s)), have_ra,
						  ra, RETRY_AFTER_CAP_MS);
	d->watch_next = next;
	log_info("apiserver: %s the ResourceSlices of %s again in %u ms",
		 next == WATCH_NEXT_RELIST || !d->rv ? "listing" : "watching", d->driver, delay);
	uv_timer_start(&d->watch_timer, on_watch_timer, delay, 0);
}

static bool drv_wants_watch(const struct drv *d)
{
	return !d->desired || d->desired->n > 0;
}

/* One item of a list page, kept as a record (one device's tree at a time). */
static int list_item(void *ud, const char *text, size_t len)
{
	struct drv *d = ud;
	struct slice_record *rec = NULL;
	int r = slice_record_from_text(text, len, SLICE_RECORD_PUBLISHED, &rec);
	if (r == -ENOMEM)
		return r;
	if (r == 0)	/* an item without a name is left out (-EINVAL) */
		cache_keep(d, d->list_acc, rec);
	return 0;	/* not an object: ignored, like an item without a name */
}

static void list_done(void *ud, const struct kube_response *resp)
{
	struct drv *d = ud;
	struct json_object *meta = NULL;
	int r = -EBADMSG;
	d->list_req = NULL;
	if (resp->status == 200 && (d->list_acc || slice_list_new(&d->list_acc) == 0))
		r = slice_list_body_scan(resp->body, resp->body_len, list_item, d, &meta);
	if (r < 0) {
		char why[512];
		if (resp->status == 200)
			snprintf(why, sizeof(why), "%s", r == -ENOMEM ? "out of memory"
							       : "answer is not a list");
		else
			describe_failure(resp, why, sizeof(why));
		slice_list_unref(d->list_acc);
		d->list_acc = NULL;
		d->s->stats.failures++;
		log_warn("apiserver: listing the ResourceSlices of %s failed: %s", d->driver, why);
		drv_retry_informer(d, WATCH_NEXT_RELIST, resp);
		return;
	}
	const char *rv = jstr(meta, "resourceVersion", NULL);
	if (rv && !d->list_rv)
		set_str(&d->list_rv, rv);
	const char *cont = jstr(meta, "continue", NULL);
	if (cont && *cont) {
		char *esc = kube_escape(cont), *path = NULL;
		if (esc && asprintf(&path, SLICES_PATH "?fieldSelector=%s&limit=500&continue=%s",
				    d->selector, esc) >= 0) {
			if (start(d->s, "GET", path, NULL, REQUEST_TIMEOUT_MS, 0, NULL, list_done, d,
				  &d->list_req) == 0) {
				free(esc);
				free(path);
				json_object_put(meta);
				return;
			}
		}
		free(esc);
		free(path);
		json_object_put(meta);
		slice_list_unref(d->list_acc);
		d->list_acc = NULL;
		drv_retry_informer(d, WATCH_NEXT_RELIST, NULL);
		return;
	}
	json_object_put(meta);
	release_soon(d->s);
	slice_list_unref(d->cache);
	d->cache = d->list_acc;
	d->list_acc = NULL;
	free(d->rv);
	d->rv = d->list_rv;
	d->list_rv = NULL;
	d->listed = true;
	log_debug("apiserver: listed %zu ResourceSlice(s) of %s at resourceVersion %s (%zu bytes "
		  "kept)", d->cache->n, d->driver, d->rv ? d->rv : "?",
		  slice_list_text_bytes(d->cache));
	/* A driver without devices only needs its old slices gone: no watch (and
	 * no request) until it has devices again; publish() lists again then. */
	if (drv_wants_watch(d))
		drv_start_watch(d);
	else
		d->unwatched = true;
	if (d->desired)
		drv_want_sync(d, true);
}

static void drv_start_list(struct drv *d)
{
	char *path = NULL;
	if (d->list_req || d->s->destroying)
		return;
	kube_request_cancel(d->watch_req);
	d->watch_req = NULL;
	slice_list_unref(d->list_acc);
	d->list_acc = NULL;
	free(d->list_rv);
	d->list_rv = NULL;
	if (asprintf(&path, SLICES_PATH "?fieldSelector=%s&limit=500", d->selector) < 0 ||
	    start(d->s, "GET", path, NULL, REQUEST_TIMEOUT_MS, 0, NULL, list_done, d,
		  &d->list_req) < 0) {
		free(path);
		drv_retry_informer(d, WATCH_NEXT_RELIST, NULL);
		return;
	}
	d->s->stats.lists++;
	free(path);
}

/* One watch event; runs inside libcurl's write callback: no requests here. */
static int watch_event(void *ud, const struct kube_watch_event *ev)
{
	struct drv *d = ud;
	if (ev->type == KUBE_WATCH_ERROR) {
		char why[400];
		const char *text = json_object_to_json_string_ext(ev->object, JSON_C_TO_STRING_PLAIN);
		kube_status_describe(text, strlen(text), why, sizeof(why));
		if (ev->code == 410) {
			log_debug("apiserver: watch of %s expired (%s); listing again", d->driver, why);
			d->watch_expired = true;
		} else {
			log_warn("apiserver: watch of %s reported an error: %s", d->driver, why);
		}
		return -ESTALE;
	}
	if (ev->resource_version)
		set_str(&d->rv, ev->resource_version);
	if (ev->type == KUBE_WATCH_BOOKMARK)
		return 0;
	const char *name = jstr(ev->object, "metadata", "name");
	const char *drv = jstr(ev->object, "spec", "driver"), *node = jstr(ev->object, "spec", "nodeName");
	if (!name || !drv || !node || strcmp(drv, d->driver) || strcmp(node, d->s->node_name))
		return 0;
	const struct slice_record *cur = cache_get(d, name);
	const char *cur_rv = cur ? cur->resource_version : NULL;
	if (cur && rv_older(ev->resource_version, cur_rv))
		return 0;	/* we already hold a newer version (our own write) */
	bool echo = cur && cur_rv && ev->resource_version && !strcmp(cur_rv, ev->resource_version);
	if (ev->type == KUBE_WATCH_DELETED) {
		if (!cur)
			return 0;	/* we deleted it ourselves */
		cache_del(d, name);
		echo = false;
	} else {
		if (echo)
			return 0;
		cache_put(d, d->cache, ev->object);
	}
	log_debug("apiserver: %s ResourceSlice %s of %s (resourceVersion %s)",
		  kube_watch_type_name(ev->type), name, d->driver,
		  ev->resource_version ? ev->resource_version : "?");
	release_soon(d->s);
	/* Somebody else changed our slices: check them again (and allow writes
	 * again after a stall). */
	d->unconverged = 0;
	d->stalled = false;
	if (d->desired)
		drv_want_sync(d, false);
	return 0;
}

static int watch_data(void *ud, const char *buf, size_t len)
{
	struct drv *d = ud;
	int r = kube_watch_parser_feed(d->parser, buf, len, watch_event, d);
	if (r < 0 && r != -ESTALE)
		log_warn("apiserver: watch stream of %s is malformed (%s); listing again", d->driver,
			 strerror(-r));
	return r;
}

static void watch_done(void *ud, const struct kube_response *resp)
{
	struct drv *d = ud;
	d->watch_req = NULL;
	if (!drv_wants_watch(d)) {
		d->unwatched = true;	/* the next publish with devices lists again */
		return;
	}
	uint64_t lasted = uv_now(d->s->loop) - d->watch_started;
	size_t events = kube_watch_parser_events(d->parser);
	bool clean = resp->status == 200 && !resp->error && kube_watch_parser_idle(d->parser);
	if (d->watch_expired || resp->status == 410) {
		d->watch_expired = false;
		/* Relist right away after a watch that ran a while; a server that
		 * expires every new watch at once gets a backoff. */
		if (lasted >= 1000) {
			backoff_reset(&d->watch_backoff);
			drv_start_list(d);
		} else {
			drv_retry_informer(d, WATCH_NEXT_RELIST, NULL);
		}
		return;
	}
	if (clean) {
		/* The server ended the watch (timeoutSeconds): carry on from the last rv. */
		if (lasted >= 1000 || events > 0) {
			backoff_reset(&d->watch_backoff);
			drv_start_watch(d);
		} else {
			drv_retry_informer(d, WATCH_NEXT_REWATCH, NULL);
		}
		return;
	}
	char why[512];
	if (resp->status == 200)
		snprintf(why, sizeof(why), "stream broken (%s)", resp->error ? strerror(-resp->error)
									     : "partial event");
	else
		describe_failure(resp, why, sizeof(why));
	d->s->stats.failures++;
	log_warn("apiserver: watch of the ResourceSlices of %s ended: %s", d->driver, why);
	/* A watch that worked for a while talks to a working server: the backoff
	 * starts again, or faults spread over a long time would add up to the cap. */
	if (lasted >= 1000 || events > 0)
		backoff_reset(&d->watch_backoff);
	/* Connection trouble: resume from the last rv; anything else: list again. */
	drv_retry_informer(d, retryable(resp) && resp->status != 200 ? WATCH_NEXT_REWATCH
								     : WATCH_NEXT_RELIST, resp);
}

static void drv_start_watch(struct drv *d)
{
	char *path = NULL, *rv = d->rv ? kube_escape(d->rv) : NULL;
	if (d->watch_req || d->s->destroying)
		goto out;
	if (!rv) {
		drv_start_list(d);
		goto out;
	}
	unsigned secs = WATCH_MIN_SECONDS + rnd(d->s) % WATCH_SPREAD_SECONDS;
	kube_watch_parser_reset(d->parser);
	d->watch_expired = false;
	if (asprintf(&path, SLICES_PATH "?fieldSelector=%s&watch=true&allowWatchBookmarks=true"
			    "&resourceVersion=%s&timeoutSeconds=%u", d->selector, rv, secs) < 0) {
		path = NULL;
		drv_retry_informer(d, WATCH_NEXT_REWATCH, NULL);
		goto out;
	}
	d->watch_started = uv_now(d->s->loop);
	if (start(d->s, "GET", path, NULL, (secs + 30) * 1000u, 0, watch_data, watch_done, d,
		  &d->watch_req) < 0) {
		drv_retry_informer(d, WATCH_NEXT_REWATCH, NULL);
		goto out;
	}
	d->s->stats.watches++;
out:
	free(path);
	free(rv);
}

/* ---- sync ---- */

static void on_sync_timer(uv_timer_t *t);

static void drv_want_sync(struct drv *d, bool immediate)
{
	struct store_api *s = d->s;
	if (s->destroying || !d->desired)
		return;
	if (d->sync_running) {
		d->sync_again = true;
		return;
	}
	if (d->retry_pending)
		return;	/* the retry after the backoff sees this change too */
	uint64_t now = uv_now(s->loop);
	if (!d->pending_since)
		d->pending_since = now;
	uint64_t delay = immediate ? 0 : s->debounce_ms;
	/* A burst that never pauses still gets published after a while. */
	uint64_t max_wait = s->debounce_ms * 10u > DEBOUNCE_MAX_MS ? s->debounce_ms * 10u : DEBOUNCE_MAX_MS;
	if (now + delay > d->pending_since + max_wait)
		delay = d->pending_since + max_wait > now ? d->pending_since + max_wait - now : 0;
	uv_timer_start(&d->sync_timer, on_sync_timer, delay, 0);
}

static void drv_free_ops(struct drv *d)
{
	for (size_t i = 0; d->ops && d->plan && i < d->plan->n_ops; i++)
		free(d->ops[i].body);
	free(d->ops);
	d->ops = NULL;
}

static void drv_end_round(struct drv *d)
{
	drv_free_ops(d);
	slice_plan_free(d->plan);
	d->plan = NULL;
	d->sync_running = false;
}

static char *delete_body(const char *uid, const char *rv)
{
	struct json_object *b = json_object_new_object(), *pre = json_object_new_object();
	json_object_object_add(b, "kind", json_object_new_string("DeleteOptions"));
	json_object_object_add(b, "apiVersion", json_object_new_string("v1"));
	if (uid)
		json_object_object_add(pre, "uid", json_object_new_string(uid));
	if (rv)
		json_object_object_add(pre, "resourceVersion", json_object_new_string(rv));
	json_object_object_add(b, "preconditions", pre);
	char *text = strdup(json_object_to_json_string_ext(b, JSON_C_TO_STRING_PLAIN));
	json_object_put(b);
	return text;
}

#define BODY_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* New slices are owned by the Node (the daemon may not know its UID). */
static void add_owner(void *userdata, struct json_object *obj)
{
	struct store_api *s = userdata;
	json_tree_set_node_owner(obj, s->node_name, s->node_uid);
}

/* The bodies of every write of @d's plan, one write (and one device's tree) at a time. */
static int drv_make_bodies(struct drv *d)
{
	struct store_api *s = d->s;
	for (size_t i = 0; i < d->plan->n_ops; i++) {
		const struct slice_op *sop = &d->plan->ops[i];
		struct op_ctx *op = &d->ops[i];
		*op = (struct op_ctx){ .d = d, .index = i };
		if (sop->type == SLICE_OP_DELETE) {
			if (!(op->body = delete_body(sop->uid, sop->resource_version)))
				return -ENOMEM;
			continue;
		}
		int r = slice_plan_op_text(d->plan, i, BODY_FLAGS,
					   sop->type == SLICE_OP_CREATE ? add_owner : NULL, s, &op->body,
					   NULL);
		if (r < 0)
			return r;
		op->gated = sop->desired->gates != 0;
	}
	return 0;
}

static void drv_sync_now(struct drv *d)
{
	struct store_api *s = d->s;
	if (d->sync_running || !d->desired || d->stalled ||
	    (d->rejected_version && d->rejected_version == d->desired_version))
		return;
	if (!s->node_uid || !d->listed)
		return;	/* node_done / list_done call again */

	struct slice_plan *plan = NULL;
	int r = slice_plan_compute(d->cache, d->desired, s->node_name, s->dropped_gates, &plan);
	if (r < 0) {
		log_error("apiserver: cannot plan the slices of %s: %s", d->driver, strerror(-r));
		return;
	}
	if (plan->n_ops == 0) {
		d->generation = plan->generation;
		slice_plan_free(plan);
		d->unconverged = 0;
		d->conflicts = 0;
		backoff_reset(&d->sync_backoff);
		if (!d->synced_once)
			log_info("apiserver: the ResourceSlices of %s are up to date (generation %lld)",
				 d->driver, (long long)d->generation);
		d->synced_once = true;
		if (s->on_synced)
			s->on_synced(s->userdata, d->driver, d->generation);
		return;
	}
	if (d->unconverged >= MAX_UNCONVERGED_ROUNDS) {
		log_warn("apiserver: the ResourceSlices of %s still differ after %d write rounds (the "
			 "server changes what dralet sends); not writing again until the devices or "
			 "the published slices change", d->driver, MAX_UNCONVERGED_ROUNDS);
		d->stalled = true;
		slice_plan_free(plan);
		return;
	}
	d->plan = plan;
	d->ops = calloc(plan->n_ops, sizeof(*d->ops));
	if (!d->ops || (r = drv_make_bodies(d)) < 0) {
		log_error("apiserver: cannot write the slices of %s: %s", d->driver,
			  strerror(d->ops ? -r : ENOMEM));
		drv_end_round(d);
		drv_want_sync(d, false);
		return;
	}
	d->sync_running = true;
	d->sync_again = false;
	d->failed = d->conflict = d->rejected = d->have_retry_after = d->progress = false;
	d->round_version = d->desired_version;
	d->retry_after_ms = 0;
	d->phase = PHASE_DELETE;
	s->stats.syncs++;
	log_debug("apiserver: slices of %s: generation %lld, %zu delete(s), %zu update(s), "
		  "%zu create(s)", d->driver, (long long)plan->generation, plan->n_delete,
		  plan->n_update, plan->n_create);
	drv_run_phase(d);
}

static void on_sync_timer(uv_timer_t *t)
{
	struct drv *d = t->data;
	d->pending_since = 0;
	d->retry_pending = false;
	drv_sync_now(d);
}

static void drv_finish_round(struct drv *d)
{
	struct store_api *s = d->s;
	struct slice_plan *plan = d->plan;
	bool wrote = plan && plan->n_ops > 0;
	bool ok = !d->failed && !d->conflict && !d->rejected;
	if (ok && wrote)
		log_info("apiserver: published the ResourceSlices of %s: generation %lld, %zu "
			 "slice(s) (%zu created, %zu updated, %zu deleted)", d->driver,
			 (long long)plan->generation, d->desired->n,
			 plan->n_create, plan->n_update, plan->n_delete);
	drv_end_round(d);
	if (s->destroying)
		return;
	release_soon(s);
	if (d->rejected) {
		/* Logged with the causes. The same content would be refused again: wait
		 * for the next publish (or write the newer one that came meanwhile). */
		d->rejected_version = d->round_version;
		if (d->desired_version != d->round_version)
			drv_want_sync(d, false);
		return;
	}
	if (d->conflict) {
		/* Our view was stale: read again (the list triggers the next round). */
		d->conflicts++;
		if (d->conflicts <= 2) {
			drv_start_list(d);
		} else {
			uint32_t delay = backoff_next(&d->sync_backoff, rnd(s));
			d->watch_next = WATCH_NEXT_RELIST;
			kube_request_cancel(d->watch_req);
			d->watch_req = NULL;
			uv_timer_start(&d->watch_timer, on_watch_timer, delay, 0);
		}
		return;
	}
	if (d->failed) {
		/* A round that got something written talks to a working server: retry
		 * soon. Only rounds without progress back off further. */
		if (d->progress)
			backoff_reset(&d->sync_backoff);
		uint32_t delay = backoff_with_retry_after(backoff_next(&d->sync_backoff, rnd(s)),
							  d->have_retry_after, d->retry_after_ms,
							  RETRY_AFTER_CAP_MS);
		log_info("apiserver: retrying the ResourceSlices of %s in %u ms", d->driver, delay);
		d->retry_pending = true;
		d->pending_since = 0;
		uv_timer_start(&d->sync_timer, on_sync_timer, delay, 0);
		return;
	}
	backoff_reset(&d->sync_backoff);
	d->conflicts = 0;
	d->unconverged++;
	/* Check the result right away (pure planning; no request when converged). */
	drv_want_sync(d, !d->sync_again);
}

/* @sent_text: the body written, or NULL when it carried no alpha field. */
static void note_dropped(struct drv *d, const char *sent_text, struct json_object *stored)
{
	struct store_api *s = d->s;
	struct json_object *sent = sent_text ? kube_json_parse(sent_text, strlen(sent_text)) : NULL;
	unsigned gates = sent ? slice_dropped_gates(sent, stored) & ~s->dropped_gates : 0;
	json_object_put(sent);
	for (unsigned bit = 1; gates && bit <= SLICE_GATE_ALL; bit <<= 1) {
		if (!(gates & bit))
			continue;
		log_warn("apiserver: the server silently dropped alpha fields from the ResourceSlices "
			 "of %s: the feature gate %s is probably disabled; publishing without them",
			 d->driver, slice_gate_name(bit));
	}
	s->dropped_gates |= gates;
}

static void op_done(void *ud, const struct kube_response *resp)
{
	struct op_ctx *op = ud;
	struct drv *d = op->d;
	struct store_api *s = d->s;
	struct slice_op *sop = &d->plan->ops[op->index];
	const char *name = sop->name;
	static const char *const verbs[] = { "deleting", "updating", "creating" };
	op->req = NULL;
	bool ok = false;
	switch (sop->type) {
	case SLICE_OP_DELETE:
		if ((resp->status >= 200 && resp->status < 300) || resp->status == 404) {
			const struct slice_record *cur = name ? cache_get(d, name) : NULL;
			const char *uid = sop->uid;
			if (cur) {
				const char *cuid = cur->uid;
				if (!uid || !cuid || !strcmp(uid, cuid))
					cache_del(d, name);
			}
			if (resp->status != 404)
				s->stats.deletes++;
			ok = true;
		}
		break;
	case SLICE_OP_UPDATE:
	case SLICE_OP_CREATE:
		if (resp->status == 200 || resp->status == 201) {
			struct slice_record *stored = NULL;
			if (resp->body && slice_record_from_text(resp->body, resp->body_len,
								 SLICE_RECORD_PUBLISHED, &stored) == 0 &&
			    stored->name) {
				/* Only a write that carried alpha fields needs the server's
				 * answer as a tree: did it drop some? */
				if (op->gated) {
					struct json_object *tree = kube_json_parse(resp->body, resp->body_len);
					if (tree)
						note_dropped(d, op->body, tree);
					json_object_put(tree);
				}
				/* Cache what we wrote unless the watch is already past it: then
				 * the watch told the truth (maybe a deletion) before our answer. */
				if (!rv_older(stored->resource_version, d->rv) &&
				    !rv_equal(stored->resource_version, d->rv)) {
					cache_keep(d, d->cache, stored);
					stored = NULL;
				}
				if (sop->type == SLICE_OP_UPDATE)
					s->stats.updates++;
				else
					s->stats.creates++;
				ok = true;
			}
			slice_record_free(stored);
		} else if (resp->status == 404 && sop->type == SLICE_OP_UPDATE && name) {
			cache_del(d, name);	/* gone meanwhile: read again */
			d->conflict = true;
			ok = true;
		}
		break;
	}
	free(op->body);
	op->body = NULL;
	if (ok)
		d->progress = true;
	if (!ok) {
		char why[1024];
		describe_failure(resp, why, sizeof(why));
		s->stats.failures++;
		if (resp->status == 409) {
			log_info("apiserver: conflict %s ResourceSlice %s of %s (%s); reading again",
				 verbs[sop->type], name ? name : "(new)", d->driver, why);
			d->conflict = true;
		} else if (resp->status == 422 || resp->status == 400) {
			log_error("apiserver: the server rejected %s the ResourceSlice %s of %s: %s; not "
				  "retrying until the devices change", verbs[sop->type],
				  name ? name : "(new)", d->driver, why);
			d->rejected = true;
		} else {
			log_warn("apiserver: %s ResourceSlice %s of %s failed: %s", verbs[sop->type],
				 name ? name : "(new)", d->driver, why);
			d->failed = true;
			uint32_t ra;
			if (resp->retry_after && retry_after_parse(resp->retry_after, time(NULL), &ra) == 0 &&
			    ra > d->retry_after_ms) {
				d->retry_after_ms = ra;
				d->have_retry_after = true;
			}
			if ((resp->status == 401 || resp->status == 403) && d->retry_after_ms < 5000) {
				d->retry_after_ms = 5000;	/* RBAC or credentials: no hurry */
				d->have_retry_after = true;
			}
		}
	}
	if (--d->outstanding == 0) {
		if (d->failed || d->conflict || d->rejected)
			drv_finish_round(d);
		else {
			d->phase++;
			drv_run_phase(d);
		}
	}
}

static void drv_run_phase(struct drv *d)
{
	struct store_api *s = d->s;
	static const enum slice_op_type types[] = { SLICE_OP_DELETE, SLICE_OP_UPDATE, SLICE_OP_CREATE };
	for (; d->phase < PHASE_DONE; d->phase++) {
		size_t started = 0;
		d->outstanding = 1;	/* holds the round open while starting */
		for (size_t i = 0; i < d->plan->n_ops; i++) {
			struct slice_op *sop = &d->plan->ops[i];
			if (sop->type != types[d->phase])
				continue;
			struct op_ctx *op = &d->ops[i];
			char *esc = sop->name ? kube_escape(sop->name) : NULL, *path = NULL;
			const char *method;
			int r = -ENOMEM;
			if (sop->type == SLICE_OP_CREATE) {
				method = "POST";
				path = strdup(SLICES_PATH);
			} else {
				method = sop->type == SLICE_OP_DELETE ? "DELETE" : "PUT";
				if (esc && asprintf(&path, SLICES_PATH "/%s", esc) < 0)
					path = NULL;
			}
			if (path && op->body)
				r = start(s, method, path, op->body, REQUEST_TIMEOUT_MS, 0, NULL, op_done,
					  op, &op->req);
			free(esc);
			free(path);
			if (!op->gated) {	/* the client has its own copy */
				free(op->body);
				op->body = NULL;
			}
			if (r < 0) {
				log_warn("apiserver: cannot start a request for %s: %s", d->driver,
					 strerror(-r));
				d->failed = true;
				continue;
			}
			d->outstanding++;
			started++;
		}
		if (--d->outstanding > 0)
			return;	/* op_done continues */
		if (d->failed)
			break;
		(void)started;
	}
	drv_finish_round(d);
}

/* ---- store ops ---- */

static struct drv *drv_find(struct store_api *s, const char *driver, bool create)
{
	for (size_t i = 0; i < s->n_drivers; i++)
		if (!strcmp(s->drivers[i]->driver, driver))
			return s->drivers[i];
	if (!create)
		return NULL;
	struct drv **arr = realloc(s->drivers, (s->n_drivers + 1) * sizeof(*arr));
	if (!arr)
		return NULL;
	s->drivers = arr;
	struct drv *d = calloc(1, sizeof(*d));
	char *sel = NULL;
	if (!d)
		return NULL;
	d->s = s;
	d->watch_backoff = (struct backoff)BACKOFF_INIT(BACKOFF_BASE_MS, BACKOFF_MAX_MS);
	d->sync_backoff = (struct backoff)BACKOFF_INIT(BACKOFF_BASE_MS, BACKOFF_MAX_MS);
	if (!(d->driver = strdup(driver)) || slice_list_new(&d->cache) < 0 ||
	    asprintf(&sel, "spec.driver=%s,spec.nodeName=%s", driver, s->node_name) < 0 ||
	    !(d->selector = kube_escape(sel)) || kube_watch_parser_new(0, &d->parser) < 0) {
		free(sel);
		free(d->driver);
		free(d->selector);
		slice_list_unref(d->cache);
		free(d);
		return NULL;
	}
	free(sel);
	uv_timer_init(s->loop, &d->sync_timer);
	uv_timer_init(s->loop, &d->watch_timer);
	d->sync_timer.data = d;
	d->watch_timer.data = d;
	s->drivers[s->n_drivers++] = d;
	return d;
}

static int api_publish(struct store *st, const char *driver, struct slice_list *slices)
{
	struct store_api *s = to_api(st);
	if (!driver || !slices || s->destroying)
		return -EINVAL;
	struct drv *d = drv_find(s, driver, true);
	if (!d)
		return -ENOMEM;
	bool first = !d->desired;
	slice_list_unref(d->desired);
	d->desired = slice_list_ref(slices);	/* kept, never modified (see store_open.h) */
	d->desired_version++;
	d->stalled = false;
	d->unconverged = 0;
	if (d->unwatched && drv_wants_watch(d)) {
		d->unwatched = false;
		d->listed = false;	/* the cache went stale unwatched: read again */
	}
	if (!d->listed && !d->list_req && !uv_is_active((uv_handle_t *)&d->watch_timer))
		drv_start_list(d);
	drv_want_sync(d, first);
	return 0;
}

/* ---- claims ---- */

static void claim_free(struct claim_ctx *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		c->s->claims = c->next;
	if (c->next)
		c->next->prev = c->prev;
	free(c->ns);
	free(c->name);
	free(c);
}

static int claim_start(struct claim_ctx *c);

static void claim_done(void *ud, const struct kube_response *resp)
{
	struct claim_ctx *c = ud;
	struct store_api *s = c->s;
	c->req = NULL;
	if (resp->status == 404 && !c->beta &&
	    !kube_status_is_object_not_found(resp->body, resp->body_len, c->name)) {
		/* resource.k8s.io/v1 is not served (a 1.33 cluster): v1beta2 has the same shape. */
		c->beta = true;
		if (claim_start(c) == 0)
			return;
	}
	char msg[600];
	if (resp->status == 200) {
		struct json_object *claim = kube_json_parse(resp->body, resp->body_len);
		if (claim) {
			if (c->beta) {
				if (!s->claims_beta)
					log_info("apiserver: resource.k8s.io/v1 is not served; reading "
						 "ResourceClaims as v1beta2");
				s->claims_beta = true;
				json_object_object_add(claim, "apiVersion",
						       json_object_new_string("resource.k8s.io/v1"));
			}
			c->cb(c->userdata, 0, claim, "");
			json_object_put(claim);
			claim_free(c);
			return;
		}
		snprintf(msg, sizeof(msg), "the answer is not a JSON object");
		c->cb(c->userdata, -EBADMSG, NULL, msg);
		claim_free(c);
		return;
	}
	char why[512];
	describe_failure(resp, why, sizeof(why));
	snprintf(msg, sizeof(msg), "get resourceclaims %s/%s: %s", c->ns, c->name, why);
	int err = resp->status == 404 ? -ENOENT
		  : resp->status == 401 || resp->status == 403 ? -EACCES
		  : resp->status == 0 ? (resp->error ? resp->error : -EIO)
		  : -EIO;
	c->cb(c->userdata, err, NULL, msg);
	claim_free(c);
}

static int claim_start(struct claim_ctx *c)
{
	char *ns = kube_escape(c->ns), *name = kube_escape(c->name), *path = NULL;
	int r = -ENOMEM;
	if (ns && name &&
	    asprintf(&path, "/apis/resource.k8s.io/%s/namespaces/%s/resourceclaims/%s",
		     c->beta ? "v1beta2" : "v1", ns, name) >= 0) {
		r = start(c->s, "GET", path, NULL, REQUEST_TIMEOUT_MS, 2, NULL, claim_done, c, &c->req);
		free(path);
	}
	free(ns);
	free(name);
	return r;
}

static void api_get_claim(struct store *st, const char *ns, const char *name, store_claim_cb cb,
			  void *userdata)
{
	struct store_api *s = to_api(st);
	struct claim_ctx *c = calloc(1, sizeof(*c));
	if (!c || !(c->ns = strdup(ns ? ns : "")) || !(c->name = strdup(name ? name : ""))) {
		if (c) {
			free(c->ns);
			free(c);
		}
		cb(userdata, -ENOMEM, NULL, "out of memory");
		return;
	}
	c->s = s;
	c->cb = cb;
	c->userdata = userdata;
	c->beta = s->claims_beta;
	c->next = s->claims;
	if (s->claims)
		s->claims->prev = c;
	s->claims = c;
	int r = claim_start(c);
	if (r < 0) {
		claim_free(c);
		cb(userdata, r, NULL, "cannot start the request");
	}
}

/* ---- events ---- */

#define EVENTS_PATH "/api/v1/namespaces/" KUBE_EVENT_NAMESPACE "/events"

static void event_done(void *ud, const struct kube_response *resp)
{
	struct store_api *s = ud;
	char why[512];

	if (resp->status == 201 || resp->status == 200) {
		log_info("apiserver: recorded a Warning Event about node %s", s->node_name);
	} else {
		describe_failure(resp, why, sizeof(why));
		log_error("apiserver: cannot record a Warning Event about node %s: %s",
			  s->node_name, why);
	}
}

static void api_warn(struct store *st, const char *reason, const char *message)
{
	struct store_api *s = to_api(st);
	struct timespec ts;
	struct json_object *ev;
	int r = -ENOMEM;

	clock_gettime(CLOCK_REALTIME, &ts);
	ev = kube_node_event(s->node_name, "Warning", reason, message,
			     (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
	if (ev)
		r = start(s, "POST", EVENTS_PATH,
			  json_object_to_json_string_ext(ev, JSON_C_TO_STRING_PLAIN),
			  REQUEST_TIMEOUT_MS, 4, NULL, event_done, s, NULL);
	json_object_put(ev);
	if (r < 0)
		log_error("apiserver: cannot record the Event %s about node %s: %s", reason,
			  s->node_name, strerror(-r));
}

/* ---- lifetime ---- */

static void on_handle_closed(uv_handle_t *h)
{
	struct store_api *s = h->data;
	if (--s->pending_closes)
		return;
	for (size_t i = 0; i < s->n_drivers; i++)
		free(s->drivers[i]);
	free(s->drivers);
	free(s);
}

static void close_handle(struct store_api *s, uv_handle_t *h)
{
	h->data = s;
	s->pending_closes++;
	uv_close(h, on_handle_closed);
}

static void api_destroy(struct store *st)
{
	struct store_api *s = to_api(st);
	if (!s || s->destroying)
		return;
	s->destroying = true;
	kube_client_free(s->client);	/* cancels every request; no callbacks */
	s->client = NULL;
	while (s->claims)
		claim_free(s->claims);
	for (size_t i = 0; i < s->n_drivers; i++) {
		struct drv *d = s->drivers[i];
		drv_free_ops(d);
		slice_plan_free(d->plan);
		slice_list_unref(d->desired);
		slice_list_unref(d->cache);
		slice_list_unref(d->list_acc);
		free(d->list_rv);
		free(d->rv);
		free(d->driver);
		free(d->selector);
		kube_watch_parser_free(d->parser);
		close_handle(s, (uv_handle_t *)&d->sync_timer);
		close_handle(s, (uv_handle_t *)&d->watch_timer);
	}
	free(s->node_name);
	free(s->node_uid);
	close_handle(s, (uv_handle_t *)&s->node_timer);
	close_handle(s, (uv_handle_t *)&s->release_timer);
}

static const struct store_ops api_ops = {
	.name = "apiserver",
	.get_claim = api_get_claim,
	.publish = api_publish,
	.warn = api_warn,
	.destroy = api_destroy,
};

int store_apiserver_new(uv_loop_t *loop, const struct store_options *opts,
			struct store **ret_store, char *err, size_t errlen)
{
	struct kube_config *cfg = NULL;
	int r;
	if (!loop) {
		snprintf(err, errlen, "the apiserver store needs an event loop");
		return -EINVAL;
	}
	if (opts->kubeconfig)
		r = kube_config_from_kubeconfig(opts->kubeconfig, opts->kube_context, &cfg, err, errlen);
	else
		r = kube_config_in_cluster(opts->service_account_dir, &cfg, err, errlen);
	if (r < 0)
		return r;
	struct store_api *s = calloc(1, sizeof(*s));
	if (!s) {
		kube_config_free(cfg);
		return -ENOMEM;
	}
	s->base.ops = &api_ops;
	s->loop = loop;
	s->debounce_ms = opts->debounce_ms ? opts->debounce_ms : DEBOUNCE_DEFAULT_MS;
	s->on_synced = opts->on_synced;
	s->userdata = opts->userdata;
	s->node_backoff = (struct backoff)BACKOFF_INIT(500, BACKOFF_MAX_MS);
	s->rng = (uint32_t)time(NULL) ^ (uint32_t)(uintptr_t)s;
	if (!(s->node_name = strdup(opts->node_name))) {
		kube_config_free(cfg);
		free(s);
		return -ENOMEM;
	}
	r = kube_client_new(loop, cfg, &s->client, err, errlen);
	if (r == 0)
		log_info("apiserver: %s (%s)%s", cfg->server, cfg->source,
			 cfg->insecure ? "; TLS verification OFF (insecure-skip-tls-verify)" : "");
	kube_config_free(cfg);
	if (r < 0) {
		free(s->node_name);
		free(s);
		return r;
	}
	uv_timer_init(loop, &s->node_timer);
	s->node_timer.data = s;
	uv_timer_init(loop, &s->release_timer);
	uv_unref((uv_handle_t *)&s->release_timer);	/* never keeps a loop running */
	node_fetch(s);
	*ret_store = &s->base;
	return 0;
}

void store_apiserver_get_stats(struct store *st, struct store_stats *ret_stats)
{
	struct store_api *s = to_api(st);
	struct kube_client_stats cs = { 0 };
	*ret_stats = s->stats;
	if (s->client)
		kube_client_get_stats(s->client, &cs);
	ret_stats->requests = cs.requests;
	ret_stats->token_reloads = cs.token_reloads;
}
