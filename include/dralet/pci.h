/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dralet backend SDK: the read-only facts the hardware abstraction layer (hal/)
 * gathers about one PCI function and the class devices linked to it.
 *
 * Everything here is owned by the HAL scan that produced it and lives until
 * that scan is freed; backends only read it. Strings are NUL-terminated and
 * NULL when the fact is unknown; integers use -1 for "unknown" where noted.
 * The layout is part of the backend ABI (DRALET_BACKEND_ABI in backend.h).
 */
#ifndef DRALET_PCI_H
#define DRALET_PCI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A character device node as a container sees it ("/dev/dri/card0"). It
 * never owns its path: the path is the scan's (the nodes in these structs),
 * the device's (dralet_device_node) or the caller's buffer
 * (dralet_devnode), and nothing frees it through a devnode. */
struct dralet_devnode {
	const char *path;	/* absolute path under /dev; NULL if the node does not exist */
	unsigned major;		/* 0:0 when the numbers could not be determined */
	unsigned minor;
};

struct dralet_netdev {
	const char *ifname;
	const char *mac;	/* "aa:bb:cc:dd:ee:ff" */
	const char *operstate;	/* "up", "down", "unknown" ... */
	int64_t speed_mbps;	/* -1 unknown (link down or virtual) */
	int mtu;		/* -1 unknown */
	int ifindex;		/* -1 unknown */
	bool default_route;	/* carries a default route of the host */
};

struct dralet_ib_port {
	unsigned number;	/* 1-based port number */
	const char *state;	/* "ACTIVE", "DOWN" ... (text after "N: ") */
	const char *phys_state;	/* "LinkUp", "Polling" ... */
	const char *link_layer;	/* "InfiniBand", "Ethernet" */
	const char *rate;	/* "400 Gb/sec (4X NDR)" */
	unsigned rate_gbps;	/* 0 unknown */
	struct dralet_devnode umad;
	struct dralet_devnode issm;
};

struct dralet_ibdev {
	const char *name;	/* "mlx5_0", "rxe0" */
	const char *node_guid;	/* "1070:fd03:00ab:cdef" */
	const char *sys_image_guid;
	const char *fw_ver;
	const char *node_type;	/* "CA", "RNIC" ... */
	const char *hca_type;
	const char *board_id;
	const char *netdev;	/* the netdev it runs over (RoCE, soft-RoCE), or NULL */
	bool software;		/* soft-RoCE/siw: linked to the function through its netdev */
	size_t n_ports;
	const struct dralet_ib_port *ports;
	struct dralet_devnode uverbs;
};

/* A class device that is just a character node: DRM "card0"/"renderD128",
 * compute accelerator "accel0". */
struct dralet_classdev {
	const char *name;
	struct dralet_devnode node;
};

struct dralet_fpga_manager {
	const char *name;	/* "fpga0" */
	const char *driver_name;	/* content of "name" */
	const char *state;	/* "operating", "write error" ... */
	const char *status;	/* error lines joined with ", "; NULL when clean */
};

struct dralet_fpga_region {
	const char *name;	/* "region0" */
	const char *compat_id;	/* 32 hex digits, NULL if unused */
};

/* Intel DFL FPGA Management Engine (one per card, on the PF). */
struct dralet_dfl_fme {
	const char *name;	/* "dfl-fme.0" */
	struct dralet_devnode node;
	const char *bitstream_id;
	const char *bitstream_metadata;
	const char *interface_id;	/* compat_id of the FME's PR region */
	int ports_num;		/* -1 unknown */
	int socket_id;		/* -1 unknown */
};

/* Intel DFL port: one accelerator function unit (AFU) slot. */
struct dralet_dfl_port {
	const char *name;	/* "dfl-port.0" */
	struct dralet_devnode node;
	const char *afu_id;	/* 32 hex digits of the loaded AFU */
	int id;			/* -1 unknown */
};

/* AMD/Xilinx XRT shell facts of an Alveo function. */
struct dralet_xrt {
	bool user_pf;
	bool mgmt_pf;
	int instance;		/* mgmt PF: N of /dev/xclmgmtN; -1 unknown */
	const char *vbnv;	/* shell name, "xilinx_u55c_gen3x16_xdma_base_3" */
	const char *timestamp;	/* shell timestamp */
	const char *xclbin_uuid;	/* user PF: loaded user image */
	const char *interface_uuid;	/* mgmt PF: last of interface_uuids (the shell's,
					 * which a user image must match) */
	const char *logic_uuid;	/* mgmt PF: first of logic_uuids */
	const char *serial;	/* board serial number */
};

enum dralet_pci_port_type {
	DRALET_PCI_ENDPOINT = 0,
	DRALET_PCI_ROOT_PORT,
	DRALET_PCI_SWITCH_UPSTREAM,
	DRALET_PCI_SWITCH_DOWNSTREAM,
	DRALET_PCI_OTHER_BRIDGE,
};

