/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SR-IOV policies: the "sriov" section of the agent's configuration
 * (docs/sriov.md). Strict like the rest of the file (the decoder of
 * agent/core/options_json.h): unknown keys, wrong types and out-of-range
 * values are errors naming the key's path (sriov.policies[2].numVfs).
 *
 *   sriov:
 *     policies:
 *     - name: e810-vfs                # unique, DNS label
 *       pfSelector:                   # every field given must match
 *         vendor: "8086"              # hex, "0x" optional
 *         device: "1593"
 *         pciAddresses: ["0000:3b:00.0"]
 *         pfNames: ["ens1f0"]         # the PF's network interface
 *         drivers: ["ice"]            # the PF's bound driver
 *       numVfs: 8
 *       vfDriver: default             # default (the kernel's) | vfio-pci | none
 *       vfSettings:                   # NIC PFs: set through the PF (rtnetlink)
 *         macBase: "02:00:00:00:10:00"    # VF N gets macBase + N
 *         vlan: 100
 *         qos: 0
 *         trust: false
 *         spoofChk: true
 *         linkState: auto             # auto | enable | disable
 *         minTxRate: 0                # Mbps, 0 = no limit
 *         maxTxRate: 10000
 *       onDemand: false               # true: numVfs is the most VFs the PF gets, made
 *                                     # when a claim is prepared, removed after the last
 *                 # (docs/sriov.md, "SR-IOV VFs on demand")
 *
 * Strings point into the configuration's JSON tree, which must outlive the
 * policies (config_free frees both).
 */
#ifndef DRALET_SRIOV_POLICY_CONFIG_H
#define DRALET_SRIOV_POLICY_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hal/vf_netlink.h"

enum sriov_vf_driver {
	SRIOV_VF_DRIVER_DEFAULT,	/* whatever the kernel binds (autoprobe on) */
	SRIOV_VF_DRIVER_VFIO,		/* vfio-pci (autoprobe off, then bound) */
	SRIOV_VF_DRIVER_NONE,		/* no driver (autoprobe off) */
};

struct sriov_pf_selector {
	bool has_vendor, has_device;
	uint16_t vendor, device;
	const char **pci_addresses;
	size_t n_pci_addresses;
	const char **pf_names;
	size_t n_pf_names;
	const char **drivers;
	size_t n_drivers;
};

struct sriov_policy {
	const char *name;
	struct sriov_pf_selector pf;
	unsigned num_vfs;
	enum sriov_vf_driver vf_driver;
	bool has_settings;
	/* the settings every VF gets; with a MAC base, VF N's MAC is base + N */
	struct dralet_vf_settings settings;
	/* onDemand: the PF's count is not applied; the sriov backend publishes
	 * VFs 0..num_vfs-1 whether they exist or not and makes them at prepare */
	bool on_demand;
};

struct sriov_policies {
	struct sriov_policy *items;
	size_t n;
};

struct dralet_decoder;
struct dralet_value;

/* The decode of the configuration's "sriov" field (DRALET_FIELD_CUSTOM,
 * agent/core/options_json.h): replaces *(struct sriov_policies **)@dst with
 * the policies of @v (free with sriov_policies_free); -EINVAL with
 * "sriov.policies[<i>].<key>: problem" in the decoder's message. */
int sriov_policies_decode(struct dralet_decoder *d, const struct dralet_value *v, void *dst);
void sriov_policies_free(struct sriov_policies *p);

const char *sriov_vf_driver_name(enum sriov_vf_driver d);

struct dralet_pci_func;

/* True when @pf matches every field @sel gives. */
bool sriov_selector_matches(const struct sriov_pf_selector *sel, const struct dralet_pci_func *pf);

/* The policy managing SR-IOV PF @pf: the first that selects it, or NULL.
 * *ret_also (may be NULL) gets a later policy that selects it too. */
const struct sriov_policy *sriov_policy_for(const struct sriov_policies *p,
					    const struct dralet_pci_func *pf,
					    const struct sriov_policy **ret_also);

/* VF @index's MAC under a MAC base: the base plus @index in its last three
 * octets (the NIC-specific part). */
void sriov_policy_vf_mac(const struct sriov_policy *p, unsigned index, uint8_t mac[6]);

#endif
