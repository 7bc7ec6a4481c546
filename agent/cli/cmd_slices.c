/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dralet slices: the ResourceSlices this node would publish, as a v1 List;
 * with --publish it also writes them to a store (file or apiserver) and,
 * with --follow, keeps them there (repairs, SIGHUP re-reads the devices).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

#include "agent/cli/commands.h"
#include "agent/core/config.h"
#include "agent/core/inventory.h"
#include "agent/lib/log.h"
#include "agent/cli/setup.h"
#include "agent/slices/devices_file.h"
#include "agent/slices/gates.h"
#include "agent/slices/slices.h"
#include "agent/slices/sync.h"
#include "agent/kube/store_open.h"
#include "agent/lib/yaml_emit.h"
#include "agent/lib/yaml_load.h"

enum {
	OPT_OUTPUT = OPT_FIRST_COMMAND_OPTION,
	OPT_HELP,
	OPT_NODE_NAME,
	OPT_NODE_UID,
	OPT_DEVICES,
	OPT_PUBLISH,
	OPT_STORE,
	OPT_KUBECONFIG,
	OPT_CONTEXT,
	OPT_SA_DIR,
	OPT_FOLLOW,
	OPT_TIMEOUT,
	OPT_STATS,
	OPT_DEBOUNCE,
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: dralet slices [--board FILE | --sysfs-root DIR --dev-root DIR --proc-root DIR\n"
		"                      | --devices FILE] [--config FILE] [--node-name N] [-o json|yaml]\n"
		"       dralet slices ... --publish [--store DIR | --kubeconfig FILE] [--follow]\n\n"
		"Prints the ResourceSlices the node publishes, as a v1 List (what a fresh\n"
		"publish creates). --publish writes them to a store and waits until it holds\n"
		"exactly them; --follow keeps them there (repairs deletions; SIGHUP reads the\n"
		"devices again) until SIGINT/SIGTERM.\n\n"
		"  -o, --output FORMAT   json (default) or yaml\n"
		"  --node-name N         node and pool name (default $NODE_NAME, else the host name)\n"
		"  --node-uid UID        owner reference UID to print (the stores look it up)\n"
		"  --devices FILE        devices from a file instead of discovery (docs/publishing.md)\n"
		"  --publish             publish to the store below\n"
		"  --store DIR           file store: DIR/resourceslices/<name>.json\n"
		"  --kubeconfig FILE     apiserver from a kubeconfig (default: in-cluster)\n"
		"  --context NAME        kubeconfig context (default: current-context)\n"
		"  --service-account-dir DIR  in-cluster token and CA (default the standard path)\n"
		"  --follow              keep publishing until SIGINT/SIGTERM\n"
		"  --timeout SECONDS     --publish without --follow gives up after this (default 60)\n"
		"  --stats               print request counters as JSON on stderr at exit\n"
		"  --debounce MS         quiet time that merges bursts of changes (default 100)\n"
		SETUP_OPTIONS_HELP);
}

struct run {
	struct setup_options so;
	const char *devices_file, *node_name, *node_uid, *output;
	struct store_options store_opts;
	bool publish, follow, stats;
	unsigned timeout_s;
	struct slice_options slice_opts;
	uv_loop_t loop;
	struct store *store;
	struct json_object *published;	/* driver -> null: the drivers published */
	struct json_object *synced;	/* driver -> generation */
	uv_signal_t sigint, sigterm, sighup;
	uv_timer_t deadline, stopper;
	int exit_code;
	bool stopping;
};

