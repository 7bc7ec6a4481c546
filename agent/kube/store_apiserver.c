/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The apiserver store: publishes ResourceSlices and reads ResourceClaims
 * through kube-apiserver (kube/client.h).
 *
 * One informer for the node (store_apiserver_informer.c): a list, then a
 * watch of the slices with spec.nodeName=<node>, split by spec.driver into a
 * cache per driver of what is published (other drivers' slices are
 * skipped): slice records (slices/record.h: the text an update keeps and
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
 * Requests that only some starts need are asked for lazily: the Node (its
 * UID owns new slices) by the first round that creates one, GET /version
 * (the layout of counters) by the first publish with counters.
 *
 * warn() creates a core/v1 Event about the Node (kube/event.h) with one
 * POST, retried on connection errors, 5xx and 429; never aggregated.
 * set_claim_status() is a server-side apply of the claim's status
 * (store_apiserver_status.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/kube/config.h"
#include "agent/kube/status.h"
#include "agent/kube/store_apiserver_internal.h"
#include "agent/lib/log.h"
#include "agent/lib/err_msg.h"
#include "agent/lib/json_get.h"

#define DEBOUNCE_DEFAULT_MS 100u
#define RELEASE_DELAY_MS 500u		/* quiet time before the heap is trimmed */

uint32_t api_rnd(struct store_api *s)
{
	uint32_t x = s->rng;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	s->rng = x ? x : 0x2545f491u;
	return s->rng;
}

static void on_release_timer(uv_timer_t *t)
{
	(void)t;
	store_release_memory();
}

void api_release_soon(struct store_api *s)
{
	if (!s->destroying)
		uv_timer_start(&s->release_timer, on_release_timer, RELEASE_DELAY_MS, 0);
}

void api_set_str(char **dst, const char *src)
{
	char *copy = src ? strdup(src) : NULL;
	if (src && !copy)
		return;	/* keep the old value on ENOMEM */
	free(*dst);
	*dst = copy;
}

int api_start(struct store_api *s, const char *method, const char *path, const char *body,
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

void api_describe_failure(const struct kube_response *resp, struct err_msg *why)
{
	if (resp->status == 0) {
		err_msg_set(why, 0, "%s (%s)", strerror(-resp->error), resp->error_text);
		return;
	}
	char status[400];
	kube_status_describe(resp->body, resp->body_len, status, sizeof(status));
	err_msg_set(why, 0, "HTTP %ld: %s", resp->status, status);
}

bool api_retryable(const struct kube_response *resp)
{
	return resp->status == 0 || resp->status >= 500 || resp->status == 429;
}

uint32_t api_retry_delay(struct store_api *s, struct backoff *b, const struct kube_response *resp)
{
	uint32_t ra = 0;
	if (resp && resp->retry_after && retry_after_parse(resp->retry_after, time(NULL), &ra) == 0 &&
	    ra > 0)
		return backoff_paced(b, ra, BACKOFF_BASE_MS, RETRY_AFTER_CAP_MS, api_rnd(s));
	return backoff_next(b, api_rnd(s));
}

/* ---- store ops ---- */

struct drv *drv_lookup(struct store_api *s, const char *driver)
{
	for (size_t i = 0; driver && i < s->n_drivers; i++)
		if (!strcmp(s->drivers[i]->driver, driver))
			return s->drivers[i];
	return NULL;
}

/* The driver named @driver, made (and its cache listed) when it is new. */
static struct drv *drv_find(struct store_api *s, const char *driver)
{
	struct drv *found = drv_lookup(s, driver);
	if (found)
		return found;
	struct drv **arr = realloc(s->drivers, (s->n_drivers + 1) * sizeof(*arr));
	if (!arr)
		return NULL;
	s->drivers = arr;
	struct drv *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->s = s;
	d->sync_backoff = (struct backoff)BACKOFF_INIT(SYNC_BACKOFF_BASE_MS, BACKOFF_MAX_MS);
	if (!(d->driver = strdup(driver)) || slice_list_new(&d->cache) < 0) {
		free(d->driver);
		free(d);
		return NULL;
	}
	uv_timer_init(s->loop, &d->sync_timer);
	d->sync_timer.data = d;
	s->drivers[s->n_drivers++] = d;
	informer_add_driver(s, d);
	return d;
}

static void version_fetch(struct store_api *s);

/* Whether @slices carry counters (sharedCounters, consumesCounters). */
static bool has_counters(const struct slice_list *slices)
{
	for (size_t i = 0; i < slices->n; i++)
		if (slices->items[i]->gates & SLICE_GATE_PARTITIONABLE)
			return true;
	return false;
}

static int api_publish(struct store *st, const char *driver, struct slice_list *slices)
{
	struct store_api *s = to_api(st);
	if (!driver || !slices || s->destroying)
		return -EINVAL;
	struct drv *d = drv_find(s, driver);
	if (!d)
		return -ENOMEM;
	bool first = !d->desired;
	slice_list_unref(d->desired);
	d->desired = slice_list_ref(slices);	/* kept, never modified (see store_open.h) */
	d->desired_version++;
	d->stalled = false;
	d->unconverged = 0;
	d->counters = has_counters(slices);
	if (d->counters && s->on_server_version && s->version == VERSION_UNASKED)
		version_fetch(s);
	drv_want_sync(d, first);
	return 0;
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
	claim_reads_free(s);
	status_writes_free(s);
	api_events_free(s);
	for (size_t i = 0; i < s->n_drivers; i++) {
		struct drv *d = s->drivers[i];
		drv_end_round(d);
		slice_list_unref(d->desired);
		slice_list_unref(d->cache);
		free(d->driver);
		close_handle(s, (uv_handle_t *)&d->sync_timer);
	}
	informer_free(s);
	close_handle(s, (uv_handle_t *)&s->inf.timer);
	free(s->node_name);
	free(s->node_uid);
	close_handle(s, (uv_handle_t *)&s->node_timer);
	close_handle(s, (uv_handle_t *)&s->release_timer);
}

static const struct store_ops api_ops = {
	.name = "apiserver",
	.get_claim = api_get_claim,
	.publish = api_publish,
	.record_event = api_record_event,
	.set_claim_status = api_set_claim_status,
	.destroy = api_destroy,
};

/* "34", "34+" (a vendor's build) -> 34; 0 when it is not a minor. */
static unsigned minor_of(const char *text)
{
	unsigned long v = 0;
	char *end = NULL;
	if (!text || *text < '0' || *text > '9')
		return 0;
	v = strtoul(text, &end, 10);
	return (*end == '\0' || *end == '+') && v < 1000 ? (unsigned)v : 0;
}

static void on_version(void *ud, const struct kube_response *resp)
{
	struct store_api *s = ud;
	struct json_object *v = NULL;
	unsigned minor = 0;
	if (resp->status == 200 && resp->body)
		v = kube_json_parse(resp->body, resp->body_len);
	const char *major = json_get_str(v, "major");
	if (major && !strcmp(major, "1"))
		minor = minor_of(json_get_str(v, "minor"));
	if (minor)
		log_info("apiserver: Kubernetes 1.%u", minor);
	else
		log_info("apiserver: the server's version is unknown (GET /version: %ld); "
			 "assuming the newest", resp->status);
	json_object_put(v);
	s->version = VERSION_ANSWERED;
	s->on_server_version(s->userdata, minor);	/* may publish again */
	for (size_t i = 0; i < s->n_drivers; i++)
		if (s->drivers[i]->counters)
			drv_want_sync(s->drivers[i], true);
}

/* The server's version, once, before the first slices with counters are
 * written (their layout depends on it; nothing else does, so a node
 * without partitionable devices never asks). */
static void version_fetch(struct store_api *s)
{
	s->version = VERSION_ASKING;
	if (api_start(s, "GET", "/version", NULL, REQUEST_TIMEOUT_MS, 3, NULL, on_version, s,
		      NULL) < 0) {
		log_warn("apiserver: cannot ask the server's version; assuming the newest");
		s->version = VERSION_ANSWERED;
	}
}

int store_apiserver_new(uv_loop_t *loop, const struct store_options *opts,
			struct store **ret_store, char *err, size_t errlen)
{
	struct kube_config *cfg = NULL;
	int r;
	if (!loop) {
		return err_printf(err, errlen, -EINVAL, "the apiserver store needs an event loop");
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
	s->on_server_version = opts->on_server_version;
	s->on_gates_dropped = opts->on_gates_dropped;
	s->userdata = opts->userdata;
	s->node_backoff = (struct backoff)BACKOFF_INIT(500, BACKOFF_MAX_MS);
	s->rng = (uint32_t)time(NULL) ^ (uint32_t)(uintptr_t)s;
	if (!(s->node_name = strdup(opts->node_name)) || api_events_init(s) < 0 ||
	    informer_init(s) < 0) {
		kube_config_free(cfg);
		api_events_free(s);
		informer_free(s);
		free(s->node_name);
		free(s);
		return -ENOMEM;
	}
	r = kube_client_new(loop, cfg, &s->client, err, errlen);
	if (r == 0)
		log_info("apiserver: %s (%s)%s", cfg->server, cfg->source,
			 cfg->insecure ? "; TLS verification OFF (insecure-skip-tls-verify)" : "");
	kube_config_free(cfg);
	if (r < 0) {
		api_events_free(s);
		informer_free(s);
		free(s->node_name);
		free(s);
		return r;
	}
	uv_timer_init(loop, &s->node_timer);
	s->node_timer.data = s;
	uv_timer_init(loop, &s->release_timer);
	uv_unref((uv_handle_t *)&s->release_timer);	/* never keeps a loop running */
	uv_timer_init(loop, &s->inf.timer);
	s->inf.timer.data = s;
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
	ret_stats->requests_by = s->client ? kube_client_request_counts(s->client) : NULL;
}

