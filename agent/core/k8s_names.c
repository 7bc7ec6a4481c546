/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/core/k8s_names.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool valid_label_span(const char *s, size_t len)
{
	if (len == 0 || len > 63 || !is_lower_alnum(s[0]) || !is_lower_alnum(s[len - 1]))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!is_lower_alnum(s[i]) && s[i] != '-')
			return false;
	return true;
}

bool k8s_valid_dns_label(const char *s)
{
	return s && valid_label_span(s, strlen(s));
}

bool k8s_valid_dns_subdomain(const char *s, size_t max)
{
	size_t len = s ? strlen(s) : 0;

	if (len == 0 || len > max)
		return false;
	for (const char *p = s;;) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		if (!valid_label_span(p, n))
			return false;
		if (!dot)
			return true;
		p = dot + 1;
	}
}

bool k8s_valid_driver_name(const char *s)
{
	return k8s_valid_dns_subdomain(s, 63);
}

static bool valid_c_identifier(const char *s, size_t len)
{
	if (len == 0 || len > 32 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (size_t i = 1; i < len; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return false;
	return true;
}

bool k8s_valid_qualified_name(const char *s)
{
	const char *slash;
	char domain[64];

	if (!s)
		return false;
	slash = strchr(s, '/');
	if (!slash)
		return valid_c_identifier(s, strlen(s));
	if (strchr(slash + 1, '/') || (size_t)(slash - s) > 63)
		return false;
	memcpy(domain, s, (size_t)(slash - s));
	domain[slash - s] = '\0';
	return k8s_valid_driver_name(domain) && valid_c_identifier(slash + 1, strlen(slash + 1));
}

bool k8s_valid_label_key(const char *s)
{
	const char *slash = s ? strchr(s, '/') : NULL, *name = slash ? slash + 1 : s;
	char prefix[254];
	size_t len;

	if (!s)
		return false;
	if (slash) {
		if ((size_t)(slash - s) >= sizeof(prefix))
			return false;
		memcpy(prefix, s, (size_t)(slash - s));
		prefix[slash - s] = '\0';
		if (!k8s_valid_dns_subdomain(prefix, 253))
			return false;
	}
	len = strlen(name);
	if (len == 0 || len > 63 || !isalnum((unsigned char)name[0]) ||
	    !isalnum((unsigned char)name[len - 1]))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("-_.", name[i]))
			return false;
	return true;
}

/* numeric identifier: "0" or [1-9][0-9]* */
static bool semver_numeric(const char *s, size_t len)
{
	if (len == 0 || (len > 1 && s[0] == '0'))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* dot-separated identifiers of [0-9A-Za-z-]; numeric ones without leading
 * zeros when @prerelease */
static bool semver_idents(const char *s, size_t len, bool prerelease)
{
	size_t start = 0;

	if (len == 0)
		return false;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != '.') {
			if (!isalnum((unsigned char)s[i]) && s[i] != '-')
				return false;
			continue;
		}
		size_t n = i - start;
		if (n == 0)
			return false;
		bool all_digits = true;
		for (size_t j = start; j < i; j++)
			all_digits &= !!isdigit((unsigned char)s[j]);
		if (prerelease && all_digits && !semver_numeric(s + start, n))
			return false;
		start = i + 1;
	}
	return true;
}

bool k8s_valid_semver(const char *s)
{
	size_t len = s ? strlen(s) : 0;
	const char *p = s, *end;

	if (len == 0 || len > 64)
		return false;
	for (int part = 0; part < 3; part++) {
		end = p;
		while (isdigit((unsigned char)*end))
			end++;
		if (!semver_numeric(p, (size_t)(end - p)))
			return false;
		if (part < 2) {
			if (*end != '.')
				return false;
			end++;
		}
		p = end;
	}
	const char *plus = strchr(p, '+');
	size_t pre_len = plus ? (size_t)(plus - p) : strlen(p);
	if (pre_len && (p[0] != '-' || !semver_idents(p + 1, pre_len - 1, true)))
		return false;
	if (plus && !semver_idents(plus + 1, strlen(plus + 1), false))
		return false;
	return true;
}

