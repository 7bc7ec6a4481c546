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
#include <stddef.h>

struct hal_roots;

struct hal_uevent_monitor;

struct hal_uevent {
	const char *action;	/* "add", "remove", "change", "bind", "unbind", "move" ... */
	const char *subsystem;	/* "pci", "net", "infiniband", "module" ... */
	const char *sysname;	/* "0000:3b:00.0", "eth0", "nvidia" */
	/* The PCI function the device belongs to (the function itself for "pci"),
	 * "" for a virtual device (a veth, a module): from the event's DEVPATH,
	 * so it holds whatever path the agent's own sysfs is mounted at. */
	const char *pci_address;
};

#define HAL_UEVENT_ADDRESS_SIZE 32	/* a PCI address ("10000:e1:00.0" with VMD) */

/* Pure: the last component of @devpath ("/devices/pci0000:00/0000:00:01.0/
 * 0000:01:00.3/net/eth3") that is a PCI address ("0000:01:00.3"), copied
 * to @buf (HAL_UEVENT_ADDRESS_SIZE bytes); "" when there is none. */
void hal_uevent_pci_address(const char *devpath, char *buf, size_t size);

/* Whether the kernel's uevents are about the node below @roots: its sys root
 * is a sysfs mount (the host's, at /sys or mounted elsewhere in a
 * container), not a simulated board's tree. */
bool hal_uevent_describes(const struct hal_roots *roots);

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
