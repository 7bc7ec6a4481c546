/* SPDX-License-Identifier: Apache-2.0 */
/* The kube-apiserver HTTP client: libcurl multi on a libuv loop. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "agent/lib/backoff.h"
#include "agent/kube/client.h"
#include "agent/kube/curl_loader.h"
#include "agent/kube/config.h"
#include "agent/kube/sa_token.h"
#include "agent/lib/err_msg.h"

#define BODY_MAX (64u << 20)
#define TOKEN_MAX (64u << 10)
#define CONNECT_TIMEOUT_MS 5000u
#define DEFAULT_TIMEOUT_MS 30000u
#define RETRY_BASE_MS 250u
#define RETRY_MAX_MS 30000u
#define RETRY_AFTER_CAP_MS 300000u

struct sock_ctx {
	uv_poll_t poll;
	curl_socket_t fd;
	struct kube_client *c;
	bool closing;
	struct sock_ctx *next;
};

struct kube_request {
	struct kube_client *c;
	struct kube_request *prev, *next;
	CURL *easy;
	struct curl_slist *headers;
	char *url, *body;
	int method;
	uint32_t timeout_ms;
	kube_data_cb on_data;
	kube_done_cb done;
	void *userdata;
	unsigned retries_left, attempts;
	bool token_retried, in_multi, finished, merge_patch;
	uv_timer_t timer;
	struct backoff backoff;
	char *buf;
	size_t len, cap;
	char retry_after[64];
	bool have_retry_after, aborted, too_big, streamed;
	char errbuf[CURL_ERROR_SIZE];
};

struct kube_client {
	uv_loop_t *loop;
	CURLM *multi;
	uv_timer_t timer;
	char *server;
	char *ca_file, *ca_data, *cert_file, *key_file, *cert_data, *key_data;
	size_t ca_data_len, cert_data_len, key_data_len;
	bool insecure;
	char *token;		/* current bearer token */
	char *token_file;
	struct stat token_st;
	bool have_token_st;
	struct sock_ctx *socks;
	struct kube_request *requests;
	unsigned pending_closes;
	bool freeing;
	uint32_t rng;
	struct kube_client_stats stats;
	struct kube_request_counts counts;
};

static const char *const method_names[] = { "GET", "POST", "PUT", "DELETE", "PATCH" };

static void client_maybe_release(struct kube_client *c);

static uint32_t next_random(struct kube_client *c)
{
	uint32_t x = c->rng;	/* xorshift32 */
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	c->rng = x ? x : 0x9e3779b9u;
	return c->rng;
}

