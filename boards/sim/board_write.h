/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to the board simulator (boards/sim): writing a materialized tree. Writes go through
 * directory file descriptors (openat and friends) so that a thousand
 * functions cost a few syscalls each. Errors are sticky: the first failure
 * is kept in the writer and later calls do nothing, so the writers read as
 * straight lists of files.
 */
#ifndef DRALET_BOARD_WRITE_H
#define DRALET_BOARD_WRITE_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "boards/sim/board_model.h"

/* Character majors (/proc/devices). Fixed ones are the kernel's; the
 * dynamic ones are what a typical boot hands out (dynamic majors are
 * allocated downward from 511, then from 254). */
#define MAJOR_MISC 10
#define MAJOR_DRM 226
#define MAJOR_IB 231		/* infiniband_verbs and infiniband_mad */
#define MAJOR_NVIDIA 195
#define MAJOR_NVIDIA_UVM 511
#define MAJOR_NVIDIA_CAPS 510
#define MAJOR_VFIO 509
#define MAJOR_DFL_FME 508
#define MAJOR_DFL_PORT 507
#define MAJOR_KFD 506
#define MAJOR_IB_MAD_DYN 504	/* umad/issm beyond the 64 fixed minors */
#define MAJOR_IB_VERBS_DYN 503	/* uverbs beyond the 32 fixed minors */
#define MAJOR_NVME 240
#define MAJOR_NVME_GENERIC 239
#define MAJOR_BLKEXT 259
#define MINOR_VFIO 196		/* misc */
#define MINOR_RDMA_CM 254	/* misc, dynamic */
#define MINOR_FPGA_MGR 250	/* misc, dynamic: the Xilinx kernel's fpgaN, downward */
#define MINOR_UVERBS_BASE 192
#define UVERBS_FIXED 32
#define MINOR_ISSM_BASE 64
#define UMAD_FIXED 64

struct bw {
	int sys, dev, proc;	/* <dir>/sys, <dir>/dev, <dir>/proc */
	int top;		/* <dir> */
	int err;		/* first failure, -errno; 0 while all went well */
	char err_what[PATH_MAX + 64];
	pthread_mutex_t lock;	/* guards err_what; the function writers run in threads */
	const struct board *b;
};

/* Opens the writer on the tree @dir (its sys/, dev/ and proc/ are created
 * when missing); 0 or -errno with a message in @err. bw_end() closes it in
 * every case and returns the first failure of the writes (message in @err). */
int bw_begin(struct bw *w, const struct board *b, const char *dir, char *err, size_t errlen);
int bw_end(struct bw *w, char *err, size_t errlen);

/* Records a failure: the first one wins (thread-safe). */
void bw_fail(struct bw *w, int err, const char *what, const char *path);

static inline bool bw_failed(const struct bw *w)
{
	return __atomic_load_n(&w->err, __ATOMIC_ACQUIRE) != 0;
}

/* A directory being filled: its fd and its path below the sys root (used
 * to compute relative symlinks the way sysfs does). */
struct bw_dir {
	int fd;
	char path[PATH_MAX];
};

/* mkdir -p @rel under @base; then opens it into @d (d->fd -1 on failure).
 * @path_base is the sysfs-relative path of @base ("" for the sys root). */
void bw_open(struct bw *w, struct bw_dir *d, int base, const char *path_base, const char *rel);
void bw_close(struct bw_dir *d);
/* mkdir -p @rel under @base. */
void bw_mkdirs(struct bw *w, int base, const char *rel);

/* Files in @d (or @base): @name may contain '/', parents are created. A
 * trailing newline is the caller's business. */
void bw_write(struct bw *w, int dirfd, const char *name, const void *data, size_t len);
void bw_printf(struct bw *w, int dirfd, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A NUL-terminated text. */
void bw_text(struct bw *w, int dirfd, const char *name, const char *text);
/* Write-only sysfs attributes (bind, remove, ...): mode 0200, empty. */
void bw_writeonly(struct bw *w, int dirfd, const char *name);

/* Symlink @name in directory @d to @target, both below the sys root:
 * written relative, like sysfs ("../../../bus/pci/drivers/nvidia"). */
void bw_link(struct bw *w, const struct bw_dir *d, const char *name, const char *target);
/* Same with an explicit link path below the sys root. */
void bw_link_at(struct bw *w, const char *link_path, const char *target);

/* A device node stand-in under <dir>/dev: an empty file, plus the
 * dev/.node/<name> symlink "major:minor" that umockdev's preload reads to
 * stat() it as a char device. */
void bw_devnode(struct bw *w, const char *devname, unsigned major, unsigned minor);

/* The class-device boilerplate: dev (when major > 0), uevent, subsystem link
 * to class/<cls>, device link to @device_path (may be NULL), and the
 * /sys/class/<cls>/<name> and /sys/dev/char links. @extra_uevent holds more
 * KEY=value lines (may be NULL). */
void bw_class_device(struct bw *w, const struct bw_dir *d, const char *cls, const char *name,
		     const char *device_path, unsigned major, unsigned minor, const char *devname,
		     const char *extra_uevent);

/* Writers, one per concern. */
void bw_pci(struct bw *w);				/* board_write_pci.c */
/* One function's directory with its links and class devices, and a PCI
 * driver's directory (board_write_pci.c; also used by the kernel model,
 * board_node_ops.h, when VFs appear). */
void bw_function(struct bw *w, const struct board_func *f);
void bw_driver(struct bw *w, const char *driver);
/* The vfio container (misc vfio, /dev/vfio/vfio) and one group's vfio
 * device with its /dev/vfio/<group> node (board_write_class.c). */
void bw_vfio_container(struct bw *w);
void bw_vfio_group(struct bw *w, int group, unsigned minor);
void bw_function_classes(struct bw *w, const struct board_func *f,
			 const struct bw_dir *fd);	/* board_write_class.c */
void bw_virtual_classes(struct bw *w);			/* board_write_class.c */
/* The KFD topology's nodes: GPU i (in PCI order) as @partitions[i] compute
 * partitions (NULL or 0: whole), partitions past the first with an XCP
 * render node of their own (bw_kfd_xcp_render) made in dev/dri. */
void bw_kfd_nodes(struct bw *w, const unsigned *partitions);
/* The render minor of XCP @k (1..) of @gpu: after the board's render
 * nodes, num_xcc - 1 per GPU. */
unsigned bw_kfd_xcp_render(const struct board *b, const struct board_func *gpu, unsigned k);
void bw_platform(struct bw *w);				/* board_write_class.c: SoC FPGAs */
void bw_nvidia(struct bw *w);				/* board_write_nvidia.c: also nvml.json */
void bw_system(struct bw *w);				/* board_write_system.c */

/* "0-15,32-47" -> the kernel's 32-bit-word hex mask for @nr_cpus bits;
 * malloc'd, NULL when out of memory. */
char *bw_cpumask(const char *cpulist, unsigned nr_cpus);
/* CPU list of a NUMA node (all CPUs for -1). */
const char *bw_numa_cpus(const struct board *b, int node);

#endif
