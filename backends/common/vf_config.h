/* SPDX-License-Identifier: Apache-2.0 */
/*
 * VfConfig: the opaque configuration of a virtual function (net.dralet.dev
 * and sriov.dralet.dev, apiVersion <driver group>/v1alpha1):
 *
 *   {"apiVersion": "sriov.dralet.dev/v1alpha1", "kind": "VfConfig",
 *    "driver": "vfio-pci" | "",    // "" = the kernel's own driver for the VF
 *    "mac": "02:00:00:00:00:01",   // unicast, not all zero
 *    "vlan": 0..4094,              // 0 = untagged
 *    "qos": 0..7,                  // VLAN priority, with vlan
 *    "trust": true|false, "spoofChk": true|false,
 *    "linkState": "auto" | "enable" | "disable",
 *    "minTxRate": Mbps, "maxTxRate": Mbps}   // 0 = no limit
 *
 * driver moves the VF at prepare (driver_override + drivers_probe) and back
 * at unprepare; the other fields are VF settings kept by the PF's driver,
 * set through the PF (rtnetlink) and restored at unprepare, so they need a
 * PF with a network interface.
 */
#ifndef DRALET_BACKENDS_VF_CONFIG_H
#define DRALET_BACKENDS_VF_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include <dralet/backend.h>

/* The VfConfig keys only the cluster admin may set (struct dralet_config_key):
 * mac, vlan, qos, trust, spoofChk, minTxRate, maxTxRate (docs/sriov.md). */
extern const struct dralet_config_key vf_config_admin_keys[];

struct vf_config {
	bool has_driver;
	char driver[16];	/* "" or "vfio-pci" */
	bool has_mac;
	char mac[18];
	bool has_vlan;
	int vlan;
	bool has_qos;
	int qos;
	bool has_trust, trust;
	bool has_spoofchk, spoofchk;
	int link_state;		/* -1 unset, else enum dralet_vf_link_state */
	bool has_rate;		/* minTxRate or maxTxRate given */
	long long min_tx_rate, max_tx_rate;
};

/* Parses and validates @text (NULL: an empty config). -EINVAL with the
 * reason in @err. */
int vf_config_parse(const char *text, const char *api_version, struct vf_config *ret,
		    char *err, size_t errlen);

/* True when @c asks for VF settings set through the PF (anything but driver). */
bool vf_config_has_settings(const struct vf_config *c);

/* The first VF setting @c asks for ("mac", "vlan" ...), or NULL. */
const char *vf_config_first_setting(const struct vf_config *c);

#endif
