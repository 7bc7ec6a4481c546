/* SPDX-License-Identifier: Apache-2.0 */
/* /metrics, /healthz and /readyz over libmicrohttpd, answered on the loop. */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <microhttpd.h>

#include "agent/daemon/metrics_server.h"

/* One HTTP request waiting for the loop; lives on the server thread's stack and
 * is only touched under the server's lock. */
struct request {
	bool done;
	bool ok;
	struct prom_buf body;
	struct request *next;
};

struct metrics_server {
	struct metrics_server_config cfg;
	char *address;
	struct MHD_Daemon *mhd;
	unsigned port;
	uv_async_t async;
	uv_timer_t heartbeat;
	uv_timer_t retry;		/* binding a taken port again */
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* CLOCK_MONOTONIC */
	struct request *queue;
	bool stopping;
	/* under the lock: what /healthz and /readyz answer */
	uint64_t beat_ms;		/* CLOCK_MONOTONIC of the last heartbeat; 0: none yet */
	bool ready;
	char why[256];
	int open_handles;
	void (*done)(void *);
	void *done_userdata;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void on_heartbeat(uv_timer_t *t)
{
	struct metrics_server *s = t->data;

	pthread_mutex_lock(&s->lock);
	s->beat_ms = now_ms();
	pthread_mutex_unlock(&s->lock);
}

static void on_async(uv_async_t *a)
{
	struct metrics_server *s = a->data;

	/* under the lock: a request that timed out is unlinked by its thread, so
	 * none is used after its thread gave up on it */
	pthread_mutex_lock(&s->lock);
	s->beat_ms = now_ms();
	while (s->queue) {
		struct request *r = s->queue;

		s->queue = r->next;
		s->cfg.collect(s->cfg.userdata, &r->body);
		r->ok = !r->body.error;
		r->done = true;
	}
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

void metrics_server_set_ready(struct metrics_server *s, bool ready, const char *why)
{
	pthread_mutex_lock(&s->lock);
	s->ready = ready;
	snprintf(s->why, sizeof(s->why), "%s", why ? why : "");
	pthread_mutex_unlock(&s->lock);
}

/* /healthz or /readyz from the last state: 200 or 503, and the text to say. */
static unsigned probe(struct metrics_server *s, bool readiness, char *text, size_t size)
{
	unsigned ms = s->cfg.timeout_ms ? s->cfg.timeout_ms : 5000;
	unsigned status = MHD_HTTP_OK;

	pthread_mutex_lock(&s->lock);
	if (s->stopping) {
		status = MHD_HTTP_SERVICE_UNAVAILABLE;
		snprintf(text, size, "stopping\n");
	} else if (s->beat_ms && now_ms() - s->beat_ms > ms) {
		status = MHD_HTTP_SERVICE_UNAVAILABLE;
		snprintf(text, size, "the event loop has not run for %llu ms\n",
			 (unsigned long long)(now_ms() - s->beat_ms));
	} else if (readiness && !s->ready) {
		status = MHD_HTTP_SERVICE_UNAVAILABLE;
		snprintf(text, size, "not ready: %s\n", s->why[0] ? s->why : "starting");
	} else {
		snprintf(text, size, s->beat_ms ? "ok\n" : "ok (starting)\n");
	}
	pthread_mutex_unlock(&s->lock);
	return status;
}

/* Waits for the loop to answer @r; false when it did not in time (or stopping). */
static bool ask_loop(struct metrics_server *s, struct request *r)
{
	struct timespec deadline;
	unsigned ms = s->cfg.timeout_ms ? s->cfg.timeout_ms : 5000;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += ms / 1000;
	deadline.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&s->lock);
	if (s->stopping) {
		pthread_mutex_unlock(&s->lock);
		return false;
	}
	r->next = s->queue;
	s->queue = r;
	uv_async_send(&s->async);
	while (!r->done && !s->stopping &&
	       pthread_cond_timedwait(&s->cond, &s->lock, &deadline) != ETIMEDOUT)
		;
	if (!r->done)
		for (struct request **p = &s->queue; *p; p = &(*p)->next)
			if (*p == r) {
				*p = r->next;
				break;
			}
	pthread_mutex_unlock(&s->lock);
	return r->done;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *type,
			     const char *text, size_t len)
{
	struct MHD_Response *resp =
		MHD_create_response_from_buffer(len, (void *)text, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	static const char text_plain[] = "text/plain; charset=utf-8";
	struct metrics_server *s = cls;
	struct request r = { 0 };
	enum MHD_Result ret;
	char text[512];
	unsigned status;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)con_cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, text_plain, "GET only\n", 9);
	if (!strcmp(url, "/healthz") || !strcmp(url, "/livez") || !strcmp(url, "/readyz")) {
		status = probe(s, !strcmp(url, "/readyz"), text, sizeof(text));
		return reply(conn, status, text_plain, text, strlen(text));
	}
	if (strcmp(url, "/metrics"))
		return reply(conn, MHD_HTTP_NOT_FOUND, text_plain,
			     "not found: /metrics, /healthz, /readyz\n", 39);
	if (!ask_loop(s, &r)) {
		prom_buf_free(&r.body);
		return reply(conn, MHD_HTTP_SERVICE_UNAVAILABLE, text_plain,
			     "the agent's event loop did not answer\n", 38);
	}
	ret = r.ok ? reply(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8",
			   r.body.data ? r.body.data : "", r.body.len)
		   : reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, text_plain, "out of memory\n", 14);
	prom_buf_free(&r.body);
	return ret;
}

