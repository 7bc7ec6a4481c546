/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The hardware abstraction layer: one scan of a node's PCI functions, their
 * topology and class devices, read below three relocatable roots (a real
 * node's /sys, /dev, /proc, a simulated board's tree, or a VM's).
 *
 * The HAL never logs and never exits: a missing or garbage file, a dangling
 * link or an unreadable directory skips that fact (or that function) and
 * adds one warning naming the path to the scan.
 */
#ifndef DRALET_HAL_H
#define DRALET_HAL_H

#include <stdbool.h>
#include <stddef.h>

#include <dralet/pci.h>

struct hal_roots {
	const char *sys;	/* "/sys" */
	const char *dev;	/* "/dev" */
	const char *proc;	/* "/proc" */
};

struct hal_scan_options {
	/* PCI name database file (pci.ids); NULL: libpci's default with the udev
	 * hardware database. Tests pin a file so names never depend on the host. */
	const char *pci_ids;
	bool no_names;	/* skip vendor/device name lookups */
};

struct hal_scan {
	size_t n_funcs;
	const struct dralet_pci_func *const *funcs;	/* sorted by address */
	size_t n_warnings;
	const char *const *warnings;	/* "path: problem" */
	/* NULL, or why the agent does not see the host's network namespace (every
	 * network function then has an unsafe_reason saying so; hal/host_ns.c) */
	const char *host_net_problem;
	struct hal_scan_private *priv;
};

/*
 * Scans the node. Returns 0 and a scan the caller frees with hal_scan_free(),
 * or -errno when a root cannot be read at all (the sysfs root missing or
 * unreadable, or its bus/pci/devices directory unreadable for a reason other
 * than not existing).
 */
int hal_scan(const struct hal_roots *roots, const struct hal_scan_options *opts,
	     struct hal_scan **ret_scan);
void hal_scan_free(struct hal_scan *scan);

/* The function with address @address ("0000:3b:00.0"), or NULL. */
const struct dralet_pci_func *hal_scan_find(const struct hal_scan *scan, const char *address);

/* Parses "DDDD:BB:DD.F" (domain of 4 or more hex digits). */
bool hal_parse_address(const char *s, unsigned *domain, unsigned *bus, unsigned *dev,
		       unsigned *fn);

/* "<root>/<relpath>" into @buf; -ENAMETOOLONG when it does not fit. */
int hal_root_path(const char *root, const char *relpath, char *buf, size_t size);

/* Reads a small file into @buf (NUL-terminated, trailing whitespace removed), the
 * way the scan reads sysfs. Returns the length or -errno (-EFBIG when it does not fit). */
int hal_read_file(const char *path, char *buf, size_t size);

/*
 * Resolves the device node "/dev/<dev_path>": stats it below the dev root; a
 * character device gives its own numbers, anything else (a simulated board's
 * placeholder file) takes @major:@minor. The path is written to @path
 * (@size bytes) and ret_node->path points to it; ret_node->path is NULL when
 * the node does not exist. -ENAMETOOLONG when the path does not fit.
 */
int hal_devnode_resolve(const struct hal_roots *roots, const char *dev_path, unsigned major,
			unsigned minor, char *path, size_t size, struct dralet_devnode *ret_node);

/* Major number of character driver @name from <proc>/devices, or -ENOENT. */
int hal_char_major(const struct hal_roots *roots, const char *name);

#endif
