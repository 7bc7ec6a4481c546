/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/daemon/daemon.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include <dralet/counters.h>

#include "agent/claims/checkpoint_file.h"
#include "agent/claims/claims_lock.h"
#include "agent/claims/engine.h"
#include "agent/claims/stale_check.h"
#include "agent/core/config.h"
#include "agent/core/device_set.h"
#include "agent/core/inventory.h"
#include "agent/daemon/config_reload.h"
#include "agent/daemon/node_watch.h"
#include "agent/daemon/stale_timer.h"
#include "agent/health/monitor.h"
#include "agent/kube/client.h"
#include "agent/kube/store_open.h"
#include "agent/kubelet/dra_service.h"
#include "agent/kubelet/grpc_frame.h"
#include "agent/kubelet/grpc_metrics.h"
#include "agent/kubelet/health_service.h"
#include "agent/kubelet/registration.h"
#include "agent/lib/log.h"
#include "agent/slices/counters_layout.h"
#include "agent/slices/gates.h"
#include "agent/slices/slices.h"
#include "agent/sriov/enforce.h"
#include "agent/sriov/prepared.h"
#include "agent/daemon/metrics_server.h"
#include "agent/daemon/mhd_loader.h"
#include "hal/hal.h"

/* A refused SR-IOV count is tried again after this. */
#define SRIOV_RETRY_MS 10000
/* An apply that found another dralet's claims operation running is tried
 * again after this. */
#define SRIOV_BUSY_RETRY_MS 200

/* Event reasons about the Node (docs/operations.md, "Events") */
#define DAEMON_EVENT_DEVICE_UNHEALTHY "DeviceUnhealthy"	/* Warning */
#define DAEMON_EVENT_DEVICE_RECOVERED "DeviceRecovered"	/* Normal */

struct daemon_driver {
	struct daemon *d;
	char *name;
	/* the driver's devices of the last discovery it took (the publishing's
	 * reference; the engine and the monitor hold their own) */
	struct device_set *devices;
	char *state_dir;
	struct claims_engine *engine;
	struct stale_check *stale;	/* stale-claim collection; NULL when off */
	struct kubelet_endpoint *ep;
	struct grpc_metrics grpc_metrics;	/* both servers' calls (metrics) */
	struct health_monitor *monitor;	/* closed (and freed by itself) at stop */
	struct health_watch *watch;	/* NodeWatchResources; freed after the loop */
	bool registered;		/* with the kubelet (readiness) */
	bool warned_partitions;		/* partitions left out: said once */
};

struct daemon {
	const struct daemon_options *o;
	uv_loop_t loop;
	uv_signal_t sigterm, sigint;
	struct inventory *inv;		/* until the drivers' device sets take it */
	struct store *store;
	struct daemon_driver *drivers;
	size_t n_drivers;
	struct node_watch *watch;
	struct config_reload *reload;	/* NULL: no configuration file */
	const struct sriov_policies *policies;	/* in force (the start's or a reload's) */
	struct metrics_server *metrics;	/* NULL when off */
	struct stale_timer *stale_timer;	/* NULL when off */
	struct sriov_apply_counts sriov_counts;	/* applies by PF and outcome (metrics) */
	size_t drivers_open;	/* endpoints not yet closed + engines not yet idle */
	bool stopping;
	char boot_id[128];
	/* the options' slice_opts, fitted to the server (on_server_version,
	 * on_gates_dropped) */
	struct slice_options slice_opts;
};

/* The note of the driver's health answers (kubelet_health_note_fn). */
static void health_note(void *userdata, char *buf, size_t size)
{
	struct daemon_driver *dd = userdata;

	if (dd->engine)
		claims_engine_recovery_note(dd->engine, buf, size);
}

static void update_readiness(struct daemon *d);

static void on_registration(void *userdata, const char *driver, bool registered, const char *error)
{
	struct daemon_driver *dd = userdata;

	dd->registered = registered;
	update_readiness(dd->d);
	if (registered)
		log_info_kv(LOG_KV("driver", driver), "driver %s: registered with the kubelet", driver);
	else
		log_error_kv(LOG_KV("driver", driver, "err", error && *error ? error : "(no reason given)"),
			     "driver %s: the kubelet refused the registration: %s", driver,
			     error && *error ? error : "(no reason given)");
}

/* ---- shutdown: endpoints close (calls in flight finish), engines drain, store goes ---- */

static void finish_driver(struct daemon *d)
{
	if (--d->drivers_open)
		return;
	if (d->store) {
		d->store->ops->destroy(d->store);
		d->store = NULL;
	}
}

static void on_engine_idle(void *userdata)
{
	struct daemon_driver *dd = userdata;

	finish_driver(dd->d);
}

static void on_endpoint_closed(void *userdata)
{
	struct daemon_driver *dd = userdata;

	dd->ep = NULL;
	if (dd->engine)
		claims_engine_shutdown(dd->engine, on_engine_idle, dd);
	else
		finish_driver(dd->d);
}

