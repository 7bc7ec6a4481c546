/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kubelet plugin registration (pluginregistration.Registration) and the
 * grpc.health.v1 Check service for one DRA driver; see registration.h and
 * kubelet-contract.md sections 1 and 2.3.
 */
#include "agent/kubelet/registration.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/lib/log.h"
#include "proto/kubelet_pb.h"

struct kubelet_endpoint {
	char *driver;
	char *reg_path;
	char *dra_path;
	bool health_service;
	bool registered;
	kubelet_registration_cb on_registration;
	kubelet_health_note_fn health_note;
	void *userdata;
	struct grpc_server *reg_srv;
	struct grpc_server *dra_srv;
	unsigned servers_open;
	void (*close_cb)(void *userdata);
	void *close_userdata;
};

/* DNS-subdomain-like names only: they become file names. */
static bool valid_driver_name(const char *s)
{
	size_t len = s ? strlen(s) : 0;

	if (len == 0 || len > 63 || s[0] == '.' || s[0] == '-' || s[len - 1] == '.' ||
	    s[len - 1] == '-')
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'))
			return false;
	}
	return true;
}

static bool valid_pod_uid(const char *s)
{
	size_t len = strlen(s);

	if (len > 64)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-'))
			return false;
	}
	return true;
}

static int format_path(char *out, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int format_path(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, size, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int kubelet_registration_socket_path(const char *registry_dir, const char *driver,
				     const char *pod_uid, char *out, size_t size)
{
	if (!registry_dir)
		registry_dir = KUBELET_DEFAULT_REGISTRY_DIR;
	if (pod_uid && *pod_uid)
		return format_path(out, size, "%s/%s-%s-reg.sock", registry_dir, driver, pod_uid);
	return format_path(out, size, "%s/%s-reg.sock", registry_dir, driver);
}

int kubelet_dra_socket_path(const char *plugins_dir, const char *driver, const char *pod_uid,
			    char *out, size_t size)
{
	if (!plugins_dir)
		plugins_dir = KUBELET_DEFAULT_PLUGINS_DIR;
	if (pod_uid && *pod_uid)
		return format_path(out, size, "%s/%s/dra-%s.sock", plugins_dir, driver, pod_uid);
	return format_path(out, size, "%s/%s/dra.sock", plugins_dir, driver);
}

/* The kubelet dials PluginInfo.endpoint verbatim: make paths absolute. */
static int absolute_dir(const char *dir, char *out, size_t size)
{
	char cwd[PATH_MAX];

	if (dir[0] == '/')
		return format_path(out, size, "%s", dir);
	if (!getcwd(cwd, sizeof(cwd)))
		return -errno;
	return format_path(out, size, "%s/%s", cwd, dir);
}

/* ---- services ---- */

/* @note: grpc-message of the OK answer (NULL or "": none). */
static void reply_packed_note(struct grpc_call *call, const ProtobufCMessage *msg,
			      const char *note)
{
	size_t len = protobuf_c_message_get_packed_size(msg);
	uint8_t small[512];
	uint8_t *buf = len <= sizeof(small) ? small : malloc(len);

	if (!buf) {
		grpc_call_reply(call, GRPC_STATUS_RESOURCE_EXHAUSTED, NULL, 0, "out of memory");
		return;
	}
	protobuf_c_message_pack(msg, buf);
	grpc_call_reply(call, GRPC_STATUS_OK, buf, len, note);
	if (buf != small)
		free(buf);
}

static void reply_packed(struct grpc_call *call, const ProtobufCMessage *msg)
{
	reply_packed_note(call, msg, NULL);
}

static void handle_get_info(struct grpc_call *call, const uint8_t *req, size_t len, void *ud)
{
	struct kubelet_endpoint *ep = ud;
	reg_plugin_info info = REG_PLUGIN_INFO_INIT;
	char *versions[] = {
		(char *)KUBELET_SERVICE_V1,
		(char *)KUBELET_SERVICE_V1BETA1,
		(char *)KUBELET_SERVICE_HEALTH_V1,	/* 1.37 kubelets pick it */
		(char *)KUBELET_SERVICE_HEALTH_V1ALPHA1,	/* 1.34-1.39; unknown names are skipped */
	};

	(void)req;
	(void)len;	/* InfoRequest is empty; unknown fields are fine */
	info.type = (char *)KUBELET_PLUGIN_TYPE_DRA;
	info.name = ep->driver;
	info.endpoint = ep->dra_path;
	info.supported_versions = versions;
	info.n_supported_versions = ep->health_service ? 4 : 2;
	log_debug("kubelet: GetInfo for driver %s", ep->driver);
	reply_packed(call, &info.base);
}

static void handle_notify(struct grpc_call *call, const uint8_t *req, size_t len, void *ud)
{
	struct kubelet_endpoint *ep = ud;
	reg_status *st = pluginregistration__registration_status__unpack(NULL, len, req);
	reg_status_response resp = PLUGINREGISTRATION__REGISTRATION_STATUS_RESPONSE__INIT;

	if (!st) {
		grpc_call_reply(call, GRPC_STATUS_INTERNAL, NULL, 0,
				"cannot parse RegistrationStatus");
		return;
	}
	ep->registered = st->plugin_registered;
	if (st->plugin_registered) {
		log_info_kv(LOG_KV("driver", ep->driver),
			    "kubelet: registered DRA driver %s (endpoint %s)", ep->driver,
			    ep->dra_path);
	} else {
		const char *why = st->error && *st->error ? st->error : "(no message)";

		log_error_kv(LOG_KV("driver", ep->driver, "err", why),
			     "kubelet: registration of DRA driver %s failed: %s", ep->driver, why);
	}
	if (ep->on_registration)
		ep->on_registration(ep->userdata, ep->driver, st->plugin_registered, st->error);
	if (st->plugin_registered) {
		reply_packed(call, &resp.base);
	} else {
		/* What the Go helper answers: an error carrying the kubelet's text. */
		grpc_call_replyf(call, GRPC_STATUS_UNKNOWN, "failed registration process: %s",
				 st->error ? st->error : "");
	}
	pluginregistration__registration_status__free_unpacked(st, NULL);
}

/* grpc.health.v1.Health/Check for @srv, one of @ep's servers. */
static void health_check(struct kubelet_endpoint *ep, struct grpc_server *srv,
			 struct grpc_call *call, const uint8_t *req, size_t len)
{
	grpc_health_request *hr = grpc__health__v1__health_check_request__unpack(NULL, len, req);
	grpc_health_response resp = GRPC_HEALTH_RESPONSE_INIT;
	char note[512] = "";

	if (!hr) {
		grpc_call_reply(call, GRPC_STATUS_INTERNAL, NULL, 0,
				"cannot parse HealthCheckRequest");
		return;
	}
	if (hr->service[0] && !grpc_server_serves(srv, hr->service)) {
		grpc_call_replyf(call, GRPC_STATUS_NOT_FOUND, "unknown service %.200s",
				 hr->service);
	} else {
		/* still SERVING with a note: a liveness probe must not restart an
		 * agent for what a restart cannot mend */
		resp.status = GRPC_HEALTH_SERVING;
		if (ep->health_note)
			ep->health_note(ep->userdata, note, sizeof(note));
		reply_packed_note(call, &resp.base, note);
	}
	grpc__health__v1__health_check_request__free_unpacked(hr, NULL);
}

static void handle_reg_health_check(struct grpc_call *call, const uint8_t *req, size_t len,
				    void *ud)
{
	struct kubelet_endpoint *ep = ud;

	health_check(ep, ep->reg_srv, call, req, len);
}

static void handle_dra_health_check(struct grpc_call *call, const uint8_t *req, size_t len,
				    void *ud)
{
	struct kubelet_endpoint *ep = ud;

	health_check(ep, ep->dra_srv, call, req, len);
}

/* ---- life cycle ---- */

static void endpoint_free(struct kubelet_endpoint *ep)
{
	free(ep->driver);
	free(ep->reg_path);
	free(ep->dra_path);
	free(ep);
}

static void server_closed(struct grpc_server *srv, void *userdata)
{
	struct kubelet_endpoint *ep = userdata;

	if (srv == ep->reg_srv)
		ep->reg_srv = NULL;
	if (srv == ep->dra_srv) {
		ep->dra_srv = NULL;
		/* the calls are done: now the kubelet may deregister */
		if (ep->reg_srv)
			grpc_server_close(ep->reg_srv, server_closed, ep);
	}
	if (--ep->servers_open > 0)
		return;
	if (ep->close_cb)
		ep->close_cb(ep->close_userdata);
	endpoint_free(ep);
}

void kubelet_endpoint_close(struct kubelet_endpoint *ep, void (*cb)(void *userdata),
			    void *userdata)
{
	if (!ep)
		return;
	ep->close_cb = cb;
	ep->close_userdata = userdata;
	/* The DRA socket first (no new connections; the calls in flight finish
	 * within the grace), the registration socket once it is closed: the
	 * kubelet closes its connection to an instance as soon as that one's
	 * registration socket goes, failing the calls still open on it
	 * (DeRegisterPlugin, k8s.io/kubernetes v1.37.2
	 * pkg/kubelet/cm/dra/plugin/dra_plugin_manager.go). */
	if (ep->dra_srv)
		grpc_server_close(ep->dra_srv, server_closed, ep);
	else if (ep->reg_srv)
		grpc_server_close(ep->reg_srv, server_closed, ep);
	if (ep->servers_open == 0) {
		if (cb)
			cb(userdata);
		endpoint_free(ep);
	}
}

static int new_server(struct kubelet_endpoint *ep, uv_loop_t *loop,
		      const struct kubelet_endpoint_config *cfg, struct grpc_server **slot)
{
	int r = grpc_server_new(loop, cfg->limits, slot);

	if (r < 0)
		return r;
	ep->servers_open++;
	grpc_server_set_metrics(*slot, cfg->metrics);
	return grpc_server_add_method(*slot, KUBELET_PATH_HEALTH_CHECK, GRPC_UNARY,
				      slot == &ep->reg_srv ? handle_reg_health_check
							   : handle_dra_health_check, ep);
}

static void listen_failed(const char *path, const char *flag, int r)
{
	if (r == -EADDRINUSE)
		log_error("kubelet: another process is serving %s (another dralet with the same "
			  "%s?); not replacing its socket: stop that one or give this one its "
			  "own %s", path, flag, flag);
	else
		log_error("kubelet: cannot listen on %s: %s", path, strerror(-r));
}

int kubelet_endpoint_open(uv_loop_t *loop, const struct kubelet_endpoint_config *cfg,
			  struct kubelet_endpoint **ret_ep)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct kubelet_endpoint *ep;
	int r;

	if (!valid_driver_name(cfg->driver)) {
		log_error("kubelet: driver name '%s' is not a DNS subdomain",
			  cfg->driver ? cfg->driver : "");
		return -EINVAL;
	}
	if (cfg->pod_uid && !valid_pod_uid(cfg->pod_uid)) {
		log_error("kubelet: pod UID '%s' is not usable in a socket name", cfg->pod_uid);
		return -EINVAL;
	}
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -ENOMEM;
	ep->health_service = cfg->health_service;
	ep->on_registration = cfg->on_registration;
	ep->health_note = cfg->health_note;
	ep->userdata = cfg->userdata;
	ep->driver = strdup(cfg->driver);
	r = absolute_dir(cfg->plugins_dir ? cfg->plugins_dir : KUBELET_DEFAULT_PLUGINS_DIR, dir,
			 sizeof(dir));
	if (r == 0)
		r = kubelet_dra_socket_path(dir, cfg->driver, cfg->pod_uid, path, sizeof(path));
	if (r == 0 && !(ep->dra_path = strdup(path)))
		r = -ENOMEM;
	if (r == 0)
		r = absolute_dir(cfg->registry_dir ? cfg->registry_dir
						   : KUBELET_DEFAULT_REGISTRY_DIR,
				 dir, sizeof(dir));
	if (r == 0)
		r = kubelet_registration_socket_path(dir, cfg->driver, cfg->pod_uid, path,
						     sizeof(path));
	if (r == 0 && !(ep->reg_path = strdup(path)))
		r = -ENOMEM;
	if (r == 0 && !ep->driver)
		r = -ENOMEM;
	if (r < 0) {
		log_error("kubelet: socket paths for driver %s: %s", cfg->driver, strerror(-r));
		endpoint_free(ep);
		return r;
	}

	/* The DRA server first, like the Go helper. */
	r = new_server(ep, loop, cfg, &ep->dra_srv);
	if (r == 0) {
		r = grpc_server_listen(ep->dra_srv, ep->dra_path);
		if (r < 0)
			listen_failed(ep->dra_path, "--plugins-dir", r);
	}
	if (r == 0)
		r = new_server(ep, loop, cfg, &ep->reg_srv);
	if (r == 0)
		r = grpc_server_add_method(ep->reg_srv, KUBELET_PATH_GET_INFO, GRPC_UNARY,
					   handle_get_info, ep);
	if (r == 0)
		r = grpc_server_add_method(ep->reg_srv, KUBELET_PATH_NOTIFY_REGISTRATION,
					   GRPC_UNARY, handle_notify, ep);
	if (r == 0) {
		r = grpc_server_listen(ep->reg_srv, ep->reg_path);
		if (r < 0)
			listen_failed(ep->reg_path, "--registry-dir", r);
	}
	if (r < 0) {
		kubelet_endpoint_close(ep, NULL, NULL);	/* finishes on the loop */
		return r;
	}
	log_info("kubelet: driver %s serving %s (registration %s)", ep->driver, ep->dra_path,
		 ep->reg_path);
	*ret_ep = ep;
	return 0;
}

struct grpc_server *kubelet_endpoint_dra_server(struct kubelet_endpoint *ep)
{
	return ep->dra_srv;
}

const char *kubelet_endpoint_dra_socket(const struct kubelet_endpoint *ep)
{
	return ep->dra_path;
}

const char *kubelet_endpoint_registration_socket(const struct kubelet_endpoint *ep)
{
	return ep->reg_path;
}

const char *kubelet_endpoint_driver(const struct kubelet_endpoint *ep)
{
	return ep->driver;
}

bool kubelet_endpoint_registered(const struct kubelet_endpoint *ep)
{
	return ep->registered;
}
