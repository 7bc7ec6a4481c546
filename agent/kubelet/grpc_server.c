/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The server's I/O shell: a listening unix socket, one libuv pipe per
 * connection feeding a connection core (conn.c), bounded output per
 * connection with backpressure, the handshake and idle timeouts, the
 * connection limits (eviction of the longest idle, a cap per client
 * process), graceful shutdown. The timers live here; the core only says
 * whether a connection is idle.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent/kubelet/grpc_internal.h"

#define READ_BUFFER 32768

struct server_conn {
	uv_pipe_t pipe;
	uv_timer_t timer;		/* handshake, then idle timeout */
	struct grpc_server *srv;
	struct grpc_conn *core;		/* NULL for connections refused at once */
	struct server_conn *prev, *next;
	size_t queued;			/* bytes handed to uv_write, not yet written */
	uint64_t last_activity;		/* uv_now() of the last byte read or written */
	uint64_t last_heard;		/* uv_now() of the last byte read (accept time before) */
	pid_t peer_pid;			/* SO_PEERCRED, 0 when unknown */
	unsigned handles_open;
	bool reading;
	bool closing;
	bool idle_goaway;		/* GOAWAY sent for idleness: close at the next expiry */
	uint8_t rbuf[READ_BUFFER];
};

struct write_req {
	uv_write_t req;
	struct server_conn *sc;
	uint8_t *buf;
	size_t len;
};

void grpc_server_default_limits(struct grpc_server_limits *l)
{
	memset(l, 0, sizeof(*l));
	l->max_message = GRPC_DEFAULT_MAX_MESSAGE;
	l->max_concurrent_streams = 100;
	l->max_connections = 128;
	l->max_connections_per_client = 64;
	l->max_header_bytes = 16 * 1024;
	l->max_conn_request_bytes = 16 * 1024 * 1024;
	l->max_conn_output = 256 * 1024;
	l->max_stream_output = 8 * 1024 * 1024;
	l->handshake_timeout_ms = 10000;
	l->idle_timeout_ms = 5 * 60 * 1000;
	l->shutdown_grace_ms = 25000;	/* within a pod's default 30 s termination grace */
}

int grpc_server_new(uv_loop_t *loop, const struct grpc_server_limits *limits,
		    struct grpc_server **ret_srv)
{
	struct grpc_server *srv = calloc(1, sizeof(*srv));

	if (!srv)
		return -ENOMEM;
	srv->loop = loop;
	if (limits)
		srv->limits = *limits;
	else
		grpc_server_default_limits(&srv->limits);
	uv_timer_init(loop, &srv->grace_timer);
	srv->grace_timer.data = srv;
	srv->handles_open = 1;
	*ret_srv = srv;
	return 0;
}

int grpc_server_add_method(struct grpc_server *srv, const char *path, enum grpc_method_kind kind,
			   grpc_handler handler, void *userdata)
{
	struct grpc_method *m;

	if (!path || path[0] != '/' || !handler)
		return -EINVAL;
	if (grpc_server_find_method(srv, path, strlen(path)))
		return -EEXIST;
	m = realloc(srv->methods, (srv->n_methods + 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	srv->methods = m;
	m = &srv->methods[srv->n_methods];
	m->path = strdup(path);
	if (!m->path)
		return -ENOMEM;
	m->kind = kind;
	m->handler = handler;
	m->userdata = userdata;
	srv->n_methods++;
	return 0;
}

const struct grpc_method *grpc_server_find_method(const struct grpc_server *srv, const char *path,
						  size_t len)
{
	for (size_t i = 0; i < srv->n_methods; i++)
		if (strlen(srv->methods[i].path) == len && !memcmp(srv->methods[i].path, path, len))
			return &srv->methods[i];
	return NULL;
}

bool grpc_server_serves(const struct grpc_server *srv, const char *service)
{
	size_t len = strlen(service);

	for (size_t i = 0; i < srv->n_methods; i++) {
		const char *p = srv->methods[i].path;

		if (!strncmp(p + 1, service, len) && p[1 + len] == '/')
			return true;
	}
	return false;
}

void grpc_server_set_metrics(struct grpc_server *srv, struct grpc_metrics *m)
{
	srv->metrics = m;
}

const char *grpc_server_path(const struct grpc_server *srv)
{
	return srv->path;
}

unsigned grpc_server_n_connections(const struct grpc_server *srv)
{
	return srv->n_conns;
}

/* ---- connections ---- */

static void server_maybe_finish(struct grpc_server *srv);

static void conn_handle_closed(uv_handle_t *handle)
{
	struct server_conn *sc = handle->data;
	struct grpc_server *srv = sc->srv;

	if (--sc->handles_open > 0)
		return;
	if (sc->prev)
		sc->prev->next = sc->next;
	else
		srv->conns = sc->next;
	if (sc->next)
		sc->next->prev = sc->prev;
	srv->n_conns--;
	grpc_conn_free(sc->core);	/* cancels calls still open */
	free(sc);
	server_maybe_finish(srv);
}

static void conn_close(struct server_conn *sc)
{
	if (sc->closing)
		return;
	sc->closing = true;
	uv_close((uv_handle_t *)&sc->pipe, conn_handle_closed);
	uv_close((uv_handle_t *)&sc->timer, conn_handle_closed);
}

static void conn_on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf);
static void conn_timer_expired(uv_timer_t *timer);

static void conn_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
	struct server_conn *sc = handle->data;

	(void)suggested;
	*buf = uv_buf_init((char *)sc->rbuf, sizeof(sc->rbuf));
}

