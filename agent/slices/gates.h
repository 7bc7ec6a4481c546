/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Alpha field groups (feature gates) a server may silently drop from the
 * ResourceSlices it stores. A plan made with a gate in its "dropped" mask
 * (sync.h) leaves that gate's fields out of the desired slices before
 * comparing and writing, so a server without the gate causes no update
 * loop. Pure: works on one slice's json-c tree.
 */
#ifndef DRALET_SLICES_GATES_H
#define DRALET_SLICES_GATES_H

#include <json-c/json.h>

enum slice_gate {
	SLICE_GATE_DEVICE_TAINTS = 1u << 0,	/* devices[].taints */
	SLICE_GATE_PARTITIONABLE = 1u << 1,	/* sharedCounters, consumesCounters, perDeviceNodeSelection, per-device node selection */
	SLICE_GATE_BINDING_CONDITIONS = 1u << 2,	/* bindsToNode, bindingConditions, bindingFailureConditions */
	SLICE_GATE_CONSUMABLE_CAPACITY = 1u << 3,	/* allowMultipleAllocations, capacity requestPolicy */
};
#define SLICE_GATE_ALL 0xfu

/* Which gates' fields @sent carried and @stored (the server's answer) lacks. */
unsigned slice_dropped_gates(struct json_object *sent, struct json_object *stored);
/* The Kubernetes feature gate name of one SLICE_GATE_* bit. */
const char *slice_gate_name(unsigned gate);
/* Removes the fields of the gates in @mask from @slice, in place. */
void slice_strip_gates(struct json_object *slice, unsigned mask);
/*
 * The gates of @slice: *ret_gates those whose fields hold something,
 * *ret_keys those whose field keys are there at all (what
 * slice_strip_gates() would remove). Either may be NULL.
 */
void slice_gates_of(struct json_object *slice, unsigned *ret_gates, unsigned *ret_keys);
/* The parts slice_gates_of() adds up: one element of spec.devices, and the
 * spec's own fields (its devices not looked at). */
void slice_gates_of_device(struct json_object *dev, unsigned *ret_gates, unsigned *ret_keys);
void slice_gates_of_spec(struct json_object *spec, unsigned *ret_gates, unsigned *ret_keys);

#endif
