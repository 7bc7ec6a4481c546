/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers shared by the backends that hand whole PCI functions to containers
 * (fpga, net, sriov, accel): what the function looks like now (present,
 * bound driver), IOMMU group membership and vfio nodes, misc device nodes,
 * and the environment variables prepare writes.
 *
 * Everything reads below the agent's roots through the SDK helpers; nothing
 * here logs or keeps state. Errors are -errno.
 */
#ifndef DRALET_BACKENDS_PCIDEV_H
#define DRALET_BACKENDS_PCIDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <dralet/backend.h>
#include <dralet/prepare.h>

/* Room for "DRALET_" + a device name (63) + "_" + a field name. */
#define PCIDEV_ENV_NAME_MAX 128

/* True when the function at @address (sysfs name) is a PCI-to-PCI bridge
 * (class 0x0604): the functions of an IOMMU group that are never handed over. */
bool pcidev_is_bridge(struct dralet_backend_ctx *ctx, const char *address);

/* A function a container can own through vfio: it has an IOMMU group and is
 * alone in it (a shared group would hand its neighbours over too). */
bool pcidev_vfio_capable(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func);

static inline bool pcidev_is_vfio(const struct dralet_pci_func *func)
{
	return func->driver && !strcmp(func->driver, "vfio-pci");
}

/*
 * Resolves the node of misc device @misc_name (class/misc/<name>/dev gives the
 * numbers; @major:@minor when that file is missing, 0:0 for none) at
 * /dev/@dev_path, as dralet_devnode() does: the path goes to @path
 * (DRALET_DEVNODE_PATH_MAX bytes). ret_node->path is NULL when the node does
 * not exist or its numbers are unknown.
 */
int pcidev_misc_node(struct dralet_backend_ctx *ctx, const char *misc_name, const char *dev_path,
		     unsigned major, unsigned minor, char *path, struct dralet_devnode *ret_node);

/* Adds the vfio nodes of a function bound to vfio-pci to @dev: the IOMMU
 * group node and the container node /dev/vfio/vfio. No-op for other drivers. */
int pcidev_device_add_vfio(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			   const struct dralet_pci_func *func);

/*
 * Adds the character devices a driver created below @func in a class glue
 * directory (<function>/<class>/<name>/dev, node /dev/<DEVNAME of its
 * uevent, else name>): /dev/hailo0, /dev/xdma0_user ..., whatever the class.
 * The vfio cdev (vfio-dev/) is left out. Returns the number added or -errno.
 */
int pcidev_device_add_chardevs(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			       const struct dralet_pci_func *func);

/* "/dev/a,/dev/b": the device's nodes as one value (for an environment
 * variable); "" without nodes. */
void pcidev_node_list(const struct dralet_device *dev, char *buf, size_t size);

/* Adds every device node of @dev to @edits. */
int pcidev_edit_device_nodes(struct dralet_edits *edits, const struct dralet_device *dev);

/*
 * Prepare-time vfio edits for a function bound to vfio-pci: /dev/vfio/<group>
 * and /dev/vfio/vfio, plus <prefix>_IOMMU_GROUP. Fails with a message in the
 * context when the group node is missing.
 */
int pcidev_edit_vfio(struct dralet_backend_ctx *ctx, struct dralet_edits *edits,
		     const struct dralet_device *dev, const struct dralet_pci_func *func);

/*
 * Environment variables of a prepared device are named
 * DRALET_<DEVICE NAME>_<FIELD>, the device name upper-cased with anything but
 * letters and digits turned into '_' (DRALET_FPGA_0000_3B_00_1_PCI_ADDRESS), so several devices of one
 * claim never collide in one container. A NULL or empty @value adds nothing.
 */
int pcidev_env(struct dralet_edits *edits, const struct dralet_device *dev, const char *field,
	       const char *value);
int pcidev_env_int(struct dralet_edits *edits, const struct dralet_device *dev, const char *field,
		   long long value);
/* The name pcidev_env() uses, DRALET_<DEVICE>_<@field>, into @buf (at least
 * PCIDEV_ENV_NAME_MAX): the one rule for every backend's variables (the GPU
 * family's too). -ENAMETOOLONG when it does not fit. */
int pcidev_env_name(const struct dralet_device *dev, const char *field, char *buf, size_t size);

/* Records the facts every prepare of these backends keeps for unprepare and
 * for operators reading the checkpoint (PCI address, driver at prepare). */
int pcidev_undo_record(struct dralet_undo *undo, const struct dralet_pci_func *func,
		       const char *driver);

#endif
