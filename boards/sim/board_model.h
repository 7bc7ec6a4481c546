/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to the board simulator (boards/sim): the in-memory model of a board file. The parser
 * (board_parse*.c) fills it from the YAML DOM, the layout pass
 * (board_layout.c) derives everything the YAML leaves implicit (bus ranges,
 * VFs, automatic numbers, BAR addresses), and the writers (board_write_*.c)
 * turn it into files. Every string and array lives in the board's arena and
 * is freed with board_free().
 */
#ifndef DRALET_BOARD_MODEL_H
#define DRALET_BOARD_MODEL_H

#include <stdbool.h>
#include <string.h>
#include <stddef.h>
#include <stdint.h>

/* Every string and array of a board lives in its arena (agent/lib/arena.h). */
#include "agent/lib/arena.h"

/* ---- where a model element came from, for error messages ---- */

/* One step of a path into the YAML document: a mapping key or a sequence
 * index. Chains are built on the stack while parsing and copied into the
 * arena for elements that later passes may need to blame. */
struct jpath {
	const struct jpath *up;
	const char *key;	/* NULL for a sequence index */
	int index;
};

/* ---- the model ---- */

enum board_port_kind {
	BOARD_ENDPOINT,
	BOARD_RCIEP,		/* endpoint directly on a root bus */
	BOARD_ROOT_PORT,
	BOARD_SWITCH_UP,
	BOARD_SWITCH_DOWN,
	BOARD_PCI_BRIDGE,	/* PCIe-to-PCI bridge (e.g. a BMC's) */
};

static inline bool board_kind_is_bridge(enum board_port_kind k)
{
	return k == BOARD_ROOT_PORT || k == BOARD_SWITCH_UP || k == BOARD_SWITCH_DOWN ||
	       k == BOARD_PCI_BRIDGE;
}

struct board_link {
	unsigned mts;		/* 2500 ... 64000; 0 = unknown */
	unsigned width;
};

struct board_bar {
	uint64_t size;		/* 0 = unused */
	uint64_t start;
	bool prefetch;
	bool is64;
};

struct board_netdev {
	const char *name;
	const char *mac;		/* "aa:bb:..." (6 or 20 bytes); NULL = automatic */
	const char *operstate;	/* "up", "down", ... */
	long speed;		/* Mb/s; -1 unknown */
	int mtu;
	int ifindex;		/* 0 = automatic */
	int type;		/* ARPHRD_*: 1 Ethernet, 32 InfiniBand */
	const char *ipv4;	/* "10.0.0.5/24" or NULL */
	const char *phys_port_name;
	const char *phys_switch_id;
	int dev_port;
	const struct jpath *at;
};

struct board_ibport {
	unsigned number;
	int state;		/* 4 = ACTIVE */
	int phys_state;		/* 5 = LinkUp */
	const char *link_layer;
	const char *rate;
	const char *netdev;	/* RoCE: GID netdev; NULL = the function's first netdev */
	unsigned umad;		/* umad/issm minor index, automatic */
};

struct board_ibdev {
	const char *name;
	const char *node_guid;
	const char *sys_image_guid;
	const char *fw_ver;
	const char *hca_type;
	const char *hw_rev;
	const char *board_id;
	const char *node_desc;
	int node_type;		/* 1 = CA */
	const char *parent_netdev;	/* soft-RoCE only: the `parent` file */
	size_t n_ports;
	struct board_ibport *ports;
	int uverbs;		/* -1 = automatic */
	const struct jpath *at;
};

struct board_drm {
	int card;		/* -1 none, -2 automatic */
	int render;		/* -1 none, -2 automatic; else the minor (128+) */
};

struct board_fpga_mgr {
	const char *name;	/* "fpga0"; NULL = automatic */
	const char *under;	/* sub-path of the function, may be NULL */
	const char *driver_name;
	const char *state;
	const char *status;
	bool firmware;		/* the Xilinx kernel's firmware and flags attributes */
};

struct board_fpga_region {
	const char *name;	/* NULL = automatic */
	const char *under;
	const char *compat_id;
};

struct board_dfl_port {
	int id;			/* -1 = automatic */
	const char *afu_id;
	unsigned minor;
};

