/* SPDX-License-Identifier: Apache-2.0 */
#include "vf_config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <dralet/options.h>
#include <dralet/pci_ctl.h>

static const char *const vf_kinds[] = { "VfConfig", NULL };

/* The VF's place on the PF's network is the network's business, not the
 * tenant's: these settings act on traffic beyond the VF itself. */
const struct dralet_config_key vf_config_admin_keys[] = {
	{ "mac", "gives the VF any MAC address on the PF's network, another host's included" },
	{ "vlan", "puts the VF on any VLAN of the PF's network" },
	{ "qos", "raises the VF's VLAN priority above other traffic on the network" },
	{ "trust", "lets the VF change its MAC address and receive promiscuous and all-multicast "
		   "traffic" },
	{ "spoofChk", "turns off the PF's check that the VF sends only from its own MAC address" },
	{ "minTxRate", "reserves bandwidth of the PF for the VF, taking it from the PF's other "
		       "VFs" },
	{ "maxTxRate", "lifts the bandwidth cap the cluster admin set for the VF" },
	{ NULL, NULL },
};

/* The fastest Ethernet today is 800 Gb/s; a rate above is a typo. */
#define VF_RATE_MAX_MBPS 1000000

/* "aa:bb:cc:dd:ee:ff", unicast, not all zero; stored lower-case. */
static bool valid_unicast_mac(char *mac)
{
	unsigned octet[6];
	int n = 0;

	if (strlen(mac) != 17)
		return false;
	for (int i = 0; i < 17; i++) {
		if (i % 3 == 2 ? mac[i] != ':' : !isxdigit((unsigned char)mac[i]))
			return false;
		mac[i] = (char)tolower((unsigned char)mac[i]);
	}
	if (sscanf(mac, "%2x:%2x:%2x:%2x:%2x:%2x%n", &octet[0], &octet[1], &octet[2], &octet[3],
		   &octet[4], &octet[5], &n) != 6 || n != 17)
		return false;
	if (octet[0] & 1)
		return false;	/* multicast or broadcast */
	return octet[0] | octet[1] | octet[2] | octet[3] | octet[4] | octet[5];
}

static int parse_driver(const char *text, void *dst, char *why, size_t whylen)
{
	if (*text && strcmp(text, "vfio-pci")) {
		snprintf(why, whylen, "\"%.64s\" is not supported (want \"vfio-pci\", or \"\" for "
			 "the kernel's driver)", text);
		return -EINVAL;
	}
	memcpy(dst, text, strlen(text) + 1);	/* fits: char driver[16] */
	return 0;
}

static int parse_mac(const char *text, void *dst, char *why, size_t whylen)
{
	char mac[18];

	if (strlen(text) >= sizeof(mac) || (memcpy(mac, text, strlen(text) + 1),
					    !valid_unicast_mac(mac))) {
		snprintf(why, whylen, "\"%.64s\" is not a unicast MAC address (aa:bb:cc:dd:ee:ff)",
			 text);
		return -EINVAL;
	}
	memcpy(dst, mac, sizeof(mac));
	return 0;
}

static const char *const link_states[] = { "auto", "enable", "disable", NULL };

#define VF_FIELD(key, type, member, ...) \
	{ key, type, DRALET_AT(struct vf_config, member), __VA_ARGS__ }
#define VF_SEEN(member) DRALET_SEEN(struct vf_config, member)

static const struct dralet_field vf_fields[] = {
	VF_FIELD("driver", DRALET_FIELD_STRING, driver, .parse = parse_driver,
		 VF_SEEN(has_driver)),
	VF_FIELD("mac", DRALET_FIELD_STRING, mac, .parse = parse_mac, VF_SEEN(has_mac)),
	VF_FIELD("vlan", DRALET_FIELD_INT, vlan, .max = 4094, VF_SEEN(has_vlan)),
	VF_FIELD("qos", DRALET_FIELD_INT, qos, .max = 7, VF_SEEN(has_qos)),
	VF_FIELD("trust", DRALET_FIELD_BOOL, trust, VF_SEEN(has_trust)),
	VF_FIELD("spoofChk", DRALET_FIELD_BOOL, spoofchk, VF_SEEN(has_spoofchk)),
	VF_FIELD("linkState", DRALET_FIELD_ENUM, link_state, .names = link_states),
	VF_FIELD("minTxRate", DRALET_FIELD_INT, min_tx_rate, .max = VF_RATE_MAX_MBPS,
		 VF_SEEN(has_rate)),
	VF_FIELD("maxTxRate", DRALET_FIELD_INT, max_tx_rate, .max = VF_RATE_MAX_MBPS,
		 VF_SEEN(has_rate)),
	DRALET_FIELDS_END,
};

int vf_config_parse(const char *text, const char *api_version, struct vf_config *ret,
		    char *err, size_t errlen)
{
	const char *const api_versions[] = { api_version, NULL };
	const struct dralet_config_type type = { api_versions, vf_kinds, vf_fields };
	struct vf_config c = { .link_state = -1 };
	int r;

	if (!text) {
		*ret = c;
		return 0;
	}
	if ((r = dralet_config_decode(text, &type, &c, NULL, err, errlen)) < 0)
		return r;
	if (c.has_qos && c.qos && !c.has_vlan) {
		snprintf(err, errlen, "VfConfig.qos: needs a vlan (the priority goes into its tag)");
		return -EINVAL;
	}
	if (c.has_qos && c.qos && c.has_vlan && !c.vlan) {
		snprintf(err, errlen, "VfConfig.qos: %d needs a vlan other than 0", c.qos);
		return -EINVAL;
	}
	if (c.max_tx_rate && c.min_tx_rate > c.max_tx_rate) {
		snprintf(err, errlen, "VfConfig: minTxRate %lld is above maxTxRate %lld",
			 c.min_tx_rate, c.max_tx_rate);
		return -EINVAL;
	}
	*ret = c;
	return 0;
}

const char *vf_config_first_setting(const struct vf_config *c)
{
	return c->has_mac ? "mac" : c->has_vlan ? "vlan" : c->has_qos ? "qos"
	     : c->has_trust ? "trust" : c->has_spoofchk ? "spoofChk"
	     : c->link_state >= 0 ? "linkState" : c->has_rate ? "minTxRate/maxTxRate" : NULL;
}

bool vf_config_has_settings(const struct vf_config *c)
{
	return vf_config_first_setting(c) != NULL;
}
