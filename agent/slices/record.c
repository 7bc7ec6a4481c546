/* SPDX-License-Identifier: Apache-2.0 */
/* Slice records and lists (see record.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/slices/gates.h"
#include "agent/slices/record.h"

#define TEXT_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* The spec fields an update replaces: a published record's text goes without them. */
static const char *const replaced_fields[] = { "devices", "sharedCounters", "perDeviceNodeSelection",
					       "nodeSelector", "allNodes", "pool", NULL };

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;
	if (o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v))
		return v;
	return NULL;
}

static const char *get_str(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);
	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static int dup_str(const char *s, char **ret)
{
	*ret = NULL;
	if (!s)
		return 0;
	return (*ret = strdup(s)) ? 0 : -ENOMEM;
}

static int text_of(struct json_object *obj, char **ret, size_t *ret_len)
{
	size_t len = 0;
	const char *t = json_object_to_json_string_length(obj, TEXT_FLAGS, &len);
	char *copy = t ? malloc(len + 1) : NULL;
	if (!copy)
		return -ENOMEM;
	memcpy(copy, t, len + 1);
	*ret = copy;
	if (ret_len)
		*ret_len = len;
	return 0;
}

/* ---- pool ---- */

static bool wrong_type(struct json_object *v, enum json_type type)
{
	return !slice_json_is_empty(v) && !json_object_is_type(v, type);
}

/*
 * See pool_odd in record.h. The controller compares the published pool with
 * {name, generation, resourceSliceCount}: any other member must be empty
 * (a timeAdded is ignored, as everywhere), those three must have the right
 * type unless empty; their values are compared by the planner.
 */
static bool pool_is_odd(struct json_object *pool)
{
	if (slice_json_is_empty(pool))
		return false;	/* such a slice belongs to no pool: never compared */
	if (!json_object_is_type(pool, json_type_object))
		return true;
	json_object_object_foreach(pool, key, val) {
		if (!strcmp(key, "name")) {
			if (wrong_type(val, json_type_string))
				return true;
		} else if (!strcmp(key, "generation") || !strcmp(key, "resourceSliceCount")) {
			if (wrong_type(val, json_type_int))
				return true;
		} else if (strcmp(key, "timeAdded") && !slice_json_is_empty(val)) {
			return true;
		}
	}
	return false;
}

static int64_t int_of(struct json_object *v)
{
	return v ? json_object_get_int64(v) : 0;
}

/* ---- device names ---- */

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int collect_names(struct slice_record *rec, struct json_object *devices)
{
	size_t n = devices && json_object_is_type(devices, json_type_array)
			   ? json_object_array_length(devices) : 0;
	const char **names = calloc(n + 1, sizeof(*names));
	if (!names)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const char *s = get_str(json_object_array_get_idx(devices, i), "name");
		names[i] = s ? s : "";
	}
	qsort(names, n, sizeof(*names), cmp_names);
	size_t u = 0, len = 0;
	for (size_t i = 0; i < n; i++) {
		if (u && !strcmp(names[u - 1], names[i]))
			continue;
		names[u++] = names[i];
		len += strlen(names[i]) + 1;
	}
	char *packed = malloc(len + 1), *p = packed;
	if (!packed) {
		free(names);
		return -ENOMEM;
	}
	for (size_t i = 0; i < u; i++) {
		size_t l = strlen(names[i]) + 1;
		memcpy(p, names[i], l);
		p += l;
	}
	free(names);
	rec->names = packed;
	rec->n_names = u;
	rec->names_len = len;
	return 0;
}

bool slice_record_same_names(const struct slice_record *a, const struct slice_record *b)
{
	return a->n_names == b->n_names && a->names_len == b->names_len &&
	       !memcmp(a->names, b->names, a->names_len);
}

/* ---- published records: what an update keeps ---- */

/* @src's members, shared by reference, except @skip. */
static struct json_object *shallow_without(struct json_object *src, const char *const *skip)
{
	struct json_object *o = json_object_new_object();
	if (!o)
		return NULL;
	json_object_object_foreach(src, key, val) {
		bool skipped = false;
		for (size_t i = 0; skip && skip[i]; i++)
			skipped |= !strcmp(key, skip[i]);
		if (skipped)
			continue;
		struct json_object *ref = json_object_get(val);
		if (json_object_object_add(o, key, ref) < 0) {
			json_object_put(ref);
			json_object_put(o);
			return NULL;
		}
	}
	return o;
}

