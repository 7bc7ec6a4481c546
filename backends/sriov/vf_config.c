/* SPDX-License-Identifier: Apache-2.0 */
#include "backends/sriov/vf_config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "backends/sriov/opaque.h"

static const char *const vf_kinds[] = { "VfConfig", NULL };

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

int vf_config_parse(const char *text, const char *api_version, struct vf_config *ret,
		    char *err, size_t errlen)
{
	struct json_object *obj;
	const char *kind;
	struct vf_config c = { 0 };
	int r;

	if (!text) {
		*ret = c;
		return 0;
	}
	r = opaque_parse(text, api_version, vf_kinds, &obj, &kind, err, errlen);
	if (r < 0)
		return r;
	json_object_object_foreach(obj, key, v) {
		long long n;

		if (opaque_header_key(key))
			continue;
		if (!strcmp(key, "driver")) {
			r = opaque_string(kind, key, v, c.driver, sizeof(c.driver), err, errlen);
			if (r == 0 && c.driver[0] && strcmp(c.driver, "vfio-pci")) {
				snprintf(err, errlen, "%s.driver \"%s\" is not supported (want "
					 "\"vfio-pci\", or \"\" for the kernel driver)", kind,
					 c.driver);
				r = -EINVAL;
			}
			c.has_driver = true;
		} else if (!strcmp(key, "mac")) {
			r = opaque_string(kind, key, v, c.mac, sizeof(c.mac), err, errlen);
			if (r == 0 && !valid_unicast_mac(c.mac)) {
				snprintf(err, errlen, "%s.mac \"%s\" is not a unicast MAC address "
					 "(aa:bb:cc:dd:ee:ff)", kind, json_object_get_string(v));
				r = -EINVAL;
			}
			c.has_mac = true;
		} else if (!strcmp(key, "vlan")) {
			r = opaque_int(kind, key, v, 0, 4094, &n, err, errlen);
			c.vlan = (int)n;
			c.has_vlan = true;
		} else if (!strcmp(key, "trust")) {
			r = opaque_bool(kind, key, v, &c.trust, err, errlen);
			c.has_trust = true;
		} else if (!strcmp(key, "spoofChk")) {
			r = opaque_bool(kind, key, v, &c.spoofchk, err, errlen);
			c.has_spoofchk = true;
		} else {
			snprintf(err, errlen, "%s: unknown field \"%.64s\" (known: driver, mac, "
				 "vlan, trust, spoofChk)", kind, key);
			r = -EINVAL;
		}
		if (r < 0)
			break;
	}
	json_object_put(obj);
	if (r < 0)
		return r;
	*ret = c;
	return 0;
}

int vf_config_check_supported(const struct vf_config *c, char *err, size_t errlen)
{
	const char *field = c->has_mac ? "mac" : c->has_vlan ? "vlan" : c->has_trust ? "trust"
			  : c->has_spoofchk ? "spoofChk" : NULL;

	if (!field)
		return 0;
	snprintf(err, errlen, "VfConfig.%s is not supported yet: VF MAC, VLAN, trust and "
		 "spoof-check settings need netlink configuration through the PF, which comes "
		 "with VF provisioning; remove the field", field);
	return -EOPNOTSUPP;
}
