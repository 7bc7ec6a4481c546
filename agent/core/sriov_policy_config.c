/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/core/sriov_policy_config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/core/k8s_names.h"
#include "agent/core/options_json.h"
#include "agent/lib/err_msg.h"
#include "hal/hal.h"

/* A Linux PF has at most 65535 VFs (sriov_totalvfs is a u16) */
#define SRIOV_MAX_VFS 65535
#define RATE_MAX_MBPS 1000000

static const char *const link_states[] = { "auto", "enable", "disable", NULL };

static int parse_hex16(const char *s, void *dst, char *why, size_t whylen)
{
	const char *digits = s;
	char *end;
	unsigned long n;

	if (!strncmp(digits, "0x", 2) || !strncmp(digits, "0X", 2))
		digits += 2;
	n = strtoul(digits, &end, 16);
	if (!*digits || *end || strlen(digits) > 4 || !isxdigit((unsigned char)*digits))
		return err_printf(why, whylen, -EINVAL, "\"%.64s\" is not a 16-bit hex id", s);
	*(uint16_t *)dst = (uint16_t)n;
	return 0;
}

/* A list of strings, each checked by @valid; the pointers borrow the JSON. */
static int decode_list(struct dralet_decoder *d, const struct dralet_value *value,
		       bool (*valid)(const char *), const char *what, const char ***ret,
		       size_t *ret_n)
{
	struct json_object *v = decoder_json(value);
	const char **list;
	size_t n;

	if (!json_object_is_type(v, json_type_array))
		return decoder_fail(d, -EINVAL, "must be a list of %s", what);
	n = json_object_array_length(v);
	if (!n)
		return decoder_fail(d, -EINVAL, "must not be empty (leave it out)");
	list = calloc(n + 1, sizeof(*list));
	if (!list)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(v, i);

		if (!json_object_is_type(e, json_type_string) || !valid(json_object_get_string(e))) {
			free(list);
			decoder_push_index(d, i);
			return decoder_fail(d, -EINVAL, "must be %s", what);
		}
		list[i] = json_object_get_string(e);
	}
	*ret = list;
	*ret_n = n;
	return 0;
}

static bool valid_address(const char *s)
{
	unsigned d, b, dv, f;
	char canon[32];

	if (!hal_parse_address(s, &d, &b, &dv, &f))
		return false;
	/* only the kernel's spelling, so it compares equal to the scan's */
	snprintf(canon, sizeof(canon), "%04x:%02x:%02x.%x", d, b, dv, f);
	return !strcmp(canon, s);
}

static bool valid_ifname(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 15 || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (; *s; s++)
		if (*s == '/' || *s == ':' || isspace((unsigned char)*s))
			return false;
	return true;
}

static bool valid_driver(const char *s)
{
	if (!*s || strlen(s) > 63)
		return false;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_' || *s == '-'))
			return false;
	return true;
}

static int decode_addresses(struct dralet_decoder *d, const struct dralet_value *v, void *dst)
{
	struct sriov_pf_selector *sel = dst;

	return decode_list(d, v, valid_address, "PCI addresses in lower case (\"0000:3b:00.0\")",
			   &sel->pci_addresses, &sel->n_pci_addresses);
}

static int decode_pf_names(struct dralet_decoder *d, const struct dralet_value *v, void *dst)
{
	struct sriov_pf_selector *sel = dst;

	return decode_list(d, v, valid_ifname, "network interface names", &sel->pf_names,
			   &sel->n_pf_names);
}

static int decode_drivers(struct dralet_decoder *d, const struct dralet_value *v, void *dst)
{
	struct sriov_pf_selector *sel = dst;

	return decode_list(d, v, valid_driver, "kernel driver names", &sel->drivers,
			   &sel->n_drivers);
}

#define HEX_ID(key, member, has) \
	{ key, DRALET_FIELD_STRING, DRALET_AT(struct sriov_pf_selector, member), \
	  .parse = parse_hex16, .help = "a quoted hex id (\"8086\")", \
	  DRALET_SEEN(struct sriov_pf_selector, has) }

static const struct dralet_field selector_fields[] = {
	HEX_ID("vendor", vendor, has_vendor),
	HEX_ID("device", device, has_device),
	{ "pciAddresses", DRALET_FIELD_CUSTOM, .decode = decode_addresses },
	{ "pfNames", DRALET_FIELD_CUSTOM, .decode = decode_pf_names },
	{ "drivers", DRALET_FIELD_CUSTOM, .decode = decode_drivers },
	DRALET_FIELDS_END,
};

/* pfSelector: the fields, then what only the whole selector tells */
static int decode_selector(struct dralet_decoder *d, const struct dralet_value *v, void *dst)
{
	struct sriov_pf_selector *sel = dst;
	int r = decoder_object(d, decoder_json(v), selector_fields, sel);

	if (r < 0)
		return r;
	if (!sel->has_vendor && !sel->has_device && !sel->n_pci_addresses && !sel->n_pf_names &&
	    !sel->n_drivers)
		return decoder_fail(d, -EINVAL, "selects every PF; give at least one of vendor, "
				    "device, pciAddresses, pfNames, drivers");
	if (sel->has_device && !sel->has_vendor)
		return decoder_fail(d, -EINVAL, "device needs vendor (device ids are per vendor)");
	return 0;
}