struct board_dfl {
	int fme_id;		/* -1 = automatic */
	const char *bitstream_id;
	const char *bitstream_metadata;
	const char *compat_id;
	int ports_num;		/* -1 = number of ports */
	int socket_id;
	unsigned fme_minor;
	const char *base_region;	/* assigned: the dfl-pci base region name */
	const char *pr_region;	/* assigned: the FME's PR region name */
	const char *mgr_name;	/* assigned: fpgaN of dfl-fme-mgr */
	const char *bridge_name;	/* assigned: brN */
	size_t n_ports;
	struct board_dfl_port *ports;
};

struct board_chardev {
	const char *name;	/* sysfs and /dev name */
	const char *class_name;
	const char *devname;	/* under /dev; default name */
	int major, minor;	/* -1 = automatic */
};

struct board_block {
	const char *name;	/* nvme0n1, nvme0n1p2 */
	uint64_t size;		/* bytes */
	unsigned major, minor;
	int partition;		/* 0 for the whole disk, else N */
	uint64_t start;		/* partitions: first sector */
};

struct board_nvme_ns {
	struct board_block disk;
	size_t n_parts;
	struct board_block *parts;
};

struct board_nvme {
	const char *controller;	/* nvme0 */
	unsigned instance;
	const char *serial;
	const char *model;
	const char *firmware;
	size_t n_ns;
	struct board_nvme_ns *ns;
};

struct board_mig {
	const char *profile;
	int gi_profile_id, ci_profile_id;
	int gi, ci;
	int placement_start, placement_size;
	uint64_t memory_bytes;
	int multiprocessors, copy_engines, decoders, encoders, jpeg_engines, ofa_engines;
	const char *uuid;
	unsigned gi_minor, ci_minor;	/* nvidia-caps minors, derived */
	const struct jpath *at;
};

struct board_nvidia {
	int minor;		/* -1 = automatic */
	const char *uuid;
	const char *model;
	const char *vbios;
	const char *gsp_firmware;
	int irq;		/* -1: the function's irq */
	int dma_bits;
	bool excluded;
	/* NVML view; has_nvml false: the GPU is left out of nvml.json */
	bool has_nvml;
	const char *nvml_name;
	const char *brand;
	const char *architecture;
	const char *cuda_cc;
	uint64_t memory_total;
	int mig_current, mig_pending;
	size_t n_mig;
	struct board_mig *mig;
	int nvml_index;		/* derived: position in PCI order */
	const struct jpath *at;
};

struct board_kfd {
	unsigned gpu_id;
	const char *properties;	/* extra "key value" lines, may be NULL */
};

struct board_file {
	const char *name;	/* relative, may contain '/' */
	const char *content;	/* written as is */
};

struct board_aer {
	const char *name;
	unsigned long count;
};

struct board_root;

/* What `vfs:` says of one VF of a PF. */
struct board_vf_setting {
	const char *driver;	/* NULL: the PF's vf_driver; "": unbound */
	int iommu_group;	/* -1: automatic */
	bool no_net, no_rdma;	/* net: false, rdma: false: none from vf_net / vf_rdma */
};

/* iommu_group of a function the IOMMU does not cover (`iommu_group: null`). */
#define BOARD_NO_IOMMU_GROUP -2

struct board_func {
	unsigned domain, bus, dev, fn;
	char bdf[16];		/* "0000:18:00.0" */
	enum board_port_kind kind;
	uint16_t vendor, device, sub_vendor, sub_device;
	uint32_t class_code;
	uint8_t revision;
	const char *driver;	/* NULL: unbound */
	int numa;
	int iommu_group;	/* -1 automatic (or none when the board has no IOMMU),
				 * BOARD_NO_IOMMU_GROUP: outside any group */
	int irq;		/* -1 automatic */
	struct board_link link, max_link;
	bool link_set, max_link_set;
	const char *label;
	int acpi_index;		/* -1 none */
	const char *slot;
	bool boot_vga;
	struct board_bar bars[6];
	bool bars_set;

