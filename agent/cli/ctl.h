/* SPDX-License-Identifier: Apache-2.0 */
/* dralet ctl: what its subcommands share (agent/cli/cmd_ctl.c, agent/cli/ctl_bench.c). */
#ifndef DRALET_CTL_H
#define DRALET_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#define MAX_CLAIMS 1024

/* A claim reference as the kubelet sends it; strings borrowed. */
struct ctl_claim {
	const char *namespace_;
	const char *uid;
	const char *name;
};

/* Fills @claims (room for MAX_CLAIMS) from a ResourceClaim, a List or an
 * array of them (strings borrowed from @root). -EINVAL when one lacks
 * metadata.namespace/name/uid, -E2BIG beyond MAX_CLAIMS. */
int ctl_load_claims(struct json_object *root, struct ctl_claim *claims, size_t *ret_n);

struct ctl_opts {
	const char *socket;
	const char *service;
	const char *claim_file;
	const char *api;
	struct ctl_claim flag_claim;
	int timeout_ms;
	bool timeout_given;	/* --timeout on the command line */
	int count;		/* watch-health: messages to print (0: until the end) */
	int concurrency;	/* bench: workers (default 1) */
	int rounds;		/* bench: rounds over the claims (default 1) */
	bool null_calls;	/* bench: empty prepares instead of claims */
};

/*
 * dralet ctl bench: NodePrepareResources + NodeUnprepareResources latency and
 * throughput over the socket, one claim per call, or the latency of an empty
 * prepare (--null: the floor any call pays). Each of --concurrency workers
 * has its own connection and its own share of the claims in --claim (a List);
 * --rounds repeats. Prints one JSON object with percentiles and pairs/s.
 */
int ctl_bench(const struct ctl_opts *o);

/*
 * dralet ctl watch-health: NodeWatchResources on a DRA socket; prints each
 * message (the driver's complete device health list) as one JSON line, the
 * first --count of them (0: until the stream ends or --timeout passes).
 * Exit status 0 when the messages asked for arrived.
 */
int ctl_watch_health(const struct ctl_opts *o);

#endif
