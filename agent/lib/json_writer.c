/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/lib/json_writer.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

void jw_init(struct json_writer *w, FILE *out, int indent)
{
	w->out = out;
	w->len = 0;
	w->depth = 0;
	w->indent = indent;
	w->after_key = false;
	memset(w->has_items, 0, sizeof(w->has_items));
}

int jw_flush(struct json_writer *w)
{
	size_t n = w->len;

	w->len = 0;
	return n && fwrite(w->buf, 1, n, w->out) != n ? -EIO : 0;
}

void jw_raw(struct json_writer *w, const char *text, size_t len)
{
	if (w->len + len > sizeof(w->buf)) {
		jw_flush(w);
		if (len > sizeof(w->buf)) {
			fwrite(text, 1, len, w->out);
			return;
		}
	}
	memcpy(w->buf + w->len, text, len);
	w->len += len;
}

static void put_char(struct json_writer *w, char c)
{
	if (w->len == sizeof(w->buf))
		jw_flush(w);
	w->buf[w->len++] = c;
}

static void newline(struct json_writer *w)
{
	static const char spaces[] = "\n                                                                "
				     "                ";
	size_t n = 1 + (size_t)(w->indent + 2 * w->depth);

	jw_raw(w, spaces, n < sizeof(spaces) - 1 ? n : sizeof(spaces) - 1);
}

/* Separator and indentation before a value or a key. */
static void before_item(struct json_writer *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->depth > 0) {
		if (w->has_items[w->depth])
			put_char(w, ',');
		w->has_items[w->depth] = true;
		newline(w);
	}
}

static void open_container(struct json_writer *w, char c)
{
	before_item(w);
	put_char(w, c);
	if (w->depth + 1 < JSON_WRITER_MAX_DEPTH)
		w->depth++;
	w->has_items[w->depth] = false;
}

static void close_container(struct json_writer *w, char c)
{
	bool had = w->has_items[w->depth];

	if (w->depth > 0)
		w->depth--;
	if (had)
		newline(w);
	put_char(w, c);
}

void jw_begin_object(struct json_writer *w) { open_container(w, '{'); }
void jw_end_object(struct json_writer *w) { close_container(w, '}'); }
void jw_begin_array(struct json_writer *w) { open_container(w, '['); }
void jw_end_array(struct json_writer *w) { close_container(w, ']'); }

static void quoted(struct json_writer *w, const char *s)
{
	const char *run = s;
	char esc[8];

	put_char(w, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f)
			continue;
		jw_raw(w, run, (size_t)(s - run));
		switch (c) {
		case '"': jw_raw(w, "\\\"", 2); break;
		case '\\': jw_raw(w, "\\\\", 2); break;
		case '\n': jw_raw(w, "\\n", 2); break;
		case '\t': jw_raw(w, "\\t", 2); break;
		case '\r': jw_raw(w, "\\r", 2); break;
		default:
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			jw_raw(w, esc, 6);
			break;
		}
		run = s + 1;
	}
	jw_raw(w, run, (size_t)(s - run));
	put_char(w, '"');
}

void jw_key(struct json_writer *w, const char *key)
{
	before_item(w);
	quoted(w, key);
	jw_raw(w, ": ", 2);
	w->after_key = true;
}

void jw_string(struct json_writer *w, const char *s)
{
	before_item(w);
	quoted(w, s ? s : "");
}

void jw_int(struct json_writer *w, int64_t v)
{
	char num[24];
	int n = snprintf(num, sizeof(num), "%" PRId64, v);

	before_item(w);
	jw_raw(w, num, (size_t)n);
}

void jw_bool(struct json_writer *w, bool v)
{
	before_item(w);
	jw_raw(w, v ? "true" : "false", v ? 4 : 5);
}
