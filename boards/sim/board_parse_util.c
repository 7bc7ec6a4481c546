/* SPDX-License-Identifier: Apache-2.0 */
/* Typed getters over the board DOM (see board_parse.h). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boards/sim/board_parse.h"

#define MAX_CPUS 8192

static const char *type_name(struct json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_null: return "null";
	case json_type_boolean: return "a boolean";
	case json_type_double: return "a number";
	case json_type_int: return "an integer";
	case json_type_object: return "a mapping";
	case json_type_array: return "a list";
	case json_type_string: return "a string";
	}
	return "?";
}

const struct jpath *p_keep_path(struct pctx *c, const struct jpath *at)
{
	struct jpath *head = NULL, **tail = &head;

	/* copies the chain leaf first; keys point into the DOM or static
	 * strings, so they are copied too (the DOM is released early) */
	for (const struct jpath *p = at; p; p = p->up) {
		struct jpath *n = arena_alloc(c->a, sizeof(*n));

		if (!n)
			return NULL;
		n->key = p->key ? arena_strdup(c->a, p->key) : NULL;
		n->index = p->index;
		*tail = n;
		tail = (struct jpath **)&n->up;
	}
	return head;
}

int p_expect_object(struct pctx *c, struct json_object *v, const struct jpath *at,
		    const char *what)
{
	if (!json_object_is_type(v, json_type_object))
		return board_fail(c->d, at, "%s must be a mapping, not %s", what, type_name(v));
	return 0;
}

int p_expect_list(struct pctx *c, struct json_object *v, const struct jpath *at,
		  const char *what, bool allow_single, bool *ret_single)
{
	if (ret_single)
		*ret_single = false;
	if (json_object_is_type(v, json_type_array))
		return 0;
	if (allow_single && json_object_is_type(v, json_type_object)) {
		*ret_single = true;
		return 0;
	}
	return board_fail(c->d, at, "%s must be a list%s, not %s", what,
			  allow_single ? " (or a single mapping)" : "", type_name(v));
}

int p_check_keys(struct pctx *c, struct json_object *obj, const struct jpath *at,
		 const char *what, const char *const *allowed)
{
	int r = p_expect_object(c, obj, at, what);

	if (r < 0)
		return r;
	json_object_object_foreach(obj, key, val) {
		bool ok = false;

		(void)val;
		for (const char *const *k = allowed; *k && !ok; k++)
			ok = !strcmp(*k, key);
		if (!ok) {
			struct jpath kp = JP_KEY(at, key);

			return board_fail(c->d, &kp, "unknown key '%s' in %s", key, what);
		}
	}
	return 0;
}

static struct json_object *member(struct json_object *obj, const char *key)
{
	struct json_object *v = NULL;

	if (!obj || !json_object_object_get_ex(obj, key, &v))
		return NULL;
	return v;
}

bool p_present(struct json_object *obj, const char *key)
{
	return member(obj, key) != NULL;
}

int p_str(struct pctx *c, struct json_object *obj, const char *key, const struct jpath *at,
	  const char **ret)
{
	struct json_object *v = member(obj, key);
	struct jpath kp = JP_KEY(at, key);
	const char *s;

	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return board_fail(c->d, &kp, "'%s' must be a string, not %s", key, type_name(v));
	s = json_object_get_string(v);
	if (strlen(s) != (size_t)json_object_get_string_len(v))
		return board_fail(c->d, &kp, "'%s' contains a NUL byte", key);
	*ret = arena_strdup(c->a, s);
	return *ret ? 1 : -ENOMEM;
}

