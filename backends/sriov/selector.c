/* SPDX-License-Identifier: Apache-2.0 */
#include "selector.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool all_hex(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return len > 0;
}

/* "0000:3b:00.0": domain of 4+ hex digits, bus and device 2, function 0-7. */
static bool valid_address(const char *s)
{
	const char *colon = strchr(s, ':');
	size_t dlen = colon ? (size_t)(colon - s) : 0;

	return colon && dlen >= 4 && dlen <= 8 && all_hex(s, dlen) && strlen(colon) == 8 &&
	       all_hex(colon + 1, 2) && colon[3] == ':' && all_hex(colon + 4, 2) &&
	       colon[6] == '.' && colon[7] >= '0' && colon[7] <= '7';
}

static bool valid_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || strchr("_-.@:", *s)))
			return false;
	return true;
}

static bool parse_range(const char *s, int *first, int *last)
{
	char *end;
	long a = strtol(s, &end, 10), b;

	if (end == s || a < 0 || a > 0xffff || !isdigit((unsigned char)*s))
		return false;
	if (!*end) {
		*first = *last = (int)a;
		return true;
	}
	if (*end != '-' || !isdigit((unsigned char)end[1]))
		return false;
	s = end + 1;
	b = strtol(s, &end, 10);
	if (*end || b < a || b > 0xffff)
		return false;
	*first = (int)a;
	*last = (int)b;
	return true;
}

static int parse_one(char *text, struct sriov_selector *sel, char *err, size_t errlen)
{
	char *hash = strchr(text, '#');

	memset(sel, 0, sizeof(*sel));
	sel->first_vf = sel->last_vf = -1;
	if (hash) {
		*hash = '\0';
		if (!parse_range(hash + 1, &sel->first_vf, &sel->last_vf)) {
			snprintf(err, errlen, "pfs: \"%s#%s\": the VF range after '#' must be N or "
				 "N-M", text, hash + 1);
			return -EINVAL;
		}
	}
	if (!strncmp(text, "driver=", 7) || !strncmp(text, "netdev=", 7)) {
		sel->type = text[0] == 'd' ? SRIOV_SEL_DRIVER : SRIOV_SEL_NETDEV;
		if (!valid_name(text + 7) || strlen(text + 7) >= sizeof(sel->value)) {
			snprintf(err, errlen, "pfs: \"%s\" has no valid name after '='", text);
			return -EINVAL;
		}
		snprintf(sel->value, sizeof(sel->value), "%s", text + 7);
		return 0;
	}
	for (char *p = text; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	if (strlen(text) == 9 && text[4] == ':' && all_hex(text, 4) && all_hex(text + 5, 4)) {
		sel->type = SRIOV_SEL_IDS;
		sel->vendor = (uint16_t)strtoul(text, NULL, 16);
		sel->device = (uint16_t)strtoul(text + 5, NULL, 16);
		return 0;
	}
	if (valid_address(text)) {
		sel->type = SRIOV_SEL_ADDRESS;
		snprintf(sel->value, sizeof(sel->value), "%s", text);
		return 0;
	}
	snprintf(err, errlen, "pfs: \"%s\" is not a PF selector (want a PCI address "
		 "0000:3b:00.0, vendor:device ids 8086:1593, driver=NAME or netdev=NAME, "
		 "optionally followed by #N-M)", text);
	return -EINVAL;
}

int sriov_selectors_parse(const char *text, struct sriov_selector **ret_sel, size_t *ret_n,
			  char *err, size_t errlen)
{
	struct sriov_selector *sel = NULL;
	size_t n = 0, cap = 0;
	char *copy, *save = NULL;
	int r = 0;

	*ret_sel = NULL;
	*ret_n = 0;
	if (!text)
		return 0;
	copy = strdup(text);
	if (!copy)
		return -ENOMEM;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*tok))
			tok++;
		for (size_t len = strlen(tok); len && isspace((unsigned char)tok[len - 1]); len--)
			tok[len - 1] = '\0';
		if (!*tok)
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 4;
			struct sriov_selector *grown = realloc(sel, ncap * sizeof(*sel));
			if (!grown) {
				r = -ENOMEM;
				break;
			}
			sel = grown;
			cap = ncap;
		}
		r = parse_one(tok, &sel[n], err, errlen);
		if (r < 0)
			break;
		n++;
	}
	free(copy);
	if (r < 0) {
		free(sel);
		return r;
	}
	*ret_sel = sel;
	*ret_n = n;
	return 0;
}

static bool match_pf(const struct sriov_selector *s, const struct dralet_pci_func *pf)
{
	switch (s->type) {
	case SRIOV_SEL_ADDRESS:
		return !strcmp(pf->address, s->value);
	case SRIOV_SEL_IDS:
		return pf->vendor_id == s->vendor && pf->device_id == s->device;
	case SRIOV_SEL_DRIVER:
		return pf->driver && !strcmp(pf->driver, s->value);
	case SRIOV_SEL_NETDEV:
		for (size_t i = 0; i < pf->n_net; i++)
			if (!strcmp(pf->net[i].ifname, s->value))
				return true;
		return false;
	}
	return false;
}

bool sriov_selectors_match_vf(const struct sriov_selector *sel, size_t n,
			      const struct dralet_pci_func *vf)
{
	if (!vf->physfn)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!match_pf(&sel[i], vf->physfn))
			continue;
		if (sel[i].first_vf < 0 ||
		    (vf->vf_index >= sel[i].first_vf && vf->vf_index <= sel[i].last_vf))
			return true;
	}
	return false;
}
