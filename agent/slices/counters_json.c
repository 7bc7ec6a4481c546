/* SPDX-License-Identifier: Apache-2.0 */
/* The JSON of counter sets and consumptions (counters_json.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/slices/counters_json.h"
#include "agent/lib/json_put.h"

static int cmp_counters(const void *a, const void *b)
{
	return strcmp((*(const struct dralet_counter *const *)a)->name,
		      (*(const struct dralet_counter *const *)b)->name);
}

static struct json_object *list_json(const char *set_key, const struct dralet_counter_list *l)
{
	const struct dralet_counter **sorted = calloc(l->n + 1, sizeof(*sorted));
	struct json_object *o = json_object_new_object(), *map = NULL;
	if (!sorted || !o || json_put(o, set_key, json_object_new_string(l->set)) < 0 ||
	    json_put(o, "counters", map = json_object_new_object()) < 0)
		goto fail;
	for (size_t k = 0; k < l->n; k++)
		sorted[k] = &l->counters[k];
	qsort(sorted, l->n, sizeof(*sorted), cmp_counters);
	for (size_t k = 0; k < l->n; k++) {
		struct json_object *v = json_object_new_object();
		if (json_put(map, sorted[k]->name, v) < 0 ||
		    json_put(v, "value", json_object_new_string(sorted[k]->quantity)) < 0)
			goto fail;
	}
	free(sorted);
	return o;
fail:
	free(sorted);
	json_object_put(o);
	return NULL;
}

int counters_json_add(struct json_object *obj, const char *key, const char *set_key,
		      const struct dralet_counter_list *const *lists, size_t n)
{
	struct json_object *arr;
	if (!n)
		return 0;
	if (json_put(obj, key, arr = json_object_new_array()) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = list_json(set_key, lists[i]);
		if (!e)
			return -ENOMEM;
		if (json_object_array_add(arr, e) < 0) {
			json_object_put(e);
			return -ENOMEM;
		}
	}
	return 0;
}
