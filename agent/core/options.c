/* SPDX-License-Identifier: Apache-2.0 */
/* The strict table-driven decoder (include/dralet/options.h, options_json.h). */
#include "agent/core/options_json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "agent/lib/err_msg.h"

void decoder_init(struct dralet_decoder *d, const char *root, char *err, size_t errlen)
{
	d->err = err;
	d->errlen = errlen;
	d->len = 0;
	d->path[0] = '\0';
	if (root && *root)
		decoder_push_key(d, root);
}

static size_t push(struct dralet_decoder *d, const char *piece)
{
	size_t mark = d->len;
	size_t room = sizeof(d->path) - d->len;
	int n = snprintf(d->path + d->len, room, "%s%s", d->len && *piece != '[' ? "." : "",
			 piece);

	d->len = n < 0 ? d->len : (size_t)n >= room ? sizeof(d->path) - 1 : d->len + (size_t)n;
	return mark;
}

size_t decoder_push_key(struct dralet_decoder *d, const char *key)
{
	return push(d, key);
}

size_t decoder_push_index(struct dralet_decoder *d, size_t index)
{
	char piece[32];

	snprintf(piece, sizeof(piece), "[%zu]", index);
	return push(d, piece);
}

void decoder_pop(struct dralet_decoder *d, size_t mark)
{
	d->len = mark;
	d->path[mark] = '\0';
}

int decoder_fail(struct dralet_decoder *d, int r, const char *fmt, ...)
{
	struct err_msg msg;
	va_list ap;

	va_start(ap, fmt);
	err_vprintf(ERR_MSG_ARGS(&msg), r, fmt, ap);
	va_end(ap);
	return err_printf(d->err, d->errlen, r, "%s%s%s", d->path, d->len ? ": " : "", msg.text);
}

int decoder_borrow_string(const char *text, void *dst, char *why, size_t whylen)
{
	*(const char **)dst = text;
	return 0;
}

/* "a, b, c": the names of @fields, or of @names. */
static void list_names(const struct dralet_field *fields, const char *const *names, char *buf,
		       size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; len < size; i++) {
		const char *name = fields ? fields[i].name : names[i];
		int n;

		if (!name)
			break;
		n = snprintf(buf + len, size - len, "%s%s", len ? ", " : "", name);
		len += n > 0 ? (size_t)n : 0;
	}
}

static void store_int(void *dst, size_t size, long long n)
{
	int8_t i8 = (int8_t)n;
	int16_t i16 = (int16_t)n;
	int32_t i32 = (int32_t)n;
	int64_t i64 = n;

	memcpy(dst, size == 1 ? (void *)&i8 : size == 2 ? (void *)&i16
		    : size == 4 ? (void *)&i32 : (void *)&i64, size);
}

static int decode_value(struct dralet_decoder *d, struct json_object *v,
			const struct dralet_field *f, void *base);

static bool is_header_key(const char *key)
{
	return !strcmp(key, "apiVersion") || !strcmp(key, "kind");
}

static int decode_object(struct dralet_decoder *d, struct json_object *obj,
			 const struct dralet_field *fields, void *base, bool skip_header)
{
	char known[512];
	int r;

	if (obj && !json_object_is_type(obj, json_type_object))
		return decoder_fail(d, -EINVAL, "must be an object");
	if (obj) {
		json_object_object_foreach(obj, key, val) {
			const struct dralet_field *f = fields;

			(void)val;
			while (f->name && strcmp(f->name, key))
				f++;
			if (f->name || (skip_header && is_header_key(key)))
				continue;
			list_names(fields, NULL, known, sizeof(known));
			return decoder_fail(d, -EINVAL, "unknown field \"%.64s\" (%s%s)", key,
					    *known ? "known: " : "no fields are known", known);
		}
	}
	for (const struct dralet_field *f = fields; f->name; f++) {
		struct json_object *v = NULL;
		bool given = obj && json_object_object_get_ex(obj, f->name, &v) &&
			     (v || f->type != DRALET_FIELD_OBJECT);
		size_t mark = decoder_push_key(d, f->name);

		if (!given)
			r = f->required ? decoder_fail(d, -EINVAL, "is required") : 0;
		else if ((r = decode_value(d, v, f, base)) == 0 && f->seen)
			*(bool *)((char *)base + f->seen - 1) = true;
		decoder_pop(d, mark);
		if (r < 0)
			return r;
	}
	return 0;
}

int decoder_object(struct dralet_decoder *d, struct json_object *obj,
		   const struct dralet_field *fields, void *base)
{
	return decode_object(d, obj, fields, base, false);
}

static int decode_enum(struct dralet_decoder *d, struct json_object *v,
		       const char *const *names, void *dst)
{
	char list[256];

	for (int i = 0; names[i] && json_object_is_type(v, json_type_string); i++)
		if (!strcmp(json_object_get_string(v), names[i])) {
			memcpy(dst, &i, sizeof(i));
			return 0;
		}
	list_names(NULL, names, list, sizeof(list));
	if (json_object_is_type(v, json_type_string))
		return decoder_fail(d, -EINVAL, "\"%.64s\" is not one of %s",
				    json_object_get_string(v), list);
	return decoder_fail(d, -EINVAL, "must be one of %s", list);
}

static int decode_string(struct dralet_decoder *d, struct json_object *v,
			 const struct dralet_field *f, void *dst)
{
	struct err_msg why;
	const char *s;
	int r;

	if (!json_object_is_type(v, json_type_string))
		return decoder_fail(d, -EINVAL, "must be %s", f->help ? f->help : "a string");
	s = json_object_get_string(v);
	if (f->parse) {
		why.text[0] = '\0';
		r = f->parse(s, dst, ERR_MSG_ARGS(&why));
		return r < 0 ? decoder_fail(d, r, "%s", *why.text ? why.text : "is not valid") : 0;
	}
	if (strlen(s) >= f->size)
		return decoder_fail(d, -EINVAL, "is longer than %zu characters", f->size - 1);
	memcpy(dst, s, strlen(s) + 1);
	return 0;
}

