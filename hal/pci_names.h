/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Vendor and device names. By default from the udev hardware database
 * (hwdb.bin, memory-mapped: each lookup is a trie walk, and it knows newer
 * devices than Debian's pci.ids), falling back to libpci's name lookup
 * (pci.ids) where no hwdb exists; with a pinned pci.ids file (tests), from
 * libpci with hwdb disabled so names never depend on the host. Private to hal/.
 */
#ifndef DRALET_HAL_PCI_NAMES_H
#define DRALET_HAL_PCI_NAMES_H

#include <stdint.h>
#include <pci/pci.h>

struct pci_names;

/* @pacc is used for pci.ids lookups and must outlive the names. */
struct pci_names *pci_names_open(struct pci_access *pacc, const char *pci_ids);
void pci_names_close(struct pci_names *n);

/* Names into @buf; NULL when unknown. */
const char *pci_names_vendor(struct pci_names *n, uint16_t vendor, char *buf, size_t size);
const char *pci_names_device(struct pci_names *n, uint16_t vendor, uint16_t device, char *buf,
			     size_t size);

#endif
