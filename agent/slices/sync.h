/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Sync decisions for one driver's pool: what to delete, update and create so
 * that the published ResourceSlices equal the desired ones. Pure: input is
 * what the store knows is published (its list/watch cache, as records) and
 * the desired slices from slice_build() (records too, record.h); output is a
 * plan of API writes. Both stores (apiserver and file) run the same plan, so
 * they agree on names, pool generations and write counts.
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
 *      per-device node selection differ (missing and empty are equal; map
 *      keys in any order). Decided from the records' canonical digests
 *      (canon.h); a desired slice that itself carries a timeAdded is compared
 *      with every timeAdded included;
 *   4. generation + 1 when a slice is new, more than one matched slice
 *      changed, or the pool's set of device names changed; otherwise it is
 *      kept (nothing or one atomic update to write). Unchanged content
 *      means an empty plan: no write at all. Kept too (unlike upstream) for
 *      the rest of a round that wrote only some slices: the current
 *      generation has fewer slices than its resourceSliceCount, each exactly
 *      a desired slice, so the missing ones complete it (the allocator
 *      treats such a pool as being updated, pools_stable.go IsIncomplete);
 *   5. order: delete obsolete slices (with uid + resourceVersion
 *      preconditions), update matched slices (all of them after a bump, else
 *      only the changed one), create new ones. resourceSliceCount is the
 *      number of desired slices.
 *
 * Memory: the plan holds no slice tree. What an op writes is made on demand,
 * one write at a time, from the records' texts (slice_plan_op_text: without
 * a tree of the devices).
 */
#ifndef DRALET_SLICES_SYNC_H
#define DRALET_SLICES_SYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "agent/slices/gates.h"
#include "agent/slices/record.h"

enum slice_op_type {
	SLICE_OP_DELETE,	/* the published slice goes (name, uid, resourceVersion) */
	SLICE_OP_UPDATE,	/* PUT: the published slice with the desired spec */
	SLICE_OP_CREATE,	/* POST: the desired slice (generateName) */
};

struct slice_op {
	enum slice_op_type type;
	int desired_index;	/* index into the desired list; -1 for deletes */
	/* DELETE, UPDATE: the published slice's metadata (owned by the plan;
	 * NULL where it had none); NULL for CREATE */
	char *name, *uid, *resource_version;
	/* What slice_plan_op_object() reads: borrowed from the inputs (or the
	 * plan's own copy of a desired slice without the dropped gates' fields) */
	const struct slice_record *published;	/* DELETE, UPDATE */
	const struct slice_record *desired;	/* UPDATE, CREATE */
};

struct slice_plan {
	int64_t generation;	/* the pool's generation once the plan is written */
	bool bumped;
	size_t n_delete, n_update, n_create;
	size_t n_ops;		/* n_delete + n_update + n_create */
	struct slice_op *ops;	/* deletes, then updates, then creates */
	/* private */
	char *pool_name;
	size_t n_desired;
	struct slice_record **own;	/* desired slices with dropped fields stripped */
	size_t n_own;
};

/*
 * Plans the writes for the pool @pool_name. @existing: records of the
 * ResourceSlices the store knows for this driver on this node (any pool);
 * @desired: the list from slice_build(); both borrowed, either may be NULL
 * (none). @dropped: SLICE_GATE_* whose fields the server drops (gates.h).
 * On success *ret_plan is new (slice_plan_free). -EINVAL on malformed input
 * (a desired slice without spec, no pool name), -ENOMEM.
 */
int slice_plan_compute(const struct slice_list *existing, const struct slice_list *desired,
		       const char *pool_name, unsigned dropped, struct slice_plan **ret_plan);
void slice_plan_free(struct slice_plan *plan);

/*
 * The object op @i writes, as a new tree (the caller puts it): for CREATE
 * the desired slice with the plan's pool; for UPDATE the published slice
 * (metadata, resourceVersion and all) with the desired devices, shared
 * counters, node selection and the plan's pool, every taint keeping the
 * server's timeAdded. The inputs given to slice_plan_compute() must still be
 * alive and unchanged. -EINVAL for a DELETE or an unreadable record, -ENOMEM.
 */
int slice_plan_op_object(const struct slice_plan *plan, size_t i, struct json_object **ret_obj);

/*
 * Changes the object being written before it is: sets metadata (a name, an
 * owner). Must leave spec alone, may be called twice for one write.
 */
typedef void (*slice_edit_fn)(void *userdata, struct json_object *obj);

/*
 * The text op @i writes (what slice_plan_op_object() gives, through @edit
 * when not NULL, written with json-c @flags, JSON_C_TO_STRING_*), made
 * without a tree of the slice's devices where it can. *ret_text is new
 * (free); *ret_len may be NULL. Same inputs rule and errors as
 * slice_plan_op_object().
 */
int slice_plan_op_text(const struct slice_plan *plan, size_t i, int flags, slice_edit_fn edit,
		       void *userdata, char **ret_text, size_t *ret_len);

/*
 * Equality as the controller means it: missing, null, empty arrays and empty
 * objects are the same; a "timeAdded" that @desired lacks is ignored in
 * @existing. The planner decides from digests of the same rules (canon.h);
 * exposed for tests.
 */
bool slice_json_equal(struct json_object *existing, struct json_object *desired);

#endif