	/* SR-IOV (PF) */
	bool has_sriov;
	unsigned total_vfs, num_vfs, vf_offset, vf_stride;
	uint16_t vf_device;
	const char *vf_driver;
	uint32_t vf_class;
	uint16_t vf_sub_vendor, vf_sub_device;
	const char *vf_net;	/* name template, NULL = no VF netdevs */
	const char *vf_rdma;	/* ibdev prefix for VFs, NULL = none */
	struct board_bar vf_bars[6];
	bool sriov_autoprobe;
	/* per-VF settings (`vfs:`), indexed by VF number */
	struct board_vf_setting *vf_settings;
	struct board_func **vfs;	/* generated, n = num_vfs */

	/* VF */
	struct board_func *physfn;
	int vf_index;		/* -1 for non-VFs */

	/* class devices and extras */
	size_t n_net;
	struct board_netdev *net;
	size_t n_ib;
	struct board_ibdev *ib;
	struct board_drm drm;
	size_t n_fpga_mgr;
	struct board_fpga_mgr *fpga_mgr;
	size_t n_fpga_region;
	struct board_fpga_region *fpga_region;
	struct board_dfl *dfl;
	size_t n_chardev;
	struct board_chardev *chardev;
	struct board_nvme *nvme;
	struct board_nvidia *nvidia;
	struct board_kfd *kfd;
	size_t n_files;
	struct board_file *files;
	size_t n_aer[3];	/* correctable, fatal, nonfatal overrides */
	struct board_aer *aer[3];

	/* tree */
	struct board_root *root;
	struct board_func *parent;	/* NULL directly on the root bus */
	size_t n_children;
	struct board_func **children;
	unsigned secondary, subordinate;	/* bridges */
	int explicit_bus;	/* bridges without children: `bus:`; -1 none */
	bool multifunction;	/* derived: another function shares dev */

	const char *sysfs_path;	/* "devices/pci0000:00/0000:00:01.0/..." */
	const struct jpath *at;

	/* derived address space */
	struct board_bar vf_res[6];	/* SR-IOV resource lines: VF BAR x total VFs */
	uint64_t win_start[2], win_end[2];	/* bridges: [0] memory, [1] prefetchable */
	size_t dfs_index;	/* position in the tree walk (VFs after all others) */
};

struct board_root {
	unsigned domain, bus;
	char name[20];		/* "pci0000:15" */
	int numa;
	size_t n_children;
	struct board_func **children;
	unsigned subordinate;
	uint64_t mmio_base, mmio_next;	/* 64-bit prefetchable window cursor */
	const struct jpath *at;
};

struct board_numa {
	int id;
	const char *cpulist;	/* normalized */
	size_t n_dist;
	int *distances;
};

/* A platform device of an SoC (no PCI function) with FPGA managers and
 * regions: devices/platform/<device>. */
struct board_platform {
	const char *device;	/* "firmware:zynqmp-firmware/firmware:zynqmp-firmware:pcap" */
	const char *driver;
	size_t n_fpga_mgr;
	struct board_fpga_mgr *fpga_mgr;
	size_t n_fpga_region;
	struct board_fpga_region *fpga_region;
	const struct jpath *at;
};

struct board_mount {
	const char *source;	/* block device name (nvme0n1p2) or a virtual fs source */
	const char *target;
	const char *fstype;
	const char *options;
	const struct board_block *block;	/* resolved, NULL for virtual */
	const struct jpath *at;
};

struct board_rxe {
	struct board_ibdev ib;
	const char *netdev;
};

struct board {
	const char *name;
	const char *description;
	const char *hostname;
	const char *boot_id;
	const char *kernel;	/* uname -r, used in a few strings */
	bool iommu;
	size_t n_numa;
	struct board_numa *numa;
	unsigned nr_cpus;	/* highest CPU + 1 */
	const char *all_cpus;	/* "0-<nr_cpus-1>" */
	size_t n_roots;
	struct board_root *roots;
	size_t n_mounts;
	struct board_mount *mounts;
	size_t n_rxe;
	struct board_rxe *rxe;
	size_t n_platform;
	struct board_platform *platform;
	bool configfs_overlays;	/* kernel/config/device-tree/overlays (vendor kernels) */
	const char *default_dev, *default_via;
	const char *default6_dev, *default6_via;
	const struct jpath *default_at, *default6_at;
	/* NVIDIA driver versions (board level) */
	const char *nvidia_driver;
	int cuda_driver;

