/* SPDX-License-Identifier: Apache-2.0 */
/* State shared by the HAL modules during one scan. Private to hal/. */
#ifndef DRALET_HAL_SCAN_INTERNAL_H
#define DRALET_HAL_SCAN_INTERNAL_H

#include <stdarg.h>
#include <stdint.h>

#include "agent/lib/arena.h"
#include "hal/hal.h"

#include <pthread.h>

#define SCAN_MAX_WARNINGS 1000
#define SCAN_MAX_THREADS 4
#define SCAN_MIN_PER_THREAD 64	/* functions; fewer per thread run on one */

struct hal_scan_private {
	struct arena *arena;
	struct hal_roots roots;		/* copies, in the arena */
	const struct hal_scan_options *opts;
	int sys_fd;			/* O_PATH directory fds of the roots */
	int proc_fd;
	struct dralet_pci_func *funcs;	/* n_funcs, sorted by address (strcmp) */
	size_t n_funcs;
	pthread_mutex_t warn_lock;
	const char **warnings;
	size_t n_warnings, cap_warnings, dropped_warnings;
	struct dralet_devnode *vfio_container;	/* resolved once, shared by vfio-pci functions */
	bool vfio_container_tried;
	const char *host_net_problem;	/* host_ns_problem(), or NULL */
};

/* Calls @fn on [0, @n) split in ranges over up to SCAN_MAX_THREADS threads
 * (one per online CPU; the caller's thread takes a share). @fn may use the
 * arena and scan_warn, and write only the items of its own range. */
typedef void (*scan_range_fn)(struct hal_scan_private *s, size_t begin, size_t end,
			      void *userdata);
void scan_parallel(struct hal_scan_private *s, size_t n, scan_range_fn fn, void *userdata);

/* Adds a warning ("<sysfs root>/<relpath>: problem" is the convention);
 * thread-safe. */
void scan_warn(struct hal_scan_private *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Grows @*array (n elements of @size) by one zeroed element in the arena and
 * returns it; NULL on ENOMEM. */
void *scan_append(struct hal_scan_private *s, const void **array, size_t *n, size_t size);

/* The function whose address is the last PCI address component of @path
 * ("devices/pci0000:00/0000:00:03.0/virtio2/net/eth0" -> 0000:00:03.0). */
struct dralet_pci_func *scan_owner_of_path(struct hal_scan_private *s, const char *path);
struct dralet_pci_func *scan_find(struct hal_scan_private *s, const char *address);

/* ---- sysfs.c: reading below a directory fd ---- */

/* Reads a small file into @buf (NUL-terminated, trailing whitespace removed).
 * Returns the length or -errno (-EFBIG when it does not fit). */
int sysfs_read(int dirfd, const char *name, char *buf, size_t size);
/* Reads and parses an unsigned number (base 0: "0x.." or decimal). -EINVAL on
 * garbage. */
int sysfs_read_u64(int dirfd, const char *name, int base, uint64_t *ret);
int sysfs_read_int(int dirfd, const char *name, int64_t *ret);
/* readlinkat into @buf (NUL-terminated). Returns the length or -errno. */
int sysfs_readlink(int dirfd, const char *name, char *buf, size_t size);
/* The last component of a path. */
const char *path_basename(const char *path);
/* Turns a sysfs link target ("../../../devices/pci0000:00/...") into a path
 * below the sysfs root ("devices/pci0000:00/..."), given the directory the
 * link lives in ("bus/pci/devices"). Returns 0 or -EINVAL. */
int sysfs_resolve_link(const char *link_dir, const char *target, char *buf, size_t size);
/* Reads "<major>:<minor>" from the "dev" file below @dirfd. */
int sysfs_read_devnum(int dirfd, const char *name, unsigned *major, unsigned *minor);

/* ---- the scan steps, in the order hal_scan runs them ---- */
int pci_enumerate(struct hal_scan_private *s);		/* pci.c */
void topology_resolve(struct hal_scan_private *s);	/* topology.c */
void pci_functions_read(struct hal_scan_private *s);	/* function.c: driver, iommu, link, sriov */
void class_net_scan(struct hal_scan_private *s);	/* class_net.c */
void class_infiniband_scan(struct hal_scan_private *s);	/* class_infiniband.c */
void class_drm_scan(struct hal_scan_private *s);	/* class_drm.c (drm and accel) */
void class_fpga_scan(struct hal_scan_private *s);	/* class_fpga.c (fpga classes, DFL, XRT) */
void safety_mark(struct hal_scan_private *s);		/* safety.c */

/* A device node "/dev/<dev_path>": a real character node gives its own
 * numbers; a simulated tree's placeholder takes them from the sysfs file
 * @dev_file ("major:minor") below @dirfd. ret->path NULL when absent. */
void scan_devnode(struct hal_scan_private *s, int dirfd, const char *dev_file,
		  const char *dev_path, struct dralet_devnode *ret);
/* The same with known numbers (used when the dev root has a placeholder). */
void scan_devnode_numbers(struct hal_scan_private *s, const char *dev_path, unsigned major,
			  unsigned minor, struct dralet_devnode *ret);

/* Why the agent does not see the host's network namespace (host_ns.c,
 * arena string), or NULL when it does. */
const char *host_ns_problem(struct hal_scan_private *s);

#endif
