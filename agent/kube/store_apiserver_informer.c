/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The informer of the apiserver store, per driver: a list (in pages) of the
 * slices with spec.driver=<driver>,spec.nodeName=<node>, then a watch from
 * its resourceVersion, into the cache of published records. A watch that
 * expires (410) or breaks lists again or resumes, after a backoff unless it
 * ran a while; changes that are not our own echo ask for a sync.
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

static void on_watch_timer(uv_timer_t *t)
{
	struct drv *d = t->data;
	if (d->watch_next == WATCH_NEXT_RELIST || !d->rv)
		drv_start_list(d);
	else
		drv_start_watch(d);
}

static void drv_retry_informer(struct drv *d, enum watch_next next,
			       const struct kube_response *resp)
{
	uint32_t delay = api_retry_delay(d->s, &d->watch_backoff, resp);
	/* 403: an apiserver that has just started answers before its authorizer
	 * has read the RBAC objects (seconds; or an operator fixes the RBAC):
	 * asking again sooner only adds requests (docs/performance.md, "Fleet"). */
	if (resp && resp->status == 403 && delay < FORBIDDEN_RETRY_MS)
		delay = FORBIDDEN_RETRY_MS + api_rnd(d->s) % FORBIDDEN_RETRY_MS;
	d->watch_next = next;
	log_info("apiserver: %s the ResourceSlices of %s again in %u ms",
		 next == WATCH_NEXT_RELIST || !d->rv ? "listing" : "watching", d->driver, delay);
	uv_timer_start(&d->watch_timer, on_watch_timer, delay, 0);
}

void drv_relist_after(struct drv *d, uint32_t delay_ms)
{
	d->watch_next = WATCH_NEXT_RELIST;
	kube_request_cancel(d->watch_req);
	d->watch_req = NULL;
	uv_timer_start(&d->watch_timer, on_watch_timer, delay_ms, 0);
}

/* Every driver is watched, also one without devices: during a rolling update
 * the other instance (an older configuration) may publish the driver's slices
 * again after this one deleted them, until it exits; only a watch sees that
 * and deletes them again (e2e fpga_by_shell after a board switch). */
bool drv_wants_watch(const struct drv *d)
{
	(void)d;
	return true;
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
		struct err_msg why;
		if (resp->status == 200)
			err_msg_set(&why, 0, "%s", r == -ENOMEM ? "out of memory" : "answer is not a list");
		else
			api_describe_failure(resp, &why);
		slice_list_unref(d->list_acc);
		d->list_acc = NULL;
		d->s->stats.failures++;
		log_warn("apiserver: listing the ResourceSlices of %s failed: %s", d->driver, why.text);
		drv_retry_informer(d, WATCH_NEXT_RELIST, resp);
		return;
	}
	const char *rv = json_get_str(meta, "resourceVersion");
	if (rv && !d->list_rv)
		api_set_str(&d->list_rv, rv);
	const char *cont = json_get_str(meta, "continue");
	if (cont && *cont) {
		char *esc = kube_escape(cont), *path = NULL;
		if (esc && asprintf(&path, SLICES_PATH "?fieldSelector=%s&limit=500&continue=%s",
				    d->selector, esc) >= 0) {
			if (api_start(d->s, "GET", path, NULL, REQUEST_TIMEOUT_MS, 0, NULL, list_done,
				      d, &d->list_req) == 0) {
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
	api_release_soon(d->s);
	slice_list_unref(d->cache);
	d->cache = d->list_acc;
	d->list_acc = NULL;
	free(d->rv);
	d->rv = d->list_rv;
	d->rv_from_list = d->rv != NULL;
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

void drv_start_list(struct drv *d)
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
	    api_start(d->s, "GET", path, NULL, REQUEST_TIMEOUT_MS, 0, NULL, list_done, d,
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
	if (ev->resource_version) {
		api_set_str(&d->rv, ev->resource_version);
		d->rv_from_list = false;
	}
	if (ev->type == KUBE_WATCH_BOOKMARK)
		return 0;
	const char *name = json_get_str_at(ev->object, JSON_PATH("metadata", "name"));
	const char *drv = json_get_str_at(ev->object, JSON_PATH("spec", "driver"));
	const char *node = json_get_str_at(ev->object, JSON_PATH("spec", "nodeName"));
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
	api_release_soon(d->s);
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
		/* Relist right away after a watch that ran a while, or one from the
		 * rv of an earlier watch: after an apiserver restart its watch cache
		 * starts at the current revision, so the first watch gets 410 at
		 * once; the backoff of the refused connections before it must not
		 * delay the list. A server that expires every watch from a fresh
		 * list's rv at once gets a backoff. */
		if (lasted >= 1000 || !d->rv_from_list) {
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
	struct err_msg why;
	if (resp->status == 200)
		err_msg_set(&why, 0, "stream broken (%s)",
			    resp->error ? strerror(-resp->error) : "partial event");
	else
		api_describe_failure(resp, &why);
	d->s->stats.failures++;
	log_warn("apiserver: watch of the ResourceSlices of %s ended: %s", d->driver, why.text);
	/* A watch that worked for a while talks to a working server: the backoff
	 * starts again, or faults spread over a long time would add up to the cap. */
	if (lasted >= 1000 || events > 0)
		backoff_reset(&d->watch_backoff);
	/* Connection trouble, also a stream that broke after it began (a reset,
	 * or our timeout a moment before the server's timeoutSeconds when the
	 * server began the stream late): resume from the last rv, which the
	 * server answers with 410 when it is too old. Anything else (an error
	 * status, a malformed stream): list again. */
	bool resume = resp->status == 200 ? resp->error && resp->error != -ECANCELED
					  : api_retryable(resp);
	drv_retry_informer(d, resume ? WATCH_NEXT_REWATCH : WATCH_NEXT_RELIST, resp);
}

void drv_start_watch(struct drv *d)
{
	char *path = NULL, *rv = d->rv ? kube_escape(d->rv) : NULL;
	if (d->watch_req || d->s->destroying)
		goto out;
	if (!rv) {
		drv_start_list(d);
		goto out;
	}
	unsigned secs = WATCH_MIN_SECONDS + api_rnd(d->s) % WATCH_SPREAD_SECONDS;
	kube_watch_parser_reset(d->parser);
	d->watch_expired = false;
	if (asprintf(&path, SLICES_PATH "?fieldSelector=%s&watch=true&allowWatchBookmarks=true"
			    "&resourceVersion=%s&timeoutSeconds=%u", d->selector, rv, secs) < 0) {
		path = NULL;
		drv_retry_informer(d, WATCH_NEXT_REWATCH, NULL);
		goto out;
	}
	d->watch_started = uv_now(d->s->loop);
	if (api_start(d->s, "GET", path, NULL, (secs + 30) * 1000u, 0, watch_data, watch_done, d,
		      &d->watch_req) < 0) {
		drv_retry_informer(d, WATCH_NEXT_REWATCH, NULL);
		goto out;
	}
	d->s->stats.watches++;
out:
	free(path);
	free(rv);
}