static void secret_free(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

/* ---- token ---- */

/* Re-reads the token file when it changed (or always with @force).
 * Returns 1 when the token changed, 0 otherwise. */
static int token_refresh(struct kube_client *c, bool force)
{
	if (!c->token_file)
		return 0;
	struct stat st;
	if (stat(c->token_file, &st) < 0)
		return 0;
	if (!force && c->have_token_st && st.st_ino == c->token_st.st_ino &&
	    st.st_size == c->token_st.st_size && st.st_mtim.tv_sec == c->token_st.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == c->token_st.st_mtim.tv_nsec)
		return 0;
	FILE *f = fopen(c->token_file, "re");
	if (!f)
		return 0;
	char *buf = malloc(TOKEN_MAX + 1);
	size_t n = buf ? fread(buf, 1, TOKEN_MAX, f) : 0;
	fclose(f);
	if (!buf)
		return 0;
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
		buf[--n] = '\0';
	bool first = !c->have_token_st;
	c->token_st = st;
	c->have_token_st = true;
	if (n == 0 || (c->token && !strcmp(c->token, buf))) {
		secret_free(buf);
		return 0;
	}
	/* kept at its own size, not the read buffer's 64 KiB */
	char *token = malloc(n + 1);
	if (token)
		memcpy(token, buf, n + 1);
	secret_free(buf);
	if (!token)
		return 0;
	secret_free(c->token);
	c->token = token;
	if (!first)
		c->stats.token_reloads++;
	return 1;
}

int kube_client_bound_node(struct kube_client *c, char **ret_name, char **ret_uid)
{
	token_refresh(c, false);
	return c->token ? sa_token_bound_node(c->token, ret_name, ret_uid) : -ENOENT;
}

/* ---- libuv <-> libcurl ---- */

static void on_sock_closed(uv_handle_t *h)
{
	struct sock_ctx *sc = h->data;
	struct kube_client *c = sc->c;
	struct sock_ctx **pp = &c->socks;
	while (*pp && *pp != sc)
		pp = &(*pp)->next;
	if (*pp)
		*pp = sc->next;
	free(sc);
	c->pending_closes--;
	client_maybe_release(c);
}

static struct sock_ctx *sock_find(struct kube_client *c, curl_socket_t fd)
{
	for (struct sock_ctx *sc = c->socks; sc; sc = sc->next)
		if (sc->fd == fd && !sc->closing)
			return sc;
	return NULL;
}

static void sock_close(struct sock_ctx *sc)
{
	if (sc->closing)
		return;
	sc->closing = true;
	sc->c->pending_closes++;
	uv_close((uv_handle_t *)&sc->poll, on_sock_closed);
}

static void check_multi_info(struct kube_client *c);

static void on_poll(uv_poll_t *h, int status, int events)
{
	struct sock_ctx *sc = h->data;
	struct kube_client *c = sc->c;
	int flags = 0, running;
	if (status < 0)
		flags = CURL_CSELECT_ERR;
	else {
		if (events & UV_READABLE)
			flags |= CURL_CSELECT_IN;
		if (events & UV_WRITABLE)
			flags |= CURL_CSELECT_OUT;
	}
	curl_multi_socket_action(c->multi, sc->fd, flags, &running);
	check_multi_info(c);
}

static void on_timer(uv_timer_t *t)
{
	struct kube_client *c = t->data;
	int running;
	curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	check_multi_info(c);
}

static int on_curl_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
	struct kube_client *c = userp;
	(void)easy;
	(void)socketp;	/* looked up by fd: a stale pointer can never be used */
	struct sock_ctx *sc = sock_find(c, fd);
	if (what == CURL_POLL_REMOVE) {
		if (sc)
			sock_close(sc);
		return 0;
	}
	if (!sc) {
		sc = calloc(1, sizeof(*sc));
		if (!sc)
			return -1;
		if (uv_poll_init_socket(c->loop, &sc->poll, fd) < 0) {
			free(sc);
			return -1;
		}
		sc->fd = fd;
		sc->c = c;
		sc->poll.data = sc;
		sc->next = c->socks;
		c->socks = sc;
	}
	int ev = 0;
	if (what & CURL_POLL_IN)
		ev |= UV_READABLE;
	if (what & CURL_POLL_OUT)
		ev |= UV_WRITABLE;
	uv_poll_start(&sc->poll, ev, on_poll);
	return 0;
}

static int on_curl_timer(CURLM *multi, long timeout_ms, void *userp)
{
	struct kube_client *c = userp;
	(void)multi;
	if (timeout_ms < 0)
		uv_timer_stop(&c->timer);
	else
		uv_timer_start(&c->timer, on_timer, (uint64_t)timeout_ms, 0);
	return 0;
}

/* libcurl closes a socket: stop polling it first (libuv must never poll a
 * closed fd, libuv#1495). */
static int on_close_socket(void *clientp, curl_socket_t fd)
{
	struct kube_client *c = clientp;
	struct sock_ctx *sc = sock_find(c, fd);
	if (sc)
		sock_close(sc);
	return close(fd);
}

/* ---- requests ---- */

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct kube_request *r = userdata;
	size_t n = size * nmemb;
	if (r->on_data) {
		long code = 0;
		curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &code);
		if (code >= 200 && code < 300) {
			r->streamed = true;
			if (r->on_data(r->userdata, ptr, n) < 0) {
				r->aborted = true;
				return 0;
			}
			return n;
		}
	}
	if (r->len + n > BODY_MAX) {
		r->too_big = true;
		return 0;
	}
	if (r->len + n + 1 > r->cap) {
		size_t cap = r->cap ? r->cap : 4096;
		while (cap < r->len + n + 1)
			cap *= 2;
		char *b = realloc(r->buf, cap);
		if (!b)
			return 0;
		r->buf = b;
		r->cap = cap;
	}
	memcpy(r->buf + r->len, ptr, n);
	r->len += n;
	r->buf[r->len] = '\0';
	return n;
}

