/* SPDX-License-Identifier: Apache-2.0 */
/*
 * VfConfig: the opaque configuration of a virtual function (net.dralet.dev
 * and sriov.dralet.dev, apiVersion <driver group>/v1alpha1):
 *
 *   {"apiVersion": "net.dralet.dev/v1alpha1", "kind": "VfConfig",
 *    "driver": "vfio-pci" | "",    // "" = the kernel network driver
 *    "mac": "02:00:00:00:00:01",   // unicast, not all zero
 *    "vlan": 0..4094,              // 0 = untagged
 *    "trust": true|false, "spoofChk": true|false}
 *
 * Every field is validated now. Applying mac, vlan, trust and spoofChk needs
 * netlink VF settings on the PF, and moving a VF between drivers needs
 * rebinding; both come with VF provisioning, so until then validation
 * rejects the netlink fields and prepare rejects a driver change.
 */
#ifndef DRALET_BACKENDS_VF_CONFIG_H
#define DRALET_BACKENDS_VF_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

struct vf_config {
	bool has_driver;
	char driver[16];	/* "" or "vfio-pci" */
	bool has_mac;
	char mac[18];
	bool has_vlan;
	int vlan;
	bool has_trust, trust;
	bool has_spoofchk, spoofchk;
};

/* Parses and validates @text (NULL: an empty config). -EINVAL with the
 * reason in @err. */
int vf_config_parse(const char *text, const char *api_version, struct vf_config *ret,
		    char *err, size_t errlen);

/* -EOPNOTSUPP with the reason in @err when @c asks for something that cannot
 * be applied yet (the netlink fields). */
int vf_config_check_supported(const struct vf_config *c, char *err, size_t errlen);

#endif