static void stop(struct daemon *d)
{
	if (d->stopping)
		return;
	d->stopping = true;
	metrics_server_stop(d->metrics, NULL, NULL);
	d->metrics = NULL;
	stale_timer_close(d->stale_timer);
	d->stale_timer = NULL;
	node_watch_close(d->watch);
	d->watch = NULL;
	uv_close((uv_handle_t *)&d->sigterm, NULL);
	uv_close((uv_handle_t *)&d->sigint, NULL);
	d->drivers_open = d->n_drivers + 1;
	for (size_t i = 0; i < d->n_drivers; i++) {
		struct daemon_driver *dd = &d->drivers[i];
		/* watch streams never end by themselves: end them before the
		 * server's graceful close waits for calls in flight */
		health_watch_shutdown(dd->watch);
		health_monitor_close(dd->monitor);
		dd->monitor = NULL;
		if (dd->ep)
			kubelet_endpoint_close(dd->ep, on_endpoint_closed, dd);
		else
			on_endpoint_closed(dd);
	}
	finish_driver(d);
}

static void on_signal(uv_signal_t *sig, int signum)
{
	struct daemon *d = sig->data;

	log_info("%s: removing the sockets, finishing calls in flight", strsignal(signum));
	stop(d);
}

/* ---- start ---- */

/* The ResourceSlices of the driver: the store converges in the background. */
/* Partitions (dynamic MIG placements, vfio forms) exist only with
 * counters: where the server has none they are left out, said once per
 * driver (the slices then stay as they are: no write loop). */
static void warn_partitions_left_out(struct daemon *d, struct daemon_driver *dd)
{
	struct dralet_device *const *devs = device_set_devices(dd->devices);
	size_t n = 0;

	if (d->slice_opts.partitionable || dd->warned_partitions)
		return;
	for (size_t i = 0; i < device_set_n(dd->devices); i++)
		n += dralet_device_is_partition(devs[i]);
	if (!n)
		return;
	dd->warned_partitions = true;
	log_warn_kv(LOG_KV("driver", dd->name), "driver %s: %zu partition device%s (dynamic MIG "
		    "placements, vfio forms of GPUs and accelerators) not published: the "
		    "server has no partitionable devices (DRAPartitionableDevices, on by "
		    "default since 1.36)",
		    dd->name, n, n == 1 ? "" : "s");
}

static void publish_driver(struct daemon *d, struct daemon_driver *dd)
{
	const struct daemon_options *o = d->o;
	struct slice_list *slices = NULL;
	int r = slices_build_set(dd->devices, o->node_name, NULL, &d->slice_opts, &slices);

	warn_partitions_left_out(d, dd);
	if (r < 0) {
		log_error_kv(LOG_KV("driver", dd->name, "err", strerror(-r)),
			     "driver %s: cannot build its ResourceSlices: %s", dd->name, strerror(-r));
		return;	/* serving prepared claims matters more than publishing */
	}
	r = d->store->ops->publish(d->store, dd->name, slices);
	if (r < 0)
		log_error_kv(LOG_KV("driver", dd->name, "err", strerror(-r)),
			     "driver %s: cannot publish its ResourceSlices: %s", dd->name, strerror(-r));
	slice_list_unref(slices);
}

static void publish_all(struct daemon *d)
{
	for (size_t i = 0; i < d->n_drivers; i++)
		if (d->drivers[i].devices)
			publish_driver(d, &d->drivers[i]);
}

/* The apiserver's version decides the layout of partitionable devices and
 * whether they are on by default (slices/build.h). */
static void on_server_version(void *userdata, unsigned minor)
{
	struct daemon *d = userdata;
	struct slice_options before = d->slice_opts;

	if (!minor)
		return;	/* not said: the configuration's kubernetesVersion, else the newest */
	slice_options_for_server(&d->slice_opts, minor);
	if (d->slice_opts.partitionable != before.partitionable ||
	    counters_layout_kind(&d->slice_opts) != counters_layout_kind(&before)) {
		log_info("slices: partitionable devices %s for this server",
			 d->slice_opts.partitionable ? "on" : "off");
		publish_all(d);
	}
}

/* The server dropped counters (its DRAPartitionableDevices gate is off):
 * publishing partitions without them would offer overlapping devices, so
 * they go (the store warned once already). */
static void on_gates_dropped(void *userdata, unsigned gates)
{
	struct daemon *d = userdata;

	if (!(gates & SLICE_GATE_PARTITIONABLE) || !d->slice_opts.partitionable)
		return;
	d->slice_opts.partitionable = false;
	d->slice_opts.partitionable_explicit = true;	/* a later version answer keeps it */
	log_info("slices: publishing without partitionable devices");
	publish_all(d);
}

/* Worker thread: a device's health, under its claims-engine device lock. */
static int check_health(void *userdata, struct dralet_device *dev, char *why, size_t why_size)
{
	struct daemon_driver *dd = userdata;

	return claims_engine_check_health(dd->engine, dev, why, why_size);
}

/* After every health round: unhealthy devices get their slice taint, and
 * the kubelet gets the list again (also when nothing changed, so that it
 * never takes a healthy device for a stale one). */
static void on_health_round(void *userdata, bool changed)
{
	struct daemon_driver *dd = userdata;

	if (changed)
		publish_driver(dd->d, dd);
	health_watch_broadcast(dd->watch);
}

