/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Canonical digests of the ResourceSlice fields the sync rules compare, so
 * that the planner decides "changed" from two small numbers instead of two
 * trees. Pure: no I/O, no logging.
 *
 * The digest is a keyed 128-bit hash (two SipHash-2-4 lanes, keys drawn once
 * per process) over a canonical encoding that makes equal what the
 * controller's equality (sync.h, slice_json_equal) treats as equal:
 *   - a value that is missing, null, false, 0, "", [] or {} is "empty", and
 *     all empty values encode the same; an object member with an empty value
 *     is left out;
 *   - object members are encoded in key order (the server returns maps
 *     sorted, a builder may not);
 *   - arrays keep their order; scalars keep their type (1 is not "1").
 * With SLICE_CANON_STRIP_TIME_ADDED, every "timeAdded" member is left out
 * (the server sets a taint's timeAdded; a desired slice without any
 * timeAdded compares equal to the published one that has them).
 */
#ifndef DRALET_SLICES_CANON_H
#define DRALET_SLICES_CANON_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>

struct slice_digest {
	uint64_t w[2];
};

/* The compared fields of spec, in encoding order (pool is compared apart). */
extern const char *const slice_canon_fields[];

/*
 * Digests of the compared fields of @spec (a ResourceSliceSpec; NULL or not
 * an object counts as having none): *ret_stripped leaves every "timeAdded"
 * out, *ret_full keeps them. *ret_time_added (may be NULL) says whether any
 * object in those fields has a "timeAdded" member that is not null. Never
 * fails.
 */
void slice_canon_digest(struct json_object *spec, struct slice_digest *ret_stripped,
			struct slice_digest *ret_full, bool *ret_time_added);

/*
 * The same digests for a spec whose devices come one at a time (from text,
 * or while a slice is built), so that no tree of all of them is needed:
 *   slice_canon_begin(spec) - the fields before devices, from @spec
 *                             (borrowed; its devices member is not read);
 *   slice_canon_device()    - each element of spec.devices, in order;
 *   slice_canon_end()       - @devices_if_none stands for spec.devices when
 *                             no element was given (NULL: none, or a value
 *                             that is not a list); then the fields after
 *                             devices from @spec; the results as
 *                             slice_canon_digest() gives them; frees @c.
 * slice_canon_begin: -ENOMEM. slice_canon_free() drops an unfinished one.
 */
struct slice_canon;
int slice_canon_begin(struct json_object *spec, struct slice_canon **ret);
void slice_canon_device(struct slice_canon *c, struct json_object *device);
void slice_canon_end(struct slice_canon *c, struct json_object *spec,
		     struct json_object *devices_if_none, struct slice_digest *ret_stripped,
		     struct slice_digest *ret_full, bool *ret_time_added);
void slice_canon_free(struct slice_canon *c);

static inline bool slice_digest_equal(const struct slice_digest *a, const struct slice_digest *b)
{
	return a->w[0] == b->w[0] && a->w[1] == b->w[1];
}

/* The controller's notion of empty: missing, null, false, 0, "", [], {}. */
bool slice_json_is_empty(struct json_object *o);

#endif
