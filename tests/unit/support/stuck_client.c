/* SPDX-License-Identifier: Apache-2.0 */
#include "stuck_client.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <nghttp2/nghttp2.h>

struct stuck_client {
	int fd;
	nghttp2_session *session;
};

static ssize_t send_raw(nghttp2_session *s, const uint8_t *data, size_t len, int flags, void *ud)
{
	(void)s;
	(void)flags;
	return write(*(int *)ud, data, len);
}

/* Every request body is one empty message. */
static ssize_t empty_message(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len,
			     uint32_t *flags, nghttp2_data_source *src, void *ud)
{
	(void)s;
	(void)id;
	(void)len;
	(void)src;
	(void)ud;
	memset(buf, 0, 5);
	*flags |= NGHTTP2_DATA_FLAG_EOF;
	return 5;
}

int stuck_client_open(const char *socket_path, const char *grpc_path, unsigned n,
		      struct stuck_client **ret)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stuck_client *c = calloc(1, sizeof(*c));
	nghttp2_session_callbacks *cbs;
	nghttp2_settings_entry iv[] = { { NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, (1u << 31) - 1 } };
#define NV(k, v, vlen) { (uint8_t *)(k), (uint8_t *)(v), sizeof(k) - 1, vlen, 0 }
	nghttp2_nv nv[] = {
		NV(":method", "POST", 4), NV(":scheme", "http", 4),
		NV(":path", grpc_path, strlen(grpc_path)), NV(":authority", "x", 1),
		NV("content-type", "application/grpc", 16),
	};
#undef NV
	nghttp2_data_provider body = { .read_callback = empty_message };
	int r;

	if (!c)
		return -ENOMEM;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", socket_path);
	c->fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		r = -errno;
		stuck_client_close(c);
		return r;
	}
	nghttp2_session_callbacks_new(&cbs);
	nghttp2_session_callbacks_set_send_callback(cbs, send_raw);
	nghttp2_session_client_new(&c->session, cbs, &c->fd);
	nghttp2_session_callbacks_del(cbs);
	nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, iv, 1);
	nghttp2_session_set_local_window_size(c->session, NGHTTP2_FLAG_NONE, 0, 1 << 30);
	for (unsigned i = 0; i < n; i++)
		nghttp2_submit_request(c->session, NULL, nv, sizeof(nv) / sizeof(nv[0]), &body,
				       NULL);
	if ((r = nghttp2_session_send(c->session)) != 0) {
		stuck_client_close(c);
		return r < 0 ? r : -EPROTO;
	}
	*ret = c;
	return 0;
}

void stuck_client_close(struct stuck_client *c)
{
	if (!c)
		return;
	if (c->session)
		nghttp2_session_del(c->session);
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}
