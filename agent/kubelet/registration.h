/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet endpoint of one DRA driver: two gRPC servers on the agent's
 * loop, like the Go helper (k8s.io/dynamic-resource-allocation/kubeletplugin)
 * sets up:
 *
 *   <registry_dir>/<driver>-reg.sock     pluginregistration.Registration
 *                                        (GetInfo, NotifyRegistrationStatus)
 *   <plugins_dir>/<driver>/dra.sock      the DRA service (methods added by
 *                                        the caller: NodePrepareResources ...)
 *
 * With a pod UID (rolling update): <driver>-<uid>-reg.sock and dra-<uid>.sock.
 * Both sockets also answer grpc.health.v1.Health/Check (SERVING, with the
 * config's health note as grpc-message when there is one). GetInfo and Check
 * are answered on the loop at once, whatever else is pending.
 *
 * Use: kubelet_endpoint_open(), then add the DRA methods to
 * kubelet_endpoint_dra_server() before the loop runs again (the kubelet
 * cannot call them earlier: it learns the DRA socket from GetInfo), run the
 * loop, and kubelet_endpoint_close() at shutdown.
 */
#ifndef DRALET_KUBELET_REGISTRATION_H
#define DRALET_KUBELET_REGISTRATION_H

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "agent/kubelet/grpc_server.h"

#define KUBELET_DEFAULT_REGISTRY_DIR "/var/lib/kubelet/plugins_registry"
#define KUBELET_DEFAULT_PLUGINS_DIR "/var/lib/kubelet/plugins"

struct kubelet_endpoint;

/* The kubelet's verdict from NotifyRegistrationStatus (loop thread). */
typedef void (*kubelet_registration_cb)(void *userdata, const char *driver, bool registered,
					const char *error);

/*
 * Loop thread: the driver's health note for grpc.health.v1 Check answers
 * (docs/health.md, "After an unreadable checkpoint"): writes it into @buf,
 * or leaves "" for none. The answer stays SERVING either way; the note
 * goes out as the OK answer's grpc-message.
 */
typedef void (*kubelet_health_note_fn)(void *userdata, char *buf, size_t size);

struct kubelet_endpoint_config {
	const char *driver;		/* DRA driver name, e.g. gpu.example.com (required) */
	const char *registry_dir;	/* NULL: KUBELET_DEFAULT_REGISTRY_DIR */
	const char *plugins_dir;	/* NULL: KUBELET_DEFAULT_PLUGINS_DIR */
	const char *pod_uid;		/* NULL or "": no rolling update */
	/* Advertise "v1.DRAResourceHealth" and "v1alpha1.DRAResourceHealth" (the caller serves
	 * NodeWatchResources on the DRA server). */
	bool health_service;
	const struct grpc_server_limits *limits;	/* NULL: defaults */
	/* both servers' calls by method and code (grpc_metrics.h); borrowed, must
	 * outlive the endpoint; NULL: not counted */
	struct grpc_metrics *metrics;
	kubelet_registration_cb on_registration;	/* optional */
	kubelet_health_note_fn health_note;		/* optional */
	void *userdata;					/* of both */
};

/*
 * Validates the names, creates the directories, starts the DRA server and
 * then the registration server (so the DRA socket exists before the kubelet
 * can learn about it). Everything in @cfg is copied. Returns 0 and
 * *ret_ep, or -EINVAL (driver name or pod UID not usable in a file name),
 * -ENAMETOOLONG (socket path over 107 bytes), or a listen error. Errors are
 * logged with the path.
 */
int kubelet_endpoint_open(uv_loop_t *loop, const struct kubelet_endpoint_config *cfg,
			  struct kubelet_endpoint **ret_ep);

/* The server behind the DRA socket: add NodePrepareResources & co here. */
struct grpc_server *kubelet_endpoint_dra_server(struct kubelet_endpoint *ep);

/* Absolute socket paths (valid until the endpoint is closed). */
const char *kubelet_endpoint_dra_socket(const struct kubelet_endpoint *ep);
const char *kubelet_endpoint_registration_socket(const struct kubelet_endpoint *ep);
const char *kubelet_endpoint_driver(const struct kubelet_endpoint *ep);

/* True after the kubelet accepted the registration (last status wins). */
bool kubelet_endpoint_registered(const struct kubelet_endpoint *ep);

/*
 * Shuts the DRA server down gracefully first (its socket goes at once, the
 * calls in flight finish within the grace), then removes the registration
 * socket (the kubelet deregisters the driver and closes its connection,
 * which would fail calls still open). @cb (may be NULL) runs when both
 * servers are closed; the endpoint is freed right after.
 */
void kubelet_endpoint_close(struct kubelet_endpoint *ep, void (*cb)(void *userdata),
			    void *userdata);

/* The socket file names, for tests and `dralet ctl` defaults: writes
 * "<registry_dir>/<driver>[-<uid>]-reg.sock" / "<plugins_dir>/<driver>/dra[-<uid>].sock"
 * into @out. Returns 0 or -ENAMETOOLONG. */
int kubelet_registration_socket_path(const char *registry_dir, const char *driver,
				     const char *pod_uid, char *out, size_t size);
int kubelet_dra_socket_path(const char *plugins_dir, const char *driver, const char *pod_uid,
			    char *out, size_t size);

#endif
