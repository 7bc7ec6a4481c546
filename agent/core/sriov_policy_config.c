/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/core/sriov_policy_config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/core/k8s_names.h"
#include "hal/hal.h"

/* A Linux PF has at most 65535 VFs (sriov_totalvfs is a u16) */
#define SRIOV_MAX_VFS 65535
#define RATE_MAX_MBPS 1000000

struct where {
	char text[160];
};

static int fail(char *err, size_t errlen, const struct where *w, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t errlen, const struct where *w, const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "%s: %s", w->text, msg);
	return -EINVAL;
}

static int check_keys(struct json_object *obj, const struct where *w,
		      const char *const *allowed, char *err, size_t errlen)
{
	json_object_object_foreach(obj, key, val) {
		bool ok = false;
		(void)val;
		for (const char *const *a = allowed; *a; a++)
			ok |= !strcmp(key, *a);
		if (!ok)
			return fail(err, errlen, w, "unknown key '%s'", key);
	}
	return 0;
}

static int get_uint(struct json_object *v, const struct where *w, const char *key, long long max,
		    long long *ret, char *err, size_t errlen)
{
	long long n;

	if (!json_object_is_type(v, json_type_int))
		return fail(err, errlen, w, "%s: must be an integer", key);
	n = (long long)json_object_get_int64(v);
	if (n < 0 || n > max)
		return fail(err, errlen, w, "%s: must be between 0 and %lld", key, max);
	*ret = n;
	return 0;
}

static int get_bool(struct json_object *v, const struct where *w, const char *key, int *ret,
		    char *err, size_t errlen)
{
	if (!json_object_is_type(v, json_type_boolean))
		return fail(err, errlen, w, "%s: must be true or false", key);
	*ret = json_object_get_boolean(v) ? 1 : 0;
	return 0;
}

static int get_hex16(struct json_object *v, const struct where *w, const char *key,
		     uint16_t *ret, char *err, size_t errlen)
{
	const char *s;
	char *end;
	unsigned long n;

	if (!json_object_is_type(v, json_type_string))
		return fail(err, errlen, w, "%s: must be a quoted hex id (\"8086\")", key);
	s = json_object_get_string(v);
	if (!strncmp(s, "0x", 2) || !strncmp(s, "0X", 2))
		s += 2;
	n = strtoul(s, &end, 16);
	if (!*s || *end || strlen(s) > 4 || !isxdigit((unsigned char)*s))
		return fail(err, errlen, w, "%s: \"%s\" is not a 16-bit hex id", key,
			    json_object_get_string(v));
	*ret = (uint16_t)n;
	return 0;
}