int p_text(struct pctx *c, struct json_object *obj, const char *key, const struct jpath *at,
	   const char **ret)
{
	struct json_object *v = member(obj, key);
	struct jpath kp = JP_KEY(at, key);

	if (!v)
		return 0;
	switch (json_object_get_type(v)) {
	case json_type_string:
		return p_str(c, obj, key, at, ret);
	case json_type_int:
		*ret = arena_printf(c->a, "%" PRId64, json_object_get_int64(v));
		return *ret ? 1 : -ENOMEM;
	case json_type_boolean:
		*ret = json_object_get_boolean(v) ? "true" : "false";
		return 1;
	case json_type_double: {
		/* an unquoted "9.0" or "1.5": the shortest text that reads back
		 * as the same number, keeping one decimal for whole numbers */
		double x = json_object_get_double(v);
		char buf[40];

		for (int prec = 1; prec <= 17; prec++) {
			snprintf(buf, sizeof(buf), "%.*g", prec, x);
			if (strtod(buf, NULL) == x)
				break;
		}
		if (!strpbrk(buf, ".eEn"))
			strcat(buf, ".0");
		*ret = arena_strdup(c->a, buf);
		return *ret ? 1 : -ENOMEM;
	}
	default:
		return board_fail(c->d, &kp, "'%s' must be a scalar, not %s", key, type_name(v));
	}
}

static bool parse_ll(const char *s, long long *ret)
{
	char *end;

	errno = 0;
	*ret = strtoll(s, &end, 0);
	return s[0] && !errno && !*end;
}

int p_int(struct pctx *c, struct json_object *obj, const char *key, const struct jpath *at,
	  long long min, long long max, long long *ret)
{
	struct json_object *v = member(obj, key);
	struct jpath kp = JP_KEY(at, key);
	long long x;

	if (!v)
		return 0;
	if (json_object_is_type(v, json_type_int)) {
		x = (long long)json_object_get_int64(v);
	} else if (json_object_is_type(v, json_type_string)) {
		if (!parse_ll(json_object_get_string(v), &x))
			return board_fail(c->d, &kp, "'%s' must be an integer, not '%s'", key,
					  json_object_get_string(v));
	} else {
		return board_fail(c->d, &kp, "'%s' must be an integer, not %s", key, type_name(v));
	}
	if (x < min || x > max)
		return board_fail(c->d, &kp, "'%s' is %lld, outside %lld..%lld", key, x, min, max);
	*ret = x;
	return 1;
}

int p_bool(struct pctx *c, struct json_object *obj, const char *key, const struct jpath *at,
	   bool *ret)
{
	struct json_object *v = member(obj, key);
	struct jpath kp = JP_KEY(at, key);

	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_boolean))
		return board_fail(c->d, &kp, "'%s' must be true or false, not %s", key,
				  type_name(v));
	*ret = json_object_get_boolean(v);
	return 1;
}

/* Parses "16M", "3.84TB", "1024"; false when malformed or out of range. */
static bool parse_size(const char *s, uint64_t *ret)
{
	static const struct { const char *suffix; double mult; } units[] = {
		{ "", 1 }, { "B", 1 },
		{ "K", 1024.0 }, { "Ki", 1024.0 }, { "KiB", 1024.0 },
		{ "M", 1048576.0 }, { "Mi", 1048576.0 }, { "MiB", 1048576.0 },
		{ "G", 1073741824.0 }, { "Gi", 1073741824.0 }, { "GiB", 1073741824.0 },
		{ "T", 1099511627776.0 }, { "Ti", 1099511627776.0 }, { "TiB", 1099511627776.0 },
		{ "kB", 1e3 }, { "MB", 1e6 }, { "GB", 1e9 }, { "TB", 1e12 },
	};
	char *end;
	double v;

	if (!isdigit((unsigned char)s[0]))
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (errno || v < 0)
		return false;
	while (*end == ' ')
		end++;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].suffix)) {
			double bytes = v * units[i].mult;

			if (bytes >= 18446744073709551615.0)
				return false;
			*ret = (uint64_t)(bytes + 0.5);
			return true;
		}
	return false;
}

int p_size(struct pctx *c, struct json_object *obj, const char *key, const struct jpath *at,
	   uint64_t *ret)
{
	struct json_object *v = member(obj, key);
	struct jpath kp = JP_KEY(at, key);

	if (!v)
		return 0;
	if (json_object_is_type(v, json_type_int)) {
		if (json_object_get_int64(v) < 0)
			return board_fail(c->d, &kp, "'%s' must not be negative", key);
		*ret = (uint64_t)json_object_get_int64(v);
		return 1;
	}
	if (json_object_is_type(v, json_type_string) &&
	    parse_size(json_object_get_string(v), ret))
		return 1;
	return board_fail(c->d, &kp,
			  "'%s' must be a size in bytes or like \"16M\", \"64G\", \"3.84TB\"",
			  key);
}