/* A device gone unhealthy, or healthy again, told to the cluster: an Event
 * about the Node (docs/operations.md, "Events"). */
static void on_health_change(void *userdata, const struct health_change *c)
{
	struct daemon_driver *dd = userdata;
	char msg[KUBE_EVENT_MESSAGE_MAX + 1];
	bool unhealthy = c->new_health == DRALET_HEALTH_UNHEALTHY;

	if (!unhealthy && !(c->old_health == DRALET_HEALTH_UNHEALTHY &&
			    c->new_health == DRALET_HEALTH_HEALTHY))
		return;
	if (unhealthy)
		snprintf(msg, sizeof(msg), "driver %s: device %s is unhealthy%s%s", dd->name,
			 c->device, c->reason && *c->reason ? ": " : "", c->reason ? c->reason : "");
	else
		snprintf(msg, sizeof(msg), "driver %s: device %s is healthy again", dd->name,
			 c->device);
	dd->d->store->ops->record_event(dd->d->store, NULL, unhealthy ? "Warning" : "Normal",
					unhealthy ? DAEMON_EVENT_DEVICE_UNHEALTHY
						  : DAEMON_EVENT_DEVICE_RECOVERED, msg);
}

static int start_health(struct daemon *d, struct daemon_driver *dd)
{
	struct health_monitor_config hcfg = {
		.loop = &d->loop,
		.driver = dd->name,
		.interval_ms = d->o->cfg->health_interval_s * 1000,
		.check = check_health,
		.on_round = on_health_round,
		.on_change = on_health_change,
		.userdata = dd,
	};
	int r = health_monitor_new(&hcfg, dd->devices, &dd->monitor);

	if (r >= 0)
		/* every round sends the list; three missed rounds make it stale */
		r = health_watch_new(kubelet_endpoint_dra_server(dd->ep), d->o->node_name,
				     health_monitor_table(dd->monitor),
				     3 * (int64_t)(d->o->cfg->health_interval_s ?
						   d->o->cfg->health_interval_s :
						   HEALTH_DEFAULT_INTERVAL_S), &dd->watch);
	if (r < 0)
		log_error_kv(LOG_KV("driver", dd->name, "err", strerror(-r)),
			     "driver %s: cannot start its health monitor: %s", dd->name, strerror(-r));
	return r;
}

/* A prepare or unprepare changed what discovery publishes (an FPGA region
 * now holds another image): discover again once idle, so the slices show it. */
static void node_changed_by_claim(void *userdata)
{
	struct daemon *d = userdata;

	node_watch_rediscover(d->watch);
}

static int start_driver(struct daemon *d, struct daemon_driver *dd)
{
	const struct daemon_options *o = d->o;
	struct claims_recovery_stats stats;
	struct kubelet_endpoint_config ecfg = {
		.driver = dd->name,
		.registry_dir = o->registry_dir,
		.plugins_dir = o->plugins_dir,
		.pod_uid = o->pod_uid,
		.health_service = true,
		.on_registration = on_registration,
		.health_note = health_note,
		.metrics = &dd->grpc_metrics,
		.userdata = dd,
	};
	struct claims_engine_config ccfg = {
		.loop = &d->loop,
		.store = d->store,
		.driver = dd->name,
		.pool = o->node_name,
		.cdi_dir = o->cdi_dir,
		.boot_id = d->boot_id,
		.node_changed = node_changed_by_claim,
		.userdata = d,
	};
	int r;

	if (asprintf(&dd->state_dir, "%s/%s", o->plugins_dir, dd->name) < 0)
		return -ENOMEM;
	ccfg.devices = dd->devices;
	ccfg.state_dir = dd->state_dir;
	r = claims_engine_new(&ccfg, &dd->engine, &stats);
	if (r < 0) {
		log_error_kv(LOG_KV("driver", dd->name, "err", strerror(-r)),
			     "driver %s: cannot start its claims engine: %s", dd->name, strerror(-r));
		return r;
	}
	r = kubelet_endpoint_open(&d->loop, &ecfg, &dd->ep);
	if (r < 0)
		return r;
	r = dra_service_register(kubelet_endpoint_dra_server(dd->ep), dd->engine);
	if (r < 0) {
		log_error_kv(LOG_KV("driver", dd->name, "err", strerror(-r)),
			     "driver %s: cannot add the DRA methods: %s", dd->name, strerror(-r));
		return r;
	}
	if ((r = start_health(d, dd)) < 0)
		return r;
	if (o->stale_claims_interval_s) {
		struct stale_check_config scfg = {
			.engine = dd->engine,
			.store = d->store,
			.driver = dd->name,
			.pool = o->node_name,
			.unreserved_grace_ms = STALE_CHECK_UNRESERVED_GRACE_MS,
		};
		if ((r = stale_check_new(&scfg, &dd->stale)) < 0)
			return r;
	}
	log_info_kv(LOG_KV("driver", dd->name),
		    "driver %s: %zu device(s), checkpoint %s/%s, CDI specs in %s", dd->name,
		    device_set_n(dd->devices), dd->state_dir, CHECKPOINT_FILE_NAME, o->cdi_dir);
	publish_driver(d, dd);
	return 0;
}

