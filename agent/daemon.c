/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/daemon.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "agent/checkpoint/checkpoint_file.h"
#include "agent/claims/dra_service.h"
#include "agent/claims/engine.h"
#include "agent/inventory.h"
#include "agent/kubelet/registration.h"
#include "agent/log.h"
#include "agent/slices/slices.h"
#include "agent/store_open.h"
#include "hal/hal.h"

struct daemon_driver {
	struct daemon *d;
	const char *name;		/* owned by the inventory */
	struct dralet_device **devices;
	size_t n_devices;
	char *state_dir;
	struct claims_engine *engine;
	struct kubelet_endpoint *ep;
};

struct daemon {
	const struct daemon_options *o;
	uv_loop_t loop;
	uv_signal_t sigterm, sigint;
	struct inventory *inv;
	struct store *store;
	struct daemon_driver *drivers;
	size_t n_drivers;
	size_t drivers_open;	/* endpoints not yet closed + engines not yet idle */
	bool stopping;
	char boot_id[128];
};

static void on_registration(void *userdata, const char *driver, bool registered, const char *error)
{
	(void)userdata;
	if (registered)
		log_info("driver %s: registered with the kubelet", driver);
	else
		log_error("driver %s: the kubelet refused the registration: %s", driver,
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
	uv_close((uv_handle_t *)&d->sigterm, NULL);
	uv_close((uv_handle_t *)&d->sigint, NULL);
	d->drivers_open = d->n_drivers + 1;
	for (size_t i = 0; i < d->n_drivers; i++) {
		struct daemon_driver *dd = &d->drivers[i];
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

static int start_driver(struct daemon *d, struct daemon_driver *dd)
{
	const struct daemon_options *o = d->o;
	struct claims_recovery_stats stats;
	struct kubelet_endpoint_config ecfg = {
		.driver = dd->name,
		.registry_dir = o->registry_dir,
		.plugins_dir = o->plugins_dir,
		.pod_uid = o->pod_uid,
		.on_registration = on_registration,
		.userdata = d,
	};
	struct claims_engine_config ccfg = {
		.loop = &d->loop,
		.store = d->store,
		.driver = dd->name,
		.pool = o->node_name,
		.cdi_dir = o->cdi_dir,
		.boot_id = d->boot_id,
		.wait_for_lock = o->pod_uid && *o->pod_uid,
	};
	struct json_object *slices = NULL;
	int r;

	dd->n_devices = inventory_n_devices(d->inv, dd->name);
	dd->devices = calloc(dd->n_devices + 1, sizeof(*dd->devices));
	if (!dd->devices || asprintf(&dd->state_dir, "%s/%s", o->plugins_dir, dd->name) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < dd->n_devices; i++)
		dd->devices[i] = inventory_device(d->inv, dd->name, i);
	ccfg.devices = dd->devices;
	ccfg.n_devices = dd->n_devices;
	ccfg.state_dir = dd->state_dir;
	r = claims_engine_new(&ccfg, &dd->engine, &stats);
	if (r < 0) {
		log_error("driver %s: cannot start its claims engine: %s", dd->name, strerror(-r));
		return r;
	}
	r = kubelet_endpoint_open(&d->loop, &ecfg, &dd->ep);
	if (r < 0)
		return r;
	r = dra_service_register(kubelet_endpoint_dra_server(dd->ep), dd->engine);
	if (r < 0) {
		log_error("driver %s: cannot add the DRA methods: %s", dd->name, strerror(-r));
		return r;
	}
	log_info("driver %s: %zu device(s), checkpoint %s/%s, CDI specs in %s", dd->name,
		 dd->n_devices, dd->state_dir, CHECKPOINT_FILE_NAME, o->cdi_dir);

	/* The ResourceSlices of the driver: the store converges in the background. */
	r = slices_build(d->inv, dd->name, o->node_name, NULL, &o->slice_opts, &slices);
	if (r < 0) {
		log_error("driver %s: cannot build its ResourceSlices: %s", dd->name, strerror(-r));
		return 0;	/* serving prepared claims matters more than publishing */
	}
	r = d->store->ops->publish(d->store, dd->name, slices);
	if (r < 0)
		log_error("driver %s: cannot publish its ResourceSlices: %s", dd->name, strerror(-r));
	json_object_put(slices);
	return 0;
}

static void free_drivers(struct daemon *d)
{
	for (size_t i = 0; i < d->n_drivers; i++) {
		claims_engine_free(d->drivers[i].engine);
		free(d->drivers[i].devices);
		free(d->drivers[i].state_dir);
	}
	free(d->drivers);
}

int daemon_run(const struct daemon_options *o)
{
	struct daemon d = { .o = o };
	struct store_options so = {
		.store_dir = o->store_dir,
		.kubeconfig = o->kubeconfig,
		.node_name = o->node_name,
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
	r = inventory_discover(o->roots, o->cfg, o->reg, &d.inv);
	if (r < 0)
		return 1;
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
		d.drivers[i].name = inventory_driver(d.inv, i);
	}
	for (size_t i = 0; i < d.n_drivers; i++) {
		if (start_driver(&d, &d.drivers[i]) < 0) {
			status = 1;
			break;
		}
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
	inventory_free(d.inv);
	return status;
}