/* Reads only while output drains: a peer that does not read cannot make
 * the server queue more (PING ACKs, RSTs, responses) for it. */
static void conn_update_reading(struct server_conn *sc)
{
	bool want = !sc->closing && sc->core && !grpc_conn_blocked(sc->core) &&
		    sc->queued < sc->srv->limits.max_conn_output;

	if (want == sc->reading)
		return;
	if (want) {
		if (uv_read_start((uv_stream_t *)&sc->pipe, conn_alloc, conn_on_read) < 0) {
			conn_close(sc);
			return;
		}
	} else {
		uv_read_stop((uv_stream_t *)&sc->pipe);
	}
	sc->reading = want;
}

static void conn_on_write(uv_write_t *req, int status)
{
	struct write_req *wr = (struct write_req *)req;
	struct server_conn *sc = wr->sc;

	sc->queued -= wr->len;
	free(wr->buf);
	free(wr);
	if (sc->closing)
		return;
	sc->last_activity = uv_now(sc->srv->loop);
	if (status < 0) {
		conn_close(sc);
		return;
	}
	if (grpc_conn_blocked(sc->core) && sc->queued <= sc->srv->limits.max_conn_output / 2)
		grpc_conn_flush(sc->core);
	conn_update_reading(sc);
}

static bool conn_io_write(void *io_data, uint8_t *buf, size_t len)
{
	struct server_conn *sc = io_data;
	struct write_req *wr;
	uv_buf_t b;

	if (sc->closing) {
		free(buf);
		return true;
	}
	wr = malloc(sizeof(*wr));
	if (!wr) {
		free(buf);
		conn_close(sc);
		return true;
	}
	wr->sc = sc;
	wr->buf = buf;
	wr->len = len;
	b = uv_buf_init((char *)buf, (unsigned)len);
	if (uv_write(&wr->req, (uv_stream_t *)&sc->pipe, &b, 1, conn_on_write) < 0) {
		free(buf);
		free(wr);
		conn_close(sc);
		return true;
	}
	sc->queued += len;
	return sc->queued >= sc->srv->limits.max_conn_output;
}

static void conn_io_finished(void *io_data)
{
	conn_close(io_data);
}

static const struct grpc_conn_io conn_io = {
	.write = conn_io_write,
	.finished = conn_io_finished,
};

static void conn_on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
	struct server_conn *sc = stream->data;

	if (nread < 0) {
		conn_close(sc);	/* EOF or error: the peer is gone */
		return;
	}
	if (nread == 0 || sc->closing)
		return;
	sc->last_activity = sc->last_heard = uv_now(sc->srv->loop);
	bool was_done = grpc_conn_handshake_done(sc->core);
	if (grpc_conn_recv(sc->core, (const uint8_t *)buf->base, (size_t)nread) < 0) {
		conn_close(sc);
		return;
	}
	/* from the handshake on, the timer watches for idleness */
	if (!sc->closing && !was_done && grpc_conn_handshake_done(sc->core))
		uv_timer_start(&sc->timer, conn_timer_expired, sc->srv->limits.idle_timeout_ms, 0);
	conn_update_reading(sc);
}