/* ---- rediscovery (SR-IOV policies, PCI hot-plug) ---- */

/* No claims call and no health round in flight: the devices may be replaced. */
static bool drivers_idle(void *userdata)
{
	struct daemon *d = userdata;

	for (size_t i = 0; i < d->n_drivers; i++) {
		const struct daemon_driver *dd = &d->drivers[i];
		if ((dd->engine && !claims_engine_idle(dd->engine)) ||
		    (dd->monitor && health_monitor_busy(dd->monitor)))
			return false;
	}
	return true;
}

static int prepared_vfs(void *userdata, struct sriov_prepared *ret, char *err, size_t errlen)
{
	struct daemon *d = userdata;

	for (size_t i = 0; i < d->n_drivers; i++) {
		int r = d->drivers[i].state_dir
		      ? sriov_prepared_load_dir(d->drivers[i].state_dir, ret, err, errlen) : 0;
		if (r < 0)
			return r;
	}
	return 0;
}

/* The one place a driver's devices change: the engine, the health monitor
 * and the publishing take @set (while idle). A driver whose engine cannot
 * take it (out of memory) keeps its old set everywhere. */
static void swap_devices(struct daemon_driver *dd, struct device_set *set)
{
	size_t was = device_set_n(dd->devices), n = device_set_n(set);
	int r;

	if (dd->engine && (r = claims_engine_set_devices(dd->engine, set)) < 0) {
		log_error("driver %s: cannot take the rediscovered devices (%s); it serves "
			  "the devices it had", dd->name, strerror(-r));
		return;
	}
	if (dd->monitor && health_monitor_set_devices(dd->monitor, set) < 0)
		log_error("driver %s: out of memory; its devices' health is checked as before "
			  "the rediscovery", dd->name);
	if (n != was)
		log_info_kv(LOG_KV("driver", dd->name),
			    "driver %s: %zu device(s) after rediscovery (were %zu)", dd->name, n, was);
	device_set_unref(dd->devices);
	dd->devices = device_set_ref(set);
}

/* The device sets of one discovery, one per driver of the daemon, in its
 * order; takes @inv. */
static int sets_of(struct daemon *d, struct inventory *inv, struct device_set **ret_sets)
{
	const char **names = calloc(d->n_drivers + 1, sizeof(*names));
	int r;

	if (!names) {
		inventory_free(inv);
		return -ENOMEM;
	}
	for (size_t i = 0; i < d->n_drivers; i++)
		names[i] = d->drivers[i].name;
	r = device_sets_from_inventory(inv, names, d->n_drivers, ret_sets);
	free(names);
	return r;
}

/* While every engine is idle: a new discovery, its device sets swapped in,
 * every driver's slices published again. */
static void rediscover(struct daemon *d)
{
	struct device_set **sets;
	struct inventory *inv;
	int r;

	if (d->stopping)
		return;
	r = inventory_discover_node(d->o->roots, d->o->node, d->o->cfg, d->o->reg, &inv);
	if (r < 0) {
		log_error("rediscovery failed (%s); the devices published stay", strerror(-r));
		return;
	}
	if (!(sets = calloc(d->n_drivers + 1, sizeof(*sets))) || sets_of(d, inv, sets) < 0) {
		if (!sets)
			inventory_free(inv);
		free(sets);
		log_error("rediscovery: out of memory; the devices published stay");
		return;
	}
	for (size_t i = 0; i < d->n_drivers; i++) {
		swap_devices(&d->drivers[i], sets[i]);
		device_set_unref(sets[i]);
	}
	free(sets);
	for (size_t i = 0; i < d->n_drivers; i++) {
		publish_driver(d, &d->drivers[i]);
		health_watch_broadcast(d->drivers[i].watch);
	}
}

/* Before the first discovery: VFs a policy creates are there when the
 * drivers start (checkpoints on disk tell which VFs claims hold; read under
 * the drivers' claims locks, which the apply holds: a rolling update's other
 * instance prepares nothing meanwhile, and waits for it). */
static int apply_sriov_at_start(struct daemon *d)
{
	const struct sriov_policies *pol = d->o->cfg->sriov;
	size_t n = inventory_n_drivers(d->inv);
	const char **names = calloc(n + 1, sizeof(*names));
	struct sriov_prepared prep = { 0 };
	struct claims_lock **locks = NULL;
	bool changed = false;
	char err[640] = "";
	int r = names ? 0 : -ENOMEM;

	if (!pol || !pol->n || r < 0) {
		free(names);
		return r;
	}
	for (size_t i = 0; i < n; i++)
		names[i] = inventory_driver(d->inv, i);
	r = sriov_prepared_lock_drivers(d->o->plugins_dir, names, n, true, &locks, &prep, err,
					sizeof(err));
	if (r < 0)
		log_error("sriov: not applying the policies at start: cannot tell which VFs are "
			  "prepared for claims: %s", err[0] ? err : strerror(-r));
	else
		r = sriov_enforce(d->o->roots, d->o->node, pol, inventory_scan(d->inv), &prep, NULL,
				  &d->sriov_counts, &changed, NULL);
	claims_locks_free(locks, r < 0 ? 0 : n);
	free(names);
	sriov_prepared_clear(&prep);
	if (r < 0 || !changed)
		return 0;
	inventory_free(d->inv);
	d->inv = NULL;
	return inventory_discover_node(d->o->roots, d->o->node, d->o->cfg, d->o->reg, &d->inv);
}

