/* SPDX-License-Identifier: Apache-2.0 */
/* JSON text without trees (see json_text.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "agent/slices/json_text.h"

#define MAX_DEPTH 64

struct cur {
	const char *p, *end;
};

static void skip_ws(struct cur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

static bool is_hex(char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

/* A string at c->p; *ret: its contents as written (escapes kept), may be NULL. */
static int scan_string(struct cur *c, struct json_span *ret)
{
	if (c->p >= c->end || *c->p != '"')
		return -EBADMSG;
	const char *start = ++c->p;
	while (c->p < c->end) {
		unsigned char ch = (unsigned char)*c->p;
		if (ch == '"') {
			if (ret)
				*ret = (struct json_span){ start, (size_t)(c->p - start) };
			c->p++;
			return 0;
		}
		if (ch < 0x20)
			return -EBADMSG;
		if (ch != '\\') {
			c->p++;
			continue;
		}
		if (++c->p >= c->end)
			return -EBADMSG;
		switch (*c->p) {
		case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
			c->p++;
			break;
		case 'u':
			if (c->end - c->p < 5 || !is_hex(c->p[1]) || !is_hex(c->p[2]) || !is_hex(c->p[3]) ||
			    !is_hex(c->p[4]))
				return -EBADMSG;
			c->p += 5;
			break;
		default:
			return -EBADMSG;
		}
	}
	return -EBADMSG;
}

static bool digit(const struct cur *c)
{
	return c->p < c->end && *c->p >= '0' && *c->p <= '9';
}

static int scan_number(struct cur *c)
{
	if (c->p < c->end && *c->p == '-')
		c->p++;
	if (!digit(c))
		return -EBADMSG;
	if (*c->p == '0')
		c->p++;
	else
		while (digit(c))
			c->p++;
	if (c->p < c->end && *c->p == '.') {
		c->p++;
		if (!digit(c))
			return -EBADMSG;
		while (digit(c))
			c->p++;
	}
	if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
		c->p++;
		if (c->p < c->end && (*c->p == '+' || *c->p == '-'))
			c->p++;
		if (!digit(c))
			return -EBADMSG;
		while (digit(c))
			c->p++;
	}
	return 0;
}

static int scan_literal(struct cur *c, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n))
		return -EBADMSG;
	c->p += n;
	return 0;
}

static int scan_value(struct cur *c, int depth);

/* The container at c->p ('{' or '['), members or elements handed to the
 * callbacks (either may be NULL). */
static int scan_container(struct cur *c, int depth, json_text_member_cb on_member,
			  json_text_element_cb on_element, void *userdata)
{
	bool object = *c->p == '{';
	char close = object ? '}' : ']';
	c->p++;
	skip_ws(c);
	if (c->p < c->end && *c->p == close) {
		c->p++;
		return 0;
	}
	for (;;) {
		struct json_span key = { NULL, 0 };
		int r;
		skip_ws(c);
		if (object) {
			if ((r = scan_string(c, &key)) < 0)
				return r;
			skip_ws(c);
			if (c->p >= c->end || *c->p++ != ':')
				return -EBADMSG;
			skip_ws(c);
		}
		const char *start = c->p;
		if ((r = scan_value(c, depth + 1)) < 0)
			return r;
		struct json_span value = { start, (size_t)(c->p - start) };
		if (object && on_member && (r = on_member(userdata, key, value)) < 0)
			return r;
		if (!object && on_element && (r = on_element(userdata, value)) < 0)
			return r;
		skip_ws(c);
		if (c->p >= c->end)
			return -EBADMSG;
		if (*c->p == close) {
			c->p++;
			return 0;
		}
		if (*c->p++ != ',')
			return -EBADMSG;
	}
}

static int scan_value(struct cur *c, int depth)
{
	if (depth > MAX_DEPTH)
		return -EBADMSG;
	skip_ws(c);
	if (c->p >= c->end)
		return -EBADMSG;
	switch (*c->p) {
	case '{':
	case '[':
		return scan_container(c, depth, NULL, NULL, NULL);
	case '"':
		return scan_string(c, NULL);
	case 't':
		return scan_literal(c, "true");
	case 'f':
		return scan_literal(c, "false");
	case 'n':
		return scan_literal(c, "null");
	default:
		return scan_number(c);
	}
}

int json_text_value(const char *text, size_t len, struct json_span *ret)
{
	if (!text)
		return -EBADMSG;
	struct cur c = { text, text + len };
	skip_ws(&c);
	const char *start = c.p;
	int r = scan_value(&c, 1);
	if (r < 0)
		return r;
	*ret = (struct json_span){ start, (size_t)(c.p - start) };
	return 0;
}