enum dralet_vf_link_state {
	DRALET_VF_LINK_AUTO = 0,
	DRALET_VF_LINK_ENABLE = 1,
	DRALET_VF_LINK_DISABLE = 2,
};

/* VF settings kept by the PF's driver (read, or what to change: unset
 * fields are left alone). */
struct dralet_vf_settings {
	bool has_mac;
	uint8_t mac[6];
	bool has_vlan;
	unsigned vlan;		/* 0..4095, 0 = no VLAN */
	unsigned qos;		/* 0..7 */
	int trust;		/* -1 unset, 0 off, 1 on */
	int spoof_check;	/* -1 unset, 0 off, 1 on */
	int link_state;		/* -1 unset, else enum dralet_vf_link_state */
	bool has_rate;
	unsigned min_tx_mbps, max_tx_mbps;	/* 0 = no limit */
};

#define DRALET_VF_SETTINGS_INIT { .trust = -1, .spoof_check = -1, .link_state = -1 }

struct dralet_pci_link {
	unsigned current_mts;	/* transfer rate in MT/s (32000 = 32.0 GT/s); 0 unknown */
	unsigned current_width;	/* lanes; 0 unknown */
	unsigned max_mts;
	unsigned max_width;
};

struct dralet_pci_func;

struct dralet_pci_sriov {
	unsigned total_vfs;
	unsigned num_vfs;
	unsigned offset;
	unsigned stride;
	uint16_t vf_device_id;	/* 0 unknown */
	bool drivers_autoprobe;
	size_t n_vfs;			/* number of virtfnN links that resolved */
	const struct dralet_pci_func *const *vfs;	/* index N = virtfnN; entries may be NULL */
};

struct dralet_pci_func {
	char address[24];	/* "0000:3b:00.0", lower-case hex, as in /sys/bus/pci/devices */
	unsigned domain, bus, dev, fn;

	uint16_t vendor_id, device_id;
	uint16_t subsystem_vendor_id, subsystem_device_id;
	uint32_t class_code;	/* 0xCCSSPP: class, subclass, programming interface */
	uint8_t revision;
	const char *vendor_name;	/* from the PCI name database, NULL if unknown */
	const char *device_name;

	const char *driver;	/* bound kernel driver, NULL if none */
	int numa_node;		/* -1 unknown */
	const char *local_cpulist;	/* "0-15,32-47", NULL if unknown */
	int iommu_group;	/* -1 without IOMMU */
	unsigned iommu_group_size;	/* PCI functions in that group (1: alone, vfio-safe) */
	struct dralet_devnode vfio_group;	/* bound to vfio-pci: /dev/vfio/<group> (path NULL if absent) */
	const struct dralet_devnode *vfio_container;	/* bound to vfio-pci: /dev/vfio/vfio, or NULL */
	struct dralet_pci_link link;

	/* topology */
	const char *sysfs_path;	/* "devices/pci0000:00/0000:00:01.0/0000:01:00.0" (below the sysfs root) */
	char pcie_root[24];	/* "pci0000:00": resource.kubernetes.io/pcieRoot */
	enum dralet_pci_port_type port_type;
	const struct dralet_pci_func *parent;	/* upstream bridge; NULL directly under the host bridge */
	const struct dralet_pci_func *pcie_switch;	/* nearest switch upstream port, NULL if none */

	/* SR-IOV */
	const struct dralet_pci_sriov *sriov;	/* set on physical functions with SR-IOV */
	const struct dralet_pci_func *physfn;	/* set on virtual functions */
	int vf_index;		/* N of the PF's virtfnN link; -1 for non-VFs */

	/* class devices */
	size_t n_net;
	const struct dralet_netdev *net;
	size_t n_ib;
	const struct dralet_ibdev *ib;
	size_t n_drm;
	const struct dralet_classdev *drm;		/* class/drm: cardN, renderDN */
	size_t n_accel;
	const struct dralet_classdev *accel;	/* class/accel: accelN (/dev/accel/accelN) */
	size_t n_fpga_managers;
	const struct dralet_fpga_manager *fpga_managers;
	size_t n_fpga_regions;
	const struct dralet_fpga_region *fpga_regions;
	size_t n_dfl_fmes;
	const struct dralet_dfl_fme *dfl_fmes;
	size_t n_dfl_ports;
	const struct dralet_dfl_port *dfl_ports;
	const struct dralet_xrt *xrt;	/* NULL unless XRT marker files exist */

	/* why allocating this function would break the node (default route,
	 * mounted filesystem); NULL when it is safe */
	const char *unsafe_reason;
};

/* PCI class helpers (class_code is 0xCCSSPP). */
static inline unsigned dralet_pci_class(const struct dralet_pci_func *f) { return f->class_code >> 16; }
static inline unsigned dralet_pci_class_sub(const struct dralet_pci_func *f) { return f->class_code >> 8; }

#ifdef __cplusplus
}
#endif
#endif /* DRALET_PCI_H */