/* Applies the policies in force (only while idle, so this daemon's engines
 * hold no claims lock); true when VFs changed. Under the drivers' claims
 * locks: while a rolling update's other instance prepares or unprepares,
 * tried again shortly. */
static bool enforce_policies(struct daemon *d)
{
	const char **names = calloc(d->n_drivers + 1, sizeof(*names));
	struct sriov_prepared prep = { 0 };
	struct claims_lock **locks = NULL;
	bool changed = false, refused = false;
	char err[640] = "";
	int r;

	if (!d->policies || !d->policies->n || !names) {
		free(names);
		return false;
	}
	for (size_t i = 0; i < d->n_drivers; i++)
		names[i] = d->drivers[i].name;
	r = sriov_prepared_lock_drivers(d->o->plugins_dir, names, d->n_drivers, false, &locks,
					&prep, err, sizeof(err));
	free(names);
	if (r == -EWOULDBLOCK) {
		log_debug("sriov: another dralet instance is preparing or unpreparing; applying "
			  "the policies in %d ms", SRIOV_BUSY_RETRY_MS);
		node_watch_again(d->watch, SRIOV_BUSY_RETRY_MS);
		return false;
	}
	if (r < 0)
		log_error("sriov: not changing anything: cannot tell which VFs are prepared for "
			  "claims: %s", err[0] ? err : strerror(-r));
	else
		sriov_enforce_node(d->o->roots, d->o->node, d->policies, &prep, d->store, &d->sriov_counts,
				   &changed, &refused);
	claims_locks_free(locks, r < 0 ? 0 : d->n_drivers);
	sriov_prepared_clear(&prep);
	/* takes effect once the claims holding the VFs are unprepared */
	if (refused)
		node_watch_again(d->watch, SRIOV_RETRY_MS);
	return changed;
}

/* node_watch's question, while idle: are all of @addresses held by claims
 * the checkpoints know (in any state), so that their driver and class-device
 * changes are the claims' own? When the checkpoints cannot be read, no. */
static bool functions_claimed(void *userdata, const char *const *addresses, size_t n)
{
	struct daemon *d = userdata;
	struct sriov_prepared prep = { 0 };
	char err[640] = "";
	bool all = prepared_vfs(d, &prep, err, sizeof(err)) >= 0;

	for (size_t i = 0; all && i < n; i++)
		all = sriov_prepared_find(&prep, addresses[i]) != NULL;
	sriov_prepared_clear(&prep);
	return all;
}

/* What node watching saw (node_watch.h), while idle: the SR-IOV policies
 * applied when they or the PCI functions changed, then one rediscovery when
 * VFs or functions came or went. */
static void on_node_changed(void *userdata, const struct node_change *c)
{
	struct daemon *d = userdata;
	struct node_response plan = node_watch_plan(c, d->reload != NULL);
	bool changed = false;

	if (plan.reload && config_reload_run(d->reload, plan.force_reload, &d->policies))
		plan.apply = true;
	if (plan.apply)
		changed = enforce_policies(d);
	if (changed || plan.rediscover) {
		rediscover(d);
		if (changed)	/* the events our own writes caused */
			node_watch_drop_uevents(d->watch);
	}
}

/* ---- stale claims (stale_check.h, stale_timer.h) ---- */

static void stale_round(void *userdata)
{
	struct daemon *d = userdata;

	for (size_t i = 0; !d->stopping && i < d->n_drivers; i++)
		if (d->drivers[i].stale)
			stale_check_run(d->drivers[i].stale, NULL, NULL);	/* -EBUSY: running */
}

static void start_stale_timer(struct daemon *d)
{
	struct stale_timer_config tc = {
		.loop = &d->loop,
		.interval_s = d->o->stale_claims_interval_s,
		.round = stale_round,
		.userdata = d,
		.seed = (unsigned)time(NULL) ^ ((unsigned)getpid() << 16),
	};
	int r;

	if (!tc.interval_s || !d->n_drivers)
		return;
	if ((r = stale_timer_start(&tc, &d->stale_timer)) < 0)
		log_error("cannot start the stale-claim checks: %s", strerror(-r));
}

static void start_node_watch(struct daemon *d)
{
	struct node_watch_config wc = {
		.loop = &d->loop,
		.config_path = d->o->config_path,
		.hotplug = hal_uevent_describes(d->o->roots),
		.idle = drivers_idle,
		.claimed = functions_claimed,
		.changed = on_node_changed,
		.userdata = d,
	};
	int r = 0;

	if (wc.hotplug)
		wc.dev_root = d->o->roots->dev;
	d->policies = d->o->cfg->sriov;
	if (d->o->config_path)
		r = config_reload_new(d->o->config_path, &d->reload);
	if (r >= 0)
		r = node_watch_start(&wc, &d->watch);
	if (r < 0) {
		log_error("sriov: cannot watch for policy changes: %s", strerror(-r));
		return;
	}
	/* a second look once the claims engines have recovered their checkpoints */
	node_watch_again(d->watch, 0);
}