static size_t on_header(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct kube_request *r = userdata;
	size_t n = size * nmemb;
	if (n >= 5 && !strncmp(ptr, "HTTP/", 5)) {
		r->have_retry_after = false;	/* a new response starts */
		return n;
	}
	static const char key[] = "retry-after:";
	if (n > sizeof(key) - 1 && !strncasecmp(ptr, key, sizeof(key) - 1)) {
		size_t vlen = n - (sizeof(key) - 1);
		const char *v = ptr + sizeof(key) - 1;
		while (vlen && (*v == ' ' || *v == '\t')) {
			v++;
			vlen--;
		}
		while (vlen && (v[vlen - 1] == '\r' || v[vlen - 1] == '\n' || v[vlen - 1] == ' '))
			vlen--;
		if (vlen < sizeof(r->retry_after)) {
			memcpy(r->retry_after, v, vlen);
			r->retry_after[vlen] = '\0';
			r->have_retry_after = true;
		}
	}
	return n;
}

static int request_headers(struct kube_request *r)
{
	struct kube_client *c = r->c;
	struct curl_slist *h = NULL, *t;
	curl_slist_free_all(r->headers);
	r->headers = NULL;
	/* a PATCH is a server-side apply, or a merge patch when asked (client.h) */
	const char *type = !r->body ? NULL
			 : strcmp(method_names[r->method], "PATCH")
				 ? "Content-Type: application/json"
			 : r->merge_patch ? "Content-Type: application/merge-patch+json"
					  : "Content-Type: application/apply-patch+yaml";
	const char *fixed[] = { "Accept: application/json", "Expect:", type };
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		if (!fixed[i])
			continue;
		if (!(t = curl_slist_append(h, fixed[i])))
			goto fail;
		h = t;
	}
	if (c->token && *c->token) {
		char *auth = NULL;
		if (asprintf(&auth, "Authorization: Bearer %s", c->token) < 0)
			goto fail;
		t = curl_slist_append(h, auth);
		secret_free(auth);
		if (!t)
			goto fail;
		h = t;
	}
	r->headers = h;
	curl_easy_setopt(r->easy, CURLOPT_HTTPHEADER, h);
	return 0;
fail:
	curl_slist_free_all(h);
	return -ENOMEM;
}

static int request_launch(struct kube_request *r)
{
	struct kube_client *c = r->c;
	token_refresh(c, false);
	int ret = request_headers(r);
	if (ret < 0)
		return ret;
	r->len = 0;
	if (r->buf)
		r->buf[0] = '\0';
	r->have_retry_after = r->aborted = r->too_big = r->streamed = false;
	r->errbuf[0] = '\0';
	if (curl_multi_add_handle(c->multi, r->easy) != CURLM_OK)
		return -EIO;
	r->in_multi = true;
	r->attempts++;
	c->stats.requests++;
	c->stats.by_method[r->method]++;
	if (r->attempts > 1)
		c->stats.retries++;
	return 0;
}

static void on_request_closed(uv_handle_t *h)
{
	struct kube_request *r = h->data;
	struct kube_client *c = r->c;
	free(r);
	c->pending_closes--;
	client_maybe_release(c);
}

/* Unlinks and releases @r (memory once the timer handle is closed). */
static void request_free(struct kube_request *r)
{
	struct kube_client *c = r->c;
	if (r->in_multi) {
		curl_multi_remove_handle(c->multi, r->easy);
		r->in_multi = false;
	}
	if (r->prev)
		r->prev->next = r->next;
	else if (c->requests == r)
		c->requests = r->next;
	if (r->next)
		r->next->prev = r->prev;
	r->prev = r->next = NULL;
	curl_easy_cleanup(r->easy);
	r->easy = NULL;
	curl_slist_free_all(r->headers);
	free(r->url);
	free(r->body);
	free(r->buf);
	uv_timer_stop(&r->timer);
	c->pending_closes++;
	uv_close((uv_handle_t *)&r->timer, on_request_closed);
}

static void on_retry_timer(uv_timer_t *t)
{
	struct kube_request *r = t->data;
	int ret = request_launch(r);
	if (ret < 0) {
		struct kube_response resp = { .error = ret, .error_text = "cannot start request",
					      .body = "", .attempts = r->attempts };
		r->finished = true;
		r->done(r->userdata, &resp);
		request_free(r);
	}
}

