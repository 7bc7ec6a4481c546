/* SPDX-License-Identifier: Apache-2.0 */
/* The device model of the backend SDK (include/dralet/device.h). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/core/backend_call.h"
#include "agent/core/backend_ctx.h"
#include "agent/core/k8s_names.h"

struct dralet_device {
	char name[DRALET_DEVICE_NAME_MAX + 1];
	char *kind;
	struct dralet_backend_ctx *ctx;
	const struct dralet_pci_func *pci;
	struct dralet_attr *attrs;
	size_t n_attrs, cap_attrs;
	struct dralet_capacity *caps;
	size_t n_caps;
	struct dralet_devnode *nodes;
	size_t n_nodes;
	enum dralet_health health;
	const char *health_taint;	/* backend_ctx.h: a static string or NULL */
	bool node_changed;		/* backend_ctx.h: device_note_node_changed */
	const char *backend_cause;	/* backend_ctx.h: the backend's string or NULL */
	struct device_counters *counters;	/* device_counters.c; NULL: none */
	struct device_sharing *sharing;	/* device_sharing.c; NULL: not shared */
	void *priv;
	void (*priv_free)(void *);
};

/*
 * Attribute and capacity names are interned: a node has a few dozen distinct
 * names repeated over every device, so each is validated and copied once and
 * duplicates are found by pointer. The table lives for the whole process
 * (agent state) and is shared by every backend, behind a mutex.
 */
#define INTERN_MAX 4096	/* distinct names; beyond, names are still accepted but copied */

static struct {
	pthread_mutex_t lock;
	const char *slots[INTERN_MAX * 2];	/* open addressing, at most half full */
	size_t count;
} names = { .lock = PTHREAD_MUTEX_INITIALIZER };

static size_t name_hash(const char *s)
{
	size_t h = 1469598103934665603u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h;
}

/* The interned copy of a valid qualified name; NULL when @name is invalid or
 * on ENOMEM (*ret_err says which). */
static const char *intern_name(const char *name, int *ret_err)
{
	const char *found = NULL;
	size_t mask = INTERN_MAX * 2 - 1, i = name_hash(name) & mask;

	pthread_mutex_lock(&names.lock);
	for (; names.slots[i]; i = (i + 1) & mask)
		if (!strcmp(names.slots[i], name)) {
			found = names.slots[i];
			break;
		}
	if (!found) {
		if (!k8s_valid_qualified_name(name)) {
			*ret_err = -EINVAL;
		} else if (names.count >= INTERN_MAX) {
			*ret_err = -ENOSPC;
		} else if (!(found = strdup(name))) {
			*ret_err = -ENOMEM;
		} else {
			names.slots[i] = found;
			names.count++;
		}
	}
	pthread_mutex_unlock(&names.lock);
	return found;
}

static void attr_clear(struct dralet_attr *a)
{
	if (a->type == DRALET_ATTR_STRING || a->type == DRALET_ATTR_VERSION)
		free((char *)a->string_value);
}

void dralet_device_free(struct dralet_backend_ctx *ctx, struct dralet_device *dev)
{
	if (!dev)
		return;
	if (ctx)
		backend_call_remove(ctx, dev);
	if (dev->priv_free)
		dev->priv_free(dev->priv);
	device_counters_free(dev->counters);
	device_sharing_free(dev->sharing);
	for (size_t i = 0; i < dev->n_attrs; i++)
		attr_clear(&dev->attrs[i]);
	for (size_t i = 0; i < dev->n_caps; i++) {
		free((char *)dev->caps[i].quantity);
	}
	for (size_t i = 0; i < dev->n_nodes; i++)
		free((char *)dev->nodes[i].path);
	free(dev->attrs);
	free(dev->caps);
	free(dev->nodes);
	free(dev->kind);
	free(dev);
}

void device_sink_clear(struct device_sink *sink, struct dralet_backend_ctx *ctx)
{
	for (size_t i = 0; i < sink->n; i++)
		dralet_device_free(ctx, sink->items[i]);
	free(sink->items);
	sink->items = NULL;
	sink->n = sink->cap = 0;
}

static int reject(struct dralet_device *dev, const char *what, const char *name, const char *why)
{
	dralet_ctx_warn(dev->ctx, "device %s: %s %s dropped: %s", dev->name, what, name, why);
	return -EINVAL;
}

/* Appends "-<sanitised text>" to @out (collapsing runs of '-'). */
static void append_sanitised(char *out, size_t size, const char *text)
{
	size_t o = strlen(out);

	if (o + 1 < size)
		out[o++] = '-';
	for (const char *p = text; *p && o + 1 < size; p++) {
		char c = (char)((*p >= 'A' && *p <= 'Z') ? *p - 'A' + 'a' : *p);
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
			c = '-';
		if (c == '-' && out[o - 1] == '-')
			continue;
		out[o++] = c;
	}
	while (o > 0 && out[o - 1] == '-')
		o--;
	out[o] = '\0';
}