/* The first discovery's device sets, one per driver: they take the inventory. */
static int alloc_device_sets(struct daemon *d)
{
	struct device_set **sets = calloc(d->n_drivers + 1, sizeof(*sets));
	struct inventory *inv = d->inv;
	int r;

	if (!sets)
		return -ENOMEM;
	d->inv = NULL;
	r = sets_of(d, inv, sets);
	for (size_t i = 0; r >= 0 && i < d->n_drivers; i++)
		d->drivers[i].devices = sets[i];
	free(sets);
	return r;
}

static void free_drivers(struct daemon *d)
{
	for (size_t i = 0; i < d->n_drivers; i++) {
		stale_check_free(d->drivers[i].stale);
		grpc_metrics_clear(&d->drivers[i].grpc_metrics);
		claims_engine_free(d->drivers[i].engine);
		health_watch_free(d->drivers[i].watch);
		device_set_unref(d->drivers[i].devices);
		free(d->drivers[i].state_dir);
		free(d->drivers[i].name);
	}
	free(d->drivers);
}

/* ---- the operator's endpoint (metrics_server.h; docs/operations.md) ---- */

static void update_readiness(struct daemon *d)
{
	char why[256];

	if (!d->metrics)
		return;
	for (size_t i = 0; i < d->n_drivers; i++)
		if (!d->drivers[i].registered) {
			snprintf(why, sizeof(why), "driver %s is not registered with the kubelet",
				 d->drivers[i].name);
			metrics_server_set_ready(d->metrics, false, why);
			return;
		}
	metrics_server_set_ready(d->metrics, true, NULL);
}

static void collect_stale_metrics(struct daemon *d, struct prom_buf *b);
static void collect_io_metrics(struct daemon *d, struct prom_buf *b);

static void collect_metrics(void *userdata, struct prom_buf *b)
{
	static const char *const health_names[] = { "unknown", "healthy", "unhealthy" };
	struct daemon *d = userdata;
	const char *info[] = { "version", DRALET_VERSION, "node", d->o->node_name, NULL };

	prom_family(b, "dralet_build_info", "gauge", "The agent's version and node.");
	prom_sample(b, "dralet_build_info", info, 1);
	prom_family(b, "dralet_driver_registered", "gauge",
		    "1 when the DRA driver is registered with the kubelet.");
	for (size_t i = 0; i < d->n_drivers; i++) {
		const char *l[] = { "driver", d->drivers[i].name, NULL };
		prom_sample(b, "dralet_driver_registered", l, d->drivers[i].registered);
	}
	prom_family(b, "dralet_devices", "gauge", "Published devices by driver and health.");
	for (size_t i = 0; i < d->n_drivers; i++) {
		const struct daemon_driver *dd = &d->drivers[i];
		size_t n[3] = { 0 };

		size_t n_devices = dd->devices ? device_set_n(dd->devices) : 0;
		struct dralet_device *const *devices = n_devices ? device_set_devices(dd->devices) : NULL;

		for (size_t k = 0; k < n_devices; k++) {
			enum dralet_health h = dralet_device_health(devices[k]);
			n[h <= DRALET_HEALTH_UNHEALTHY ? h : DRALET_HEALTH_UNKNOWN]++;
		}
		for (size_t h = 0; h < 3; h++) {
			const char *l[] = { "driver", dd->name, "health", health_names[h], NULL };
			prom_sample(b, "dralet_devices", l, (double)n[h]);
		}
	}
	prom_family(b, "dralet_prepared_claims", "gauge", "Claims prepared on this node.");
	for (size_t i = 0; i < d->n_drivers; i++) {
		const char *l[] = { "driver", d->drivers[i].name, NULL };
		if (d->drivers[i].engine)
			prom_sample(b, "dralet_prepared_claims", l,
				    (double)claims_engine_n_claims(d->drivers[i].engine));
	}
	prom_family(b, "dralet_claim_prepare_seconds", "histogram",
		    "Time from the kubelet's NodePrepareResources to the claim's answer.");
	for (size_t i = 0; i < d->n_drivers; i++) {
		const char *l[] = { "driver", d->drivers[i].name, NULL };
		if (d->drivers[i].engine)
			prom_histogram_write(b, "dralet_claim_prepare_seconds", l,
					     &claims_engine_metrics(d->drivers[i].engine)->prepare_seconds);
	}
	prom_family(b, "dralet_claim_unprepare_seconds", "histogram",
		    "Time from the kubelet's NodeUnprepareResources to the claim's answer.");
	for (size_t i = 0; i < d->n_drivers; i++) {
		const char *l[] = { "driver", d->drivers[i].name, NULL };
		if (d->drivers[i].engine)
			prom_histogram_write(b, "dralet_claim_unprepare_seconds", l,
					     &claims_engine_metrics(d->drivers[i].engine)->unprepare_seconds);
	}
	prom_family(b, "dralet_claim_failures_total", "counter",
		    "Claims whose prepare or unprepare failed, by operation.");
	for (size_t i = 0; i < d->n_drivers; i++) {
		const struct claims_engine_metrics *m;
		if (!d->drivers[i].engine)
			continue;
		m = claims_engine_metrics(d->drivers[i].engine);
		const char *p[] = { "driver", d->drivers[i].name, "operation", "prepare", NULL };
		const char *u[] = { "driver", d->drivers[i].name, "operation", "unprepare", NULL };
		prom_sample(b, "dralet_claim_failures_total", p, (double)m->prepares_failed);
		prom_sample(b, "dralet_claim_failures_total", u, (double)m->unprepares_failed);
	}
	collect_stale_metrics(d, b);
	collect_io_metrics(d, b);
}