static int parse_mac_base(const char *text, void *dst, char *why, size_t whylen)
{
	uint8_t *mac = dst;

	if (hal_vf_parse_mac(text, mac) < 0 || !(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] |
						 mac[5]))
		return err_printf(why, whylen, -EINVAL,
				  "\"%.64s\" is not a unicast MAC address (aa:bb:cc:dd:ee:ff)",
				  text);
	return 0;
}

#define SETTING(key, type, member, ...) \
	{ key, type, DRALET_AT(struct dralet_vf_settings, member), __VA_ARGS__ }

static const struct dralet_field settings_fields[] = {
	SETTING("macBase", DRALET_FIELD_STRING, mac, .parse = parse_mac_base,
		.help = "a quoted MAC address", DRALET_SEEN(struct dralet_vf_settings, has_mac)),
	SETTING("vlan", DRALET_FIELD_INT, vlan, .max = 4094,
		DRALET_SEEN(struct dralet_vf_settings, has_vlan)),
	SETTING("qos", DRALET_FIELD_INT, qos, .max = 7),
	SETTING("trust", DRALET_FIELD_BOOL, trust),
	SETTING("spoofChk", DRALET_FIELD_BOOL, spoof_check),
	SETTING("linkState", DRALET_FIELD_ENUM, link_state, .names = link_states),
	SETTING("minTxRate", DRALET_FIELD_INT, min_tx_mbps, .max = RATE_MAX_MBPS,
		DRALET_SEEN(struct dralet_vf_settings, has_rate)),
	SETTING("maxTxRate", DRALET_FIELD_INT, max_tx_mbps, .max = RATE_MAX_MBPS,
		DRALET_SEEN(struct dralet_vf_settings, has_rate)),
	DRALET_FIELDS_END,
};

/* vfSettings: the fields, then the rules between them (and numVfs, decoded before) */
static int decode_settings(struct dralet_decoder *d, const struct dralet_value *v, void *dst)
{
	struct sriov_policy *p = dst;
	struct dralet_vf_settings *s = &p->settings;
	uint32_t low;
	size_t mark;
	int r = decoder_object(d, decoder_json(v), settings_fields, s);

	if (r < 0)
		return r;
	low = (uint32_t)s->mac[3] << 16 | (uint32_t)s->mac[4] << 8 | s->mac[5];
	if (s->has_mac && p->num_vfs && low + (p->num_vfs - 1) > 0xffffff) {
		mark = decoder_push_key(d, "macBase");
		r = decoder_fail(d, -EINVAL, "\"%02x:%02x:%02x:%02x:%02x:%02x\" plus %u VFs runs "
				 "past the last address of its prefix", s->mac[0], s->mac[1],
				 s->mac[2], s->mac[3], s->mac[4], s->mac[5], p->num_vfs);
		decoder_pop(d, mark);
		return r;
	}
	if (s->qos && (!s->has_vlan || !s->vlan)) {
		decoder_push_key(d, "qos");
		return decoder_fail(d, -EINVAL, "needs a vlan other than 0");
	}
	if (s->has_rate && s->max_tx_mbps && s->min_tx_mbps > s->max_tx_mbps)
		return decoder_fail(d, -EINVAL, "minTxRate %u is above maxTxRate %u",
				    s->min_tx_mbps, s->max_tx_mbps);
	if (!s->has_mac && !s->has_vlan && s->trust < 0 && s->spoof_check < 0 &&
	    s->link_state < 0 && !s->has_rate)
		return decoder_fail(d, -EINVAL, "is empty (leave it out)");
	p->has_settings = true;
	return 0;
}

static int parse_policy_name(const char *text, void *dst, char *why, size_t whylen)
{
	if (!k8s_valid_dns_label(text))
		return err_printf(why, whylen, -EINVAL,
				  "must be a DNS label (lower-case letters, digits, '-', at "
				  "most 63)");
	*(const char **)dst = text;
	return 0;
}

static const char *const vf_drivers[] = { "default", "vfio-pci", "none", NULL };

static const struct dralet_field policy_fields[] = {
	{ "name", DRALET_FIELD_STRING, DRALET_AT(struct sriov_policy, name), .required = true,
	  .parse = parse_policy_name, .help = "a DNS label (lower-case letters, digits, '-', "
	  "at most 63)" },
	{ "pfSelector", DRALET_FIELD_CUSTOM, DRALET_AT(struct sriov_policy, pf),
	  .required = true, .decode = decode_selector },
	{ "numVfs", DRALET_FIELD_INT, DRALET_AT(struct sriov_policy, num_vfs), .required = true,
	  .max = SRIOV_MAX_VFS },
	{ "vfDriver", DRALET_FIELD_ENUM, DRALET_AT(struct sriov_policy, vf_driver),
	  .names = vf_drivers },
	{ "vfSettings", DRALET_FIELD_CUSTOM, .decode = decode_settings },
	{ "onDemand", DRALET_FIELD_BOOL, DRALET_AT(struct sriov_policy, on_demand) },
	DRALET_FIELDS_END,
};