static void add_pci_attributes(struct dralet_device *dev, const struct dralet_pci_func *f)
{
	char id[8];

	dralet_device_set_string(dev, DRALET_ATTR_PCIE_ROOT, f->pcie_root);
	dralet_device_set_string(dev, DRALET_ATTR_PCI_BUS_ID, f->address);
	if (f->numa_node >= 0) {
		dralet_device_set_int(dev, DRALET_ATTR_NUMA_NODE, f->numa_node);
		dralet_device_set_int(dev, "numaNode", f->numa_node);
	}
	if (f->pcie_switch) {
		dralet_device_set_string(dev, DRALET_ATTR_PCIE_SWITCH, f->pcie_switch->address);
		dralet_device_set_string(dev, "pcieSwitch", f->pcie_switch->address);
	}
	if (f->iommu_group >= 0)
		dralet_device_set_int(dev, "iommuGroup", f->iommu_group);
	snprintf(id, sizeof(id), "0x%04x", f->vendor_id);
	dralet_device_set_string(dev, "vendorID", id);
	snprintf(id, sizeof(id), "0x%04x", f->device_id);
	dralet_device_set_string(dev, "deviceID", id);
	if (f->device_name)
		dralet_device_set_string(dev, "productName", f->device_name);
	if (f->link.current_mts) {
		static const unsigned gen_mts[] = { 2500, 5000, 8000, 16000, 32000, 64000 };
		for (unsigned g = 0; g < 6; g++)
			if (f->link.current_mts == gen_mts[g])
				dralet_device_set_int(dev, "pcieGeneration", g + 1);
	}
	if (f->link.current_width)
		dralet_device_set_int(dev, "pcieLinkWidth", f->link.current_width);
}

int dralet_device_new(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		      const char *kind, const char *suffix, struct dralet_device **ret_dev)
{
	struct device_sink *sink = ctx ? ctx->sink : NULL;
	struct dralet_device *dev;
	char name[128];

	if (!sink || !kind || !k8s_valid_dns_label(kind) || (!func && !suffix))
		return -EINVAL;
	snprintf(name, sizeof(name), "%s", kind);
	if (func)
		append_sanitised(name, sizeof(name), func->address);
	if (suffix)
		append_sanitised(name, sizeof(name), suffix);
	if (!k8s_valid_dns_label(name)) {
		dralet_ctx_warn(ctx, "device name %s is not a DNS label of at most 63 characters; "
			       "device skipped", name);
		return -EINVAL;
	}
	/* names derive from the function's address, so only the devices this
	 * probe made for the same function can collide; they are at the end */
	for (size_t i = sink->n; i-- > 0 && sink->items[i]->pci == func;)
		if (!strcmp(sink->items[i]->name, name))
			return -EEXIST;
	if (sink->n == sink->cap) {
		size_t cap = sink->cap ? sink->cap * 2 : 8;
		struct dralet_device **items = realloc(sink->items, cap * sizeof(*items));
		if (!items)
			return -ENOMEM;
		sink->items = items;
		sink->cap = cap;
	}
	dev = calloc(1, sizeof(*dev));
	if (!dev || !(dev->kind = strdup(kind))) {
		free(dev);
		return -ENOMEM;
	}
	strcpy(dev->name, name);
	dev->ctx = ctx;
	dev->pci = func;
	if (func)
		add_pci_attributes(dev, func);
	sink->items[sink->n++] = dev;
	/* every device says what it is, so DeviceClasses select by kind with CEL
	 * (deploy/deviceclasses.yaml); a backend may set a finer type */
	dralet_device_set_string(dev, "type", kind);
	*ret_dev = dev;
	return 0;
}

static struct dralet_attr *attr_slot(struct dralet_device *dev, const char *name, int *ret)
{
	struct dralet_attr *attrs;
	const char *interned;

	*ret = 0;
	interned = intern_name(name, ret);
	if (!interned) {
		if (*ret == -EINVAL)
			*ret = reject(dev, "attribute", name, "not a qualified name");
		return NULL;
	}
	for (size_t i = 0; i < dev->n_attrs; i++)
		if (dev->attrs[i].name == interned) {
			attr_clear(&dev->attrs[i]);
			return &dev->attrs[i];
		}
	if (dev->n_attrs + dev->n_caps >= DRALET_ATTRS_AND_CAPACITIES_MAX) {
		*ret = reject(dev, "attribute", name, "more than 32 attributes and capacities");
		return NULL;
	}
	if (dev->n_attrs == dev->cap_attrs) {
		/* small steps: hundreds of devices, most with 17-20 attributes */
		size_t cap = dev->cap_attrs ? dev->cap_attrs + 4 : 16;
		attrs = realloc(dev->attrs, cap * sizeof(*attrs));
		if (!attrs) {
			*ret = -ENOMEM;
			return NULL;
		}
		dev->attrs = attrs;
		dev->cap_attrs = cap;
	}
	attrs = dev->attrs;
	memset(&attrs[dev->n_attrs], 0, sizeof(*attrs));
	attrs[dev->n_attrs].name = interned;
	return &attrs[dev->n_attrs++];
}