static bool parse_hex16(const char *s, size_t n, uint16_t *ret)
{
	unsigned v = 0;

	if (n == 0 || n > 4)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return false;
		v = v * 16 + (unsigned)(isdigit((unsigned char)s[i]) ? s[i] - '0'
								  : (tolower((unsigned char)s[i]) - 'a' + 10));
	}
	*ret = (uint16_t)v;
	return true;
}

int p_id_pair(struct pctx *c, struct json_object *obj, const char *key, const struct jpath *at,
	      uint16_t *ret_first, uint16_t *ret_second)
{
	struct json_object *v = member(obj, key);
	struct jpath kp = JP_KEY(at, key);
	const char *s, *colon;
	uint16_t a, b;

	if (!v)
		return 0;
	s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
	colon = s ? strchr(s, ':') : NULL;
	if (!colon || !parse_hex16(s, (size_t)(colon - s), &a) ||
	    !parse_hex16(colon + 1, strlen(colon + 1), &b))
		return board_fail(c->d, &kp, "'%s' must be \"vvvv:dddd\" in hex (e.g. \"10de:2330\")",
				  key);
	*ret_first = a;
	*ret_second = b;
	return 1;
}

int p_name(struct pctx *c, struct json_object *obj, const char *key, const struct jpath *at,
	   const char **ret)
{
	const char *s = NULL;
	struct jpath kp = JP_KEY(at, key);
	int r = p_str(c, obj, key, at, &s);

	if (r <= 0)
		return r;
	if (!s[0] || s[0] == '.' || strlen(s) > 64)
		return board_fail(c->d, &kp, "'%s' is not a usable name: '%s'", key, s);
	for (const char *p = s; *p; p++)
		if (*p == '/' || (unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f)
			return board_fail(c->d, &kp, "'%s' is not a usable name: '%s'", key, s);
	*ret = s;
	return 1;
}

static bool parse_link(const char *s, struct board_link *ret)
{
	static const unsigned speeds[] = { 2500, 5000, 8000, 16000, 32000, 64000 };
	unsigned mts = 0, width = 0;
	char *end;

	if (!strncasecmp(s, "gen", 3)) {
		long g = strtol(s + 3, &end, 10);

		if (end == s + 3 || g < 1 || g > 6)
			return false;
		mts = speeds[g - 1];
	} else {
		double v = strtod(s, &end);

		if (end == s)
			return false;
		mts = v > 0 && v < 1000 ? (unsigned)(v * 1000 + 0.5) : 0;
		while (*end == ' ')
			end++;
		if (strncmp(end, "GT/s", 4))
			return false;
		end += 4;
	}
	while (*end == ' ')
		end++;
	if (*end != 'x' && *end != 'X')
		return false;
	width = (unsigned)strtoul(end + 1, &end, 10);
	if (*end)
		return false;
	bool ok = false;
	for (size_t i = 0; i < sizeof(speeds) / sizeof(speeds[0]); i++)
		ok |= speeds[i] == mts;
	if (!ok || !(width == 1 || width == 2 || width == 4 || width == 8 || width == 12 ||
		     width == 16 || width == 32))
		return false;
	ret->mts = mts;
	ret->width = width;
	return true;
}

int p_link(struct pctx *c, struct json_object *obj, const char *key, const struct jpath *at,
	   struct board_link *ret)
{
	struct json_object *v = member(obj, key);
	struct jpath kp = JP_KEY(at, key);

	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_string) ||
	    !parse_link(json_object_get_string(v), ret))
		return board_fail(c->d, &kp,
				  "'%s' must be like \"32GT/s x16\" or \"gen5 x16\" (2.5 to 64 GT/s, "
				  "x1 to x32)", key);
	return 1;
}

