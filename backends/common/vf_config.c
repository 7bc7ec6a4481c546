/* SPDX-License-Identifier: Apache-2.0 */
#include "vf_config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <dralet/pci_ctl.h>

#include "opaque.h"

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

static int parse_link_state(const char *kind, struct json_object *v, int *ret, char *err,
			    size_t errlen)
{
	char s[16];
	int r = opaque_string(kind, "linkState", v, s, sizeof(s), err, errlen);

	if (r < 0)
		return r;
	if (!strcmp(s, "auto"))
		*ret = DRALET_VF_LINK_AUTO;
	else if (!strcmp(s, "enable"))
		*ret = DRALET_VF_LINK_ENABLE;
	else if (!strcmp(s, "disable"))
		*ret = DRALET_VF_LINK_DISABLE;
	else {
		snprintf(err, errlen, "%s.linkState \"%s\" is not one of auto, enable, disable",
			 kind, s);
		return -EINVAL;
	}
	return 0;
}

static int parse_field(const char *kind, const char *key, struct json_object *v,
		       struct vf_config *c, char *err, size_t errlen)
{
	long long n;
	int r;

	if (!strcmp(key, "driver")) {
		r = opaque_string(kind, key, v, c->driver, sizeof(c->driver), err, errlen);
		if (r == 0 && c->driver[0] && strcmp(c->driver, "vfio-pci")) {
			snprintf(err, errlen, "%s.driver \"%s\" is not supported (want \"vfio-pci\", "
				 "or \"\" for the kernel's driver)", kind, c->driver);
			r = -EINVAL;
		}
		c->has_driver = true;
	} else if (!strcmp(key, "mac")) {
		r = opaque_string(kind, key, v, c->mac, sizeof(c->mac), err, errlen);
		if (r == 0 && !valid_unicast_mac(c->mac)) {
			snprintf(err, errlen, "%s.mac \"%s\" is not a unicast MAC address "
				 "(aa:bb:cc:dd:ee:ff)", kind, json_object_get_string(v));
			r = -EINVAL;
		}
		c->has_mac = true;
	} else if (!strcmp(key, "vlan")) {
		r = opaque_int(kind, key, v, 0, 4094, &n, err, errlen);
		c->vlan = (int)n;
		c->has_vlan = true;
	} else if (!strcmp(key, "qos")) {
		r = opaque_int(kind, key, v, 0, 7, &n, err, errlen);
		c->qos = (int)n;
		c->has_qos = true;
	} else if (!strcmp(key, "trust")) {
		r = opaque_bool(kind, key, v, &c->trust, err, errlen);
		c->has_trust = true;
	} else if (!strcmp(key, "spoofChk")) {
		r = opaque_bool(kind, key, v, &c->spoofchk, err, errlen);
		c->has_spoofchk = true;
	} else if (!strcmp(key, "linkState")) {
		r = parse_link_state(kind, v, &c->link_state, err, errlen);
	} else if (!strcmp(key, "minTxRate")) {
		r = opaque_int(kind, key, v, 0, VF_RATE_MAX_MBPS, &c->min_tx_rate, err, errlen);
		c->has_rate = true;
	} else if (!strcmp(key, "maxTxRate")) {
		r = opaque_int(kind, key, v, 0, VF_RATE_MAX_MBPS, &c->max_tx_rate, err, errlen);
		c->has_rate = true;
	} else {
		snprintf(err, errlen, "%s: unknown field \"%.64s\" (known: driver, mac, vlan, qos, "
			 "trust, spoofChk, linkState, minTxRate, maxTxRate)", kind, key);
		r = -EINVAL;
	}
	return r;
}

int vf_config_parse(const char *text, const char *api_version, struct vf_config *ret,
		    char *err, size_t errlen)
{
	struct json_object *obj;
	const char *kind;
	struct vf_config c = { .link_state = -1 };
	int r;

	if (!text) {
		*ret = c;
		return 0;
	}
	r = opaque_parse(text, api_version, vf_kinds, &obj, &kind, err, errlen);
	if (r < 0)
		return r;
	json_object_object_foreach(obj, key, v) {
		if (opaque_header_key(key))
			continue;
		if ((r = parse_field(kind, key, v, &c, err, errlen)) < 0)
			break;
	}
	json_object_put(obj);
	if (r < 0)
		return r;
	if (c.has_qos && c.qos && !c.has_vlan) {
		snprintf(err, errlen, "%s.qos needs a vlan (the priority goes into its tag)", kind);
		return -EINVAL;
	}
	if (c.has_qos && c.qos && c.has_vlan && !c.vlan) {
		snprintf(err, errlen, "%s.qos %d needs a vlan other than 0", kind, c.qos);
		return -EINVAL;
	}
	if (c.max_tx_rate && c.min_tx_rate > c.max_tx_rate) {
		snprintf(err, errlen, "%s.minTxRate %lld is above maxTxRate %lld", kind,
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