/* dralet_stale_claims_collected_total{driver, reason} (stale_check.h) */
static void collect_stale_metrics(struct daemon *d, struct prom_buf *b)
{
	static const char *const name = "dralet_stale_claims_collected_total";

	prom_family(b, name, "counter",
		    "Prepared claims unprepared because their ResourceClaim is gone, replaced, "
		    "no longer allocated here or reserved for nobody, by reason.");
	for (size_t i = 0; i < d->n_drivers; i++) {
		const struct stale_check_metrics *m;

		if (!d->drivers[i].stale)
			continue;
		m = stale_check_metrics(d->drivers[i].stale);
		for (int v = 0; v <= STALE_UNRESERVED; v++) {
			const char *l[] = { "driver", d->drivers[i].name, "reason",
					    stale_verdict_name((enum stale_verdict)v), NULL };
			if (stale_verdict_collects((enum stale_verdict)v))
				prom_sample(b, name, l, (double)m->collected[v]);
		}
	}
}

/* The calls, writes and requests made (counted where they happen, on the loop
 * thread, except the checkpoint writes: a copy taken under the state's lock). */
static void collect_io_metrics(struct daemon *d, struct prom_buf *b)
{
	static const char *const slice_ops[] = { "delete", "update", "create" };
	struct store_stats st;
	char code[8];

	prom_family(b, "dralet_grpc_calls_total", "counter",
		    "gRPC calls served on the driver's sockets (registration and DRA), by method "
		    "and status code.");
	for (size_t i = 0; i < d->n_drivers; i++) {
		const struct grpc_metrics *m = &d->drivers[i].grpc_metrics;

		for (size_t k = 0; k < m->n; k++)
			for (int c = 0; c < GRPC_METRICS_N_CODES; c++) {
				const char *l[] = { "driver", d->drivers[i].name, "method",
						    m->methods[k].method, "code",
						    grpc_status_name(c), NULL };
				if (m->methods[k].by_code[c])
					prom_sample(b, "dralet_grpc_calls_total", l,
						    (double)m->methods[k].by_code[c]);
			}
	}
	prom_family(b, "dralet_checkpoint_write_seconds", "histogram",
		    "Time to write a driver's checkpoint durably (temporary file to renamed and "
		    "synced).");
	for (size_t i = 0; i < d->n_drivers; i++) {
		const char *l[] = { "driver", d->drivers[i].name, NULL };
		struct prom_histogram h;

		if (!d->drivers[i].engine)
			continue;
		claims_engine_checkpoint_write_seconds(d->drivers[i].engine, &h);
		prom_histogram_write(b, "dralet_checkpoint_write_seconds", l, &h);
	}
	store_get_stats(d->store, &st);
	prom_family(b, "dralet_slice_writes_total", "counter",
		    "ResourceSlice writes by operation and result.");
	for (int op = 0; op < 3; op++)
		for (int r = 0; r < STORE_N_WRITE_RESULTS; r++) {
			const char *l[] = { "operation", slice_ops[op], "result",
					    store_write_result_name(r), NULL };
			prom_sample(b, "dralet_slice_writes_total", l, (double)st.slice_writes[op][r]);
		}
	prom_family(b, "dralet_apiserver_requests_total", "counter",
		    "Requests to the kube-apiserver (every try), by verb and HTTP status (0: no "
		    "answer).");
	for (int v = 0; st.requests_by && v < KUBE_N_VERBS; v++)
		for (int s = 0; s < KUBE_MAX_STATUS; s++) {
			const char *l[] = { "verb", kube_verb_name(v), "code", code, NULL };

			if (!st.requests_by->by_verb_status[v][s])
				continue;
			snprintf(code, sizeof(code), "%d", s);
			prom_sample(b, "dralet_apiserver_requests_total", l,
				    (double)st.requests_by->by_verb_status[v][s]);
		}
	prom_family(b, "dralet_sriov_applies_total", "counter",
		    "SR-IOV policy applies by PF and result.");
	for (size_t i = 0; i < d->sriov_counts.n; i++)
		for (int o = 0; o <= SRIOV_PF_FAILED; o++) {
			const char *l[] = { "pf", d->sriov_counts.pfs[i].pf, "result",
					    sriov_pf_outcome_name(o), NULL };
			prom_sample(b, "dralet_sriov_applies_total", l,
				    (double)d->sriov_counts.pfs[i].by_outcome[o]);
		}
}