/* Builds driver -> slices from the devices file or from discovery into @ret (empty). */
static int build_desired(struct run *rn, const char *node_uid, struct slice_by_driver *ret)
{
	int r;
	if (rn->devices_file) {
		struct json_object *doc = NULL;
		char err[512];
		size_t len = strlen(rn->devices_file);
		if (len > 5 && !strcmp(rn->devices_file + len - 5, ".json")) {
			/* json-c directly: many times faster than the YAML loader */
			doc = json_object_from_file(rn->devices_file);
			if (!doc) {
				log_error("%s: %s", rn->devices_file, json_util_get_last_err());
				return -EINVAL;
			}
		} else if ((r = yaml_load_file(rn->devices_file, &doc, err, sizeof(err))) < 0) {
			log_error("%s: %s", rn->devices_file, r == -EINVAL ? err : strerror(-r));
			return r;
		}
		r = devices_file_build(doc, rn->node_name, node_uid, &rn->slice_opts, ret);
		json_object_put(doc);
		return r;
	}
	struct setup s;
	struct inventory *inv = NULL;
	if ((r = setup_init(&rn->so, &s)) < 0)
		return r;
	if ((r = inventory_discover(&s.roots, s.cfg, s.reg, &inv)) < 0) {
		setup_teardown(&s);
		return r;
	}
	for (size_t i = 0; i < inventory_n_drivers(inv); i++) {
		const char *driver = inventory_driver(inv, i);
		struct slice_list *slices = NULL;
		r = slices_build(inv, driver, rn->node_name, node_uid, &rn->slice_opts, &slices);
		if (r < 0)
			log_error("slices of %s on node %s: %s", driver, rn->node_name,
				  r == -EINVAL ? "invalid driver or node name" : strerror(-r));
		else
			r = slice_by_driver_add(ret, driver, slices);
		if (r < 0) {
			slice_by_driver_clear(ret);
			break;
		}
	}
	inventory_free(inv);
	setup_teardown(&s);
	return r < 0 ? r : 0;
}

