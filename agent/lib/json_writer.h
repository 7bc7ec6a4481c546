/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A streaming JSON writer: pretty-printed (two-space indentation) to a FILE
 * through its own buffer, for outputs too large or too frequent to build as
 * json-c trees first. The caller nests begin/end calls correctly, puts a key
 * before every value inside an object, and calls jw_flush() at the end.
 */
#ifndef DRALET_JSON_WRITER_H
#define DRALET_JSON_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_WRITER_MAX_DEPTH 32

#define JSON_WRITER_BUFFER 65536

struct json_writer {
	FILE *out;
	size_t len;		/* bytes waiting in buf */
	char buf[JSON_WRITER_BUFFER];
	int depth;
	int indent;		/* extra indentation of every line */
	bool has_items[JSON_WRITER_MAX_DEPTH];
	bool after_key;
};

void jw_init(struct json_writer *w, FILE *out, int indent);
void jw_begin_object(struct json_writer *w);
void jw_end_object(struct json_writer *w);
void jw_begin_array(struct json_writer *w);
void jw_end_array(struct json_writer *w);
void jw_key(struct json_writer *w, const char *key);
void jw_string(struct json_writer *w, const char *s);
void jw_int(struct json_writer *w, int64_t v);
void jw_bool(struct json_writer *w, bool v);
/* Raw text (already valid JSON), e.g. a document rendered elsewhere. */
void jw_raw(struct json_writer *w, const char *text, size_t len);
/* Writes what is buffered to the FILE; 0 or -EIO. */
int jw_flush(struct json_writer *w);

#endif