static int map_curl_error(CURLcode res)
{
	switch (res) {
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_COULDNT_RESOLVE_HOST:
		return -EHOSTUNREACH;
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
		return -EPROTO;
	case CURLE_GOT_NOTHING:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return -ECONNRESET;
	default:
		return -EIO;
	}
}

static void request_finished(struct kube_request *r, CURLcode res)
{
	struct kube_client *c = r->c;
	long status = 0;
	curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
	int error = 0;
	if (r->aborted)
		error = -ECANCELED;
	else if (r->too_big)
		error = -EMSGSIZE;
	else if (res != CURLE_OK)
		error = map_curl_error(res);
	if (error)
		c->stats.transport_errors++;
	/* method_names and the first verbs share their order */
	c->counts.by_verb_status[r->on_data && r->method == KUBE_VERB_GET ? KUBE_VERB_WATCH
									  : r->method]
				[status > 0 && status < KUBE_MAX_STATUS ? status : 0]++;
	if (status >= 200 && status < 300)
		c->stats.status_2xx++;
	else if (status >= 400 && status < 500)
		c->stats.status_4xx++;
	else if (status >= 500)
		c->stats.status_5xx++;

	/* A 401: the token may have rotated under us. Read it again, retry once. */
	if (status == 401 && !r->token_retried && c->token_file) {
		r->token_retried = true;
		if (token_refresh(c, true) > 0) {
			uv_timer_start(&r->timer, on_retry_timer, 0, 0);
			return;
		}
	}
	/* Retry what failed before anything reached the caller: no answer, 5xx, 429. */
	bool retryable = !r->streamed && !r->aborted && !r->too_big &&
			 (status == 0 || status >= 500 || status == 429);
	if (retryable && r->retries_left > 0) {
		r->retries_left--;
		uint32_t ra = 0;
		bool have_ra = r->have_retry_after &&
			       retry_after_parse(r->retry_after, time(NULL), &ra) == 0;
		uint32_t delay = backoff_with_retry_after(backoff_next(&r->backoff, next_random(c)),
							  have_ra, ra, RETRY_AFTER_CAP_MS);
		uv_timer_start(&r->timer, on_retry_timer, delay, 0);
		return;
	}
	struct kube_response resp = {
		.status = status,
		.error = error,
		.error_text = error ? (r->errbuf[0] ? r->errbuf : curl_easy_strerror(res)) : "",
		.body = r->buf ? r->buf : "",
		.body_len = r->len,
		.retry_after = r->have_retry_after ? r->retry_after : NULL,
		.attempts = r->attempts,
	};
	r->finished = true;
	r->done(r->userdata, &resp);
	request_free(r);
}

static void check_multi_info(struct kube_client *c)
{
	CURLMsg *msg;
	int left;
	while (!c->freeing && (msg = curl_multi_info_read(c->multi, &left))) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		CURL *easy = msg->easy_handle;
		CURLcode res = msg->data.result;
		struct kube_request *r = NULL;
		curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&r);
		curl_multi_remove_handle(c->multi, easy);
		if (r) {
			r->in_multi = false;
			request_finished(r, res);
		}
	}
}

static int method_index(const char *m)
{
	for (int i = 0; i < (int)(sizeof(method_names) / sizeof(method_names[0])); i++)
		if (!strcmp(m, method_names[i]))
			return i;
	return -1;
}

