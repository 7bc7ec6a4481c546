/* SPDX-License-Identifier: Apache-2.0 */
/* The integer value of a Kubernetes quantity (k8s_names.h). */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "agent/core/k8s_names.h"

#define DIGITS_MAX 36	/* 10^36 still fits an unsigned 128-bit integer */

static int suffix_scale(const char *p, unsigned *ret_pow1024, int *ret_pow10)
{
	static const char *const binary[] = { "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };
	static const struct {
		const char *s;
		int pow10;
	} decimal[] = { { "n", -9 }, { "u", -6 }, { "m", -3 }, { "", 0 }, { "k", 3 },
			{ "M", 6 },  { "G", 9 },  { "T", 12 }, { "P", 15 }, { "E", 18 } };

	*ret_pow1024 = 0;
	*ret_pow10 = 0;
	for (unsigned i = 0; i < 6; i++)
		if (!strcmp(p, binary[i])) {
			*ret_pow1024 = i + 1;
			return 0;
		}
	for (size_t i = 0; i < sizeof(decimal) / sizeof(decimal[0]); i++)
		if (!strcmp(p, decimal[i].s)) {
			*ret_pow10 = decimal[i].pow10;
			return 0;
		}
	if (*p == 'e' || *p == 'E') {
		int sign = 1, e = 0;
		p++;
		if (*p == '+' || *p == '-')
			sign = *p++ == '-' ? -1 : 1;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		for (; isdigit((unsigned char)*p); p++)
			if ((e = e * 10 + (*p - '0')) > 1000)
				return -ERANGE;
		if (*p)
			return -EINVAL;
		*ret_pow10 = sign * e;
		return 0;
	}
	return -EINVAL;
}

int k8s_quantity_value(const char *s, int64_t *ret_value)
{
	unsigned __int128 v = 0, limit = (unsigned __int128)INT64_MAX;
	unsigned pow1024, n_digits = 0;
	int pow10, negative = 0, r;
	bool fraction_lost = false;
	const char *p = s;

	if (!s || !k8s_valid_quantity(s))
		return -EINVAL;
	if (*p == '+' || *p == '-')
		negative = *p++ == '-';
	for (; isdigit((unsigned char)*p) || *p == '.'; p++) {
		if (*p == '.')
			continue;
		if (v == 0 && *p == '0')
			continue;	/* leading zeros do not count against DIGITS_MAX */
		if (++n_digits > DIGITS_MAX)
			return -ERANGE;
		v = v * 10 + (unsigned)(*p - '0');
	}
	{
		const char *dot = strchr(s, '.');
		if (dot) {
			const char *q = dot + 1;
			while (isdigit((unsigned char)*q))
				q++;
			pow10 = -(int)(q - dot - 1);
		} else {
			pow10 = 0;
		}
	}
	{
		int extra;
		if ((r = suffix_scale(p, &pow1024, &extra)) < 0)
			return r;
		pow10 += extra;
	}
	for (unsigned i = 0; i < pow1024; i++) {
		if (v > limit)
			return -ERANGE;
		v *= 1024;
	}
	for (; pow10 > 0; pow10--) {
		if (v > limit)
			return -ERANGE;
		v *= 10;
	}
	for (; pow10 < 0 && v; pow10++) {
		fraction_lost |= v % 10 != 0;
		v /= 10;
	}
	if (fraction_lost)
		v++;	/* resource.Quantity.Value() rounds up */
	if (v > limit)
		return -ERANGE;
	*ret_value = negative ? -(int64_t)v : (int64_t)v;
	return 0;
}