/* The object without the replaced spec fields, as text. */
static int kept_text(struct slice_record *rec, struct json_object *slice)
{
	struct json_object *spec = get(slice, "spec");
	if (!spec || !json_object_is_type(spec, json_type_object))
		return text_of(slice, &rec->text, &rec->text_len);
	struct json_object *shell = shallow_without(slice, NULL);
	struct json_object *kept = shallow_without(spec, replaced_fields);
	int r = -ENOMEM;
	/* replaced in place: "spec" keeps its position */
	if (shell && kept && json_object_object_add(shell, "spec", kept) == 0) {
		kept = NULL;
		r = text_of(shell, &rec->text, &rec->text_len);
	}
	json_object_put(kept);
	json_object_put(shell);
	return r;
}

/* {"name": @name, "taints": [the taints of @dev with a timeAdded]}, or NULL in *ret. */
static int device_stub(struct json_object *dev, const char *name, struct json_object **ret)
{
	struct json_object *taints = get(dev, "taints"), *kept = NULL, *stub = NULL;
	*ret = NULL;
	for (size_t t = 0; t < json_object_array_length(taints); t++) {
		struct json_object *taint = json_object_array_get_idx(taints, t);
		if (!get(taint, "timeAdded"))
			continue;
		if (!kept && !(kept = json_object_new_array()))
			return -ENOMEM;
		if (json_object_array_add(kept, json_object_get(taint)) < 0) {
			json_object_put(taint);
			json_object_put(kept);
			return -ENOMEM;
		}
	}
	if (!kept)
		return 0;
	if (!(stub = json_object_new_object()) ||
	    json_object_object_add(stub, "name", json_object_new_string(name)) < 0 ||
	    json_object_object_add(stub, "taints", kept) < 0) {
		json_object_put(kept);
		json_object_put(stub);
		return -ENOMEM;
	}
	*ret = stub;
	return 0;
}

/* The stubs of every device (the first of a name) whose taints have a timeAdded. */
static int time_added_devices(struct slice_record *rec, struct json_object *devices)
{
	struct json_object *out = NULL;
	int r = 0;
	size_t n = devices && json_object_is_type(devices, json_type_array)
			   ? json_object_array_length(devices) : 0;
	for (size_t i = 0; i < n && r == 0; i++) {
		struct json_object *d = json_object_array_get_idx(devices, i), *stub = NULL;
		struct json_object *taints = get(d, "taints");
		const char *name = get_str(d, "name");
		if (!name || !taints || !json_object_is_type(taints, json_type_array))
			continue;
		bool later = false;	/* the planner looks at the first device of a name */
		for (size_t j = 0; j < i && !later; j++) {
			const char *n2 = get_str(json_object_array_get_idx(devices, j), "name");
			later = n2 && !strcmp(n2, name);
		}
		if (later || (r = device_stub(d, name, &stub)) < 0 || !stub)
			continue;
		if ((!out && !(out = json_object_new_array())) || json_object_array_add(out, stub) < 0) {
			json_object_put(stub);
			r = -ENOMEM;
		}
	}
	if (r == 0 && out)
		r = text_of(out, &rec->time_added_devices, NULL);
	json_object_put(out);
	return r;
}

/* ---- records ---- */