	/* derived */
	size_t n_funcs;			/* including VFs */
	struct board_func **funcs;	/* sorted by address */
	struct board_func **tree;	/* walk order: parents first, VFs last */
	size_t n_gpus;			/* NVIDIA functions, in nvml index order */
	struct board_func **gpus;
	bool any_ib, any_vfio, any_kfd, any_nvme;
	unsigned n_vfio_groups;

	struct arena *arena;
};

/* ---- passes ---- */

/* Error reporting shared by the passes: the board file name and its text,
 * for turning a jpath into "line L column C". */
struct board_diag {
	const char *file;
	const char *text;
	size_t text_len;
	char *err;
	size_t errlen;
};

/* Formats "<file>: line L column C: <message>" (location when @at resolves)
 * into diag->err; returns -EINVAL. */
int board_fail(const struct board_diag *d, const struct jpath *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Finds the YAML position of @at in @text: the key's position for mapping
 * members, the node's for sequence items. Returns false when the document
 * cannot be parsed or the path leaves it (e.g. through an alias); *line and
 * *column (1-based) then hold the deepest position found, or 0. */
bool board_locate(const char *text, size_t len, const struct jpath *at, unsigned *line,
		  unsigned *column);

struct json_object;
/* Fills @b from the YAML DOM @root (board_parse.c). */
int board_parse(struct board *b, struct json_object *root, const struct board_diag *d);
/* Derives the implicit parts and checks cross-references (board_layout.c). */
int board_layout(struct board *b, const struct board_diag *d);
void board_free(struct board *b);

/* Reads, parses and lays out the board file @path into @b (zeroed by the
 * caller; board_free() it in every case). Messages as board_materialize. */
int board_load(const char *path, struct board *b, char *err, size_t errlen);
/* Writes a loaded board into @dir (created, or an empty directory). */
int board_write(const struct board *b, const char *dir, char *err, size_t errlen);

/* VF @n of @pf as the layout makes it (board_layout.c): address, ids, the
 * driver and IOMMU group `vfs:` gives it (-1: automatic), BAR sizes; no
 * sysfs path, BAR addresses or class devices yet. NULL when out of memory
 * or beyond bus ff. */
struct board_func *board_vf_new(struct arena *a, struct board_func *pf, unsigned n);
/* The netdev `vf_net` gives @vf (its PF has `vf_net` and a netdev), without
 * ifindex and MAC (board_number.c); NULL when out of memory. */
struct board_netdev *board_vf_netdev(struct arena *a, const struct board_func *vf);
/* The stable default MAC of netdev @ifname on board @board (@type ARPHRD_*). */
char *board_auto_mac(struct arena *a, const char *board, const char *ifname, int type);

/* MIG profile defaults (board_mig.c). Returns NULL when unknown. */
struct board_mig_profile {
	const char *name;
	int gi_profile_id;
	int slices;		/* placement size */
	int multiprocessors, copy_engines, decoders, encoders, jpeg_engines, ofa_engines;
	uint64_t memory_mib;
};
const struct board_mig_profile *board_mig_profile(uint16_t device_id, const char *name);
/* The built-in profiles of @device_id (ended by a NULL name), or NULL. */
const struct board_mig_profile *board_mig_profiles(uint16_t device_id);
/* Where a GPU instance of @p may start (NVIDIA MIG user guide: 8 memory
 * slices, 7 compute slices; an instance takes its memory share rounded to
 * slices, starts at a multiple of that and ends within the compute slices):
 * fills @starts, *ret_size (memory slices taken); returns the count. */
unsigned board_mig_placements(const struct board_mig_profile *table,
			      const struct board_mig_profile *p, unsigned starts[8],
			      unsigned *ret_size);

/* Stable pseudo-random values derived from strings (FNV-1a), so that boards
 * need not spell out every MAC, GUID and UUID and still get the same tree on
 * every run. */
uint64_t board_hash(const char *a, const char *b);

/* Whether a function bound to @driver gets the class devices (netdev, RDMA
 * device) its board entry describes: not on vfio-pci or pci-stub, which
 * only hold the function for a VM. */
static inline bool board_driver_makes_class_devices(const char *driver)
{
	return driver && strcmp(driver, "vfio-pci") && strcmp(driver, "pci-stub");
}

#endif