int p_bars(struct pctx *c, struct json_object *obj, const char *key, const struct jpath *at,
	   struct board_bar bars[6])
{
	struct json_object *v = member(obj, key);
	struct jpath kp = JP_KEY(at, key);
	size_t slot = 0;

	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_array))
		return board_fail(c->d, &kp, "'%s' must be a list like [\"16M\", \"64G pref\"]", key);
	memset(bars, 0, 6 * sizeof(bars[0]));
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		struct json_object *e = json_object_array_get_idx(v, i);
		struct jpath ip = JP_INDEX(&kp, i);
		char buf[64], *tok, *save = NULL;
		struct board_bar bar = { .is64 = true };

		if (!json_object_is_type(e, json_type_string) ||
		    (size_t)snprintf(buf, sizeof(buf), "%s", json_object_get_string(e)) >= sizeof(buf))
			return board_fail(c->d, &ip, "a BAR must be a string like \"64G pref\"");
		tok = strtok_r(buf, " ", &save);
		if (!tok || !parse_size(tok, &bar.size))
			return board_fail(c->d, &ip, "BAR '%s': bad size", json_object_get_string(e));
		while ((tok = strtok_r(NULL, " ", &save))) {
			if (!strcmp(tok, "pref"))
				bar.prefetch = true;
			else if (!strcmp(tok, "32bit"))
				bar.is64 = false;
			else if (!strcmp(tok, "unused"))
				bar.size = 0;
			else
				return board_fail(c->d, &ip,
						  "BAR '%s': unknown flag '%s' (pref, 32bit, unused)",
						  json_object_get_string(e), tok);
		}
		if (bar.size && (bar.size < 16 || (bar.size & (bar.size - 1))))
			return board_fail(c->d, &ip, "BAR '%s': size must be a power of two >= 16",
					  json_object_get_string(e));
		if (slot + (bar.is64 ? 2 : 1) > 6)
			return board_fail(c->d, &ip, "too many BARs: 6 slots, 64-bit BARs take two");
		bars[slot] = bar;
		slot += bar.is64 && bar.size ? 2 : 1;
	}
	return 1;
}

int p_cpulist(struct pctx *c, struct json_object *obj, const char *key, const struct jpath *at,
	      const char **ret, unsigned *ret_max)
{
	struct json_object *v = member(obj, key);
	struct jpath kp = JP_KEY(at, key);
	static const char bad[] = "'%s' must be a CPU list like \"0-15,32-47\"";
	unsigned char *bits;
	char text[64];
	const char *s;
	char *out;
	size_t len = 0, cap = 16;
	unsigned max = 0;
	bool any = false;

	if (!v)
		return 0;
	if (json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0 &&
	    json_object_get_int64(v) < MAX_CPUS) {
		snprintf(text, sizeof(text), "%" PRId64, json_object_get_int64(v));
		s = text;
	} else if (json_object_is_type(v, json_type_string)) {
		s = json_object_get_string(v);
	} else {
		return board_fail(c->d, &kp, bad, key);
	}
	bits = calloc(MAX_CPUS / 8, 1);
	if (!bits)
		return -ENOMEM;
	while (*s) {
		char *end;
		unsigned long lo = strtoul(s, &end, 10), hi = lo;

		if (end == s || !isdigit((unsigned char)*s))
			goto bad_list;
		if (*end == '-') {
			s = end + 1;
			hi = strtoul(s, &end, 10);
			if (end == s || !isdigit((unsigned char)*s))
				goto bad_list;
		}
		if (hi < lo || hi >= MAX_CPUS)
			goto bad_list;
		for (unsigned long i = lo; i <= hi; i++)
			bits[i / 8] |= (unsigned char)(1u << (i % 8));
		any = true;
		if (hi > max)
			max = (unsigned)hi;
		s = end;
		if (*s == ',')
			s++;
		else if (*s)
			goto bad_list;
	}
	if (!any)
		goto bad_list;
	/* normalized like the kernel's %*pbl: ascending, merged ranges */
	out = malloc(cap);
	if (!out) {
		free(bits);
		return -ENOMEM;
	}
	out[0] = '\0';
	for (unsigned i = 0; i <= max; i++) {
		unsigned j = i;
		char piece[32];
		int n;

		if (!(bits[i / 8] & (1u << (i % 8))))
			continue;
		while (j + 1 <= max && (bits[(j + 1) / 8] & (1u << ((j + 1) % 8))))
			j++;
		n = j == i ? snprintf(piece, sizeof(piece), "%s%u", len ? "," : "", i)
			   : snprintf(piece, sizeof(piece), "%s%u-%u", len ? "," : "", i, j);
		if (len + (size_t)n + 1 > cap) {
			char *grown;

			cap = (len + (size_t)n + 1) * 2;
			grown = realloc(out, cap);
			if (!grown) {
				free(out);
				free(bits);
				return -ENOMEM;
			}
			out = grown;
		}
		memcpy(out + len, piece, (size_t)n + 1);
		len += (size_t)n;
		i = j;
	}
	free(bits);
	*ret = arena_strdup(c->a, out);
	free(out);
	*ret_max = max;
	return *ret ? 1 : -ENOMEM;
bad_list:
	free(bits);
	return board_fail(c->d, &kp, bad, key);
}

