/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Sync decisions for one driver's pool: what to delete, update and create so
 * that the published ResourceSlices equal the desired ones. Pure: input is
 * what the store knows is published (its list/watch cache) and the desired
 * slices from slice_build(); output is a plan of API writes. Both stores
 * (apiserver and file) run the same plan, so they agree on names, pool
 * generations and write counts.
 *
 * The rules follow the upstream ResourceSlice controller
 * (k8s.io/dynamic-resource-allocation v0.34, kubelet-contract.md 4.4):
 *   1. current generation = highest spec.pool.generation of the pool's
 *      slices; lower generations, and slices of other pools, are obsolete;
 *   2. matching: one existing and one desired slice match; otherwise slices
 *      match when they hold exactly the same device names. Existing slices
 *      left over are then paired with desired slices left over in order (as
 *      later upstream versions do by index), so a moved boundary costs an
 *      update, not a delete plus a create. Unpaired existing slices are
 *      obsolete, unpaired desired slices new;
 *   3. a matched slice changed when its pool, node selection, devices (in
 *      order; a taint's server-set timeAdded tolerated), shared counters or
 *      per-device node selection differ (missing and empty are equal);
 *   4. generation + 1 when a slice is new, more than one matched slice
 *      changed, or the pool's set of device names changed; otherwise it is
 *      kept (nothing or one atomic update to write). Unchanged content
 *      means an empty plan: no write at all;
 *   5. order: delete obsolete slices (with uid + resourceVersion
 *      preconditions), update matched slices (all of them after a bump, else
 *      only the changed one), create new ones. resourceSliceCount is the
 *      number of desired slices.
 */
#ifndef DRALET_SLICES_SYNC_H
#define DRALET_SLICES_SYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

enum slice_op_type {
	SLICE_OP_DELETE,	/* object: the existing slice (name, uid, resourceVersion) */
	SLICE_OP_UPDATE,	/* object: the existing slice with the new spec, for PUT */
	SLICE_OP_CREATE,	/* object: the new slice (generateName), for POST */
};

struct slice_op {
	enum slice_op_type type;
	struct json_object *object;	/* owned by the plan */
	int desired_index;		/* index into the desired array; -1 for deletes */
};

struct slice_plan {
	int64_t generation;	/* the pool's generation once the plan is written */
	bool bumped;
	size_t n_delete, n_update, n_create;
	size_t n_ops;		/* n_delete + n_update + n_create */
	struct slice_op *ops;	/* deletes, then updates, then creates */
};

/*
 * Alpha field groups (feature gates) a server may silently drop. A plan made
 * with a gate in @dropped leaves that gate's fields out of the desired slices
 * before comparing and writing, so a server without the gate causes no
 * update loop.
 */
enum slice_gate {
	SLICE_GATE_DEVICE_TAINTS = 1u << 0,	/* devices[].taints */
	SLICE_GATE_PARTITIONABLE = 1u << 1,	/* sharedCounters, consumesCounters, perDeviceNodeSelection, per-device node selection */
	SLICE_GATE_BINDING_CONDITIONS = 1u << 2,	/* bindsToNode, bindingConditions, bindingFailureConditions */
	SLICE_GATE_CONSUMABLE_CAPACITY = 1u << 3,	/* allowMultipleAllocations, capacity requestPolicy */
};
#define SLICE_GATE_ALL 0xfu

/*
 * Plans the writes for the pool @pool_name. @existing: json array of the
 * ResourceSlice objects the store knows for this driver on this node (any
 * pool); @desired: json array from slice_build(); both borrowed. On success
 * *ret_plan is new (slice_plan_free). -EINVAL on malformed input, -ENOMEM.
 */
int slice_plan_compute(struct json_object *existing, struct json_object *desired,
		       const char *pool_name, unsigned dropped, struct slice_plan **ret_plan);
void slice_plan_free(struct slice_plan *plan);

/* Which gates' fields @sent carried and @stored (the server's answer) lacks. */
unsigned slice_dropped_gates(struct json_object *sent, struct json_object *stored);
/* The Kubernetes feature gate name of one SLICE_GATE_* bit. */
const char *slice_gate_name(unsigned gate);
/* Removes the fields of the gates in @mask from @slice, in place. */
void slice_strip_gates(struct json_object *slice, unsigned mask);

/*
 * Equality as the controller means it: missing, null, empty arrays and empty
 * objects are the same; a "timeAdded" that @desired lacks is ignored in
 * @existing. Exposed for tests.
 */
bool slice_json_equal(struct json_object *existing, struct json_object *desired);

#endif
