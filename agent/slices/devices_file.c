/* SPDX-License-Identifier: Apache-2.0 */
/* A devices file -> desired slices per driver (through the builder). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/lib/json_get.h"
#include "agent/lib/log.h"
#include "agent/slices/devices_file.h"
#include "agent/slices/sharing_json.h"

static void log_dropped(void *userdata, const char *backend, const char *device, const char *what,
			const char *problem)
{
	const char *driver = userdata;
	if (what)
		log_warn("slices: driver %s, backend %s, device %s, attribute %s: %s; attribute "
			 "dropped", driver, backend, device, what, problem);
	else
		log_warn("slices: driver %s, backend %s, device %s: %s", driver, backend, device,
			 problem);
}

/* One attribute value {int|bool|string|version: v}; -EINVAL for anything else. */
static int parse_attr(const char *name, struct json_object *v, struct dralet_attr *ret)
{
	struct json_object *x;
	if (!json_object_is_type(v, json_type_object) || json_object_object_length(v) != 1)
		return -EINVAL;
	*ret = (struct dralet_attr){ .name = name };
	if ((x = json_get_typed(v, "int", json_type_int))) {
		ret->type = DRALET_ATTR_INT;
		ret->int_value = json_object_get_int64(x);
	} else if ((x = json_get_typed(v, "bool", json_type_boolean))) {
		ret->type = DRALET_ATTR_BOOL;
		ret->bool_value = json_object_get_boolean(x);
	} else if ((x = json_get_typed(v, "string", json_type_string))) {
		ret->type = DRALET_ATTR_STRING;
		ret->string_value = json_object_get_string(x);
	} else if ((x = json_get_typed(v, "version", json_type_string))) {
		ret->type = DRALET_ATTR_VERSION;
		ret->string_value = json_object_get_string(x);
	} else {
		return -EINVAL;
	}
	return 0;
}

/* A capacity's requestPolicy as read from the file (strings borrowed). */
struct file_policy {
	struct dralet_capacity_policy policy;
	const char *values[DRALET_CAPACITY_VALID_VALUES_MAX];
};

/* Device @i's capacities' policies: *ret_policies parallel to its caps. */
static int read_policies(struct json_object *caps, const struct slice_device_in *dev,
			 const char *driver, struct file_policy **ret_store,
			 const struct dralet_capacity_policy ***ret_policies)
{
	size_t n = dev->n_caps;
	struct file_policy *store = calloc(n + 1, sizeof(*store));
	const struct dralet_capacity_policy **policies = calloc(n + 1, sizeof(*policies));

	*ret_store = store;
	*ret_policies = policies;
	if (!store || !policies)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		struct json_object *o = json_get(json_get(caps, dev->caps[k].name), "requestPolicy");
		if (!o)
			continue;
		if (capacity_policy_from_json(o, &store[k].policy, store[k].values) < 0) {
			log_warn("slices: driver %s, device %s, capacity %s: requestPolicy is not "
				 "{default, validValues | validRange{min, max, step}}; left out",
				 driver, dev->name ? dev->name : "?", dev->caps[k].name);
			continue;
		}
		policies[k] = &store[k].policy;
	}
	return 0;
}

