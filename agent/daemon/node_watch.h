/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Node watching for the daemon: what changed on the node or in its
 * configuration, handed over as one struct node_change once the daemon is
 * idle (no claims call, no health round in flight), so the handler may
 * change the node and replace the devices.
 *
 * Triggers: SIGHUP (at once); the configuration file (its directory is
 * watched, so an editor's rename or a ConfigMap's ..data symlink swap
 * count; debounced 200 ms); uevents (hal/uevent.h, debounced 500 ms, so a
 * burst is one change, node_watch_event says which count); NVIDIA device
 * nodes appearing in the dev root (nvidia-modprobe makes them without a
 * uevent); and node_watch_again (the daemon's own "look again", e.g. a
 * refused SR-IOV count). Changes that arrive while the daemon is busy add
 * up and are handed over together.
 *
 * A driver bound or unbound, or a class device added or removed, on a PCI
 * function that a prepared claim holds is the claim's own doing (a VF
 * rebound to vfio-pci at prepare): it is dropped at hand-over when the
 * daemon says so (node_watch_config.claimed), so a prepare does not make
 * the devices be discovered and published again.
 *
 * The watcher does not read the configuration or the node itself: the
 * handler does (agent/daemon/config_reload.h, agent/sriov/enforce.h,
 * rediscovery).
 *
 * Loop thread only.
 */
#ifndef DRALET_DAEMON_NODE_WATCH_H
#define DRALET_DAEMON_NODE_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "hal/uevent.h"

struct node_watch;

struct node_change {
	bool config;		/* the configuration file changed, or SIGHUP */
	bool sighup;		/* SIGHUP: read the file again even if it looks unchanged */
	bool pci_added;		/* a PCI function appeared */
	bool pci_removed;	/* a PCI function went */
	/* a driver bound or unbound, a class device (netdev, RDMA, DRM, accel,
	 * FPGA) or a module came or went, an NVIDIA device node appeared */
	bool devices_changed;
	bool again;		/* node_watch_again's time came */
};

/* Pure: what the uevent @ev (action, subsystem, pci_address) changes, added
 * to @c; a change on a PCI function is also returned in @ret_address (the
 * address, "" when the change is not a function's) so that the hand-over can
 * drop the claims' own. False when the event changes nothing dralet
 * publishes: another action, a virtual netdev (a pod's veth). */
bool node_watch_event(const struct hal_uevent *ev, struct node_change *c,
		      const char **ret_address);

/* What the daemon does about a change (node_watch_plan). */
struct node_response {
	bool reload;		/* read the configuration file again ... */
	bool force_reload;	/* ... even when it reads the same (SIGHUP) */
	bool apply;		/* apply the SR-IOV policies (also when a reload brings new ones) */
	bool rediscover;	/* rediscover (also when applying changed VFs) */
};

/* Pure: the response to @c; @have_file: the daemon has a configuration
 * file (SIGHUP without one applies the policies in force). */
struct node_response node_watch_plan(const struct node_change *c, bool have_file);

struct node_watch_config {
	uv_loop_t *loop;
	const char *config_path;	/* watched (copied); NULL: SIGHUP only */
	bool hotplug;			/* watch uevents (off for a simulated node) */
	const char *dev_root;		/* watched for NVIDIA nodes with hotplug; may be NULL */
	/* No claims call and no health round in flight: changes are handed over only then. */
	bool (*idle)(void *userdata);
	/* Whether every one of the @n PCI functions whose driver or class devices
	 * changed is held by a prepared claim (the change is the claim's own);
	 * called while idle. NULL: none is. */
	bool (*claimed)(void *userdata, const char *const *addresses, size_t n);
	/* What changed since the last call (never all false). */
	void (*changed)(void *userdata, const struct node_change *c);
	void *userdata;
};

/* Starts watching. 0, or -ENOMEM. A watch that cannot start (no netlink,
 * no inotify) is logged and left out; SIGHUP always works. */
int node_watch_start(const struct node_watch_config *cfg, struct node_watch **ret_watch);

/* Hands over a change with .devices_changed set as soon as the daemon is idle:
 * the daemon's own work changed the node (a claim programmed an FPGA).
 * Accepts NULL (not watching yet). */
void node_watch_rediscover(struct node_watch *w);

/* Hands over a change with .again set in @ms (or earlier, with another change). */
void node_watch_again(struct node_watch *w, unsigned ms);

/* Drops the uevents queued now: those the daemon's own writes caused
 * (covered by the rediscovery it has just done). */
void node_watch_drop_uevents(struct node_watch *w);

/* Closes every handle; no callback runs after this; the watcher frees
 * itself once the handles are closed (the loop must run). Accepts NULL. */
void node_watch_close(struct node_watch *w);

#endif
