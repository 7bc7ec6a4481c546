/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PF selectors of the sriov backend's "pfs" option: a comma-separated list of
 *   0000:3b:00.0     the PF at this PCI address
 *   8086:1593        PFs with this vendor:device id (hex)
 *   driver=ice       PFs bound to this driver
 *   netdev=ens1f0    the PF with this network interface
 * each optionally followed by "#N" or "#N-M" to take only VFs N..M of the PF.
 */
#ifndef DRALET_BACKENDS_SRIOV_SELECTOR_H
#define DRALET_BACKENDS_SRIOV_SELECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dralet/pci.h>

enum sriov_selector_type {
	SRIOV_SEL_ADDRESS,
	SRIOV_SEL_IDS,
	SRIOV_SEL_DRIVER,
	SRIOV_SEL_NETDEV,
};

struct sriov_selector {
	enum sriov_selector_type type;
	char value[64];		/* address, driver or netdev name */
	uint16_t vendor, device;
	int first_vf, last_vf;	/* VF index range; -1/-1 for every VF */
};

/* Parses @text into a malloc'd array (*ret_sel, free() it); an empty or NULL
 * text gives none. -EINVAL with the offending selector in @err. */
int sriov_selectors_parse(const char *text, struct sriov_selector **ret_sel, size_t *ret_n,
			  char *err, size_t errlen);

/* True when a selector takes VF @vf (its PF matches and the index is in range). */
bool sriov_selectors_match_vf(const struct sriov_selector *sel, size_t n,
			      const struct dralet_pci_func *vf);

#endif