int dralet_device_set_int(struct dralet_device *dev, const char *name, int64_t value)
{
	int r;
	struct dralet_attr *a = attr_slot(dev, name, &r);

	if (!a)
		return r;
	a->type = DRALET_ATTR_INT;
	a->int_value = value;
	return 0;
}

int dralet_device_set_bool(struct dralet_device *dev, const char *name, bool value)
{
	int r;
	struct dralet_attr *a = attr_slot(dev, name, &r);

	if (!a)
		return r;
	a->type = DRALET_ATTR_BOOL;
	a->bool_value = value;
	return 0;
}

static int set_text(struct dralet_device *dev, const char *name, const char *value,
		    enum dralet_attr_type type)
{
	char *copy;
	int r;
	struct dralet_attr *a;

	if (!value)
		return reject(dev, "attribute", name, "no value");
	if (strlen(value) > DRALET_ATTR_VALUE_MAX)
		return reject(dev, "attribute", name, "value longer than 64 characters");
	copy = strdup(value);
	if (!copy)
		return -ENOMEM;
	a = attr_slot(dev, name, &r);
	if (!a) {
		free(copy);
		return r;
	}
	a->type = type;
	a->string_value = copy;
	return 0;
}

int dralet_device_set_string(struct dralet_device *dev, const char *name, const char *value)
{
	return set_text(dev, name, value, DRALET_ATTR_STRING);
}

int dralet_device_set_version(struct dralet_device *dev, const char *name, const char *value)
{
	char v[DRALET_ATTR_VALUE_MAX + 1];

	if (!value || k8s_normalize_version(value, v, sizeof(v)) < 0)
		return reject(dev, "version attribute", name, "not a semantic version");
	return set_text(dev, name, v, DRALET_ATTR_VERSION);
}

int dralet_device_remove_attr(struct dralet_device *dev, const char *name)
{
	for (size_t i = 0; i < dev->n_attrs; i++)
		if (!strcmp(dev->attrs[i].name, name)) {
			attr_clear(&dev->attrs[i]);
			memmove(&dev->attrs[i], &dev->attrs[i + 1],
				(dev->n_attrs - i - 1) * sizeof(*dev->attrs));
			dev->n_attrs--;
			return 0;
		}
	return -ENOENT;
}

int dralet_device_set_capacity(struct dralet_device *dev, const char *name, const char *quantity)
{
	struct dralet_capacity *caps;
	const char *interned;
	char *q;
	int r = 0;

	interned = intern_name(name, &r);
	if (!interned)
		return r == -EINVAL ? reject(dev, "capacity", name, "not a qualified name") : r;
	if (!k8s_valid_quantity(quantity))
		return reject(dev, "capacity", name, "not a Kubernetes quantity");
	if (!(q = strdup(quantity)))
		return -ENOMEM;
	for (size_t i = 0; i < dev->n_caps; i++)
		if (dev->caps[i].name == interned) {
			free((char *)dev->caps[i].quantity);
			dev->caps[i].quantity = q;
			return 0;
		}
	if (dev->n_attrs + dev->n_caps >= DRALET_ATTRS_AND_CAPACITIES_MAX) {
		free(q);
		return reject(dev, "capacity", name, "more than 32 attributes and capacities");
	}
	caps = realloc(dev->caps, (dev->n_caps + 1) * sizeof(*caps));
	if (!caps) {
		free(q);
		return -ENOMEM;
	}
	dev->caps = caps;
	caps[dev->n_caps].name = interned;
	caps[dev->n_caps++].quantity = q;
	return 0;
}

int dralet_device_set_capacity_bytes(struct dralet_device *dev, const char *name, uint64_t bytes)
{
	char q[32];

	k8s_quantity_binary(bytes, q, sizeof(q));
	return dralet_device_set_capacity(dev, name, q);
}

int dralet_device_set_capacity_int(struct dralet_device *dev, const char *name, int64_t value)
{
	char q[32];

	k8s_quantity_decimal(value, q, sizeof(q));
	return dralet_device_set_capacity(dev, name, q);
}