static void free_lists(struct sriov_policy *p)
{
	free(p->pf.pci_addresses);
	free(p->pf.pf_names);
	free(p->pf.drivers);
}

static int decode_policies(struct dralet_decoder *d, const struct dralet_value *value,
			   void *dst)
{
	struct json_object *list = decoder_json(value);
	struct sriov_policies *p = dst;
	size_t n;
	int r;

	if (!list)
		return 0;
	if (!json_object_is_type(list, json_type_array))
		return decoder_fail(d, -EINVAL, "must be a list");
	n = json_object_array_length(list);
	p->items = calloc(n + 1, sizeof(*p->items));
	if (!p->items)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct sriov_policy *item = &p->items[i];
		size_t mark = decoder_push_index(d, i);

		item->settings = (struct dralet_vf_settings)DRALET_VF_SETTINGS_INIT;
		p->n = i + 1;
		r = decoder_object(d, json_object_array_get_idx(list, i), policy_fields, item);
		if (r == 0 && item->on_demand && !item->num_vfs) {
			decoder_push_key(d, "numVfs");
			r = decoder_fail(d, -EINVAL, "with onDemand, the most VFs claims may have "
					 "created: at least 1");
		}
		for (size_t j = 0; r == 0 && j < i; j++)
			if (!strcmp(p->items[j].name, item->name)) {
				decoder_push_key(d, "name");
				r = decoder_fail(d, -EINVAL, "\"%s\" is used twice", item->name);
			}
		if (r < 0)
			return r;
		decoder_pop(d, mark);
	}
	return 0;
}

static const struct dralet_field sriov_fields[] = {
	{ "policies", DRALET_FIELD_CUSTOM, .decode = decode_policies },
	DRALET_FIELDS_END,
};

int sriov_policies_decode(struct dralet_decoder *d, const struct dralet_value *v, void *dst)
{
	struct sriov_policies **ret = dst;
	struct sriov_policies *p = calloc(1, sizeof(*p));
	int r;

	if (!p)
		return -ENOMEM;
	r = decoder_object(d, decoder_json(v), sriov_fields, p);
	if (r < 0) {
		sriov_policies_free(p);
		return r;
	}
	sriov_policies_free(*ret);
	*ret = p;
	return 0;
}

void sriov_policies_free(struct sriov_policies *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		free_lists(&p->items[i]);
	free(p->items);
	free(p);
}

const char *sriov_vf_driver_name(enum sriov_vf_driver d)
{
	switch (d) {
	case SRIOV_VF_DRIVER_VFIO: return "vfio-pci";
	case SRIOV_VF_DRIVER_NONE: return "none";
	default: return "default";
	}
}

void sriov_policy_vf_mac(const struct sriov_policy *p, unsigned index, uint8_t mac[6])
{
	uint32_t low = (uint32_t)p->settings.mac[3] << 16 | (uint32_t)p->settings.mac[4] << 8 |
		       p->settings.mac[5];

	low = (low + index) & 0xffffff;
	memcpy(mac, p->settings.mac, 3);
	mac[3] = (uint8_t)(low >> 16);
	mac[4] = (uint8_t)(low >> 8);
	mac[5] = (uint8_t)low;
}

static bool in_list(const char *const *list, size_t n, const char *s)
{
	for (size_t i = 0; s && i < n; i++)
		if (!strcmp(list[i], s))
			return true;
	return false;
}

bool sriov_selector_matches(const struct sriov_pf_selector *sel, const struct dralet_pci_func *pf)
{
	bool name = false;

	if (sel->has_vendor && pf->vendor_id != sel->vendor)
		return false;
	if (sel->has_device && pf->device_id != sel->device)
		return false;
	if (sel->n_pci_addresses && !in_list(sel->pci_addresses, sel->n_pci_addresses,
					     pf->address))
		return false;
	if (sel->n_drivers && !in_list(sel->drivers, sel->n_drivers, pf->driver))
		return false;
	for (size_t i = 0; i < pf->n_net; i++)
		name |= in_list(sel->pf_names, sel->n_pf_names, pf->net[i].ifname);
	return !sel->n_pf_names || name;
}

const struct sriov_policy *sriov_policy_for(const struct sriov_policies *p,
					    const struct dralet_pci_func *pf,
					    const struct sriov_policy **ret_also)
{
	const struct sriov_policy *found = NULL;

	if (ret_also)
		*ret_also = NULL;
	if (!pf->sriov || pf->physfn)
		return NULL;
	for (size_t i = 0; p && i < p->n; i++) {
		if (!sriov_selector_matches(&p->items[i].pf, pf))
			continue;
		if (!found) {
			found = &p->items[i];
		} else {
			if (ret_also)
				*ret_also = &p->items[i];
			break;
		}
	}
	return found;
}