int kube_request_start(struct kube_client *c, const struct kube_request_opts *o,
		       kube_done_cb done, void *userdata, struct kube_request **ret_req)
{
	if (!c || c->freeing || !o || !o->method || !o->path || o->path[0] != '/' || !done)
		return -EINVAL;
	int m = method_index(o->method);
	if (m < 0)
		return -EINVAL;
	struct kube_request *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->c = c;
	r->method = m;
	r->done = done;
	r->userdata = userdata;
	r->on_data = o->on_data;
	r->merge_patch = o->merge_patch;
	r->retries_left = o->retries;
	r->timeout_ms = o->timeout_ms ? o->timeout_ms : DEFAULT_TIMEOUT_MS;
	r->backoff = (struct backoff)BACKOFF_INIT(RETRY_BASE_MS, RETRY_MAX_MS);
	if (asprintf(&r->url, "%s%s", c->server, o->path) < 0) {
		r->url = NULL;
		goto nomem;
	}
	if (o->body && !(r->body = strdup(o->body)))
		goto nomem;
	if (!(r->easy = curl_easy_init()))
		goto nomem;
	CURL *e = r->easy;
	curl_easy_setopt(e, CURLOPT_URL, r->url);
	curl_easy_setopt(e, CURLOPT_PRIVATE, (char *)r);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "dralet/" DRALET_VERSION);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https");
	curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	/* One connection per agent: a request that starts while the connection
	 * is still being set up waits to learn whether it can multiplex on it
	 * (HTTP/2) instead of opening a second one (kube_client_new). */
	curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
			 (long)(r->timeout_ms < CONNECT_TIMEOUT_MS ? r->timeout_ms : CONNECT_TIMEOUT_MS));
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)r->timeout_ms);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, on_close_socket);
	curl_easy_setopt(e, CURLOPT_CLOSESOCKETDATA, c);
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, c->insecure ? 0L : 1L);
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, c->insecure ? 0L : 2L);
	/* The configured CA is the only one trusted (client-go's RootCAs): not
	 * libcurl's default bundle and CA directory (/etc/ssl/certs) beside it. */
	if (c->ca_data) {
		struct curl_blob blob = { c->ca_data, c->ca_data_len, CURL_BLOB_COPY };
		curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &blob);
		curl_easy_setopt(e, CURLOPT_CAINFO, NULL);
		curl_easy_setopt(e, CURLOPT_CAPATH, NULL);
	} else if (c->ca_file) {
		curl_easy_setopt(e, CURLOPT_CAINFO, c->ca_file);
		curl_easy_setopt(e, CURLOPT_CAPATH, NULL);
	}
	if (c->cert_data) {
		struct curl_blob blob = { c->cert_data, c->cert_data_len, CURL_BLOB_COPY };
		curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &blob);
	} else if (c->cert_file) {
		curl_easy_setopt(e, CURLOPT_SSLCERT, c->cert_file);
	}
	if (c->key_data) {
		struct curl_blob blob = { c->key_data, c->key_data_len, CURL_BLOB_COPY };
		curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &blob);
	} else if (c->key_file) {
		curl_easy_setopt(e, CURLOPT_SSLKEY, c->key_file);
	}
	if (m == 0)
		curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
	else
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method_names[m]);
	if (r->body) {
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body);
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(r->body));
	} else if (m != 0) {
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
	}
	uv_timer_init(c->loop, &r->timer);
	r->timer.data = r;
	r->next = c->requests;
	if (c->requests)
		c->requests->prev = r;
	c->requests = r;
	int ret = request_launch(r);
	if (ret < 0) {
		request_free(r);
		return ret;
	}
	if (ret_req)
		*ret_req = r;
	return 0;
nomem:
	if (r->easy)
		curl_easy_cleanup(r->easy);
	free(r->url);
	free(r->body);
	free(r);
	return -ENOMEM;
}

void kube_request_cancel(struct kube_request *r)
{
	if (!r || r->finished)
		return;
	r->finished = true;
	request_free(r);
}

/* ---- the client ---- */

static int dup_opt(const char *in, char **out)
{
	if (!in)
		return 0;
	return (*out = strdup(in)) ? 0 : -ENOMEM;
}

static int dup_blob(const char *in, size_t len, char **out)
{
	if (!in)
		return 0;
	if (!(*out = malloc(len + 1)))
		return -ENOMEM;
	memcpy(*out, in, len);
	(*out)[len] = '\0';
	return 0;
}

static void client_free_memory(struct kube_client *c)
{
	free(c->server);
	free(c->ca_file);
	free(c->ca_data);
	free(c->cert_file);
	free(c->key_file);
	free(c->cert_data);
	if (c->key_data) {
		explicit_bzero(c->key_data, c->key_data_len);
		free(c->key_data);
	}
	secret_free(c->token);
	free(c->token_file);
	free(c);
}

static void on_client_timer_closed(uv_handle_t *h)
{
	struct kube_client *c = h->data;
	c->pending_closes--;
	client_maybe_release(c);
}

static void client_maybe_release(struct kube_client *c)
{
	if (c->freeing && c->pending_closes == 0)
		client_free_memory(c);
}

static int check_readable(const char *path, const char *what, char *err, size_t errlen)
{
	if (path && access(path, R_OK) < 0) {
		int e = errno;
		return err_printf(err, errlen, -EINVAL, "%s %s: %s", what, path, strerror(e));
	}
	return 0;
}