static int print_list(struct run *rn, const struct slice_by_driver *by_driver)
{
	struct json_object *list = json_object_new_object(), *items = json_object_new_array();
	json_object_object_add(list, "apiVersion", json_object_new_string("v1"));
	json_object_object_add(list, "kind", json_object_new_string("List"));
	json_object_object_add(list, "items", items);
	for (size_t k = 0; k < by_driver->n; k++) {
		struct slice_plan *plan = NULL;
		/* What a publish to an empty store creates (pool generation 1). */
		if (slice_plan_compute(NULL, by_driver->lists[k], rn->node_name, 0, &plan) < 0) {
			json_object_put(list);
			return 1;
		}
		for (size_t i = 0; i < plan->n_ops; i++) {
			struct json_object *obj = NULL;
			if (slice_plan_op_object(plan, i, &obj) < 0) {
				slice_plan_free(plan);
				json_object_put(list);
				return 1;
			}
			json_object_array_add(items, obj);
		}
		slice_plan_free(plan);
	}
	if (!strcmp(rn->output, "yaml"))
		yaml_emit(list, stdout);
	else
		printf("%s\n", json_object_to_json_string_ext(list, JSON_C_TO_STRING_PRETTY |
								 JSON_C_TO_STRING_SPACED |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(list);
	return fflush(stdout) == 0 ? 0 : 1;
}

/* ---- --publish ---- */

static void on_closed_walk(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

static void stop(struct run *rn, int code)
{
	if (rn->stopping)
		return;
	rn->stopping = true;
	rn->exit_code = code;
	if (rn->stats && rn->store) {
		struct store_stats st;
		store_get_stats(rn->store, &st);
		fprintf(stderr,
			"{\"requests\": %llu, \"creates\": %llu, \"updates\": %llu, \"deletes\": %llu, "
			"\"lists\": %llu, \"watches\": %llu, \"syncs\": %llu, \"failures\": %llu, "
			"\"tokenReloads\": %llu}\n",
			(unsigned long long)st.requests, (unsigned long long)st.creates,
			(unsigned long long)st.updates, (unsigned long long)st.deletes,
			(unsigned long long)st.lists, (unsigned long long)st.watches,
			(unsigned long long)st.syncs, (unsigned long long)st.failures,
			(unsigned long long)st.token_reloads);
	}
	if (rn->store)
		rn->store->ops->destroy(rn->store);
	rn->store = NULL;
	uv_walk(&rn->loop, on_closed_walk, NULL);
}

static bool all_synced(struct run *rn)
{
	json_object_object_foreach(rn->published, driver, none) {
		(void)none;
		if (!json_object_object_get_ex(rn->synced, driver, NULL))
			return false;
	}
	return true;
}

static void on_stopper(uv_timer_t *t)
{
	stop(t->data, 0);
}

static void on_synced(void *userdata, const char *driver, int64_t generation)
{
	struct run *rn = userdata;
	json_object_object_add(rn->synced, driver, json_object_new_int64(generation));
	if (!rn->follow && all_synced(rn) && !rn->stopping) {
		log_info("all ResourceSlices published");
		/* Not from inside the store's call: stop from the loop. */
		uv_timer_start(&rn->stopper, on_stopper, 0, 0);
	}
}

/* Publishes @by_driver; drivers published before and missing now get none. */
static int publish_all(struct run *rn, struct slice_by_driver *by_driver)
{
	int r = 0;
	json_object_object_foreach(rn->published, old, old_none) {
		(void)old_none;
		struct slice_list *none = NULL;
		if (!slice_by_driver_get(by_driver, old) &&
		    (slice_list_new(&none) < 0 || slice_by_driver_add(by_driver, old, none) < 0))
			return -ENOMEM;
	}
	json_object_put(rn->synced);
	rn->synced = json_object_new_object();
	json_object_put(rn->published);
	rn->published = json_object_new_object();
	for (size_t i = 0; i < by_driver->n; i++)
		json_object_object_add(rn->published, by_driver->drivers[i], NULL);
	for (size_t i = 0; i < by_driver->n; i++) {
		const char *driver = by_driver->drivers[i];
		int e = rn->store->ops->publish(rn->store, driver, by_driver->lists[i]);
		if (e < 0) {
			log_error("publishing the slices of %s: %s", driver, strerror(-e));
			r = e;
		}
	}
	return r;
}

/* The server dropped counters (its DRAPartitionableDevices gate is off):
 * partitions without them would be offered overlapping, so they go. */
static void on_gates_dropped(void *userdata, unsigned gates)
{
	struct run *rn = userdata;
	struct slice_by_driver by_driver = { 0 };

	if (!(gates & SLICE_GATE_PARTITIONABLE) || !rn->slice_opts.partitionable)
		return;
	rn->slice_opts.partitionable = false;
	log_info("publishing again without partitionable devices");
	uv_timer_stop(&rn->stopper);
	if (build_desired(rn, rn->node_uid, &by_driver) == 0)
		publish_all(rn, &by_driver);
	slice_by_driver_clear(&by_driver);
}

static void on_signal(uv_signal_t *h, int signum)
{
	struct run *rn = h->data;
	if (signum == SIGHUP) {
		struct slice_by_driver by_driver = { 0 };
		log_info("SIGHUP: reading the devices again");
		if (build_desired(rn, rn->node_uid, &by_driver) == 0)
			publish_all(rn, &by_driver);
		slice_by_driver_clear(&by_driver);
		return;
	}
	log_info("signal %d: stopping", signum);
	stop(rn, rn->follow ? 0 : 1);
}

static void on_deadline(uv_timer_t *t)
{
	struct run *rn = t->data;
	log_error("the store did not converge within %u s", rn->timeout_s);
	stop(rn, 1);
}

static int publish_and_wait(struct run *rn, struct slice_by_driver *by_driver)
{
	char err[1024];
	int r;
	if ((r = uv_loop_init(&rn->loop)) < 0) {
		log_error("event loop: %s", uv_strerror(r));
		return 1;
	}
	rn->store_opts.node_name = rn->node_name;
	rn->store_opts.on_synced = on_synced;
	rn->store_opts.on_gates_dropped = on_gates_dropped;
	rn->store_opts.userdata = rn;
	rn->published = json_object_new_object();
	rn->synced = json_object_new_object();
	if ((r = store_open(&rn->loop, &rn->store_opts, &rn->store, err, sizeof(err))) < 0) {
		log_error("%s", err);
		json_object_put(rn->published);
		json_object_put(rn->synced);
		uv_loop_close(&rn->loop);
		return 1;
	}
	uv_signal_t *sigs[] = { &rn->sigint, &rn->sigterm, &rn->sighup };
	int nums[] = { SIGINT, SIGTERM, SIGHUP };
	for (size_t i = 0; i < 3; i++) {
		uv_signal_init(&rn->loop, sigs[i]);
		sigs[i]->data = rn;
		uv_signal_start(sigs[i], on_signal, nums[i]);
	}
	uv_timer_init(&rn->loop, &rn->deadline);
	rn->deadline.data = rn;
	uv_timer_init(&rn->loop, &rn->stopper);
	rn->stopper.data = rn;
	if (!rn->follow)
		uv_timer_start(&rn->deadline, on_deadline, (uint64_t)rn->timeout_s * 1000u, 0);
	if (publish_all(rn, by_driver) < 0)
		stop(rn, 1);
	else if (by_driver->n == 0 && !rn->follow)
		uv_timer_start(&rn->stopper, on_stopper, 0, 0);
	uv_run(&rn->loop, UV_RUN_DEFAULT);
	uv_loop_close(&rn->loop);
	json_object_put(rn->published);
	json_object_put(rn->synced);
	return rn->exit_code;
}

int cmd_slices(int argc, char **argv)
{
	static const struct option options[] = {
		SETUP_LONG_OPTIONS,
		{ "output", required_argument, NULL, OPT_OUTPUT },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "node-name", required_argument, NULL, OPT_NODE_NAME },
		{ "node-uid", required_argument, NULL, OPT_NODE_UID },
		{ "devices", required_argument, NULL, OPT_DEVICES },
		{ "publish", no_argument, NULL, OPT_PUBLISH },
		{ "store", required_argument, NULL, OPT_STORE },
		{ "kubeconfig", required_argument, NULL, OPT_KUBECONFIG },
		{ "context", required_argument, NULL, OPT_CONTEXT },
		{ "service-account-dir", required_argument, NULL, OPT_SA_DIR },
		{ "follow", no_argument, NULL, OPT_FOLLOW },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "debounce", required_argument, NULL, OPT_DEBOUNCE },
		{ NULL, 0, NULL, 0 },
	};
	static struct run rn;
	char host[256];
	int opt, r;

	memset(&rn, 0, sizeof(rn));
	rn.output = "json";
	rn.timeout_s = 60;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "o:h", options, NULL)) != -1) {
		r = setup_option(&rn.so, opt, optarg);
		if (r < 0)
			return 2;
		if (r > 0)
			continue;
		switch (opt) {
		case 'o':
		case OPT_OUTPUT: rn.output = optarg; break;
		case OPT_NODE_NAME: rn.node_name = optarg; break;
		case OPT_NODE_UID: rn.node_uid = optarg; break;
		case OPT_DEVICES: rn.devices_file = optarg; break;
		case OPT_PUBLISH: rn.publish = true; break;
		case OPT_STORE: rn.store_opts.store_dir = optarg; break;
		case OPT_KUBECONFIG: rn.store_opts.kubeconfig = optarg; break;
		case OPT_CONTEXT: rn.store_opts.kube_context = optarg; break;
		case OPT_SA_DIR: rn.store_opts.service_account_dir = optarg; break;
		case OPT_FOLLOW: rn.follow = true; break;
		case OPT_STATS: rn.stats = true; break;
		case OPT_TIMEOUT: {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v <= 0 || v > 86400) {
				fprintf(stderr, "dralet: --timeout must be 1 to 86400 seconds\n");
				return 2;
			}
			rn.timeout_s = (unsigned)v;
			break;
		}
		case OPT_DEBOUNCE: {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v <= 0 || v > 60000) {
				fprintf(stderr, "dralet: --debounce must be 1 to 60000 ms\n");
				return 2;
			}
			rn.store_opts.debounce_ms = (uint32_t)v;
			break;
		}
		case 'h':
		case OPT_HELP: usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc || (strcmp(rn.output, "json") && strcmp(rn.output, "yaml")) ||
	    ((rn.follow || rn.store_opts.store_dir || rn.store_opts.kubeconfig) && !rn.publish) ||
	    (rn.devices_file && (rn.so.board || rn.so.sysfs_root || rn.so.dev_root || rn.so.proc_root))) {
		usage(stderr);
		return 2;
	}
	log_setup(rn.so.verbosity, rn.so.log_json);
	if (!rn.node_name && !(rn.node_name = setup_default_node_name(host, sizeof(host)))) {
		fprintf(stderr, "dralet: no node name: use --node-name\n");
		return 2;
	}
	struct config *cfg = NULL;
	char err[1024];
	if ((r = config_load(rn.so.config, &cfg, err, sizeof(err))) < 0) {
		fprintf(stderr, "dralet: %s\n", err);
		return 1;
	}
	r = slice_options_from_config(cfg->root, &rn.slice_opts);
	config_free(cfg);
	if (r < 0) {
		fprintf(stderr, "dralet: %s: featureGates: want true or false\n", rn.so.config);
		return 1;
	}
	struct slice_by_driver by_driver = { 0 };
	if (build_desired(&rn, rn.node_uid, &by_driver) < 0)
		return 1;
	r = rn.publish ? publish_and_wait(&rn, &by_driver) : print_list(&rn, &by_driver);
	slice_by_driver_clear(&by_driver);
	return r;
}
