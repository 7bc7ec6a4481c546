/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/lib/yaml_emit.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/lib/yaml_load.h"

/* Plain scalars are safe when made of these and read back as a string. */
static int plain_safe(const char *s)
{
	struct json_object *back = NULL;
	char err[8];
	int ok;

	if (!*s || strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			     "._/-+") != strlen(s) || s[0] == '-' || s[0] == '.')
		return 0;
	if (yaml_load_buffer(s, strlen(s), &back, err, sizeof(err)) < 0)
		return 0;
	ok = back && json_object_is_type(back, json_type_string);
	json_object_put(back);
	return ok;
}

/*
 * A YAML double-quoted scalar: escapes quotes, backslashes, control
 * characters, and the Unicode characters YAML reads as line breaks or byte
 * order marks (U+0085, U+2028, U+2029, U+FEFF). Returns a malloc'd string.
 */
static char *quote(const char *s)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		return NULL;
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else if (p[0] == 0xc2 && p[1] == 0x85)
			fputs("\\N", f), p++;
		else if (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9))
			fputs(p[2] == 0xa8 ? "\\L" : "\\P", f), p += 2;
		else if (p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf)
			fputs("\\ufeff", f), p += 2;
		else
			fputc(*p, f);
	}
	fputc('"', f);
	fclose(f);
	return out;
}

/* The scalar's text: plain when safe, double-quoted strings otherwise, JSON
 * for numbers, booleans and null. Returns a malloc'd string. */
static char *scalar_text(struct json_object *v)
{
	if (json_object_is_type(v, json_type_string)) {
		const char *s = json_object_get_string(v);
		return plain_safe(s) ? strdup(s) : quote(s);
	}
	return strdup(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
}

static void scalar(FILE *out, struct json_object *v)
{
	char *text = scalar_text(v);

	if (text)
		fputs(text, out);
	free(text);
}

/* YAML limits implicit keys to 1024 characters; longer keys use the
 * explicit "? key" form. */
static void key(FILE *out, const char *k, int indent)
{
	struct json_object *s = json_object_new_string(k);
	char *text = scalar_text(s);

	if (text && strlen(text) > 1000)
		fprintf(out, "? %s\n%*s", text, indent, "");
	else if (text)
		fputs(text, out);
	free(text);
	json_object_put(s);
	fputc(':', out);
}

static int is_collection(struct json_object *v)
{
	return (json_object_is_type(v, json_type_object) && json_object_object_length(v) > 0) ||
	       (json_object_is_type(v, json_type_array) && json_object_array_length(v) > 0);
}

static void emit(FILE *out, struct json_object *v, int indent, int inline_first);

static void emit_object(FILE *out, struct json_object *v, int indent, int inline_first)
{
	int first = 1;

	json_object_object_foreach(v, k, val) {
		if (!(first && inline_first))
			fprintf(out, "%*s", indent, "");
		first = 0;
		key(out, k, indent);
		if (is_collection(val)) {
			fputc('\n', out);
			emit(out, val, json_object_is_type(val, json_type_array) ? indent : indent + 2, 0);
		} else {
			fputc(' ', out);
			emit(out, val, indent + 2, 1);
		}
	}
}

static void emit(FILE *out, struct json_object *v, int indent, int inline_first)
{
	if (json_object_is_type(v, json_type_object) && json_object_object_length(v) > 0) {
		emit_object(out, v, indent, inline_first);
	} else if (json_object_is_type(v, json_type_array) && json_object_array_length(v) > 0) {
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			struct json_object *item = json_object_array_get_idx(v, i);
			if (!(i == 0 && inline_first))
				fprintf(out, "%*s", indent, "");
			fputs("- ", out);
			emit(out, item, indent + 2, 1);
		}
	} else if (json_object_is_type(v, json_type_object)) {
		fputs("{}\n", out);
	} else if (json_object_is_type(v, json_type_array)) {
		fputs("[]\n", out);
	} else if (!v) {
		fputs("null\n", out);
	} else {
		scalar(out, v);
		fputc('\n', out);
	}
}

int yaml_emit(struct json_object *obj, FILE *out)
{
	emit(out, obj, 0, 0);
	return ferror(out) ? -EIO : 0;
}
