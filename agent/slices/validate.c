/* SPDX-License-Identifier: Apache-2.0 */
/* Name and value rules of the kube-apiserver, as pure string predicates. */
#include <ctype.h>
#include <string.h>

#include "agent/slices/validate.h"

static bool is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* One DNS label in [s, s+len): no length limit of its own here. */
static bool label_ok(const char *s, size_t len, bool lower)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = lower ? (char)tolower((unsigned char)s[i]) : s[i];
		if (is_lower_alnum(c))
			continue;
		if (c == '-' && i > 0 && i + 1 < len)
			continue;
		return false;
	}
	return true;
}

bool valid_dns_label(const char *s)
{
	return s && strlen(s) <= 63 && label_ok(s, strlen(s), false);
}

static bool subdomain_ok(const char *s, size_t len, bool lower)
{
	if (len == 0 || len > 253)
		return false;
	size_t start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i == len || s[i] == '.') {
			if (!label_ok(s + start, i - start, lower))
				return false;
			start = i + 1;
		}
	}
	return true;
}

bool valid_dns_subdomain(const char *s)
{
	return s && subdomain_ok(s, strlen(s), false);
}

bool valid_driver_name(const char *s)
{
	return s && strlen(s) <= SLICE_DOMAIN_MAX && subdomain_ok(s, strlen(s), true);
}

bool valid_pool_name(const char *s)
{
	if (!s)
		return false;
	size_t len = strlen(s);
	if (len == 0 || len > SLICE_POOL_NAME_MAX)
		return false;
	size_t start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i == len || s[i] == '/') {
			if (!subdomain_ok(s + start, i - start, false))
				return false;
			start = i + 1;
		}
	}
	return true;
}

static bool c_identifier_ok(const char *s, size_t len)
{
	if (len == 0 || len > SLICE_ID_MAX)
		return false;
	if (!(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (size_t i = 1; i < len; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return false;
	return true;
}

bool valid_qualified_name(const char *s)
{
	if (!s)
		return false;
	const char *slash = strchr(s, '/');
	if (!slash)
		return c_identifier_ok(s, strlen(s));
	if (strchr(slash + 1, '/'))
		return false;
	size_t dlen = (size_t)(slash - s);
	if (dlen == 0 || dlen > SLICE_DOMAIN_MAX || !subdomain_ok(s, dlen, true))
		return false;
	return c_identifier_ok(slash + 1, strlen(slash + 1));
}

/* A numeric identifier: 0 or no leading zero. */
static bool semver_number(const char *s, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return !(len > 1 && s[0] == '0');
}

/* Dot-separated identifiers of [0-9A-Za-z-]; pre-release numerics without
 * leading zeros. */
static bool semver_idents(const char *s, size_t len, bool prerelease)
{
	size_t start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != '.')
			continue;
		const char *id = s + start;
		size_t idlen = i - start;
		if (idlen == 0)
			return false;
		bool numeric = true;
		for (size_t k = 0; k < idlen; k++) {
			if (!(isalnum((unsigned char)id[k]) || id[k] == '-'))
				return false;
			if (!isdigit((unsigned char)id[k]))
				numeric = false;
		}
		if (prerelease && numeric && !semver_number(id, idlen))
			return false;
		start = i + 1;
	}
	return true;
}

bool valid_semver(const char *s)
{
	if (!s)
		return false;
	size_t len = strlen(s);
	if (len == 0 || len > SLICE_VALUE_MAX)
		return false;
	size_t core_end = strcspn(s, "-+");
	const char *p = s;
	for (int part = 0; part < 3; part++) {
		const char *end = part < 2 ? memchr(p, '.', (size_t)(s + core_end - p)) : s + core_end;
		if (!end || !semver_number(p, (size_t)(end - p)))
			return false;
		p = end + 1;
	}
	const char *rest = s + core_end;
	if (*rest == '-') {
		size_t plen = strcspn(rest + 1, "+");
		if (!semver_idents(rest + 1, plen, true))
			return false;
		rest += 1 + plen;
	}
	if (*rest == '+')
		return semver_idents(rest + 1, strlen(rest + 1), false);
	return *rest == '\0';
}

bool valid_quantity(const char *s)
{
	if (!s)
		return false;
	const char *p = s;
	if (*p == '+' || *p == '-')
		p++;
	size_t digits = 0;
	while (isdigit((unsigned char)*p)) {
		p++;
		digits++;
	}
	if (*p == '.') {
		p++;
		while (isdigit((unsigned char)*p)) {
			p++;
			digits++;
		}
	}
	if (digits == 0)
		return false;
	static const char *const suffixes[] = {
		"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E",
	};
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
		if (!strcmp(p, suffixes[i]))
			return true;
	if (*p != 'e' && *p != 'E')
		return false;
	p++;
	if (*p == '+' || *p == '-')
		p++;
	if (!isdigit((unsigned char)*p))
		return false;
	while (isdigit((unsigned char)*p))
		p++;
	return *p == '\0';
}
