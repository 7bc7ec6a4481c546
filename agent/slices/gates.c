/* SPDX-License-Identifier: Apache-2.0 */
/* Alpha field groups of a ResourceSlice (see gates.h). */
#include <stdbool.h>
#include <string.h>

#include "agent/slices/canon.h"
#include "agent/slices/gates.h"
#include "agent/lib/json_get.h"

static bool has_key(struct json_object *o, const char *key)
{
	return o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, NULL);
}

static struct json_object *slice_devices(struct json_object *slice)
{
	struct json_object *d = json_get(json_get(slice, "spec"), "devices");
	return d && json_object_is_type(d, json_type_array) ? d : NULL;
}

static const char *const device_fields_partitionable[] = { "consumesCounters", "nodeName",
							    "nodeSelector", "allNodes", NULL };
static const char *const device_fields_binding[] = { "bindsToNode", "bindingConditions",
						      "bindingFailureConditions", NULL };

const char *slice_gate_name(unsigned gate)
{
	switch (gate) {
	case SLICE_GATE_DEVICE_TAINTS:
		return "DRADeviceTaints";
	case SLICE_GATE_PARTITIONABLE:
		return "DRAPartitionableDevices";
	case SLICE_GATE_BINDING_CONDITIONS:
		return "DRADeviceBindingConditions";
	case SLICE_GATE_CONSUMABLE_CAPACITY:
		return "DRAConsumableCapacity";
	}
	return "unknown";
}

/* A field counts when it holds something (@keys false) or is there at all. */
static bool field(struct json_object *o, const char *key, bool keys)
{
	return keys ? has_key(o, key) : !slice_json_is_empty(json_get(o, key));
}

/* Gates whose fields device @dev carries. */
static unsigned device_gates(struct json_object *dev, bool keys)
{
	unsigned m = 0;
	if (keys && !json_object_is_type(dev, json_type_object))
		return 0;	/* slice_strip_gates() leaves those alone */
	if (field(dev, "taints", keys))
		m |= SLICE_GATE_DEVICE_TAINTS;
	for (size_t i = 0; device_fields_partitionable[i]; i++)
		if (field(dev, device_fields_partitionable[i], keys))
			m |= SLICE_GATE_PARTITIONABLE;
	for (size_t i = 0; device_fields_binding[i]; i++)
		if (field(dev, device_fields_binding[i], keys))
			m |= SLICE_GATE_BINDING_CONDITIONS;
	if (field(dev, "allowMultipleAllocations", keys))
		m |= SLICE_GATE_CONSUMABLE_CAPACITY;
	struct json_object *caps = json_get(dev, "capacity");
	if (caps && json_object_is_type(caps, json_type_object)) {
		json_object_object_foreach(caps, k, c) {
			(void)k;
			if (keys ? (c && json_object_is_type(c, json_type_object) &&
				    has_key(c, "requestPolicy"))
				 : !slice_json_is_empty(json_get(c, "requestPolicy")))
				m |= SLICE_GATE_CONSUMABLE_CAPACITY;
		}
	}
	return m;
}

static unsigned spec_gates(struct json_object *spec, bool keys)
{
	unsigned m = 0;
	if (field(spec, "sharedCounters", keys) || field(spec, "perDeviceNodeSelection", keys))
		m |= SLICE_GATE_PARTITIONABLE;
	return m;
}

void slice_gates_of_device(struct json_object *dev, unsigned *ret_gates, unsigned *ret_keys)
{
	*ret_gates = device_gates(dev, false);
	*ret_keys = device_gates(dev, true);
}

void slice_gates_of_spec(struct json_object *spec, unsigned *ret_gates, unsigned *ret_keys)
{
	*ret_gates = spec_gates(spec, false);
	*ret_keys = spec ? spec_gates(spec, true) : 0;
}

void slice_gates_of(struct json_object *slice, unsigned *ret_gates, unsigned *ret_keys)
{
	struct json_object *devs = slice_devices(slice);
	unsigned gates, keys;
	slice_gates_of_spec(json_get(slice, "spec"), &gates, &keys);
	for (size_t i = 0; devs && i < json_object_array_length(devs); i++) {
		unsigned g, k;
		slice_gates_of_device(json_object_array_get_idx(devs, i), &g, &k);
		gates |= g;
		keys |= k;
	}
	if (ret_gates)
		*ret_gates = gates;
	if (ret_keys)
		*ret_keys = keys;
}

unsigned slice_dropped_gates(struct json_object *sent, struct json_object *stored)
{
	unsigned dropped = spec_gates(json_get(sent, "spec"), false) & ~spec_gates(json_get(stored, "spec"), false);
	struct json_object *ds = slice_devices(sent), *dr = slice_devices(stored);
	for (size_t i = 0; ds && i < json_object_array_length(ds); i++) {
		struct json_object *d = json_object_array_get_idx(ds, i);
		const char *name = json_get_str(d, "name");
		struct json_object *match = NULL;
		for (size_t j = 0; dr && name && j < json_object_array_length(dr) && !match; j++) {
			struct json_object *e = json_object_array_get_idx(dr, j);
			const char *n2 = json_get_str(e, "name");
			if (n2 && !strcmp(n2, name))
				match = e;
		}
		if (match)
			dropped |= device_gates(d, false) & ~device_gates(match, false);
	}
	return dropped;
}

void slice_strip_gates(struct json_object *slice, unsigned mask)
{
	struct json_object *spec = json_get(slice, "spec"), *devs = slice_devices(slice);
	if (!mask || !spec)
		return;
	if (mask & SLICE_GATE_PARTITIONABLE) {
		json_object_object_del(spec, "sharedCounters");
		json_object_object_del(spec, "perDeviceNodeSelection");
	}
	for (size_t i = 0; devs && i < json_object_array_length(devs); i++) {
		struct json_object *d = json_object_array_get_idx(devs, i);
		if (!json_object_is_type(d, json_type_object))
			continue;
		if (mask & SLICE_GATE_DEVICE_TAINTS)
			json_object_object_del(d, "taints");
		for (size_t k = 0; (mask & SLICE_GATE_PARTITIONABLE) && device_fields_partitionable[k]; k++)
			json_object_object_del(d, device_fields_partitionable[k]);
		for (size_t k = 0; (mask & SLICE_GATE_BINDING_CONDITIONS) && device_fields_binding[k]; k++)
			json_object_object_del(d, device_fields_binding[k]);
		if (mask & SLICE_GATE_CONSUMABLE_CAPACITY) {
			json_object_object_del(d, "allowMultipleAllocations");
			struct json_object *caps = json_get(d, "capacity");
			if (caps && json_object_is_type(caps, json_type_object)) {
				json_object_object_foreach(caps, k, c) {
					(void)k;
					if (json_object_is_type(c, json_type_object))
						json_object_object_del(c, "requestPolicy");
				}
			}
		}
	}
}
