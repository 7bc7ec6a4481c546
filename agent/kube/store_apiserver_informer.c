/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The informer of the apiserver store, one per node: the slices with
 * spec.nodeName=<node>, split by spec.driver into the caches of the drivers
 * this store publishes; other drivers' slices on the node (another DRA
 * driver's) are skipped, never kept nor touched. It starts with a streaming
 * list: one watch with sendInitialEvents=true, whose initial ADDED events
 * are the list and whose bookmark annotated "k8s.io/initial-events-end"
 * ends it, and which goes on as the watch (Kubernetes' WatchList). A server
 * that refuses it (422: the WatchList gate is off) gets a list (in pages)
 * then a watch from its resourceVersion, from then on. A watch that expires
 * (410) or breaks lists again or resumes, after a backoff unless it ran a
 * while; changes that are not our own echo ask the driver for a sync.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/kube/status.h"
#include "agent/kube/store_apiserver_internal.h"
#include "agent/lib/json_get.h"
#include "agent/lib/log.h"
#include "agent/slices/list_body.h"

#define WATCH_MIN_SECONDS 300u
#define WATCH_SPREAD_SECONDS 300u
#define FORBIDDEN_RETRY_MS 5000u	/* a 403 retries after 5-10 s at the soonest */

bool rv_older(const char *a, const char *b)
{
	char *ea, *eb;
	if (!a || !b)
		return false;
	unsigned long long x = strtoull(a, &ea, 10), y = strtoull(b, &eb, 10);
	return *a && *b && !*ea && !*eb && x < y;
}

bool rv_equal(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* Keeps @rec (taken) in @list, in place of the record of its name. */
void cache_keep(struct drv *d, struct slice_list *list, struct slice_record *rec)
{
	int r = slice_list_put(list, rec);
	if (r < 0 && r != -EINVAL)	/* the next list repairs the view */
		log_warn("apiserver: cannot keep a ResourceSlice of %s: %s", d->driver, strerror(-r));
}

/* Keeps @obj (borrowed) in @list as a record, in place of one of its name. */
static void cache_put(struct drv *d, struct slice_list *list, struct json_object *obj)
{
	struct slice_record *rec = NULL;
	if (!json_get_str_at(obj, JSON_PATH("metadata", "name")))
		return;
	int r = slice_record_from_json(obj, SLICE_RECORD_PUBLISHED, &rec);
	if (r == 0)
		cache_keep(d, list, rec);
	else
		log_warn("apiserver: cannot keep a ResourceSlice of %s: %s", d->driver, strerror(-r));
}

const struct slice_record *cache_get(struct drv *d, const char *name)
{
	long i = slice_list_find(d->cache, name);
	return i < 0 ? NULL : d->cache->items[i];
}

void cache_del(struct drv *d, const char *name)
{
	long i = slice_list_find(d->cache, name);
	if (i >= 0)
		slice_list_remove(d->cache, (size_t)i);
}

int informer_init(struct store_api *s)
{
	char *sel = NULL;
	s->inf.backoff = (struct backoff)BACKOFF_INIT(BACKOFF_BASE_MS, BACKOFF_MAX_MS);
	if (asprintf(&sel, "spec.nodeName=%s", s->node_name) < 0)
		return -ENOMEM;
	s->inf.selector = kube_escape(sel);
	free(sel);
	if (!s->inf.selector || kube_watch_parser_new(0, &s->inf.parser) < 0) {
		free(s->inf.selector);
		s->inf.selector = NULL;
		return -ENOMEM;
	}
	return 0;
}

void informer_free(struct store_api *s)
{
	for (size_t i = 0; i < s->n_drivers; i++) {
		slice_list_unref(s->drivers[i]->list_acc);
		s->drivers[i]->list_acc = NULL;
	}
	free(s->inf.list_rv);
	free(s->inf.rv);
	free(s->inf.selector);
	kube_watch_parser_free(s->inf.parser);
}

static void on_informer_timer(uv_timer_t *t)
{
	struct store_api *s = t->data;
	if (s->inf.next == WATCH_NEXT_RELIST || !s->inf.rv)
		informer_list(s);
	else
		informer_watch(s);
}

static void list_drop(struct store_api *s);

/* Stops the watch (a streaming list too: what it read goes). */
static void watch_stop(struct store_api *s)
{
	kube_request_cancel(s->inf.watch_req);
	s->inf.watch_req = NULL;
	if (s->inf.streaming)
		list_drop(s);
	s->inf.streaming = false;
	s->inf.relist_now = false;
}

static void informer_retry(struct store_api *s, enum watch_next next,
			   const struct kube_response *resp)
{
	uint32_t delay = api_retry_delay(s, &s->inf.backoff, resp);
	/* 403: an apiserver that has just started answers before its authorizer
	 * has read the RBAC objects (seconds; or an operator fixes the RBAC):
	 * asking again sooner only adds requests (docs/performance.md, "Fleet"). */
	if (resp && resp->status == 403 && delay < FORBIDDEN_RETRY_MS)
		delay = FORBIDDEN_RETRY_MS + api_rnd(s) % FORBIDDEN_RETRY_MS;
	s->inf.next = next;
	log_info("apiserver: %s the ResourceSlices of node %s again in %u ms",
		 next == WATCH_NEXT_RELIST || !s->inf.rv ? "listing" : "watching", s->node_name,
		 delay);
	uv_timer_start(&s->inf.timer, on_informer_timer, delay, 0);
}

void informer_relist_after(struct store_api *s, uint32_t delay_ms)
{
	s->inf.next = WATCH_NEXT_RELIST;
	watch_stop(s);
	uv_timer_start(&s->inf.timer, on_informer_timer, delay_ms, 0);
}

void informer_add_driver(struct store_api *s, struct drv *d)
{
	if (s->inf.list_req || s->inf.streaming) {
		if (s->inf.list_pages)
			s->inf.list_again = true;	/* it missed a part: list once more */
		else
			d->in_list = true;	/* the answer is not read yet */
		return;
	}
	if (uv_is_active((uv_handle_t *)&s->inf.timer)) {
		s->inf.next = WATCH_NEXT_RELIST;	/* a resumed watch would not fill it */
		return;
	}
	informer_list(s);
}

/* One item of the list in progress (@rec, taken), kept by its driver when
 * that driver is in the list; the items of other drivers are skipped. */
static int list_keep(struct store_api *s, struct slice_record *rec)
{
	struct drv *d = drv_lookup(s, rec->driver);
	if (!d || !d->in_list || !rec->node_name || strcmp(rec->node_name, s->node_name)) {
		slice_record_free(rec);
		return 0;
	}
	if (!d->list_acc && slice_list_new(&d->list_acc) < 0) {
		slice_record_free(rec);
		return -ENOMEM;
	}
	cache_keep(d, d->list_acc, rec);
	return 0;
}

/* One item of a list page (one device's tree at a time). */
static int list_item(void *ud, const char *text, size_t len)
{
	struct slice_record *rec = NULL;
	int r = slice_record_from_text(text, len, SLICE_RECORD_PUBLISHED, &rec);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return 0;	/* not an object, or no name: left out */
	return list_keep(ud, rec);
}

/* Drops the parts read of the list in progress. */
static void list_drop(struct store_api *s)
{
	for (size_t i = 0; i < s->n_drivers; i++) {
		slice_list_unref(s->drivers[i]->list_acc);
		s->drivers[i]->list_acc = NULL;
	}
	s->inf.list_pages = 0;
}

/* The list is complete: every driver in it takes its items as its cache. */
static int list_install(struct store_api *s)
{
	for (size_t i = 0; i < s->n_drivers; i++) {
		struct drv *d = s->drivers[i];
		if (d->in_list && !d->list_acc && slice_list_new(&d->list_acc) < 0)
			return -ENOMEM;
	}
	for (size_t i = 0; i < s->n_drivers; i++) {
		struct drv *d = s->drivers[i];
		if (!d->in_list)
			continue;
		slice_list_unref(d->cache);
		d->cache = d->list_acc;
		d->list_acc = NULL;
		d->in_list = false;
		d->listed = true;
		log_debug("apiserver: listed %zu ResourceSlice(s) of %s (%zu bytes kept)", d->cache->n,
			  d->driver, slice_list_text_bytes(d->cache));
	}
	return 0;
}

/*
 * A list is complete, plain or streaming, at revision s->inf.list_rv: the
 * drivers in it take its items, the informer goes on from that revision and
 * the listed drivers sync. -ENOMEM (nothing changed); 1 when a driver came
 * after the list's first part (it must run again), else 0 (the watch goes
 * on). Starts no request: also runs inside a watch stream's callback.
 */
static int list_complete(struct store_api *s)
{
	if (list_install(s) < 0)
		return -ENOMEM;
	api_release_soon(s);
	free(s->inf.rv);
	s->inf.rv = s->inf.list_rv;
	s->inf.rv_from_list = s->inf.rv != NULL;
	s->inf.list_rv = NULL;
	s->inf.list_pages = 0;
	log_debug("apiserver: listed the ResourceSlices of node %s at resourceVersion %s",
		  s->node_name, s->inf.rv ? s->inf.rv : "?");
	/* A list that worked talks to a working server: the backoff of the
	 * failures before it must not delay the watch that follows (conflicts of
	 * any driver relist the node). Not in a loop of watches the server
	 * expires at once, which keeps its backoff. */
	if (!s->inf.expired_at_once)
		backoff_reset(&s->inf.backoff);
	for (size_t i = 0; i < s->n_drivers; i++)
		if (s->drivers[i]->listed && s->drivers[i]->desired)
			drv_want_sync(s->drivers[i], true);
	if (!s->inf.list_again)
		return 0;
	s->inf.list_again = false;
	return 1;
}

static void list_done(void *ud, const struct kube_response *resp)
{
	struct store_api *s = ud;
	struct json_object *meta = NULL;
	int r = -EBADMSG;
	s->inf.list_req = NULL;
	if (resp->status == 200) {
		r = slice_list_body_scan(resp->body, resp->body_len, list_item, s, &meta);
		s->inf.list_pages++;
	}
	const char *cont = r < 0 ? NULL : json_get_str(meta, "continue");
	if (r == 0 && !cont) {
		/* the last page */
	} else if (r == 0 && *cont) {
		const char *rv = json_get_str(meta, "resourceVersion");
		if (rv && !s->inf.list_rv)
			api_set_str(&s->inf.list_rv, rv);
		char *esc = kube_escape(cont), *path = NULL;
		if (esc && asprintf(&path, SLICES_PATH "?fieldSelector=%s&limit=500&continue=%s",
				    s->inf.selector, esc) >= 0 &&
		    api_start(s, "GET", path, NULL, REQUEST_TIMEOUT_MS, 0, NULL, list_done, s,
			      &s->inf.list_req) == 0) {
			free(esc);
			free(path);
			json_object_put(meta);
			return;
		}
		free(esc);
		free(path);
		json_object_put(meta);
		list_drop(s);
		informer_retry(s, WATCH_NEXT_RELIST, NULL);
		return;
	}
	if (r == 0) {
		const char *rv = json_get_str(meta, "resourceVersion");
		if (rv && !s->inf.list_rv)
			api_set_str(&s->inf.list_rv, rv);
		r = list_complete(s);
	}
	if (r < 0) {
		struct err_msg why;
		if (resp->status == 200)
			err_msg_set(&why, 0, "%s", r == -ENOMEM ? "out of memory" : "answer is not a list");
		else
			api_describe_failure(resp, &why);
		json_object_put(meta);
		list_drop(s);
		s->stats.failures++;
		log_warn("apiserver: listing the ResourceSlices of node %s failed: %s", s->node_name,
			 why.text);
		informer_retry(s, WATCH_NEXT_RELIST, resp);
		return;
	}
	json_object_put(meta);
	if (r > 0)
		informer_list(s);	/* a driver missed pages of this one */
	else
		informer_watch(s);
}

/* The first page of a plain list. */
static int list_start(struct store_api *s)
{
	char *path = NULL;
	if (asprintf(&path, SLICES_PATH "?fieldSelector=%s&limit=500", s->inf.selector) < 0)
		return -ENOMEM;
	int r = api_start(s, "GET", path, NULL, REQUEST_TIMEOUT_MS, 0, NULL, list_done, s,
			  &s->inf.list_req);
	free(path);
	if (r == 0)
		s->stats.lists++;
	return r;
}

static int watch_start(struct store_api *s, bool stream);

void informer_list(struct store_api *s)
{
	if (s->inf.list_req || s->destroying)
		return;
	watch_stop(s);
	uv_timer_stop(&s->inf.timer);
	list_drop(s);
	s->inf.list_again = false;
	free(s->inf.list_rv);
	s->inf.list_rv = NULL;
	for (size_t i = 0; i < s->n_drivers; i++)
		s->drivers[i]->in_list = true;
	bool plain = s->inf.stream_refused || s->inf.list_plain_once;
	s->inf.list_plain_once = false;
	if ((plain ? list_start(s) : watch_start(s, true)) < 0)
		informer_retry(s, WATCH_NEXT_RELIST, NULL);
}

/*
 * An event of a streaming list before the end of its initial events: those
 * are the list's items (ADDED, in no order; their resourceVersions are the
 * objects', not the stream's), kept as list pages' are; the bookmark that
 * ends them completes the list, and the stream goes on as the watch.
 */
static int initial_event(struct store_api *s, const struct kube_watch_event *ev)
{
	if (ev->type == KUBE_WATCH_BOOKMARK) {
		if (!kube_watch_event_is_initial_end(ev))
			return 0;	/* a progress bookmark is no end */
		api_set_str(&s->inf.list_rv, ev->resource_version);
		int r = list_complete(s);
		if (r < 0)
			return r;
		s->inf.streaming = false;
		if (r == 0)
			return 0;
		s->inf.relist_now = true;	/* a driver missed events of this one */
		return -ESTALE;
	}
	s->inf.list_pages++;
	struct slice_record *rec = NULL;
	int r = slice_record_from_json(ev->object, SLICE_RECORD_PUBLISHED, &rec);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return 0;
	if (ev->type != KUBE_WATCH_DELETED)
		return list_keep(s, rec);
	/* not sent before the end, but a deletion is no item */
	struct drv *d = drv_lookup(s, rec->driver);
	long i = d && d->list_acc && rec->name ? slice_list_find(d->list_acc, rec->name) : -1;
	if (i >= 0)
		slice_list_remove(d->list_acc, (size_t)i);
	slice_record_free(rec);
	return 0;
}

/* One watch event; runs inside libcurl's write callback: no requests here. */
static int watch_event(void *ud, const struct kube_watch_event *ev)
{
	struct store_api *s = ud;
	if (ev->type == KUBE_WATCH_ERROR) {
		char why[400];
		const char *text = json_object_to_json_string_ext(ev->object, JSON_C_TO_STRING_PLAIN);
		kube_status_describe(text, strlen(text), why, sizeof(why));
		if (ev->code == 410) {
			log_debug("apiserver: watch of node %s expired (%s); listing again",
				  s->node_name, why);
			s->inf.watch_expired = true;
		} else {
			log_warn("apiserver: watch of node %s reported an error: %s", s->node_name, why);
		}
		s->inf.stream_error = s->inf.streaming;
		return -ESTALE;
	}
	if (s->inf.streaming)
		return initial_event(s, ev);
	if (ev->resource_version) {
		api_set_str(&s->inf.rv, ev->resource_version);
		s->inf.rv_from_list = false;
	}
	if (ev->type == KUBE_WATCH_BOOKMARK)
		return 0;
	const char *name = json_get_str_at(ev->object, JSON_PATH("metadata", "name"));
	const char *node = json_get_str_at(ev->object, JSON_PATH("spec", "nodeName"));
	struct drv *d = drv_lookup(s, json_get_str_at(ev->object, JSON_PATH("spec", "driver")));
	if (!name || !d || !d->listed || !node || strcmp(node, s->node_name))
		return 0;	/* another driver's slice: not ours to keep */
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
	api_release_soon(s);
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
	struct store_api *s = ud;
	int r = kube_watch_parser_feed(s->inf.parser, buf, len, watch_event, s);
	if (r < 0 && r != -ESTALE)
		log_warn("apiserver: watch stream of node %s is malformed (%s); listing again",
			 s->node_name, strerror(-r));
	return r;
}

/*
 * A streaming list ended before the end of its initial events. A server
 * without the WatchList gate refuses it with 422 (k8s.io/apiserver
 * pkg/endpoints/handlers/get.go: invalid ListOptions; 400 where it cannot
 * read them): list + watch from then on. An ERROR event in the stream (a
 * server that cannot stream lists right now, as one whose etcd lacks
 * progress notifications): one plain list at once, as client-go's reflector
 * falls back to one. Anything else failed like a list: list again after
 * the backoff.
 */
static void stream_failed(struct store_api *s, const struct kube_response *resp)
{
	bool stream_error = s->inf.stream_error && !s->inf.watch_expired;
	s->inf.streaming = false;
	s->inf.stream_error = false;
	s->inf.watch_expired = false;
	list_drop(s);
	struct err_msg why;
	if (resp->status == 422 || resp->status == 400) {
		api_describe_failure(resp, &why);
		s->inf.stream_refused = true;
		log_info("apiserver: the server does not stream lists (%s): the ResourceSlices of "
			 "node %s are listed, then watched, from now on", why.text, s->node_name);
		informer_list(s);
		return;
	}
	if (resp->status == 200)
		err_msg_set(&why, 0, "%s",
			    stream_error ? "the server reported an error"
			    : resp->error ? strerror(-resp->error)
					  : "the stream ended before its initial events did");
	else
		api_describe_failure(resp, &why);
	s->stats.failures++;
	log_warn("apiserver: the streaming list of the ResourceSlices of node %s failed: %s",
		 s->node_name, why.text);
	if (stream_error) {
		s->inf.list_plain_once = true;
		informer_list(s);
		return;
	}
	informer_retry(s, WATCH_NEXT_RELIST, resp);
}

static void watch_done(void *ud, const struct kube_response *resp)
{
	struct store_api *s = ud;
	s->inf.watch_req = NULL;
	if (s->inf.streaming) {
		stream_failed(s, resp);
		return;
	}
	if (s->inf.relist_now) {
		s->inf.relist_now = false;
		informer_list(s);
		return;
	}
	uint64_t lasted = uv_now(s->loop) - s->inf.watch_started;
	size_t events = kube_watch_parser_events(s->inf.parser);
	bool clean = resp->status == 200 && !resp->error && kube_watch_parser_idle(s->inf.parser);
	if (s->inf.watch_expired || resp->status == 410) {
		s->inf.watch_expired = false;
		/* Relist right away after a watch that ran a while, or one from the
		 * rv of an earlier watch: after an apiserver restart its watch cache
		 * starts at the current revision, so the first watch gets 410 at
		 * once; the backoff of the refused connections before it must not
		 * delay the list. A server that expires every watch from a fresh
		 * list's rv at once gets a backoff. */
		if (lasted >= 1000 || !s->inf.rv_from_list) {
			s->inf.expired_at_once = 0;
			backoff_reset(&s->inf.backoff);
			informer_list(s);
		} else {
			s->inf.expired_at_once++;
			informer_retry(s, WATCH_NEXT_RELIST, NULL);
		}
		return;
	}
	if (clean) {
		/* The server ended the watch (timeoutSeconds): carry on from the last rv. */
		if (lasted >= 1000 || events > 0) {
			s->inf.expired_at_once = 0;
			backoff_reset(&s->inf.backoff);
			informer_watch(s);
		} else {
			informer_retry(s, WATCH_NEXT_REWATCH, NULL);
		}
		return;
	}
	struct err_msg why;
	if (resp->status == 200)
		err_msg_set(&why, 0, "stream broken (%s)",
			    resp->error ? strerror(-resp->error) : "partial event");
	else
		api_describe_failure(resp, &why);
	s->stats.failures++;
	log_warn("apiserver: watch of the ResourceSlices of node %s ended: %s", s->node_name,
		 why.text);
	/* A watch that worked for a while talks to a working server: the backoff
	 * starts again, or faults spread over a long time would add up to the cap. */
	if (lasted >= 1000 || events > 0) {
		s->inf.expired_at_once = 0;
		backoff_reset(&s->inf.backoff);
	}
	/* Connection trouble, also a stream that broke after it began (a reset,
	 * or our timeout a moment before the server's timeoutSeconds when the
	 * server began the stream late): resume from the last rv, which the
	 * server answers with 410 when it is too old. Anything else (an error
	 * status, a malformed stream): list again. */
	bool resume = resp->status == 200 ? resp->error && resp->error != -ECANCELED
					  : api_retryable(resp);
	informer_retry(s, resume ? WATCH_NEXT_REWATCH : WATCH_NEXT_RELIST, resp);
}

/*
 * Starts a watch: from s->inf.rv, or with @stream a streaming list, which
 * reads the current state (no resourceVersion: a consistent read) as its
 * initial events first. sendInitialEvents needs resourceVersionMatch=
 * NotOlderThan and bookmarks (k8s.io/apimachinery
 * pkg/apis/meta/internalversion/validation/validation.go).
 */
static int watch_start(struct store_api *s, bool stream)
{
	unsigned secs = WATCH_MIN_SECONDS + api_rnd(s) % WATCH_SPREAD_SECONDS;
	char *path = NULL, *rv = stream ? NULL : kube_escape(s->inf.rv);
	int r = -ENOMEM, n = -1;
	if (stream)
		n = asprintf(&path, SLICES_PATH "?fieldSelector=%s&watch=true&sendInitialEvents=true"
			     "&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
			     "&timeoutSeconds=%u", s->inf.selector, secs);
	else if (rv)
		n = asprintf(&path, SLICES_PATH "?fieldSelector=%s&watch=true&allowWatchBookmarks=true"
			     "&resourceVersion=%s&timeoutSeconds=%u", s->inf.selector, rv, secs);
	if (n < 0) {
		path = NULL;
		goto out;
	}
	kube_watch_parser_reset(s->inf.parser);
	s->inf.watch_expired = false;
	s->inf.stream_error = false;
	s->inf.watch_started = uv_now(s->loop);
	s->inf.streaming = stream;
	r = api_start(s, "GET", path, NULL, (secs + 30) * 1000u, 0, watch_data, watch_done, s,
		      &s->inf.watch_req);
	if (r == 0)
		s->stats.watches++;	/* a streaming list counts as a watch */
	else
		s->inf.streaming = false;
out:
	free(path);
	free(rv);
	return r;
}

void informer_watch(struct store_api *s)
{
	if (s->inf.watch_req || s->inf.list_req || s->destroying)
		return;
	if (!s->inf.rv)
		informer_list(s);
	else if (watch_start(s, false) < 0)
		informer_retry(s, WATCH_NEXT_REWATCH, NULL);
}