int slice_record_from_json(struct json_object *slice, enum slice_record_kind kind,
			   struct slice_record **ret_rec)
{
	if (!slice || !json_object_is_type(slice, json_type_object))
		return -EINVAL;
	struct slice_record *rec = calloc(1, sizeof(*rec));
	if (!rec)
		return -ENOMEM;
	rec->kind = kind;
	struct json_object *meta = get(slice, "metadata"), *spec = get(slice, "spec");
	struct json_object *pool = get(spec, "pool"), *devices = get(spec, "devices");
	int r;
	if ((r = dup_str(get_str(meta, "name"), &rec->name)) < 0 ||
	    (r = dup_str(get_str(meta, "uid"), &rec->uid)) < 0 ||
	    (r = dup_str(get_str(meta, "resourceVersion"), &rec->resource_version)) < 0 ||
	    (r = dup_str(get_str(pool, "name"), &rec->pool)) < 0 ||
	    (r = collect_names(rec, devices)) < 0)
		goto fail;
	rec->has_spec = spec != NULL;
	rec->generation = int_of(get(pool, "generation"));
	rec->slice_count = int_of(get(pool, "resourceSliceCount"));
	rec->pool_odd = pool_is_odd(pool);
	slice_canon_digest(spec, &rec->digest, &rec->digest_full, &rec->time_added);
	slice_gates_of(slice, &rec->gates, &rec->gate_keys);
	if (kind == SLICE_RECORD_DESIRED)
		r = text_of(slice, &rec->text, &rec->text_len);
	else if ((r = kept_text(rec, slice)) == 0)
		r = time_added_devices(rec, devices);
	if (r < 0)
		goto fail;
	*ret_rec = rec;
	return 0;
fail:
	slice_record_free(rec);
	return r;
}

/* One JSON object from @len bytes (a trailing NUL or whitespace is fine). */
static struct json_object *parse_object(const char *text, size_t len)
{
	if (!text || len == 0 || len > (1u << 30))
		return NULL;
	struct json_tokener *tok = json_tokener_new();
	if (!tok)
		return NULL;
	struct json_object *obj = json_tokener_parse_ex(tok, text, (int)len);
	if (!obj && json_tokener_get_error(tok) == json_tokener_continue)
		obj = json_tokener_parse_ex(tok, "", 1);	/* end of input */
	if (obj && (json_tokener_get_error(tok) != json_tokener_success ||
		    !json_object_is_type(obj, json_type_object))) {
		json_object_put(obj);
		obj = NULL;
	}
	json_tokener_free(tok);
	return obj;
}

int slice_record_from_text(const char *text, size_t len, enum slice_record_kind kind,
			   struct slice_record **ret_rec)
{
	struct json_object *obj = parse_object(text, len);
	if (!obj)
		return -EINVAL;
	int r = slice_record_from_json(obj, kind, ret_rec);
	json_object_put(obj);
	return r;
}

int slice_record_parse(const struct slice_record *rec, struct json_object **ret_obj)
{
	struct json_object *obj = parse_object(rec->text, rec->text_len);
	if (!obj)
		return -EINVAL;
	*ret_obj = obj;
	return 0;
}

int slice_record_copy(const struct slice_record *rec, struct slice_record **ret_rec)
{
	struct slice_record *c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	*c = *rec;
	c->text = c->name = c->uid = c->resource_version = c->pool = c->names = NULL;
	c->time_added_devices = NULL;
	if (dup_str(rec->text, &c->text) < 0 || dup_str(rec->name, &c->name) < 0 ||
	    dup_str(rec->uid, &c->uid) < 0 || dup_str(rec->resource_version, &c->resource_version) < 0 ||
	    dup_str(rec->pool, &c->pool) < 0 ||
	    dup_str(rec->time_added_devices, &c->time_added_devices) < 0 ||
	    !(c->names = malloc(rec->names_len + 1))) {
		slice_record_free(c);
		return -ENOMEM;
	}
	memcpy(c->names, rec->names, rec->names_len);
	c->names[rec->names_len] = '\0';
	*ret_rec = c;
	return 0;
}

void slice_record_free(struct slice_record *rec)
{
	if (!rec)
		return;
	free(rec->text);
	free(rec->name);
	free(rec->uid);
	free(rec->resource_version);
	free(rec->pool);
	free(rec->names);
	free(rec->time_added_devices);
	free(rec);
}

/* ---- lists ---- */

int slice_list_new(struct slice_list **ret_list)
{
	struct slice_list *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->refs = 1;
	*ret_list = l;
	return 0;
}

struct slice_list *slice_list_ref(struct slice_list *list)
{
	if (list)
		list->refs++;
	return list;
}

void slice_list_unref(struct slice_list *list)
{
	if (!list || --list->refs)
		return;
	for (size_t i = 0; i < list->n; i++)
		slice_record_free(list->items[i]);
	free(list->items);
	free(list);
}