int kube_client_new(uv_loop_t *loop, const struct kube_config *cfg, struct kube_client **ret_client,
		    char *err, size_t errlen)
{
	static bool curl_ready;
	if (!loop || !cfg || !cfg->server) {
		return err_printf(err, errlen, -EINVAL, "no apiserver address");
	}
	if (check_readable(cfg->ca_file, "certificate authority", err, errlen) < 0 ||
	    check_readable(cfg->cert_file, "client certificate", err, errlen) < 0 ||
	    check_readable(cfg->key_file, "client key", err, errlen) < 0)
		return -EINVAL;
	if (!curl_ready) {
		if (curl_loader_load(err, errlen) < 0)
			return -ELIBACC;
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
			return err_printf(err, errlen, -EIO, "libcurl initialisation failed");
		}
		curl_ready = true;
	}
	struct kube_client *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->loop = loop;
	c->insecure = cfg->insecure;
	c->rng = (uint32_t)time(NULL) ^ ((uint32_t)getpid() << 16) ^ (uint32_t)(uintptr_t)c;
	if (!c->rng)
		c->rng = 1;
	if (dup_opt(cfg->server, &c->server) < 0 || dup_opt(cfg->ca_file, &c->ca_file) < 0 ||
	    dup_opt(cfg->cert_file, &c->cert_file) < 0 || dup_opt(cfg->key_file, &c->key_file) < 0 ||
	    dup_opt(cfg->token, &c->token) < 0 || dup_opt(cfg->token_file, &c->token_file) < 0 ||
	    dup_blob(cfg->ca_data, cfg->ca_data_len, &c->ca_data) < 0 ||
	    dup_blob(cfg->cert_data, cfg->cert_data_len, &c->cert_data) < 0 ||
	    dup_blob(cfg->key_data, cfg->key_data_len, &c->key_data) < 0 ||
	    !(c->multi = curl_multi_init())) {
		if (c->multi)
			curl_multi_cleanup(c->multi);
		client_free_memory(c);
		return -ENOMEM;
	}
	c->ca_data_len = cfg->ca_data_len;
	c->cert_data_len = cfg->cert_data_len;
	c->key_data_len = cfg->key_data_len;
	token_refresh(c, true);
	curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, on_curl_socket);
	curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
	curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, on_curl_timer);
	curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
	/* Every request is a stream on one HTTP/2 connection (PIPEWAIT on each
	 * easy handle makes the requests that start before the server's ALPN
	 * answer wait for it). No CURLMOPT_MAX_HOST_CONNECTIONS: a server that
	 * only speaks HTTP/1.1 would then serialize every request behind a
	 * watch that never ends; there each request gets its own connection. */
	curl_multi_setopt(c->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
	uv_timer_init(loop, &c->timer);
	c->timer.data = c;
	*ret_client = c;
	return 0;
}

void kube_client_free(struct kube_client *c)
{
	if (!c || c->freeing)
		return;
	while (c->requests) {
		c->requests->finished = true;
		request_free(c->requests);
	}
	c->freeing = true;
	curl_multi_cleanup(c->multi);
	c->multi = NULL;
	for (struct sock_ctx *sc = c->socks; sc; sc = sc->next)
		sock_close(sc);
	uv_timer_stop(&c->timer);
	c->pending_closes++;
	uv_close((uv_handle_t *)&c->timer, on_client_timer_closed);
}

const char *kube_verb_name(enum kube_verb v)
{
	return v < KUBE_VERB_WATCH ? method_names[v] : v == KUBE_VERB_WATCH ? "WATCH" : "?";
}

const struct kube_request_counts *kube_client_request_counts(const struct kube_client *c)
{
	return &c->counts;
}

void kube_client_get_stats(const struct kube_client *c, struct kube_client_stats *ret_stats)
{
	*ret_stats = c->stats;
}

char *kube_escape(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(s);
	char *out = malloc(n * 3 + 1), *p = out;
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    ch == '-' || ch == '.' || ch == '_' || ch == '~') {
			*p++ = (char)ch;
		} else {
			*p++ = '%';
			*p++ = hex[ch >> 4];
			*p++ = hex[ch & 15];
		}
	}
	*p = '\0';
	return out;
}
