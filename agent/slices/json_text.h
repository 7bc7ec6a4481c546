/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON text without trees: the span of a value in a text, the members of an
 * object, the elements of an array, and json-c's pretty layout of a value.
 * Lets the slice pipeline take a slice's text apart one device at a time
 * (a json-c tree costs about twenty times its text). Pure. The scanner is
 * strict (RFC 8259) and nests at most 64 deep; keys are compared as
 * written (escapes are not decoded).
 */
#ifndef DRALET_SLICES_JSON_TEXT_H
#define DRALET_SLICES_JSON_TEXT_H

#include <stddef.h>

struct json_span {
	const char *p;
	size_t len;
};

/* The JSON value at the start of @text (after whitespace); what follows it
 * is not looked at. *ret: its span. -EBADMSG when there is none. */
int json_text_value(const char *text, size_t len, struct json_span *ret);

/* Members of the object @obj (a value span), in order: @key without its
 * quotes. Return 0 to go on; an error stops the walk and is returned. */
typedef int (*json_text_member_cb)(void *userdata, struct json_span key, struct json_span value);
int json_text_members(struct json_span obj, json_text_member_cb cb, void *userdata);

/* The value of member @key of @obj (the last one when it repeats, as json-c
 * does). -ENOENT when there is none, -EBADMSG when @obj is not an object. */
int json_text_member(struct json_span obj, const char *key, struct json_span *ret);

/* Elements of the array @arr, in order; -EBADMSG when it is not an array. */
typedef int (*json_text_element_cb)(void *userdata, struct json_span element);
int json_text_elements(struct json_span arr, json_text_element_cb cb, void *userdata);

/* A growing text; always NUL-terminated once something was added. */
struct json_text_buf {
	char *p;
	size_t len, cap;
};
int json_text_buf_add(struct json_text_buf *b, const char *s, size_t len);
void json_text_buf_free(struct json_text_buf *b);

/*
 * Appends @value laid out as json-c writes it with JSON_C_TO_STRING_PRETTY
 * and JSON_C_TO_STRING_SPACED when the value is nested @level deep (0: the
 * top): whitespace outside strings is replaced, strings and numbers are
 * copied as written. -EBADMSG when @value is not JSON, -ENOMEM.
 */
int json_text_pretty(struct json_span value, unsigned level, struct json_text_buf *out);

#endif
