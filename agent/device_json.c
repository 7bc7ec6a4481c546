/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/device_json.h"

#include <stdio.h>

#include "agent/sdk/backend_ctx.h"

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

static const char *health_name(enum dralet_health h)
{
	switch (h) {
	case DRALET_HEALTH_HEALTHY: return "Healthy";
	case DRALET_HEALTH_UNHEALTHY: return "Unhealthy";
	default: return "Unknown";
	}
}

struct json_object *device_to_json(const struct dralet_device *dev, bool extended)
{
	struct json_object *o = json_object_new_object();
	struct json_object *attrs = json_object_new_object();
	struct json_object *caps = json_object_new_object();
	const struct hal_pci_func *f = dralet_device_pci(dev);

	json_object_object_add(o, "name", json_object_new_string(dralet_device_name(dev)));
	for (size_t i = 0; i < dralet_device_n_attrs(dev); i++) {
		const struct dralet_attr *a = dralet_device_attr(dev, i);
		json_object_object_add(attrs, a->name, device_attr_value_json(a));
	}
	for (size_t i = 0; i < dralet_device_n_capacities(dev); i++) {
		const struct dralet_capacity *c = dralet_device_capacity(dev, i);
		struct json_object *v = json_object_new_object();
		json_object_object_add(v, "value", json_object_new_string(c->quantity));
		json_object_object_add(caps, c->name, v);
	}
	json_object_object_add(o, "attributes", attrs);
	json_object_object_add(o, "capacity", caps);
	if (!extended)
		return o;

	json_object_object_add(o, "driver", json_object_new_string(dralet_device_driver(dev)));
	json_object_object_add(o, "kind", json_object_new_string(dralet_device_kind(dev)));
	json_object_object_add(o, "backend",
			       json_object_new_string(dralet_device_ctx(dev)->backend->name));
	json_object_object_add(o, "health",
			       json_object_new_string(health_name(dralet_device_health(dev))));
	if (f) {
		json_object_object_add(o, "pciAddress", json_object_new_string(f->address));
		if (f->unsafe_reason)
			json_object_object_add(o, "unsafe", json_object_new_string(f->unsafe_reason));
	}
	struct json_object *nodes = json_object_new_array();
	for (size_t i = 0; i < dralet_device_n_nodes(dev); i++) {
		const struct hal_devnode *n = dralet_device_node(dev, i);
		struct json_object *nj = json_object_new_object();
		char num[32];
		json_object_object_add(nj, "path", json_object_new_string(n->path));
		snprintf(num, sizeof(num), "%u:%u", n->major, n->minor);
		json_object_object_add(nj, "device", json_object_new_string(num));
		json_object_array_add(nodes, nj);
	}
	json_object_object_add(o, "deviceNodes", nodes);
	return o;
}