static int cmp_keys(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int devices_file_build(struct json_object *doc, const char *node_name, const char *node_uid,
		       const struct slice_options *opts, struct slice_by_driver *ret_by_driver)
{
	struct json_object *list = NULL;
	if (!(list = json_get_array(doc, "devices"))) {
		log_error("devices file: want a mapping with a 'devices' list");
		return -EINVAL;
	}
	size_t n = json_object_array_length(list);
	struct slice_device_in *devs = calloc(n + 1, sizeof(*devs));
	struct dralet_attr **attrs = calloc(n + 1, sizeof(*attrs));
	struct dralet_capacity **caps = calloc(n + 1, sizeof(*caps));
	const char **drivers = calloc(n + 1, sizeof(*drivers));
	const char **dev_driver = calloc(n + 1, sizeof(*dev_driver));
	struct file_policy **policy_store = calloc(n + 1, sizeof(*policy_store));
	const struct dralet_capacity_policy ***policies = calloc(n + 1, sizeof(*policies));
	struct slice_by_driver out = { 0 };
	size_t n_drivers = 0;
	int r = -ENOMEM;
	if (!devs || !attrs || !caps || !drivers || !dev_driver || !policy_store || !policies)
		goto done;
	for (size_t i = 0; i < n; i++) {
		struct json_object *d = json_object_array_get_idx(list, i), *a = NULL, *c = NULL;
		const char *driver = json_get_str(d, "driver"), *health = json_get_str(d, "health");
		if (!json_object_is_type(d, json_type_object) || !driver) {
			log_error("devices file: device %zu has no driver", i);
			r = -EINVAL;
			goto done;
		}
		dev_driver[i] = driver;
		bool known = false;
		for (size_t k = 0; k < n_drivers; k++)
			known |= !strcmp(drivers[k], driver);
		if (!known)
			drivers[n_drivers++] = driver;
		devs[i] = (struct slice_device_in){
			.name = json_get_str(d, "name"),
			.backend = json_get_str(d, "backend"),
			.unhealthy = health && !strcmp(health, "Unhealthy"),
			.allow_multiple = json_object_get_boolean(json_get(d, "allowMultipleAllocations")),
		};
		if ((a = json_get_object(d, "attributes"))) {
			if (!(attrs[i] = calloc((size_t)json_object_object_length(a) + 1, sizeof(**attrs))))
				goto done;
			json_object_object_foreach(a, name, v) {
				if (parse_attr(name, v, &attrs[i][devs[i].n_attrs]) < 0) {
					log_warn("slices: driver %s, device %s, attribute %s: not one of "
						 "{int|bool|string|version: value}; attribute dropped",
						 driver, devs[i].name ? devs[i].name : "?", name);
					continue;
				}
				devs[i].n_attrs++;
			}
			devs[i].attrs = attrs[i];
		}
		if ((c = json_get_object(d, "capacity"))) {
			if (!(caps[i] = calloc((size_t)json_object_object_length(c) + 1, sizeof(**caps))))
				goto done;
			json_object_object_foreach(c, name, v) {
				const char *q = json_get_str(v, "value");
				caps[i][devs[i].n_caps++] = (struct dralet_capacity){ .name = name, .quantity = q };
			}
			devs[i].caps = caps[i];
			if (read_policies(c, &devs[i], driver, &policy_store[i], &policies[i]) < 0)
				goto done;
			devs[i].cap_policies = policies[i];
		}
	}
	qsort(drivers, n_drivers, sizeof(*drivers), cmp_keys);
	for (size_t k = 0; k < n_drivers; k++) {
		struct slice_device_in *mine = calloc(n + 1, sizeof(*mine));
		size_t m = 0;
		if (!mine)
			goto done;
		for (size_t i = 0; i < n; i++)
			if (!strcmp(dev_driver[i], drivers[k]))
				mine[m++] = devs[i];
		struct slice_list *slices = NULL;
		r = slice_build(drivers[k], node_name, node_uid, mine, m, opts, log_dropped,
				(void *)drivers[k], &slices);
		free(mine);
		if (r < 0) {
			log_error("devices file: driver %s on node %s: %s", drivers[k], node_name,
				  r == -EINVAL ? "invalid driver or node name" : strerror(-r));
			goto done;
		}
		if ((r = slice_by_driver_add(&out, drivers[k], slices)) < 0)
			goto done;
	}
	*ret_by_driver = out;
	out = (struct slice_by_driver){ 0 };
	r = 0;
done:
	for (size_t i = 0; i < n && attrs && caps && policies && policy_store; i++) {
		free(attrs[i]);
		free(caps[i]);
		free(policies[i]);
		free(policy_store[i]);
	}
	free(policies);
	free(policy_store);
	slice_by_driver_clear(&out);
	free(devs);
	free(attrs);
	free(caps);
	free(drivers);
	free(dev_driver);
	return r;
}
