/* SPDX-License-Identifier: Apache-2.0 */
/* The items of a List body, one at a time (see list_body.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "agent/slices/list_body.h"

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

/* A string at c->p; *ret and *ret_len: its raw contents (escapes as written). */
static int scan_string(struct cur *c, const char **ret, size_t *ret_len)
{
	if (c->p >= c->end || *c->p != '"')
		return -EBADMSG;
	const char *start = ++c->p;
	while (c->p < c->end) {
		unsigned char ch = (unsigned char)*c->p;
		if (ch == '"') {
			if (ret)
				*ret = start;
			if (ret_len)
				*ret_len = (size_t)(c->p - start);
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

static int scan_array(struct cur *c, int depth)
{
	c->p++;	/* [ */
	skip_ws(c);
	if (c->p < c->end && *c->p == ']') {
		c->p++;
		return 0;
	}
	for (;;) {
		int r = scan_value(c, depth + 1);
		if (r < 0)
			return r;
		skip_ws(c);
		if (c->p >= c->end)
			return -EBADMSG;
		if (*c->p == ']') {
			c->p++;
			return 0;
		}
		if (*c->p++ != ',')
			return -EBADMSG;
	}
}

/*
 * An object at c->p. When @items/@meta are given (the top level), they get
 * the position of the last "items" and "metadata" values (NULL if none).
 */
static int scan_object(struct cur *c, int depth, const char **items, const char **meta)
{
	c->p++;	/* { */
	skip_ws(c);
	if (c->p < c->end && *c->p == '}') {
		c->p++;
		return 0;
	}
	for (;;) {
		const char *key;
		size_t klen;
		skip_ws(c);
		int r = scan_string(c, &key, &klen);
		if (r < 0)
			return r;
		skip_ws(c);
		if (c->p >= c->end || *c->p++ != ':')
			return -EBADMSG;
		skip_ws(c);
		if (items && klen == 5 && !memcmp(key, "items", 5))
			*items = c->p;
		if (meta && klen == 8 && !memcmp(key, "metadata", 8))
			*meta = c->p;
		if ((r = scan_value(c, depth + 1)) < 0)
			return r;
		skip_ws(c);
		if (c->p >= c->end)
			return -EBADMSG;
		if (*c->p == '}') {
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
		return scan_object(c, depth, NULL, NULL);
	case '[':
		return scan_array(c, depth);
	case '"':
		return scan_string(c, NULL, NULL);
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

/* Parses the JSON value at @at (already validated) as a tree; NULL unless an object. */
static struct json_object *parse_at(const char *at, const char *end, int *ret_err)
{
	struct cur c = { at, end };
	*ret_err = 0;
	if (scan_value(&c, 1) < 0 || *at != '{')
		return NULL;
	struct json_tokener *tok = json_tokener_new();
	if (!tok) {
		*ret_err = -ENOMEM;
		return NULL;
	}
	struct json_object *obj = json_tokener_parse_ex(tok, at, (int)(c.p - at));
	if (!obj && json_tokener_get_error(tok) == json_tokener_continue)
		obj = json_tokener_parse_ex(tok, "", 1);
	json_tokener_free(tok);
	if (!obj)
		*ret_err = -ENOMEM;	/* valid JSON json-c cannot hold: out of memory or too deep */
	return obj;
}

int slice_list_body_scan(const char *body, size_t len, slice_list_item_cb on_item, void *userdata,
			 struct json_object **ret_metadata)
{
	const char *items = NULL, *meta = NULL;
	if (!body || len > (1u << 30))
		return -EBADMSG;
	struct cur c = { body, body + len };
	skip_ws(&c);
	if (c.p >= c.end || *c.p != '{')
		return -EBADMSG;
	int r = scan_object(&c, 1, &items, &meta);
	if (r < 0)
		return r;
	if (!items)
		return -EBADMSG;
	c = (struct cur){ items, body + len };
	if (*items == 'n') {
		c.p += 4;	/* null: no items */
	} else if (*items != '[') {
		return -EBADMSG;
	} else {
		c.p++;
		skip_ws(&c);
		while (*c.p != ']') {
			const char *start = c.p;
			if ((r = scan_value(&c, 2)) < 0)
				return r;	/* validated above: cannot happen */
			if ((r = on_item(userdata, start, (size_t)(c.p - start))) < 0)
				return r;
			skip_ws(&c);
			if (*c.p == ',') {
				c.p++;
				skip_ws(&c);
			}
		}
	}
	struct json_object *metadata = NULL;
	if (meta && *meta == '{') {
		metadata = parse_at(meta, body + len, &r);
		if (!metadata)
			return r ? r : -EBADMSG;
	}
	if (ret_metadata)
		*ret_metadata = metadata;
	else
		json_object_put(metadata);
	return 0;
}