static void on_metrics_listening(void *userdata, unsigned port)
{
	struct daemon *d = userdata;

	log_info("serving /metrics, /healthz and /readyz on %s (port %u)", d->o->metrics_address,
		 port);
}

/* Serving before the drivers start: a startup probe sees the agent alive
 * during the recovery (which may wait for an operation of a rolling update's
 * other instance). */
static int start_metrics(struct daemon *d)
{
	struct metrics_server_config mc = {
		.loop = &d->loop,
		.address = d->o->metrics_address,
		.collect = collect_metrics,
		.on_listening = on_metrics_listening,
		.userdata = d,
	};
	char err[256];
	int r;

	if (!d->o->metrics_address)
		return 0;
	if ((r = mhd_loader_load(err, sizeof(err))) < 0) {
		log_error("cannot serve metrics on %s: %s", d->o->metrics_address, err);
		return r;
	}
	if ((r = metrics_server_start(&mc, &d->metrics)) < 0) {
		log_error("cannot serve metrics on %s: %s", d->o->metrics_address,
			  r == -EINVAL ? "not HOST:PORT or :PORT" : strerror(-r));
		return r;
	}
	metrics_server_set_ready(d->metrics, false, "starting");
	if (!metrics_server_port(d->metrics))
		log_warn("%s is taken (by the previous instance of a rolling update, on the "
			 "node's network?): it answers the probes until it exits; serving there "
			 "once it is free", d->o->metrics_address);
	return 0;
}

int daemon_run(const struct daemon_options *o)
{
	struct daemon d = { .o = o, .slice_opts = o->slice_opts };
	struct store_options so = {
		.store_dir = o->store_dir,
		.kubeconfig = o->kubeconfig,
		.node_name = o->node_name,
		.on_server_version = on_server_version,
		.on_gates_dropped = on_gates_dropped,
		.userdata = &d,
	};
	char err[1024];
	int r, status = 0;

	signal(SIGPIPE, SIG_IGN);
	r = checkpoint_boot_id(o->roots->proc, d.boot_id, sizeof(d.boot_id));
	if (r < 0) {
		log_warn("cannot read the boot ID below %s (%s): reboots cannot be told from "
			 "restarts", o->roots->proc, strerror(-r));
		d.boot_id[0] = '\0';
	}
	r = inventory_discover_node(o->roots, o->node, o->cfg, o->reg, &d.inv);
	if (r >= 0)
		r = apply_sriov_at_start(&d);
	if (r < 0) {
		inventory_free(d.inv);
		return 1;
	}
	if ((r = uv_loop_init(&d.loop)) < 0) {
		log_error("cannot start the event loop: %s", uv_strerror(r));
		inventory_free(d.inv);
		return 1;
	}
	r = store_open(&d.loop, &so, &d.store, err, sizeof(err));
	if (r < 0) {
		log_error("cannot open the store: %s", err);
		status = 1;
		goto out;
	}
	d.n_drivers = inventory_n_drivers(d.inv);
	d.drivers = calloc(d.n_drivers + 1, sizeof(*d.drivers));
	if (!d.drivers) {
		status = 1;
		goto out;
	}
	/* before any socket exists: a SIGTERM must always mean a clean stop */
	uv_signal_init(&d.loop, &d.sigterm);
	uv_signal_init(&d.loop, &d.sigint);
	d.sigterm.data = d.sigint.data = &d;
	uv_signal_start(&d.sigterm, on_signal, SIGTERM);
	uv_signal_start(&d.sigint, on_signal, SIGINT);
	if (!d.n_drivers)
		log_warn("no device and no enabled backend: nothing to register; waiting for a signal");
	for (size_t i = 0; i < d.n_drivers; i++) {
		d.drivers[i].d = &d;
		if (!(d.drivers[i].name = strdup(inventory_driver(d.inv, i))))
			status = 1;
	}
	if (!status && ((r = alloc_device_sets(&d)) < 0 || start_metrics(&d) < 0))
		status = 1;
	for (size_t i = 0; !status && i < d.n_drivers; i++) {
		if (start_driver(&d, &d.drivers[i]) < 0) {
			status = 1;
			break;
		}
	}
	if (!status) {
		start_node_watch(&d);
		start_stale_timer(&d);
		update_readiness(&d);
	}
	if (status)
		stop(&d);
	else
		log_info("dralet %s serving %zu driver(s) on node %s", DRALET_VERSION, d.n_drivers,
			 o->node_name);
	uv_run(&d.loop, UV_RUN_DEFAULT);
	if (!status)
		log_info("stopped");
out:
	if (d.store && !d.stopping) {
		d.store->ops->destroy(d.store);
		d.store = NULL;
		uv_run(&d.loop, UV_RUN_DEFAULT);
	}
	if (uv_loop_close(&d.loop) == UV_EBUSY)
		log_warn("event loop handles left open at exit");
	free_drivers(&d);
	sriov_apply_counts_clear(&d.sriov_counts);
	inventory_free(d.inv);
	config_reload_free(d.reload);
	return status;
}
