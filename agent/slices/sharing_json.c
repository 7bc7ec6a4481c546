/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/slices/sharing_json.h"

#include <errno.h>
#include <string.h>

#include "agent/lib/json_get.h"
#include "agent/lib/json_writer.h"

static int put_string(struct json_object *o, const char *key, const char *value)
{
	struct json_object *s;

	if (!value)
		return 0;
	if (!(s = json_object_new_string(value)))
		return -ENOMEM;
	json_object_object_add(o, key, s);
	return 0;
}

struct json_object *capacity_policy_json(const struct dralet_capacity_policy *p)
{
	struct json_object *o = json_object_new_object(), *values = NULL, *range = NULL;
	bool fail = !o;

	fail = fail || put_string(o, "default", p->default_value) < 0;
	if (!fail && p->n_valid_values) {
		fail = !(values = json_object_new_array());
		for (size_t i = 0; !fail && i < p->n_valid_values; i++) {
			struct json_object *v = json_object_new_string(p->valid_values[i]);
			fail = !v || json_object_array_add(values, v) < 0;
		}
		if (values)
			json_object_object_add(o, "validValues", values);
	}
	if (!fail && p->range_min) {
		fail = !(range = json_object_new_object());
		if (range)
			json_object_object_add(o, "validRange", range);
		fail = fail || put_string(range, "min", p->range_min) < 0 ||
		       put_string(range, "max", p->range_max) < 0 ||
		       put_string(range, "step", p->range_step) < 0;
	}
	if (fail) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static void write_key(struct json_writer *w, const char *key, const char *value)
{
	if (value) {
		jw_key(w, key);
		jw_string(w, value);
	}
}

void capacity_policy_write(struct json_writer *w, const struct dralet_capacity_policy *p)
{
	jw_begin_object(w);
	write_key(w, "default", p->default_value);
	if (p->n_valid_values) {
		jw_key(w, "validValues");
		jw_begin_array(w);
		for (size_t i = 0; i < p->n_valid_values; i++)
			jw_string(w, p->valid_values[i]);
		jw_end_array(w);
	}
	if (p->range_min) {
		jw_key(w, "validRange");
		jw_begin_object(w);
		write_key(w, "min", p->range_min);
		write_key(w, "max", p->range_max);
		write_key(w, "step", p->range_step);
		jw_end_object(w);
	}
	jw_end_object(w);
}

int capacity_policy_from_json(struct json_object *o, struct dralet_capacity_policy *ret,
			      const char **values)
{
	struct json_object *list, *range;

	if (!o || !json_object_is_type(o, json_type_object))
		return -EINVAL;
	memset(ret, 0, sizeof(*ret));
	ret->default_value = json_get_str(o, "default");
	if ((list = json_get(o, "validValues"))) {
		size_t n;
		if (!json_object_is_type(list, json_type_array) ||
		    (n = json_object_array_length(list)) > DRALET_CAPACITY_VALID_VALUES_MAX)
			return -EINVAL;
		for (size_t i = 0; i < n; i++) {
			struct json_object *v = json_object_array_get_idx(list, i);
			if (!json_object_is_type(v, json_type_string))
				return -EINVAL;
			values[i] = json_object_get_string(v);
		}
		ret->valid_values = values;
		ret->n_valid_values = n;
	}
	if ((range = json_get(o, "validRange"))) {
		if (!json_object_is_type(range, json_type_object) ||
		    !(ret->range_min = json_get_str(range, "min")))
			return -EINVAL;
		ret->range_max = json_get_str(range, "max");
		ret->range_step = json_get_str(range, "step");
	}
	return 0;
}