/* "HOST:PORT", ":PORT", "[V6]:PORT" -> a listening socket. */
static int listen_on(const char *address, int *ret_fd, unsigned *ret_port)
{
	char host[256] = "", port[16];
	const char *colon = strrchr(address, ':');
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *res, *ai;
	int fd = -1, r, one = 1;

	if (!colon || !colon[1] || strlen(colon + 1) >= sizeof(port) ||
	    (size_t)(colon - address) >= sizeof(host))
		return -EINVAL;
	memcpy(host, address, (size_t)(colon - address));
	host[colon - address] = '\0';
	if (host[0] == '[') {
		size_t n = strlen(host);

		if (n < 2 || host[n - 1] != ']')
			return -EINVAL;
		memmove(host, host + 1, n - 2);
		host[n - 2] = '\0';
	}
	snprintf(port, sizeof(port), "%s", colon + 1);
	if ((r = getaddrinfo(host[0] ? host : NULL, port, &hints, &res)) != 0)
		return r == EAI_SYSTEM ? -errno : -EINVAL;
	r = -EADDRNOTAVAIL;
	for (ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			r = -errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 16) < 0) {
			r = -errno;
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0)
		return r;
	{
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);

		*ret_port = 0;
		if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0)
			*ret_port = ntohs(ss.ss_family == AF_INET6
						  ? ((struct sockaddr_in6 *)&ss)->sin6_port
						  : ((struct sockaddr_in *)&ss)->sin_port);
	}
	*ret_fd = fd;
	return 0;
}

/* Listens and starts libmicrohttpd on it. 0 or -errno. */
static int serve(struct metrics_server *s)
{
	int fd, r;
	unsigned port;

	if ((r = listen_on(s->address, &fd, &port)) < 0)
		return r;
	s->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0, NULL, NULL,
				  on_request, s, MHD_OPTION_LISTEN_SOCKET, fd,
				  MHD_OPTION_CONNECTION_LIMIT, 16u,
				  MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
	if (!s->mhd) {
		close(fd);
		return -EIO;
	}
	s->port = port;	/* MHD owns the socket now and closes it when it stops */
	return 0;
}

static void on_retry(uv_timer_t *t)
{
	struct metrics_server *s = t->data;
	int r = serve(s);

	if (r == -EADDRINUSE)
		return;
	uv_timer_stop(t);
	if (r == 0 && s->cfg.on_listening)
		s->cfg.on_listening(s->cfg.userdata, s->port);
}

int metrics_server_start(const struct metrics_server_config *cfg, struct metrics_server **ret)
{
	struct metrics_server *s;
	pthread_condattr_t ca;
	int r;

	if (!cfg->loop || !cfg->address || !cfg->collect)
		return -EINVAL;
	if (!(s = calloc(1, sizeof(*s))) || !(s->address = strdup(cfg->address))) {
		free(s);
		return -ENOMEM;
	}
	s->cfg = *cfg;
	s->cfg.address = s->address;
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	if ((r = uv_async_init(cfg->loop, &s->async, on_async)) < 0) {
		pthread_cond_destroy(&s->cond);
		pthread_mutex_destroy(&s->lock);
		free(s->address);
		free(s);
		return r;
	}
	s->async.data = s;
	uv_unref((uv_handle_t *)&s->async);
	uv_timer_init(cfg->loop, &s->heartbeat);
	s->heartbeat.data = s;
	uv_timer_start(&s->heartbeat, on_heartbeat, 0, 1000);
	uv_unref((uv_handle_t *)&s->heartbeat);	/* never keeps the loop alive */
	uv_timer_init(cfg->loop, &s->retry);
	s->retry.data = s;
	uv_unref((uv_handle_t *)&s->retry);
	s->open_handles = 3;
	r = serve(s);
	if (r == -EADDRINUSE && cfg->on_listening) {
		uv_timer_start(&s->retry, on_retry, 1000, 1000);
		r = 0;
	} else if (r == 0 && cfg->on_listening) {
		cfg->on_listening(cfg->userdata, s->port);
	}
	if (r < 0) {
		metrics_server_stop(s, NULL, NULL);
		return r;
	}
	*ret = s;
	return 0;
}

unsigned metrics_server_port(const struct metrics_server *s)
{
	return s->port;
}

static void on_closed(uv_handle_t *h)
{
	struct metrics_server *s = h->data;
	void (*done)(void *) = s->done;
	void *ud = s->done_userdata;

	if (--s->open_handles)
		return;
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s->address);
	free(s);
	if (done)
		done(ud);
}

void metrics_server_stop(struct metrics_server *s, void (*done)(void *), void *userdata)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	if (s->mhd) {
		MHD_stop_daemon(s->mhd);	/* joins its thread */
		s->mhd = NULL;
	}
	s->done = done;
	s->done_userdata = userdata;
	uv_close((uv_handle_t *)&s->async, on_closed);
	uv_close((uv_handle_t *)&s->heartbeat, on_closed);
	uv_close((uv_handle_t *)&s->retry, on_closed);
}