int json_text_members(struct json_span obj, json_text_member_cb cb, void *userdata)
{
	struct cur c = { obj.p, obj.p + obj.len };
	if (!obj.p || !obj.len || *obj.p != '{')
		return -EBADMSG;
	return scan_container(&c, 1, cb, NULL, userdata);
}

int json_text_elements(struct json_span arr, json_text_element_cb cb, void *userdata)
{
	struct cur c = { arr.p, arr.p + arr.len };
	if (!arr.p || !arr.len || *arr.p != '[')
		return -EBADMSG;
	return scan_container(&c, 1, NULL, cb, userdata);
}

struct find {
	const char *key;
	size_t key_len;
	struct json_span found;
	bool seen;
};

static int find_member(void *userdata, struct json_span key, struct json_span value)
{
	struct find *f = userdata;
	if (key.len == f->key_len && !memcmp(key.p, f->key, key.len)) {
		f->found = value;
		f->seen = true;
	}
	return 0;
}

int json_text_member(struct json_span obj, const char *key, struct json_span *ret)
{
	struct find f = { .key = key, .key_len = strlen(key) };
	int r = json_text_members(obj, find_member, &f);
	if (r < 0)
		return r;
	if (!f.seen)
		return -ENOENT;
	*ret = f.found;
	return 0;
}

/* ---- buffers ---- */

int json_text_buf_add(struct json_text_buf *b, const char *s, size_t len)
{
	if (b->len + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + len + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p)
			return -ENOMEM;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, len);
	b->len += len;
	b->p[b->len] = '\0';
	return 0;
}

void json_text_buf_free(struct json_text_buf *b)
{
	free(b->p);
	*b = (struct json_text_buf){ 0 };
}

/* ---- json-c's pretty layout ---- */

static int indent(struct json_text_buf *out, unsigned level)
{
	static const char spaces[] = "                                ";
	for (size_t n = (size_t)level * 2; n;) {
		size_t k = n < sizeof(spaces) - 1 ? n : sizeof(spaces) - 1;
		if (json_text_buf_add(out, spaces, k) < 0)
			return -ENOMEM;
		n -= k;
	}
	return 0;
}

static int pretty(struct cur *c, unsigned level, int depth, struct json_text_buf *out)
{
	if (depth > MAX_DEPTH)
		return -EBADMSG;
	skip_ws(c);
	if (c->p >= c->end)
		return -EBADMSG;
	const char *start = c->p;
	int r;
	if (*c->p != '{' && *c->p != '[') {
		if ((r = scan_value(c, depth)) < 0)
			return r;
		return json_text_buf_add(out, start, (size_t)(c->p - start));
	}
	bool object = *c->p == '{';
	char close = object ? '}' : ']';
	char open_nl[2] = { *c->p, '\n' };
	bool had = false;
	c->p++;
	if (json_text_buf_add(out, open_nl, 2) < 0)
		return -ENOMEM;
	for (;;) {
		skip_ws(c);
		if (c->p >= c->end)
			return -EBADMSG;
		if (*c->p == close && !had) {
			c->p++;
			break;
		}
		if (had && json_text_buf_add(out, ",\n", 2) < 0)
			return -ENOMEM;
		if (indent(out, level + 1) < 0)
			return -ENOMEM;
		if (object) {
			const char *key = c->p;
			if ((r = scan_string(c, NULL)) < 0)
				return r;
			if (json_text_buf_add(out, key, (size_t)(c->p - key)) < 0 ||
			    json_text_buf_add(out, ": ", 2) < 0)
				return -ENOMEM;
			skip_ws(c);
			if (c->p >= c->end || *c->p++ != ':')
				return -EBADMSG;
		}
		if ((r = pretty(c, level + 1, depth + 1, out)) < 0)
			return r;
		had = true;
		skip_ws(c);
		if (c->p >= c->end)
			return -EBADMSG;
		if (*c->p == close) {
			c->p++;
			if (json_text_buf_add(out, "\n", 1) < 0)
				return -ENOMEM;
			break;
		}
		if (*c->p++ != ',')
			return -EBADMSG;
	}
	if (indent(out, level) < 0 || json_text_buf_add(out, &close, 1) < 0)
		return -ENOMEM;
	return 0;
}

int json_text_pretty(struct json_span value, unsigned level, struct json_text_buf *out)
{
	struct cur c = { value.p, value.p + value.len };
	if (!value.p)
		return -EBADMSG;
	return pretty(&c, level, 1, out);
}
