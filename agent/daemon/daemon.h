/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent daemon (`dralet run`): discovery, then per DRA driver name a
 * claims engine (recovering its checkpoint), the kubelet endpoint
 * (registration socket + DRA socket serving v1 and v1beta1
 * NodePrepareResources/NodeUnprepareResources) and its ResourceSlices
 * handed to the store, and a health monitor (agent/health/monitor.h) whose
 * rounds republish the slices when a device's health changes and feed
 * v1alpha1.DRAResourceHealth/NodeWatchResources on the DRA socket; served
 * on one libuv loop until SIGTERM or SIGINT,
 * then the sockets are removed, calls in flight finish, and it returns.
 * SR-IOV policies (agent/sriov/enforce.h) are applied before the first
 * discovery and whenever they or the PFs change (node watching:
 * agent/daemon/node_watch.h); a change of VFs (or a PCI hot-plug)
 * rediscovers: each driver's new device set (agent/core/device_set.h) is
 * swapped into its engine, health monitor and publishing in one place while
 * idle (no claims call, no health round in flight), and every driver's
 * slices are published again.
 * With a metrics address it serves /metrics, /healthz and /readyz
 * (agent/daemon/metrics_server.h); it is ready once every driver is registered
 * with the kubelet. Every driver's prepared claims are checked against the
 * store now and then and the stale ones unprepared (agent/claims/stale_check.h,
 * agent/daemon/stale_timer.h).
 */
#ifndef DRALET_DAEMON_H
#define DRALET_DAEMON_H

#include "agent/slices/build.h"

struct config;
struct hal_roots;
struct node_ops;
struct registry;

struct daemon_options {
	const struct hal_roots *roots;	/* borrowed, like everything here */
	const struct node_ops *node;	/* what changes the node; NULL: the real one below roots */
	const struct config *cfg;
	const char *config_path;	/* reloaded for its SR-IOV policies; NULL: none */
	const struct registry *reg;
	const char *store_dir;		/* file store; NULL: apiserver */
	const char *kubeconfig;		/* apiserver from a kubeconfig; NULL: in-cluster */
	const char *node_name;		/* node and pool name */
	const char *registry_dir;	/* kubelet plugin registry */
	const char *plugins_dir;	/* <plugins_dir>/<driver>/ holds dra.sock and the checkpoint */
	const char *cdi_dir;
	const char *pod_uid;		/* rolling update socket names; NULL: off */
	const char *metrics_address;	/* /metrics, /healthz, /readyz; NULL: off */
	unsigned stale_claims_interval_s;	/* stale-claim checks (stale_timer.h); 0: off */
	struct slice_options slice_opts;
};

/* Runs until SIGTERM/SIGINT. Returns the process exit status (0 after a
 * clean shutdown, 1 when starting failed). */
int daemon_run(const struct daemon_options *opts);

#endif
