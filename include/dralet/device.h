/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dralet backend SDK: the uniform device model.
 *
 * A device is what dralet publishes in a ResourceSlice: a DNS-label name that
 * stays the same across restarts and reboots, a kind, the DRA driver it is
 * published under, typed attributes, capacities, the device nodes a container
 * needs, a health state, its parent PCI function and the backend's private
 * data. The layout is private; backends use the functions below, which check
 * every value against the resource.k8s.io/v1 limits as it is set, so nothing
 * a backend sets can make a ResourceSlice invalid.
 *
 * Errors: 0 on success, -errno on failure. A rejected value is not stored and
 * a warning naming backend, device and attribute is recorded in the backend
 * context (the agent logs it once); the device stays usable.
 */
#ifndef DRALET_DEVICE_H
#define DRALET_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dralet/pci.h>

#ifdef __cplusplus
extern "C" {
#endif

/* resource.k8s.io/v1 limits (kubernetes-api.md section 1.5) */
#define DRALET_DEVICE_NAME_MAX 63		/* DNS label */
#define DRALET_ATTR_ID_MAX 32			/* C identifier part of a qualified name */
#define DRALET_ATTR_DOMAIN_MAX 63		/* domain part of a qualified name */
#define DRALET_ATTR_VALUE_MAX 64		/* string and version values */
#define DRALET_ATTRS_AND_CAPACITIES_MAX 32	/* per device */

/* Standard attribute names (resource.kubernetes.io domain). */
#define DRALET_ATTR_PCIE_ROOT "resource.kubernetes.io/pcieRoot"
#define DRALET_ATTR_PCI_BUS_ID "resource.kubernetes.io/pciBusID"
#define DRALET_ATTR_NUMA_NODE "resource.kubernetes.io/numaNode"
/* The nearest PCIe switch in a domain every dralet driver shares, so a claim
 * can align devices of different drivers (a GPU and a NIC) on one switch with
 * matchAttribute; pcieRoot is coarser (one host bridge, many switches). */
#define DRALET_ATTR_PCIE_SWITCH "dralet.dev/pcieSwitch"

struct dralet_backend_ctx;
struct dralet_device;

enum dralet_attr_type {
	DRALET_ATTR_INT,
	DRALET_ATTR_BOOL,
	DRALET_ATTR_STRING,
	DRALET_ATTR_VERSION,
};

enum dralet_health {
	DRALET_HEALTH_UNKNOWN = 0,
	DRALET_HEALTH_HEALTHY = 1,
	DRALET_HEALTH_UNHEALTHY = 2,
};

/* One attribute as the agent reads it back (pointers owned by the device). */
struct dralet_attr {
	const char *name;	/* qualified name; without a domain it belongs to the driver's */
	enum dralet_attr_type type;
	int64_t int_value;
	bool bool_value;
	const char *string_value;	/* string and version */
};

struct dralet_capacity {
	const char *name;
	const char *quantity;	/* canonical Kubernetes quantity, "80Gi" */
};

/*
 * Creates a device for PCI function @func and appends it to the devices the
 * current probe returns. The name is "<kind>-<address>" with the address's
 * ':' and '.' turned into '-' ("gpu-0000-3b-00-0"), followed by "-<suffix>"
 * when @suffix is given (suffix characters outside [a-z0-9] become '-').
 * The device starts with the attributes every PCI-backed device carries:
 * resource.kubernetes.io/pcieRoot, pciBusID and numaNode, dralet.dev/pcieSwitch
 * (address of the nearest switch upstream port, shared by all dralet drivers),
 * and in the driver's domain numaNode, pcieSwitch (the same address),
 * iommuGroup, vendorID, deviceID ("0x10de"), productName (from the PCI name
 * database; a backend may overwrite it), pcieGeneration and pcieLinkWidth —
 * each only when known — and type (@kind; a backend may set a finer one, e.g.
 * "mig"), which the shipped DeviceClasses select on.
 * @func may be NULL for devices without a PCI parent (then @suffix is required
 * and the name is "<kind>-<suffix>").
 * On success *ret_dev points to the device, owned by the probe's list.
 */
int dralet_device_new(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		      const char *kind, const char *suffix, struct dralet_device **ret_dev);

/* Attribute setters: @name is "id" (driver domain) or "domain/id". Setting an
 * existing name replaces its value. */
int dralet_device_set_int(struct dralet_device *dev, const char *name, int64_t value);
int dralet_device_set_bool(struct dralet_device *dev, const char *name, bool value);
int dralet_device_set_string(struct dralet_device *dev, const char *name, const char *value);
/* @value is normalised to semantic versioning 2.0.0 first: "550.54.15" stays,
 * "535.104.05" becomes "535.104.5", "12.4" becomes "12.4.0", "v1.2" "1.2.0". */
int dralet_device_set_version(struct dralet_device *dev, const char *name, const char *value);
int dralet_device_remove_attr(struct dralet_device *dev, const char *name);

/* Capacities. @quantity must be a valid Kubernetes quantity; the byte and
 * integer forms render the canonical one ("80Gi", "96"). */
int dralet_device_set_capacity(struct dralet_device *dev, const char *name, const char *quantity);
int dralet_device_set_capacity_bytes(struct dralet_device *dev, const char *name, uint64_t bytes);
int dralet_device_set_capacity_int(struct dralet_device *dev, const char *name, int64_t value);

/* Device nodes a container needs (copied). Duplicate paths are ignored. */
int dralet_device_add_node(struct dralet_device *dev, const struct dralet_devnode *node);

void dralet_device_set_health(struct dralet_device *dev, enum dralet_health health);

/* Backend private data, freed with @free_fn (may be NULL) when the device is. */
void dralet_device_set_private(struct dralet_device *dev, void *priv, void (*free_fn)(void *));

/* Getters (valid while the device lives). */
const char *dralet_device_name(const struct dralet_device *dev);
const char *dralet_device_kind(const struct dralet_device *dev);
const char *dralet_device_driver(const struct dralet_device *dev);
const struct dralet_pci_func *dralet_device_pci(const struct dralet_device *dev);
void *dralet_device_private(const struct dralet_device *dev);
enum dralet_health dralet_device_health(const struct dralet_device *dev);
size_t dralet_device_n_attrs(const struct dralet_device *dev);
const struct dralet_attr *dralet_device_attr(const struct dralet_device *dev, size_t i);
const struct dralet_attr *dralet_device_find_attr(const struct dralet_device *dev, const char *name);
size_t dralet_device_n_capacities(const struct dralet_device *dev);
const struct dralet_capacity *dralet_device_capacity(const struct dralet_device *dev, size_t i);
size_t dralet_device_n_nodes(const struct dralet_device *dev);
const struct dralet_devnode *dralet_device_node(const struct dralet_device *dev, size_t i);

/* Renders @bytes as the canonical Kubernetes quantity ("80Gi", "1536Mi",
 * "1000"). Returns the length written (excluding NUL) or -ENOSPC. */
int dralet_quantity_from_bytes(uint64_t bytes, char *buf, size_t size);
/* True when @s is a valid Kubernetes quantity string. */
bool dralet_quantity_valid(const char *s);

#ifdef __cplusplus
}
#endif
#endif /* DRALET_DEVICE_H */
