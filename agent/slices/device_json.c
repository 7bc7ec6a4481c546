/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/slices/device_json.h"

#include <stdio.h>
#include <stdlib.h>

#include <dralet/counters.h>

#include "agent/health/health_table.h"
#include "agent/core/backend_ctx.h"
#include "agent/slices/sharing_json.h"

struct json_object *device_attr_value_json(const struct dralet_attr *a)
{
	struct json_object *v = json_object_new_object();

	switch (a->type) {
	case DRALET_ATTR_INT:
		json_object_object_add(v, "int", json_object_new_int64(a->int_value));
		break;
	case DRALET_ATTR_BOOL:
		json_object_object_add(v, "bool", json_object_new_boolean(a->bool_value));
		break;
	case DRALET_ATTR_STRING:
		json_object_object_add(v, "string", json_object_new_string(a->string_value));
		break;
	case DRALET_ATTR_VERSION:
		json_object_object_add(v, "version", json_object_new_string(a->string_value));
		break;
	}
	return v;
}

static void write_attr_value(struct json_writer *w, const struct dralet_attr *a)
{
	jw_begin_object(w);
	switch (a->type) {
	case DRALET_ATTR_INT:
		jw_key(w, "int");
		jw_int(w, a->int_value);
		break;
	case DRALET_ATTR_BOOL:
		jw_key(w, "bool");
		jw_bool(w, a->bool_value);
		break;
	case DRALET_ATTR_STRING:
		jw_key(w, "string");
		jw_string(w, a->string_value);
		break;
	case DRALET_ATTR_VERSION:
		jw_key(w, "version");
		jw_string(w, a->string_value);
		break;
	}
	jw_end_object(w);
}

void device_write_json(struct json_writer *w, const struct dralet_device *dev, bool extended)
{
	const struct dralet_pci_func *f = dralet_device_pci(dev);
	char num[32];

	jw_begin_object(w);
	jw_key(w, "name");
	jw_string(w, dralet_device_name(dev));
	jw_key(w, "attributes");
	jw_begin_object(w);
	for (size_t i = 0; i < dralet_device_n_attrs(dev); i++) {
		const struct dralet_attr *a = dralet_device_attr(dev, i);
		jw_key(w, a->name);
		write_attr_value(w, a);
	}
	jw_end_object(w);
	jw_key(w, "capacity");
	jw_begin_object(w);
	for (size_t i = 0; i < dralet_device_n_capacities(dev); i++) {
		const struct dralet_capacity *c = dralet_device_capacity(dev, i);
		jw_key(w, c->name);
		jw_begin_object(w);
		jw_key(w, "value");
		jw_string(w, c->quantity);
		const struct dralet_capacity_policy *p = dralet_device_capacity_policy(dev, c->name);
		if (p) {
			jw_key(w, "requestPolicy");
			capacity_policy_write(w, p);
		}
		jw_end_object(w);
	}
	jw_end_object(w);
	if (dralet_device_allows_multiple(dev)) {
		jw_key(w, "allowMultipleAllocations");
		jw_bool(w, true);
	}
	if (extended) {
		jw_key(w, "driver");
		jw_string(w, dralet_device_driver(dev));
		jw_key(w, "kind");
		jw_string(w, dralet_device_kind(dev));
		jw_key(w, "backend");
		jw_string(w, dralet_device_ctx(dev)->backend->name);
		jw_key(w, "health");
		jw_string(w, health_name(dralet_device_health(dev)));
		if (dralet_device_is_partition(dev)) {	/* published only with counters */
			jw_key(w, "partition");
			jw_bool(w, true);
		}
		if (f) {
			jw_key(w, "pciAddress");
			jw_string(w, f->address);
			if (f->unsafe_reason) {
				jw_key(w, "unsafe");
				jw_string(w, f->unsafe_reason);
			}
		}
		jw_key(w, "deviceNodes");
		jw_begin_array(w);
		for (size_t i = 0; i < dralet_device_n_nodes(dev); i++) {
			const struct dralet_devnode *n = dralet_device_node(dev, i);
			jw_begin_object(w);
			jw_key(w, "path");
			jw_string(w, n->path);
			snprintf(num, sizeof(num), "%u:%u", n->major, n->minor);
			jw_key(w, "device");
			jw_string(w, num);
			jw_end_object(w);
		}
		jw_end_array(w);
	}
	jw_end_object(w);
}

struct json_object *device_to_json(const struct dralet_device *dev, bool extended)
{
	/* 64 KiB: on the heap, neither on the stack nor in every thread's TLS */
	struct json_writer *w = malloc(sizeof(*w));
	struct json_object *o = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f = w ? open_memstream(&text, &len) : NULL;

	if (!f) {
		free(w);
		return NULL;
	}
	jw_init(w, f, 0);
	device_write_json(w, dev, extended);
	jw_flush(w);
	if (fclose(f) == 0)
		o = json_tokener_parse(text);
	free(text);
	free(w);
	return o;
}
