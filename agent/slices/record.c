/* SPDX-License-Identifier: Apache-2.0 */
/* Slice records, made from a tree or one device at a time (see record.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/lib/json_get.h"
#include "agent/slices/devices_text.h"
#include "agent/slices/gates.h"
#include "agent/slices/json_text.h"
#include "agent/slices/json_tree.h"
#include "agent/slices/record.h"

#define TEXT_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* The spec fields an update replaces: a published record's text goes without them. */
static const char *const replaced_fields[] = { "devices", "sharedCounters", "perDeviceNodeSelection",
					       "nodeSelector", "allNodes", "pool", NULL };

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

bool slice_record_same_names(const struct slice_record *a, const struct slice_record *b)
{
	return a->n_names == b->n_names && a->names_len == b->names_len &&
	       !memcmp(a->names, b->names, a->names_len);
}

/* ---- published records: what an update keeps ---- */

/* The object without the replaced spec fields, as text. */
static int kept_text(struct slice_record *rec, struct json_object *slice)
{
	struct json_object *spec = json_get(slice, "spec");
	if (!spec || !json_object_is_type(spec, json_type_object))
		return text_of(slice, &rec->text, &rec->text_len);
	struct json_object *shell = json_tree_shallow_copy(slice, NULL);
	struct json_object *kept = json_tree_shallow_copy(spec, replaced_fields);
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
static int device_taint_entry(struct json_object *dev, const char *name, struct json_object **ret)
{
	struct json_object *taints = json_get(dev, "taints"), *kept = NULL, *entry = NULL;
	*ret = NULL;
	for (size_t t = 0; t < json_object_array_length(taints); t++) {
		struct json_object *taint = json_object_array_get_idx(taints, t);
		if (!json_get(taint, "timeAdded"))
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
	if (!(entry = json_object_new_object()) ||
	    json_object_object_add(entry, "name", json_object_new_string(name)) < 0 ||
	    json_object_object_add(entry, "taints", kept) < 0) {
		json_object_put(kept);
		json_object_put(entry);
		return -ENOMEM;
	}
	*ret = entry;
	return 0;
}

/* ---- records ---- */

/* ---- one device at a time ---- */

struct slice_record_builder {
	enum slice_record_kind kind;
	struct json_object *light;	/* a reference */
	bool splice;			/* light's spec.devices is the placeholder */
	struct slice_canon *canon;
	struct json_text_buf devices;	/* DESIRED with splice: "[" + devices so far */
	struct json_text_buf names;	/* every device's name, NUL-terminated */
	size_t n_devices;
	unsigned gates, gate_keys;
	struct json_object *taint_entries;	/* PUBLISHED: devices with taints' timeAdded */
};

int slice_record_builder_new(enum slice_record_kind kind, struct json_object *light,
			     struct slice_record_builder **ret)
{
	if (!light || !json_object_is_type(light, json_type_object))
		return -EINVAL;
	struct slice_record_builder *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	struct json_object *spec = json_get(light, "spec");
	b->kind = kind;
	b->light = json_object_get(light);
	b->splice = slice_is_devices_placeholder(json_get(spec, "devices"));
	int r = slice_canon_begin(spec, &b->canon);
	if (r < 0) {
		slice_record_builder_free(b);
		return r;
	}
	*ret = b;
	return 0;
}

void slice_record_builder_free(struct slice_record_builder *b)
{
	if (!b)
		return;
	json_object_put(b->light);
	slice_canon_free(b->canon);
	json_text_buf_free(&b->devices);
	json_text_buf_free(&b->names);
	json_object_put(b->taint_entries);
	free(b);
}

/* True when a device before this one has @name. */
static bool name_seen(const struct slice_record_builder *b, const char *name)
{
	for (size_t off = 0; off < b->names.len; off += strlen(b->names.p + off) + 1)
		if (!strcmp(b->names.p + off, name))
			return true;
	return false;
}

int slice_record_builder_device(struct slice_record_builder *b, struct json_object *dev)
{
	const char *name = json_get_str(dev, "name");
	struct json_object *taints = json_get(dev, "taints"), *entry = NULL;
	unsigned gates, keys;
	int r;
	slice_canon_device(b->canon, dev);
	slice_gates_of_device(dev, &gates, &keys);
	b->gates |= gates;
	b->gate_keys |= keys;
	/* the planner keeps the timeAdded of the first device of a name */
	if (b->kind == SLICE_RECORD_PUBLISHED && name && taints &&
	    json_object_is_type(taints, json_type_array) && !name_seen(b, name)) {
		if ((r = device_taint_entry(dev, name, &entry)) < 0)
			return r;
		if (entry && ((!b->taint_entries && !(b->taint_entries = json_object_new_array())) ||
			     json_object_array_add(b->taint_entries, entry) < 0)) {
			json_object_put(entry);
			return -ENOMEM;
		}
	}
	if (json_text_buf_add(&b->names, name ? name : "", strlen(name ? name : "") + 1) < 0)
		return -ENOMEM;
	if (b->kind == SLICE_RECORD_DESIRED && b->splice) {
		size_t len = 0;
		const char *t = json_object_to_json_string_length(dev, TEXT_FLAGS, &len);
		if (!t || json_text_buf_add(&b->devices, b->n_devices ? "," : "[", 1) < 0 ||
		    json_text_buf_add(&b->devices, t, len) < 0)
			return -ENOMEM;
	}
	b->n_devices++;
	return 0;
}

/* The names sorted, unique, packed. */
static int pack_names(struct slice_record *rec, const struct slice_record_builder *b)
{
	const char **names = calloc(b->n_devices + 1, sizeof(*names));
	if (!names)
		return -ENOMEM;
	size_t n = 0;
	for (size_t off = 0; n < b->n_devices && off < b->names.len; off += strlen(b->names.p + off) + 1)
		names[n++] = b->names.p + off;
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
	*p = '\0';
	free(names);
	rec->names = packed;
	rec->n_names = u;
	rec->names_len = len;
	return 0;
}

int slice_record_builder_finish(struct slice_record_builder *b, struct slice_record **ret_rec)
{
	struct slice_record *rec = calloc(1, sizeof(*rec));
	struct json_object *light = b->light, *meta = json_get(light, "metadata"), *spec = json_get(light, "spec");
	struct json_object *pool = json_get(spec, "pool"), *devices = json_get(spec, "devices");
	int r = -ENOMEM;
	if (!rec)
		goto fail;
	rec->kind = b->kind;
	if ((r = dup_str(json_get_str(meta, "name"), &rec->name)) < 0 ||
	    (r = dup_str(json_get_str(meta, "uid"), &rec->uid)) < 0 ||
	    (r = dup_str(json_get_str(meta, "resourceVersion"), &rec->resource_version)) < 0 ||
	    (r = dup_str(json_get_str(spec, "driver"), &rec->driver)) < 0 ||
	    (r = dup_str(json_get_str(spec, "nodeName"), &rec->node_name)) < 0 ||
	    (r = dup_str(json_get_str(pool, "name"), &rec->pool)) < 0 || (r = pack_names(rec, b)) < 0)
		goto fail;
	rec->has_spec = spec != NULL;
	rec->generation = int_of(json_get(pool, "generation"));
	rec->slice_count = int_of(json_get(pool, "resourceSliceCount"));
	rec->pool_odd = pool_is_odd(pool);
	slice_canon_end(b->canon, spec, b->n_devices || b->splice ? NULL : devices, &rec->digest,
			&rec->digest_full, &rec->time_added);
	b->canon = NULL;
	unsigned gates, keys;
	slice_gates_of_spec(spec, &gates, &keys);
	rec->gates = b->gates | gates;
	rec->gate_keys = b->gate_keys | keys;
	if (b->kind == SLICE_RECORD_PUBLISHED) {
		if ((r = kept_text(rec, light)) < 0 ||
		    (b->taint_entries && (r = text_of(b->taint_entries, &rec->time_added_devices, NULL)) < 0))
			goto fail;
	} else if (b->splice) {
		if ((r = json_text_buf_add(&b->devices, b->n_devices ? "]" : "[]",
					   b->n_devices ? 1 : 2)) < 0 ||
		    (r = slice_text_join(light, TEXT_FLAGS, (struct json_span){ b->devices.p, b->devices.len },
					 &rec->text, &rec->text_len)) < 0)
			goto fail;
	} else if ((r = text_of(light, &rec->text, &rec->text_len)) < 0) {
		goto fail;
	}
	slice_record_builder_free(b);
	*ret_rec = rec;
	return 0;
fail:
	slice_record_free(rec);
	slice_record_builder_free(b);
	return r;
}

/* ---- records ---- */

int slice_record_from_json(struct json_object *slice, enum slice_record_kind kind,
			   struct slice_record **ret_rec)
{
	struct slice_record_builder *b = NULL;
	int r = slice_record_builder_new(kind, slice, &b);
	if (r < 0)
		return r;
	struct json_object *devices = json_get(json_get(slice, "spec"), "devices");
	for (size_t i = 0; devices && json_object_is_type(devices, json_type_array) &&
			   i < json_object_array_length(devices); i++) {
		if ((r = slice_record_builder_device(b, json_object_array_get_idx(devices, i))) < 0) {
			slice_record_builder_free(b);
			return r;
		}
	}
	return slice_record_builder_finish(b, ret_rec);
}

static int add_device_text(void *userdata, struct json_span element)
{
	bool ok;
	struct json_object *dev = json_tree_parse(element.p, element.len, &ok);
	int r = ok ? slice_record_builder_device(userdata, dev) : -EINVAL;
	json_object_put(dev);
	return r;
}

int slice_record_from_text(const char *text, size_t len, enum slice_record_kind kind,
			   struct slice_record **ret_rec)
{
	struct json_object *light = NULL;
	struct json_span devices;
	struct slice_record_builder *b = NULL;
	int r = text ? slice_text_light(text, len, &light, &devices) : -EINVAL;
	if (r == -ENOENT) {
		/* no list of devices to take apart: the tree is small */
		struct json_object *obj = json_tree_parse_object(text, len);
		if (!obj)
			return -EINVAL;
		r = slice_record_from_json(obj, kind, ret_rec);
		json_object_put(obj);
		return r;
	}
	if (r < 0)
		return r;
	r = slice_record_builder_new(kind, light, &b);
	json_object_put(light);
	if (r < 0)
		return r;
	if ((r = json_text_elements(devices, add_device_text, b)) < 0) {
		slice_record_builder_free(b);
		return r == -EBADMSG ? -EINVAL : r;
	}
	return slice_record_builder_finish(b, ret_rec);
}

int slice_record_parse(const struct slice_record *rec, struct json_object **ret_obj)
{
	struct json_object *obj = json_tree_parse_object(rec->text, rec->text_len);
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
	c->driver = c->node_name = c->time_added_devices = NULL;
	if (dup_str(rec->text, &c->text) < 0 || dup_str(rec->name, &c->name) < 0 ||
	    dup_str(rec->driver, &c->driver) < 0 || dup_str(rec->node_name, &c->node_name) < 0 ||
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
	free(rec->driver);
	free(rec->node_name);
	free(rec->pool);
	free(rec->names);
	free(rec->time_added_devices);
	free(rec);
}

