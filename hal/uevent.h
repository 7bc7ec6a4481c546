/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hot-plug events: a libudev monitor on the kernel's uevent netlink group
 * (which works without udevd, in containers too), filtered to the subsystems
 * that change what dralet publishes. The agent polls the fd on its loop and
 * rediscovers, debounced, when something relevant happened.
 */
#ifndef DRALET_HAL_UEVENT_H
#define DRALET_HAL_UEVENT_H

#include <stdbool.h>

struct hal_uevent_monitor;

struct hal_uevent {
	const char *action;	/* "add", "remove", "change", "bind", "unbind" ... */
	const char *subsystem;	/* "pci", "net", "infiniband" ... */
	const char *sysname;	/* "0000:3b:00.0", "eth0" */
};

/* Opens the monitor. Returns 0 or -errno (e.g. -EPERM in a sandbox without
 * netlink). */
int hal_uevent_open(struct hal_uevent_monitor **ret_mon);
void hal_uevent_close(struct hal_uevent_monitor *mon);

/* A non-blocking fd that becomes readable when events are queued. */
int hal_uevent_fd(const struct hal_uevent_monitor *mon);

/*
 * Reads every queued event, calling @fn for each relevant one (the strings
 * are valid during the call). Returns the number of relevant events, or
 * -errno. Filtered-out messages are skipped (libudev returns NULL for them;
 * that is not an error).
 */
int hal_uevent_drain(struct hal_uevent_monitor *mon,
		     void (*fn)(void *userdata, const struct hal_uevent *ev), void *userdata);

#endif