int dralet_device_add_node(struct dralet_device *dev, const struct dralet_devnode *node)
{
	struct dralet_devnode *nodes;
	char *path;

	if (!node || !node->path || node->path[0] != '/')
		return -EINVAL;
	for (size_t i = 0; i < dev->n_nodes; i++)
		if (!strcmp(dev->nodes[i].path, node->path))
			return 0;
	nodes = realloc(dev->nodes, (dev->n_nodes + 1) * sizeof(*nodes));
	if (!nodes)
		return -ENOMEM;
	dev->nodes = nodes;
	if (!(path = strdup(node->path)))
		return -ENOMEM;
	nodes[dev->n_nodes] = *node;
	nodes[dev->n_nodes++].path = path;
	return 0;
}

/* Relaxed atomics: the agent changes health on its loop thread while a
 * backend may read it from a worker. */
void dralet_device_set_health(struct dralet_device *dev, enum dralet_health health)
{
	__atomic_store_n(&dev->health, health, __ATOMIC_RELAXED);
}

void dralet_device_set_private(struct dralet_device *dev, void *priv, void (*free_fn)(void *))
{
	if (dev->priv_free)
		dev->priv_free(dev->priv);
	dev->priv = priv;
	dev->priv_free = free_fn;
}

const char *dralet_device_name(const struct dralet_device *dev) { return dev->name; }
const char *dralet_device_kind(const struct dralet_device *dev) { return dev->kind; }
const char *dralet_device_driver(const struct dralet_device *dev) { return dev->ctx->driver; }
const struct dralet_pci_func *dralet_device_pci(const struct dralet_device *dev) { return dev->pci; }
void *dralet_device_private(const struct dralet_device *dev) { return dev->priv; }
enum dralet_health dralet_device_health(const struct dralet_device *dev)
{
	return __atomic_load_n(&dev->health, __ATOMIC_RELAXED);
}

void device_note_node_changed(struct dralet_device *dev)
{
	__atomic_store_n(&dev->node_changed, true, __ATOMIC_RELEASE);
}

bool device_take_node_changed(struct dralet_device *dev)
{
	return __atomic_exchange_n(&dev->node_changed, false, __ATOMIC_ACQ_REL);
}

void device_set_health_taint(struct dralet_device *dev, const char *key)
{
	__atomic_store_n(&dev->health_taint, key, __ATOMIC_RELAXED);
}

const char *device_health_taint(const struct dralet_device *dev)
{
	return __atomic_load_n(&dev->health_taint, __ATOMIC_RELAXED);
}

void device_set_backend_health_cause(struct dralet_device *dev, const char *key)
{
	__atomic_store_n(&dev->backend_cause, key, __ATOMIC_RELAXED);
}

const char *device_backend_health_cause(const struct dralet_device *dev)
{
	return __atomic_load_n(&dev->backend_cause, __ATOMIC_RELAXED);
}
size_t dralet_device_n_attrs(const struct dralet_device *dev) { return dev->n_attrs; }
size_t dralet_device_n_capacities(const struct dralet_device *dev) { return dev->n_caps; }
size_t dralet_device_n_nodes(const struct dralet_device *dev) { return dev->n_nodes; }
struct dralet_backend_ctx *dralet_device_ctx(const struct dralet_device *dev) { return dev->ctx; }
struct device_counters **device_counters_slot(struct dralet_device *dev) { return &dev->counters; }
const struct device_counters *device_counters_of(const struct dralet_device *dev)
{
	return dev->counters;
}
struct device_sharing **device_sharing_slot(struct dralet_device *dev) { return &dev->sharing; }
const struct device_sharing *device_sharing_of(const struct dralet_device *dev) { return dev->sharing; }

const struct dralet_attr *dralet_device_attr(const struct dralet_device *dev, size_t i)
{
	return i < dev->n_attrs ? &dev->attrs[i] : NULL;
}

const struct dralet_attr *dralet_device_find_attr(const struct dralet_device *dev, const char *name)
{
	for (size_t i = 0; i < dev->n_attrs; i++)
		if (!strcmp(dev->attrs[i].name, name))
			return &dev->attrs[i];
	return NULL;
}

const struct dralet_capacity *dralet_device_capacity(const struct dralet_device *dev, size_t i)
{
	return i < dev->n_caps ? &dev->caps[i] : NULL;
}

const struct dralet_devnode *dralet_device_node(const struct dralet_device *dev, size_t i)
{
	return i < dev->n_nodes ? &dev->nodes[i] : NULL;
}

int dralet_quantity_from_bytes(uint64_t bytes, char *buf, size_t size)
{
	return k8s_quantity_binary(bytes, buf, size);
}

bool dralet_quantity_valid(const char *s)
{
	return k8s_valid_quantity(s);
}