static int decode_value(struct dralet_decoder *d, struct json_object *v,
			const struct dralet_field *f, void *base)
{
	void *dst = (char *)base + f->offset;
	long long n;

	switch (f->type) {
	case DRALET_FIELD_BOOL:
		if (!json_object_is_type(v, json_type_boolean))
			return decoder_fail(d, -EINVAL, "must be %s", f->help ? f->help : "true or false");
		if (f->size == sizeof(bool))
			*(bool *)dst = json_object_get_boolean(v);
		else
			store_int(dst, f->size, json_object_get_boolean(v) ? 1 : 0);
		return 0;
	case DRALET_FIELD_INT:
		if (!json_object_is_type(v, json_type_int))
			return decoder_fail(d, -EINVAL, "must be %s", f->help ? f->help : "an integer");
		n = (long long)json_object_get_int64(v);
		if (n < f->min || n > f->max)
			return decoder_fail(d, -EINVAL, "must be between %lld and %lld", f->min,
					    f->max);
		store_int(dst, f->size, n);
		return 0;
	case DRALET_FIELD_STRING:
		return decode_string(d, v, f, dst);
	case DRALET_FIELD_ENUM:
		return decode_enum(d, v, f->names, dst);
	case DRALET_FIELD_OBJECT:
		return decode_object(d, v, f->fields, base, false);
	case DRALET_FIELD_REFUSED:
		return decoder_fail(d, -EOPNOTSUPP, "%s", f->help ? f->help : "is not supported");
	case DRALET_FIELD_CUSTOM:
		return f->decode(d, (const struct dralet_value *)(void *)v, dst);
	}
	return decoder_fail(d, -EINVAL, "has a field type the agent does not know");
}

/* One JSON object and only whitespace after it. */
static int parse_strict(const char *text, struct json_object **ret, char *err, size_t errlen)
{
	struct json_tokener *tok = json_tokener_new();
	size_t len = strlen(text);
	struct json_object *obj;
	enum json_tokener_error e;

	if (!tok)
		return -ENOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	/* the terminating NUL tells the tokener where a top-level literal ends */
	obj = json_tokener_parse_ex(tok, text, (int)len + 1);
	e = json_tokener_get_error(tok);
	for (size_t i = obj && e == json_tokener_success ? json_tokener_get_parse_end(tok) : len;
	     i < len; i++)
		if (!strchr(" \t\r\n", text[i]))
			e = json_tokener_error_parse_unexpected;
	json_tokener_free(tok);
	if (e == json_tokener_success && json_object_is_type(obj, json_type_object)) {
		*ret = obj;
		return 0;
	}
	if (e != json_tokener_success)
		err_printf(err, errlen, -EINVAL, "not valid JSON: %s",
			   obj ? "text after the object" : json_tokener_error_desc(e));
	else
		err_printf(err, errlen, -EINVAL, "must be a JSON object%s",
			   obj ? "" : ", not null");
	json_object_put(obj);
	return -EINVAL;
}

static int check_api_version(struct dralet_decoder *d, struct json_object *obj,
			     const char *const *api_versions)
{
	struct json_object *v;
	size_t mark = decoder_push_key(d, "apiVersion");
	int r = 0;

	if (!json_object_object_get_ex(obj, "apiVersion", &v) || !v)
		r = decoder_fail(d, -EINVAL, "is required (want \"%s\")", api_versions[0]);
	else if (!json_object_is_type(v, json_type_string))
		r = decoder_fail(d, -EINVAL, "must be a string (want \"%s\")", api_versions[0]);
	else {
		r = -EINVAL;
		for (size_t i = 0; api_versions[i] && r; i++)
			if (!strcmp(json_object_get_string(v), api_versions[i]))
				r = 0;
		if (r)
			decoder_fail(d, r, "\"%.64s\" is not supported (want \"%s\")",
				     json_object_get_string(v), api_versions[0]);
	}
	decoder_pop(d, mark);
	return r;
}

static int decode_kind(struct dralet_decoder *d, struct json_object *obj,
		       const char *const *kinds, int *ret)
{
	struct json_object *v;
	size_t mark = decoder_push_key(d, "kind");
	char list[256];
	int r;

	if (!json_object_object_get_ex(obj, "kind", &v) || !v) {
		list_names(NULL, kinds, list, sizeof(list));
		r = decoder_fail(d, -EINVAL, "is required (one of %s)", list);
	} else {
		r = decode_enum(d, v, kinds, ret);
	}
	decoder_pop(d, mark);
	return r;
}

int dralet_config_decode(const char *text, const struct dralet_config_type *type, void *dst,
			 int *ret_kind, char *err, size_t errlen)
{
	struct dralet_decoder d;
	struct json_object *obj;
	int kind = -1, r;

	if (!text)
		return err_printf(err, errlen, -EINVAL, "no configuration");
	if ((r = parse_strict(text, &obj, err, errlen)) < 0)
		return r;
	decoder_init(&d, "", err, errlen);
	if ((r = check_api_version(&d, obj, type->api_versions)) < 0 ||
	    (r = decode_kind(&d, obj, type->kinds, &kind)) < 0)
		goto out;
	/* the rest is named after its kind: VfConfig.vlan */
	decoder_init(&d, type->kinds[kind], err, errlen);
	if ((r = decode_object(&d, obj, type->fields, dst, true)) < 0)
		goto out;
	if (ret_kind)
		*ret_kind = kind;
out:
	json_object_put(obj);
	return r;
}