/*
 * Before the handshake: it took too long, close. After: close an idle
 * connection (no call open, nothing read or written for idle_timeout_ms)
 * gracefully with a GOAWAY, and for good at the next expiry if the peer
 * does not finish; a connection with calls open is never timed out here
 * (calls have their deadlines; watch streams may last for days).
 */
static void conn_timer_expired(uv_timer_t *timer)
{
	struct server_conn *sc = timer->data;
	uint64_t timeout = sc->srv->limits.idle_timeout_ms, idle;

	if (sc->closing)
		return;
	if (!grpc_conn_handshake_done(sc->core) || sc->idle_goaway) {
		conn_close(sc);
		return;
	}
	idle = uv_now(sc->srv->loop) - sc->last_activity;
	if (!grpc_conn_idle(sc->core) || idle < timeout) {
		uv_timer_start(&sc->timer, conn_timer_expired,
			       grpc_conn_idle(sc->core) ? timeout - idle : timeout, 0);
		return;
	}
	sc->idle_goaway = true;
	grpc_conn_shutdown(sc->core);	/* may finish and close at once */
	if (!sc->closing)
		uv_timer_start(&sc->timer, conn_timer_expired, sc->srv->limits.handshake_timeout_ms,
			       0);
}

static bool conn_idle(const struct server_conn *sc)
{
	return !grpc_conn_handshake_done(sc->core) || grpc_conn_idle(sc->core);
}

static pid_t peer_pid(uv_pipe_t *pipe)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	uv_os_fd_t fd;

	if (uv_fileno((uv_handle_t *)pipe, &fd) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return 0;
	return cred.pid;
}

/* Whether idle @a is a better victim than idle @b: the one not heard from the
 * longest (accepted the earliest when silent). Our own writes do not count:
 * every new connection gets our SETTINGS, and under load the write to an older
 * silent connection can complete after a newer client (the kubelet) connected,
 * which made that client look the longest idle. */
static bool better_victim(const struct server_conn *a, const struct server_conn *b)
{
	return a->last_heard <= b->last_heard;
}

/*
 * Room for @fresh (already in the list): 0, or -EMFILE when it must go.
 * Over the per-client cap the new one goes; over the total, the idle
 * connection chosen by better_victim is evicted, or the new one goes when
 * none is idle.
 */
static int make_room(struct grpc_server *srv, struct server_conn *fresh)
{
	struct server_conn *victim = NULL;
	unsigned total = 0, same_client = 0;

	for (struct server_conn *sc = srv->conns; sc; sc = sc->next) {
		if (sc == fresh || sc->closing || !sc->core)
			continue;
		total++;
		if (fresh->peer_pid && sc->peer_pid == fresh->peer_pid)
			same_client++;
		if (conn_idle(sc) && (!victim || better_victim(sc, victim)))
			victim = sc;
	}
	if (same_client >= srv->limits.max_connections_per_client)
		return -EMFILE;
	if (total < srv->limits.max_connections)
		return 0;
	if (!victim)
		return -EMFILE;
	conn_close(victim);
	return 0;
}

static void server_on_connection(uv_stream_t *listener, int status)
{
	struct grpc_server *srv = listener->data;
	struct server_conn *sc;

	if (status < 0)
		return;
	sc = calloc(1, sizeof(*sc));
	if (!sc)
		return;	/* the connection stays in the backlog; retried later */
	sc->srv = srv;
	uv_pipe_init(srv->loop, &sc->pipe, 0);
	uv_timer_init(srv->loop, &sc->timer);
	sc->pipe.data = sc;
	sc->timer.data = sc;
	sc->handles_open = 2;
	sc->next = srv->conns;
	if (srv->conns)
		srv->conns->prev = sc;
	srv->conns = sc;
	srv->n_conns++;
	sc->last_activity = sc->last_heard = uv_now(srv->loop);
	if (uv_accept(listener, (uv_stream_t *)&sc->pipe) < 0 || srv->closing) {
		conn_close(sc);
		return;
	}
	sc->peer_pid = peer_pid(&sc->pipe);
	if (make_room(srv, sc) < 0 || grpc_conn_new(srv, &conn_io, sc, &sc->core) < 0) {
		conn_close(sc);
		return;
	}
	uv_timer_start(&sc->timer, conn_timer_expired, srv->limits.handshake_timeout_ms, 0);
	conn_update_reading(sc);
	grpc_conn_flush(sc->core);	/* our SETTINGS go first (grpc-go waits for them) */
}