/* A list of strings, each checked by @valid; the pointers borrow the JSON. */
static int get_list(struct json_object *v, const struct where *w, const char *key,
		    bool (*valid)(const char *), const char *what, const char ***ret,
		    size_t *ret_n, char *err, size_t errlen)
{
	size_t n;
	const char **list;

	if (!json_object_is_type(v, json_type_array))
		return fail(err, errlen, w, "%s: must be a list of %s", key, what);
	n = json_object_array_length(v);
	if (!n)
		return fail(err, errlen, w, "%s: must not be empty (leave it out)", key);
	list = calloc(n + 1, sizeof(*list));
	if (!list)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(v, i);
		if (!json_object_is_type(e, json_type_string) || !valid(json_object_get_string(e))) {
			free(list);
			return fail(err, errlen, w, "%s[%zu]: must be %s", key, i, what);
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

static int parse_selector(struct json_object *obj, const struct where *pw,
			  struct sriov_pf_selector *sel, char *err, size_t errlen)
{
	static const char *const keys[] = { "vendor", "device", "pciAddresses", "pfNames",
					    "drivers", NULL };
	struct where w;
	struct json_object *v;
	int r;

	snprintf(w.text, sizeof(w.text), "%.140s.pfSelector", pw->text);
	if (!json_object_is_type(obj, json_type_object))
		return fail(err, errlen, &w, "must be a mapping");
	if ((r = check_keys(obj, &w, keys, err, errlen)) < 0)
		return r;
	if (json_object_object_get_ex(obj, "vendor", &v)) {
		if ((r = get_hex16(v, &w, "vendor", &sel->vendor, err, errlen)) < 0)
			return r;
		sel->has_vendor = true;
	}
	if (json_object_object_get_ex(obj, "device", &v)) {
		if ((r = get_hex16(v, &w, "device", &sel->device, err, errlen)) < 0)
			return r;
		sel->has_device = true;
	}
	if (json_object_object_get_ex(obj, "pciAddresses", &v) &&
	    (r = get_list(v, &w, "pciAddresses", valid_address,
			  "PCI addresses in lower case (\"0000:3b:00.0\")", &sel->pci_addresses,
			  &sel->n_pci_addresses, err, errlen)) < 0)
		return r;
	if (json_object_object_get_ex(obj, "pfNames", &v) &&
	    (r = get_list(v, &w, "pfNames", valid_ifname, "network interface names",
			  &sel->pf_names, &sel->n_pf_names, err, errlen)) < 0)
		return r;
	if (json_object_object_get_ex(obj, "drivers", &v) &&
	    (r = get_list(v, &w, "drivers", valid_driver, "kernel driver names", &sel->drivers,
			  &sel->n_drivers, err, errlen)) < 0)
		return r;
	if (!sel->has_vendor && !sel->has_device && !sel->n_pci_addresses && !sel->n_pf_names &&
	    !sel->n_drivers)
		return fail(err, errlen, &w, "selects every PF; give at least one of vendor, "
			    "device, pciAddresses, pfNames, drivers");
	if (sel->has_device && !sel->has_vendor)
		return fail(err, errlen, &w, "device needs vendor (device ids are per vendor)");
	return 0;
}

static int parse_mac_base(struct json_object *v, const struct where *w, unsigned num_vfs,
			  struct dralet_vf_settings *s, char *err, size_t errlen)
{
	const char *text;
	uint32_t low;

	if (!json_object_is_type(v, json_type_string))
		return fail(err, errlen, w, "macBase: must be a quoted MAC address");
	text = json_object_get_string(v);
	if (hal_vf_parse_mac(text, s->mac) < 0 || !(s->mac[0] | s->mac[1] | s->mac[2] |
						      s->mac[3] | s->mac[4] | s->mac[5]))
		return fail(err, errlen, w, "macBase: \"%s\" is not a unicast MAC address "
			    "(aa:bb:cc:dd:ee:ff)", text);
	low = (uint32_t)s->mac[3] << 16 | (uint32_t)s->mac[4] << 8 | s->mac[5];
	if (num_vfs && low + (num_vfs - 1) > 0xffffff)
		return fail(err, errlen, w, "macBase: \"%s\" plus %u VFs runs past the last "
			    "address of its prefix", text, num_vfs);
	s->has_mac = true;
	return 0;
}

static int parse_settings(struct json_object *obj, const struct where *pw, unsigned num_vfs,
			  struct dralet_vf_settings *s, char *err, size_t errlen)
{
	static const char *const keys[] = { "macBase", "vlan", "qos", "trust", "spoofChk",
					    "linkState", "minTxRate", "maxTxRate", NULL };
	struct where w;
	struct json_object *v;
	long long n;
	int r;

	snprintf(w.text, sizeof(w.text), "%.140s.vfSettings", pw->text);
	if (!json_object_is_type(obj, json_type_object))
		return fail(err, errlen, &w, "must be a mapping");
	if ((r = check_keys(obj, &w, keys, err, errlen)) < 0)
		return r;
	if (json_object_object_get_ex(obj, "macBase", &v) &&
	    (r = parse_mac_base(v, &w, num_vfs, s, err, errlen)) < 0)
		return r;
	if (json_object_object_get_ex(obj, "vlan", &v)) {
		if ((r = get_uint(v, &w, "vlan", 4094, &n, err, errlen)) < 0)
			return r;
		s->has_vlan = true;
		s->vlan = (unsigned)n;
	}
	if (json_object_object_get_ex(obj, "qos", &v)) {
		if ((r = get_uint(v, &w, "qos", 7, &n, err, errlen)) < 0)
			return r;
		if (n && (!s->has_vlan || !s->vlan))
			return fail(err, errlen, &w, "qos: needs a vlan other than 0");
		s->qos = (unsigned)n;
	}
	if (json_object_object_get_ex(obj, "trust", &v) &&
	    (r = get_bool(v, &w, "trust", &s->trust, err, errlen)) < 0)
		return r;
	if (json_object_object_get_ex(obj, "spoofChk", &v) &&
	    (r = get_bool(v, &w, "spoofChk", &s->spoof_check, err, errlen)) < 0)
		return r;
	if (json_object_object_get_ex(obj, "linkState", &v)) {
		const char *t = json_object_is_type(v, json_type_string)
			      ? json_object_get_string(v) : "";
		if (!strcmp(t, "auto"))
			s->link_state = DRALET_VF_LINK_AUTO;
		else if (!strcmp(t, "enable"))
			s->link_state = DRALET_VF_LINK_ENABLE;
		else if (!strcmp(t, "disable"))
			s->link_state = DRALET_VF_LINK_DISABLE;
		else
			return fail(err, errlen, &w, "linkState: must be auto, enable or disable");
	}
	if (json_object_object_get_ex(obj, "minTxRate", &v)) {
		if ((r = get_uint(v, &w, "minTxRate", RATE_MAX_MBPS, &n, err, errlen)) < 0)
			return r;
		s->has_rate = true;
		s->min_tx_mbps = (unsigned)n;
	}
	if (json_object_object_get_ex(obj, "maxTxRate", &v)) {
		if ((r = get_uint(v, &w, "maxTxRate", RATE_MAX_MBPS, &n, err, errlen)) < 0)
			return r;
		s->has_rate = true;
		s->max_tx_mbps = (unsigned)n;
	}
	if (s->has_rate && s->max_tx_mbps && s->min_tx_mbps > s->max_tx_mbps)
		return fail(err, errlen, &w, "minTxRate %u is above maxTxRate %u", s->min_tx_mbps,
			    s->max_tx_mbps);
	if (!s->has_mac && !s->has_vlan && s->trust < 0 && s->spoof_check < 0 &&
	    s->link_state < 0 && !s->has_rate)
		return fail(err, errlen, &w, "is empty (leave it out)");
	return 0;
}

static int parse_policy(struct json_object *obj, size_t index, struct sriov_policy *p,
			char *err, size_t errlen)
{
	static const char *const keys[] = { "name", "pfSelector", "numVfs", "vfDriver",
					    "vfSettings", NULL };
	struct where w;
	struct json_object *v;
	long long n;
	int r;

	snprintf(w.text, sizeof(w.text), "sriov.policies[%zu]", index);
	p->settings = (struct dralet_vf_settings)DRALET_VF_SETTINGS_INIT;
	if (!json_object_is_type(obj, json_type_object))
		return fail(err, errlen, &w, "must be a mapping");
	if (!json_object_object_get_ex(obj, "name", &v) || !json_object_is_type(v, json_type_string)
	    || !k8s_valid_dns_label(json_object_get_string(v)))
		return fail(err, errlen, &w, "name: must be a DNS label (lower-case letters, "
			    "digits, '-', at most 63)");
	p->name = json_object_get_string(v);
	snprintf(w.text, sizeof(w.text), "sriov.policies[%zu] (%.63s)", index, p->name);
	if ((r = check_keys(obj, &w, keys, err, errlen)) < 0)
		return r;
	if (!json_object_object_get_ex(obj, "pfSelector", &v))
		return fail(err, errlen, &w, "pfSelector: is required");
	if ((r = parse_selector(v, &w, &p->pf, err, errlen)) < 0)
		return r;
	if (!json_object_object_get_ex(obj, "numVfs", &v))
		return fail(err, errlen, &w, "numVfs: is required");
	if ((r = get_uint(v, &w, "numVfs", SRIOV_MAX_VFS, &n, err, errlen)) < 0)
		return r;
	p->num_vfs = (unsigned)n;
	if (json_object_object_get_ex(obj, "vfDriver", &v)) {
		const char *t = json_object_is_type(v, json_type_string)
			      ? json_object_get_string(v) : "";
		if (!strcmp(t, "default"))
			p->vf_driver = SRIOV_VF_DRIVER_DEFAULT;
		else if (!strcmp(t, "vfio-pci"))
			p->vf_driver = SRIOV_VF_DRIVER_VFIO;
		else if (!strcmp(t, "none"))
			p->vf_driver = SRIOV_VF_DRIVER_NONE;
		else
			return fail(err, errlen, &w, "vfDriver: must be default, vfio-pci or none");
	}
	if (json_object_object_get_ex(obj, "vfSettings", &v)) {
		if ((r = parse_settings(v, &w, p->num_vfs, &p->settings, err, errlen)) < 0)
			return r;
		p->has_settings = true;
	}
	return 0;
}

static void free_lists(struct sriov_policy *p)
{
	free(p->pf.pci_addresses);
	free(p->pf.pf_names);
	free(p->pf.drivers);
}

int sriov_policies_parse(struct json_object *obj, struct sriov_policies **ret, char *err,
			 size_t errlen)
{
	static const char *const keys[] = { "policies", NULL };
	struct where w = { "sriov" };
	struct sriov_policies *p;
	struct json_object *list;
	size_t n;
	int r;

	if (!json_object_is_type(obj, json_type_object))
		return fail(err, errlen, &w, "must be a mapping");
	if ((r = check_keys(obj, &w, keys, err, errlen)) < 0)
		return r;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (!json_object_object_get_ex(obj, "policies", &list) || !list) {
		*ret = p;
		return 0;
	}
	if (!json_object_is_type(list, json_type_array)) {
		free(p);
		return fail(err, errlen, &w, "policies: must be a list");
	}
	n = json_object_array_length(list);
	p->items = calloc(n + 1, sizeof(*p->items));
	if (!p->items) {
		free(p);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		r = parse_policy(json_object_array_get_idx(list, i), i, &p->items[i], err, errlen);
		p->n = i + 1;
		for (size_t j = 0; r == 0 && j < i; j++)
			if (!strcmp(p->items[j].name, p->items[i].name)) {
				snprintf(w.text, sizeof(w.text), "sriov.policies[%zu]", i);
				r = fail(err, errlen, &w, "name: \"%s\" is used twice",
					 p->items[i].name);
			}
		if (r < 0) {
			sriov_policies_free(p);
			return r;
		}
	}
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
