/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SR-IOV policies in the daemon (`dralet run`): applied at start (before
 * the first discovery, so new VFs are published with it), again on SIGHUP
 * and when the configuration file changes (its directory is watched, so an
 * editor's rename or a ConfigMap's symlink swap count), and when a PCI
 * function appears (a matching PF hot-plugged). PCI hot-plug events (a PF
 * removed with its VFs) rediscover, so removed VFs are withdrawn. After an
 * apply that changed VFs, one rediscovery publishes them (one slice update
 * per driver).
 *
 * Policies only touch the node while no claims call (and no health round)
 * is in flight (the daemon says so through ops.idle); until then the work
 * waits. Refused
 * counts (a VF prepared for a claim) are retried every few seconds, so they
 * take effect once the claim is unprepared.
 *
 * Loop thread only. Logs every outcome once with the PF and the cause.
 */
#ifndef DRALET_SRIOV_AGENT_H
#define DRALET_SRIOV_AGENT_H

#include <stdbool.h>
#include <uv.h>

#include "agent/sriov/apply.h"
#include "agent/sriov/policy.h"

struct hal_roots;
struct hal_scan;
struct sriov_agent;

struct sriov_agent_ops {
	/* No claims call and no health round in flight: the node may change now. */
	bool (*idle)(void *userdata);
	/* The VFs prepared for claims now; -errno (with @err) when unknown,
	 * which stops any change. */
	int (*prepared)(void *userdata, struct sriov_prepared *ret, char *err, size_t errlen);
	/* Rediscover and republish (called only while idle). */
	void (*rediscover)(void *userdata);
	void *userdata;
};

struct sriov_agent_config {
	uv_loop_t *loop;
	const struct hal_roots *roots;	/* borrowed */
	const char *config_path;	/* reloaded and watched; NULL: the policies stay */
	const struct sriov_policies *policies;	/* at start; borrowed until a reload */
	struct sriov_agent_ops ops;
	bool hotplug;			/* watch PCI uevents (off in sandboxes without netlink) */
	unsigned retry_ms;		/* refused counts are retried after this (0: 10 s) */
};

/*
 * Applies @pol once to the node of @scan and logs the outcome (the daemon's
 * start, before the first discovery). *ret_changed tells whether to
 * discover again. Returns 0, or -errno when the prepared VFs are unknown
 * (nothing changed then).
 */
int sriov_agent_apply_once(const struct hal_roots *roots, const struct sriov_policies *pol,
			   const struct hal_scan *scan, const struct sriov_prepared *prep,
			   bool *ret_changed, bool *ret_refused);

/* Starts watching (SIGHUP, the file, uevents) and schedules a first apply. */
int sriov_agent_start(const struct sriov_agent_config *cfg, struct sriov_agent **ret);

/* Closes every handle; the agent frees itself once they are closed. */
void sriov_agent_close(struct sriov_agent *a);

#endif