/* ---- listening ---- */

/* mkdir -p for the parent directories of @path, new ones with mode 0750. */
static int make_parent_dirs(const char *path)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0750) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return 0;
}

/* True when a process accepts connections on the socket at @path. */
static bool someone_listens(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	bool listening;

	if (fd < 0)
		return false;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	/* a full backlog (EAGAIN) is a listener too; only a refusal means stale */
	listening = connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0 || errno == EAGAIN;
	close(fd);
	return listening;
}

/* Removes a socket nobody listens on; never one a live process serves. */
static int remove_stale_socket(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	if (someone_listens(path))
		return -EADDRINUSE;
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

int grpc_server_listen(struct grpc_server *srv, const char *path)
{
	struct sockaddr_un sun;
	struct stat st;
	int r;

	if (srv->listener_open || srv->closing)
		return -EBUSY;
	if (!path || !*path)
		return -EINVAL;
	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;	/* libuv 1.44 would silently truncate it */
	r = make_parent_dirs(path);
	if (r < 0)
		return r;
	r = remove_stale_socket(path);
	if (r < 0)
		return r;
	srv->path = strdup(path);
	if (!srv->path)
		return -ENOMEM;
	uv_pipe_init(srv->loop, &srv->listener, 0);
	srv->listener.data = srv;
	srv->listener_open = true;
	srv->handles_open++;
	r = uv_pipe_bind(&srv->listener, path);
	if (r == 0 && chmod(path, 0600) < 0)
		r = -errno;
	if (r == 0 && stat(path, &st) < 0)
		r = -errno;
	if (r == 0) {
		srv->sock_dev = st.st_dev;
		srv->sock_ino = st.st_ino;
		r = uv_listen((uv_stream_t *)&srv->listener, 128, server_on_connection);
	}
	if (r < 0) {
		/* Keep the handle; grpc_server_close closes it. Remove a bound file. */
		if (srv->sock_ino)
			unlink(path);
		srv->sock_ino = 0;
		return r;
	}
	return 0;
}

/* ---- shutdown ---- */

static void server_handle_closed(uv_handle_t *handle)
{
	struct grpc_server *srv = handle->data;

	if (--srv->handles_open > 0 || srv->n_conns > 0)
		return;
	if (srv->close_cb)
		srv->close_cb(srv, srv->close_userdata);
	for (size_t i = 0; i < srv->n_methods; i++)
		free(srv->methods[i].path);
	free(srv->methods);
	free(srv->path);
	free(srv);
}

static void server_maybe_finish(struct grpc_server *srv)
{
	if (!srv->closing || srv->n_conns > 0)
		return;
	/* The grace timer closes last, so its callback frees the server. */
	if (!uv_is_closing((uv_handle_t *)&srv->grace_timer))
		uv_close((uv_handle_t *)&srv->grace_timer, server_handle_closed);
}

static void server_grace_expired(uv_timer_t *timer)
{
	struct grpc_server *srv = timer->data;

	for (struct server_conn *sc = srv->conns; sc; sc = sc->next)
		conn_close(sc);
}

static void remove_our_socket(struct grpc_server *srv)
{
	struct stat st;

	if (!srv->path || !srv->sock_ino)
		return;
	/* A successor (rolling update) may have bound the same path since. */
	if (stat(srv->path, &st) == 0 && (uint64_t)st.st_dev == srv->sock_dev &&
	    (uint64_t)st.st_ino == srv->sock_ino)
		unlink(srv->path);
	srv->sock_ino = 0;
}

void grpc_server_close(struct grpc_server *srv, grpc_server_close_cb cb, void *userdata)
{
	if (!srv || srv->closing)
		return;
	srv->closing = true;
	srv->close_cb = cb;
	srv->close_userdata = userdata;
	if (srv->listener_open) {
		remove_our_socket(srv);
		uv_close((uv_handle_t *)&srv->listener, server_handle_closed);
	}
	for (struct server_conn *sc = srv->conns; sc; sc = sc->next) {
		if (sc->core && !sc->closing)
			grpc_conn_shutdown(sc->core);	/* may finish and close at once */
		else
			conn_close(sc);
	}
	if (srv->n_conns > 0)
		uv_timer_start(&srv->grace_timer, server_grace_expired,
			       srv->limits.shutdown_grace_ms, 0);
	server_maybe_finish(srv);
}
