/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/yaml_emit.h"

#include <errno.h>
#include <string.h>

#include "agent/yaml_load.h"

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

static void scalar(FILE *out, struct json_object *v)
{
	if (json_object_is_type(v, json_type_string) && plain_safe(json_object_get_string(v)))
		fputs(json_object_get_string(v), out);
	else
		fputs(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
							 JSON_C_TO_STRING_NOSLASHESCAPE), out);
}

static void key(FILE *out, const char *k)
{
	struct json_object *s = json_object_new_string(k);
	scalar(out, s);
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
		key(out, k);
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
