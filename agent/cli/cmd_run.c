/* SPDX-License-Identifier: Apache-2.0 */
/* dralet run: the agent daemon (agent/daemon/daemon.h). */
#include <errno.h>
#include <getopt.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/claims/crash.h"
#include "agent/cli/commands.h"
#include "agent/core/config.h"
#include "agent/daemon/daemon.h"
#include "agent/daemon/stale_timer.h"
#include "agent/kubelet/registration.h"
#include "agent/lib/log.h"
#include "agent/core/k8s_names.h"
#include "agent/cli/setup.h"

#define DEFAULT_CDI_DIR "/var/run/cdi"
/* libuv's pool runs prepares; its default of 4 would let four slow driver
 * rebinds hold up every other claim. */
#define DEFAULT_WORKER_THREADS "16"

/*
 * A long-running agent with a pool of workers: glibc would give every worker
 * its own malloc arena and keep each arena's peak (a checkpoint of 1,000
 * claims is ~2 MiB of text per write), ~40 MiB in all. Two arenas and a fixed
 * mmap threshold, so large buffers go back to the system when freed, keep
 * the agent near 10 MiB; the workers mostly wait on the kernel, not malloc.
 */
static void limit_malloc_arenas(void)
{
#ifdef __GLIBC__
	mallopt(M_ARENA_MAX, 2);
	mallopt(M_MMAP_THRESHOLD, 64 << 10);
#endif
}

enum {
	OPT_STORE = OPT_FIRST_COMMAND_OPTION,
	OPT_KUBECONFIG,
	OPT_NODE_NAME,
	OPT_REGISTRY_DIR,
	OPT_PLUGINS_DIR,
	OPT_CDI_DIR,
	OPT_POD_UID,
	OPT_METRICS_ADDRESS,
	OPT_STALE_CLAIMS_INTERVAL,
	OPT_HELP,
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: dralet run [--board FILE | --sysfs-root D --dev-root D --proc-root D]\n"
		"                  [--store DIR | --kubeconfig FILE] [options]\n\n"
		"Runs the agent: discovers the node's devices, publishes their ResourceSlices,\n"
		"registers every DRA driver with the kubelet and serves NodePrepareResources /\n"
		"NodeUnprepareResources until SIGTERM or SIGINT.\n\n"
		"options:\n"
		SETUP_OPTIONS_HELP
		"  --store DIR           file store: claims read from DIR/resourceclaims/<ns>/<name>.json\n"
		"                        (or .yaml, .yml), slices written to DIR/resourceslices\n"
		"                        (default: the apiserver)\n"
		"  --kubeconfig FILE     apiserver from a kubeconfig (default: in-cluster)\n"
		"  --node-name N         node and pool name (default $NODE_NAME, else the host name)\n"
		"  --registry-dir D      kubelet plugin registry (default %s)\n"
		"  --plugins-dir D       sockets and checkpoints go to D/<driver>/ (default %s)\n"
		"  --cdi-dir D           CDI spec directory (default %s)\n"
		"  --pod-uid UID         rolling-update socket names (dra-<UID>.sock)\n"
		"  --metrics-address A   serve /metrics, /healthz and /readyz on A (HOST:PORT,\n"
		"                        :PORT for every address; default: off)\n"
		"  --stale-claims-interval S  check the prepared claims against the store every S\n"
		"                        seconds (plus jitter) and unprepare those whose\n"
		"                        ResourceClaim is gone, replaced or no longer allocated\n"
		"                        here (default %u; 0: off)\n",
		KUBELET_DEFAULT_REGISTRY_DIR, KUBELET_DEFAULT_PLUGINS_DIR, DEFAULT_CDI_DIR,
		STALE_TIMER_DEFAULT_INTERVAL_S);
}

/* A whole number of seconds, at most a year. */
static int parse_seconds(const char *text, unsigned *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(text, &end, 10);
	if (!*text || *end || errno || text[0] == '-' || v > 31536000ul)
		return -EINVAL;
	*ret = (unsigned)v;
	return 0;
}

/* A directory the agent writes to: missing (created later) or a directory. */
static bool usable_dir(const char *flag, const char *path)
{
	struct stat st;

	if (stat(path, &st) == 0 ? S_ISDIR(st.st_mode) : errno == ENOENT)
		return true;
	fprintf(stderr, "dralet: %s %s: %s\n", flag, path,
		errno && errno != ENOENT ? strerror(errno) : "not a directory");
	return false;
}