int p_enum(struct pctx *c, struct json_object *obj, const char *key,
		  const struct jpath *at, const struct named_int *table, int *ret)
{
	const char *s = NULL;
	struct jpath kp = JP_KEY(at, key);
	int r = p_text(c, obj, key, at, &s);

	if (r <= 0)
		return r;
	if (isdigit((unsigned char)s[0]) && strchr(s, ':'))
		s = strchr(s, ':') + 1 + (strchr(s, ':')[1] == ' ');
	for (const struct named_int *t = table; t->name; t++)
		if (!strcmp(t->name, s) ||
		    (isdigit((unsigned char)s[0]) && atoi(s) == t->value && !strchr(s, ' '))) {
			*ret = t->value;
			return 1;
		}
	{
		char names[256] = "";

		for (const struct named_int *t = table; t->name; t++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 names[0] ? ", " : "", t->name);
		return board_fail(c->d, &kp, "'%s' is '%s'; expected one of %s", key, s, names);
	}
}

static bool is_hex_string(const char *s, size_t len)
{
	if (strlen(s) != len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

int p_hex128(struct pctx *c, struct json_object *obj, const char *key,
		    const struct jpath *at, const char **ret)
{
	struct jpath kp = JP_KEY(at, key);
	int r = p_str(c, obj, key, at, ret);

	if (r > 0 && !is_hex_string(*ret, 32))
		return board_fail(c->d, &kp, "'%s' must be 32 hex digits", key);
	return r;
}

int p_subpath(struct pctx *c, struct json_object *obj, const char *key,
		     const struct jpath *at, const char **ret)
{
	struct jpath kp = JP_KEY(at, key);
	int r = p_str(c, obj, key, at, ret);

	if (r <= 0)
		return r;
	if (!(*ret)[0] || (*ret)[0] == '/' || strstr(*ret, "..") || strstr(*ret, "//") ||
	    (*ret)[strlen(*ret) - 1] == '/')
		return board_fail(c->d, &kp, "'%s' must be a relative path inside the device", key);
	return 1;
}

int p_list_of(struct pctx *c, struct json_object *obj, const char *key,
		   const struct jpath *at, struct json_object **ret_list, size_t *ret_n,
		   bool *ret_single)
{
	struct json_object *v = NULL;
	struct jpath kp = JP_KEY(at, key);
	int r;

	*ret_n = 0;
	if (!json_object_object_get_ex(obj, key, &v) || !v)
		return 0;
	r = p_expect_list(c, v, &kp, key, true, ret_single);
	if (r < 0)
		return r;
	*ret_list = v;
	*ret_n = *ret_single ? 1 : json_object_array_length(v);
	return 1;
}

struct json_object *p_item(struct json_object *list, bool single, size_t i)
{
	return single ? list : json_object_array_get_idx(list, i);
}

