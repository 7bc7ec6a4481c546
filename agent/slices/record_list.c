/* SPDX-License-Identifier: Apache-2.0 */
/* Lists of slice records, and lists per driver (see record.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/slices/record.h"

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
