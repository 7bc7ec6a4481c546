/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PCIe topology from the device path (linux-devices.md 1.3 and 9): the
 * pcieRoot is the first component under devices/, the parent is the nearest
 * PCI address above the function, and port types follow the path's shape
 * because the PCIe capability that states them is beyond the 64 bytes of
 * config space an unprivileged reader gets.
 */
#include <stdio.h>
#include <string.h>

#include "hal/scan_internal.h"

static bool is_bridge(const struct dralet_pci_func *f)
{
	return (f->class_code >> 8) == 0x0604 || (f->class_code >> 8) == 0x0609;
}

/* Fills pcie_root and parent from the path. */
static void locate(struct hal_scan_private *s, struct dralet_pci_func *f)
{
	const char *p = f->sysfs_path + strlen("devices/");
	const char *slash = strchr(p, '/');
	size_t len = slash ? (size_t)(slash - p) : strlen(p);
	char parent_path[4096];

	if (len < sizeof(f->pcie_root)) {
		memcpy(f->pcie_root, p, len);
		f->pcie_root[len] = '\0';
	}
	/* the parent is the owner of the path without its last component */
	snprintf(parent_path, sizeof(parent_path), "%s", f->sysfs_path);
	char *last = strrchr(parent_path, '/');
	if (last) {
		*last = '\0';
		f->parent = scan_owner_of_path(s, parent_path);
	}
}

/* Port types need the parent's type first; resolve recursively (paths are
 * shallow, and each function is typed once). */
#define TYPED 1
#define HAS_BRIDGE_CHILD 2

static void type_port(struct hal_scan_private *s, struct dralet_pci_func *f, unsigned char *flags,
		      unsigned depth)
{
	size_t idx = (size_t)(f - s->funcs);

	if ((flags[idx] & TYPED) || depth > 64)
		return;
	flags[idx] |= TYPED;
	if (f->parent)
		type_port(s, (struct dralet_pci_func *)f->parent, flags, depth + 1);
	if (!is_bridge(f)) {
		f->port_type = DRALET_PCI_ENDPOINT;
	} else if (!f->parent) {
		f->port_type = DRALET_PCI_ROOT_PORT;
	} else if (f->parent->port_type == DRALET_PCI_SWITCH_UPSTREAM) {
		f->port_type = DRALET_PCI_SWITCH_DOWNSTREAM;
	} else if (flags[idx] & HAS_BRIDGE_CHILD) {
		f->port_type = DRALET_PCI_SWITCH_UPSTREAM;
	} else {
		f->port_type = DRALET_PCI_OTHER_BRIDGE;
	}
}

void topology_resolve(struct hal_scan_private *s)
{
	unsigned char *flags = arena_alloc(s->arena, s->n_funcs + 1);

	if (!flags)
		return;
	for (size_t i = 0; i < s->n_funcs; i++)
		locate(s, &s->funcs[i]);
	for (size_t i = 0; i < s->n_funcs; i++)
		if (s->funcs[i].parent && is_bridge(&s->funcs[i]))
			flags[s->funcs[i].parent - s->funcs] |= HAS_BRIDGE_CHILD;
	for (size_t i = 0; i < s->n_funcs; i++)
		type_port(s, &s->funcs[i], flags, 0);
	for (size_t i = 0; i < s->n_funcs; i++) {
		struct dralet_pci_func *f = &s->funcs[i];
		for (const struct dralet_pci_func *up = f->parent; up; up = up->parent)
			if (up->port_type == DRALET_PCI_SWITCH_UPSTREAM) {
				f->pcie_switch = up;
				break;
			}
	}
}