int slice_list_append(struct slice_list *list, struct slice_record *rec)
{
	if (list->n == list->cap) {
		size_t cap = list->cap ? list->cap * 2 : 4;
		struct slice_record **items = realloc(list->items, cap * sizeof(*items));
		if (!items) {
			slice_record_free(rec);
			return -ENOMEM;
		}
		list->items = items;
		list->cap = cap;
	}
	list->items[list->n++] = rec;
	return 0;
}

long slice_list_find(const struct slice_list *list, const char *name)
{
	for (size_t i = 0; list && name && i < list->n; i++)
		if (list->items[i]->name && !strcmp(list->items[i]->name, name))
			return (long)i;
	return -1;
}

int slice_list_put(struct slice_list *list, struct slice_record *rec)
{
	if (!rec->name) {
		slice_record_free(rec);
		return -EINVAL;
	}
	long i = slice_list_find(list, rec->name);
	if (i < 0)
		return slice_list_append(list, rec);
	slice_record_free(list->items[i]);
	list->items[i] = rec;
	return 0;
}

void slice_list_remove(struct slice_list *list, size_t i)
{
	if (i >= list->n)
		return;
	slice_record_free(list->items[i]);
	memmove(&list->items[i], &list->items[i + 1], (list->n - i - 1) * sizeof(*list->items));
	list->n--;
}

size_t slice_list_text_bytes(const struct slice_list *list)
{
	size_t n = 0;
	for (size_t i = 0; list && i < list->n; i++) {
		const struct slice_record *r = list->items[i];
		n += r->text_len + r->names_len +
		     (r->time_added_devices ? strlen(r->time_added_devices) : 0);
	}
	return n;
}

int slice_list_from_json(struct json_object *array, enum slice_record_kind kind,
			 struct slice_list **ret_list)
{
	struct slice_list *l = NULL;
	int r;
	if (!array || !json_object_is_type(array, json_type_array))
		return -EINVAL;
	if ((r = slice_list_new(&l)) < 0)
		return r;
	for (size_t i = 0; i < json_object_array_length(array); i++) {
		struct slice_record *rec = NULL;
		if ((r = slice_record_from_json(json_object_array_get_idx(array, i), kind, &rec)) < 0 ||
		    (r = slice_list_append(l, rec)) < 0) {
			slice_list_unref(l);
			return r;
		}
	}
	*ret_list = l;
	return 0;
}

int slice_list_to_json(const struct slice_list *list, struct json_object **ret_array)
{
	struct json_object *arr = json_object_new_array();
	if (!arr)
		return -ENOMEM;
	for (size_t i = 0; list && i < list->n; i++) {
		struct json_object *obj = NULL;
		int r = slice_record_parse(list->items[i], &obj);
		if (r < 0 || json_object_array_add(arr, obj) < 0) {
			json_object_put(obj);
			json_object_put(arr);
			return r < 0 ? r : -ENOMEM;
		}
	}
	*ret_array = arr;
	return 0;
}

/* ---- per driver ---- */

int slice_by_driver_add(struct slice_by_driver *bd, const char *driver, struct slice_list *list)
{
	char **drivers = realloc(bd->drivers, (bd->n + 1) * sizeof(*drivers));
	if (drivers)
		bd->drivers = drivers;
	struct slice_list **lists = drivers ? realloc(bd->lists, (bd->n + 1) * sizeof(*lists)) : NULL;
	if (lists)
		bd->lists = lists;
	char *name = lists ? strdup(driver) : NULL;
	if (!name) {
		slice_list_unref(list);
		return -ENOMEM;
	}
	bd->drivers[bd->n] = name;
	bd->lists[bd->n++] = list;
	return 0;
}

struct slice_list *slice_by_driver_get(const struct slice_by_driver *bd, const char *driver)
{
	for (size_t i = 0; i < bd->n; i++)
		if (!strcmp(bd->drivers[i], driver))
			return bd->lists[i];
	return NULL;
}

void slice_by_driver_clear(struct slice_by_driver *bd)
{
	for (size_t i = 0; i < bd->n; i++) {
		free(bd->drivers[i]);
		slice_list_unref(bd->lists[i]);
	}
	free(bd->drivers);
	free(bd->lists);
	*bd = (struct slice_by_driver){ 0 };
}