bool k8s_valid_quantity(const char *s)
{
	static const char *const suffixes[] = { "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u",
						"m", "k", "M", "G", "T", "P", "E" };
	const char *p = s;
	bool digits = false;

	if (!s || !*s)
		return false;
	if (*p == '+' || *p == '-')
		p++;
	while (isdigit((unsigned char)*p)) {
		p++;
		digits = true;
	}
	if (*p == '.') {
		p++;
		while (isdigit((unsigned char)*p)) {
			p++;
			digits = true;
		}
	}
	if (!digits)
		return false;
	if (*p == 'e' || *p == 'E') {
		const char *q = p + 1;
		if (*q == '+' || *q == '-')
			q++;
		if (isdigit((unsigned char)*q)) {
			while (isdigit((unsigned char)*q))
				q++;
			return *q == '\0';
		}
	}
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
		if (!strcmp(p, suffixes[i]))
			return true;
	return false;
}

int k8s_normalize_version(const char *in, char *out, size_t size)
{
	char buf[128], meta[128] = "";
	const char *p = in;
	unsigned long long parts[3] = { 0, 0, 0 };
	int nparts = 0;
	size_t mlen = 0;
	int n;

	if (!in)
		return -EINVAL;
	if (k8s_valid_semver(in)) {
		n = snprintf(out, size, "%s", in);
		return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
	}
	if (*p == 'v' || *p == 'V')
		p++;
	while (*p) {
		const char *start = p;
		while (isdigit((unsigned char)*p))
			p++;
		if (p == start || (p - start) > 18)
			return -EINVAL;
		if (nparts < 3) {
			char num[20];
			memcpy(num, start, (size_t)(p - start));
			num[p - start] = '\0';
			parts[nparts++] = strtoull(num, NULL, 10);
		} else {
			n = snprintf(meta + mlen, sizeof(meta) - mlen, "%s%.*s", mlen ? "." : "",
				     (int)(p - start), start);
			if (n < 0 || (size_t)n >= sizeof(meta) - mlen)
				return -EINVAL;
			mlen += (size_t)n;
		}
		if (*p == '\0')
			break;
		if (*p != '.')
			return -EINVAL;	/* suffixes like "-rc1" only in already valid input */
		p++;
		if (*p == '\0')
			return -EINVAL;
	}
	if (nparts == 0)
		return -EINVAL;
	n = snprintf(buf, sizeof(buf), "%llu.%llu.%llu%s%s", parts[0], parts[1], parts[2],
		     mlen ? "+" : "", meta);
	if (n < 0 || (size_t)n >= sizeof(buf) || !k8s_valid_semver(buf))
		return -EINVAL;
	n = snprintf(out, size, "%s", buf);
	return (size_t)n >= size ? -ENOSPC : 0;
}

static int put(char *out, size_t size, int n)
{
	return n < 0 || (size_t)n >= size ? -ENOSPC : n;
}

int k8s_quantity_binary(uint64_t value, char *out, size_t size)
{
	static const char *const suffix[] = { "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };
	int exp = 0;

	/* Kubernetes prints small BinarySI values as plain decimals. */
	if (value < 1024)
		return put(out, size, snprintf(out, size, "%" PRIu64, value));
	while (exp < 6 && value != 0 && value % 1024 == 0) {
		value /= 1024;
		exp++;
	}
	return put(out, size, snprintf(out, size, "%" PRIu64 "%s", value, suffix[exp]));
}

int k8s_quantity_decimal(int64_t value, char *out, size_t size)
{
	static const char *const suffix[] = { "", "k", "M", "G", "T", "P", "E" };
	int exp = 0;

	while (exp < 6 && value != 0 && value % 1000 == 0) {
		value /= 1000;
		exp++;
	}
	return put(out, size, snprintf(out, size, "%" PRId64 "%s", value, suffix[exp]));
}
