/* SPDX-License-Identifier: Apache-2.0 */
#include "hal/pci_names.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libudev.h>

/* A node repeats a few dozen ids over hundreds of functions (VFs above
 * all), and a hwdb lookup is a trie walk with pattern matching: remember. */
#define CACHE_SLOTS 256

struct cached {
	uint64_t key;		/* vendor << 17 | device; bit 16 marks a vendor's own name */
	bool used, found;
	char *name;
};

struct pci_names {
	struct pci_access *pacc;
	struct udev *udev;
	struct udev_hwdb *hwdb;		/* NULL: libpci's names */
	struct cached cache[CACHE_SLOTS];
};

struct pci_names *pci_names_open(struct pci_access *pacc, const char *pci_ids)
{
	struct pci_names *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->pacc = pacc;
	if (!pci_ids && (n->udev = udev_new()))
		n->hwdb = udev_hwdb_new(n->udev);
	return n;
}

void pci_names_close(struct pci_names *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < CACHE_SLOTS; i++)
		free(n->cache[i].name);
	udev_hwdb_unref(n->hwdb);
	udev_unref(n->udev);
	free(n);
}

static const char *hwdb_value(struct pci_names *n, const char *modalias, const char *key,
			      char *buf, size_t size)
{
	struct udev_list_entry *e;

	udev_list_entry_foreach(e, udev_hwdb_get_properties_list_entry(n->hwdb, modalias, 0))
		if (!strcmp(udev_list_entry_get_name(e), key)) {
			snprintf(buf, size, "%s", udev_list_entry_get_value(e));
			return buf;
		}
	return NULL;
}

/* The slot for @key: its cached answer, or an empty slot to fill (the table
 * never fills up for real nodes; when it does, the slot is reused). */
static struct cached *slot_of(struct pci_names *n, uint64_t key)
{
	size_t i = (key * 2654435761u) % CACHE_SLOTS;

	for (size_t probe = 0; probe < CACHE_SLOTS; probe++, i = (i + 1) % CACHE_SLOTS)
		if (!n->cache[i].used || n->cache[i].key == key)
			return &n->cache[i];
	return &n->cache[i];
}

static const char *remember(struct cached *c, uint64_t key, const char *name, char *buf,
			    size_t size)
{
	free(c->name);
	c->used = true;
	c->key = key;
	c->found = name != NULL;
	c->name = name ? strdup(name) : NULL;
	if (name && name != buf)
		snprintf(buf, size, "%s", name);
	return name ? buf : NULL;
}

static const char *recall(const struct cached *c, char *buf, size_t size)
{
	if (!c->found)
		return NULL;
	snprintf(buf, size, "%s", c->name);
	return buf;
}

static const char *lookup_vendor(struct pci_names *n, uint16_t vendor, char *buf, size_t size)
{
	char modalias[32];

	if (n->hwdb) {
		snprintf(modalias, sizeof(modalias), "pci:v%08X", vendor);
		return hwdb_value(n, modalias, "ID_VENDOR_FROM_DATABASE", buf, size);
	}
	return pci_lookup_name(n->pacc, buf, (int)size, PCI_LOOKUP_VENDOR | PCI_LOOKUP_NO_NUMBERS,
			       vendor);
}

static const char *lookup_device(struct pci_names *n, uint16_t vendor, uint16_t device,
				 char *buf, size_t size)
{
	char modalias[32];

	if (n->hwdb) {
		snprintf(modalias, sizeof(modalias), "pci:v%08Xd%08X", vendor, device);
		return hwdb_value(n, modalias, "ID_MODEL_FROM_DATABASE", buf, size);
	}
	return pci_lookup_name(n->pacc, buf, (int)size, PCI_LOOKUP_DEVICE | PCI_LOOKUP_NO_NUMBERS,
			       vendor, device);
}

const char *pci_names_vendor(struct pci_names *n, uint16_t vendor, char *buf, size_t size)
{
	uint64_t key = (uint64_t)vendor << 17 | 0x10000u;
	struct cached *c = slot_of(n, key);

	if (c->used && c->key == key)
		return recall(c, buf, size);
	return remember(c, key, lookup_vendor(n, vendor, buf, size), buf, size);
}

const char *pci_names_device(struct pci_names *n, uint16_t vendor, uint16_t device, char *buf,
			     size_t size)
{
	uint64_t key = (uint64_t)vendor << 17 | device;
	struct cached *c = slot_of(n, key);

	if (c->used && c->key == key)
		return recall(c, buf, size);
	return remember(c, key, lookup_device(n, vendor, device, buf, size), buf, size);
}