/* Fails fast on what would leave the agent serving while every call fails. */
static bool valid_options(const struct daemon_options *o)
{
	if (!k8s_valid_dns_subdomain(o->node_name, 253)) {
		fprintf(stderr, "dralet: --node-name %s: not a valid node name (a DNS-1123 "
			"subdomain: lower-case letters, digits, '-' and '.', at most 253 "
			"characters; the default comes from $NODE_NAME or the host name)\n",
			o->node_name);
		return false;
	}
	errno = 0;
	return usable_dir("--cdi-dir", o->cdi_dir) &&
	       usable_dir("--plugins-dir", o->plugins_dir) &&
	       usable_dir("--registry-dir", o->registry_dir) &&
	       (!o->store_dir || usable_dir("--store", o->store_dir));
}

int cmd_run(int argc, char **argv)
{
	static const struct option options[] = {
		SETUP_LONG_OPTIONS,
		{ "store", required_argument, NULL, OPT_STORE },
		{ "kubeconfig", required_argument, NULL, OPT_KUBECONFIG },
		{ "node-name", required_argument, NULL, OPT_NODE_NAME },
		{ "registry-dir", required_argument, NULL, OPT_REGISTRY_DIR },
		{ "plugins-dir", required_argument, NULL, OPT_PLUGINS_DIR },
		{ "cdi-dir", required_argument, NULL, OPT_CDI_DIR },
		{ "pod-uid", required_argument, NULL, OPT_POD_UID },
		{ "metrics-address", required_argument, NULL, OPT_METRICS_ADDRESS },
		{ "stale-claims-interval", required_argument, NULL, OPT_STALE_CLAIMS_INTERVAL },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	struct setup_options so = { 0 };
	struct daemon_options o = {
		.registry_dir = KUBELET_DEFAULT_REGISTRY_DIR,
		.plugins_dir = KUBELET_DEFAULT_PLUGINS_DIR,
		.cdi_dir = DEFAULT_CDI_DIR,
		.stale_claims_interval_s = STALE_TIMER_DEFAULT_INTERVAL_S,
	};
	struct setup s;
	char host[256];
	int opt, r;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		r = setup_option(&so, opt, optarg);
		if (r < 0)
			return 2;
		if (r > 0)
			continue;
		switch (opt) {
		case OPT_STORE: o.store_dir = optarg; break;
		case OPT_KUBECONFIG: o.kubeconfig = optarg; break;
		case OPT_NODE_NAME: o.node_name = optarg; break;
		case OPT_REGISTRY_DIR: o.registry_dir = optarg; break;
		case OPT_PLUGINS_DIR: o.plugins_dir = optarg; break;
		case OPT_CDI_DIR: o.cdi_dir = optarg; break;
		case OPT_POD_UID: o.pod_uid = optarg; break;
		case OPT_METRICS_ADDRESS: o.metrics_address = optarg; break;
		case OPT_STALE_CLAIMS_INTERVAL:
			if (parse_seconds(optarg, &o.stale_claims_interval_s) < 0) {
				fprintf(stderr, "dralet: --stale-claims-interval %s: want seconds "
					"(0 to 31536000)\n", optarg);
				return 2;
			}
			break;
		case 'h':
		case OPT_HELP: usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc || (o.store_dir && o.kubeconfig)) {
		usage(stderr);
		return 2;
	}
	if (!o.node_name && !(o.node_name = setup_default_node_name(host, sizeof(host)))) {
		fprintf(stderr, "dralet: no node name: use --node-name\n");
		return 2;
	}
	if (!valid_options(&o))
		return 2;
	setenv("UV_THREADPOOL_SIZE", DEFAULT_WORKER_THREADS, 0);
	limit_malloc_arenas();
	if (setup_init(&so, &s) < 0)
		return 1;
	claims_crash_init();	/* test-only seam, inert without DRALET_CRASH_AT */
	if (slice_options_from_config(s.cfg->root, &o.slice_opts) < 0) {
		fprintf(stderr, "dralet: %s: featureGates: want true or false\n", so.config);
		setup_teardown(&s);
		return 1;
	}
	if (s.board_dir)	/* which board a rollout got (its config may lag) */
		log_info("simulated board %s in %s", so.board ? so.board : s.cfg->simulated_board,
			 s.board_dir);
	o.roots = &s.roots;
	o.node = s.node;	/* --board: the board's kernel model */
	o.cfg = s.cfg;
	s.cfg->state_root = o.plugins_dir;
	o.config_path = so.config;
	o.reg = s.reg;
	r = daemon_run(&o);
	setup_teardown(&s);
	return r;
}
