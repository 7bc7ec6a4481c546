/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Slice records: one ResourceSlice kept as compact JSON text plus the few
 * facts the sync planner (sync.h) decides from, so that no json-c tree of a
 * slice outlives the call that made it. A json-c tree costs about twenty
 * times its text (every object allocates a hash table); the desired slices
 * of a driver and a store's view of the published ones are kept as records.
 *
 * Two kinds:
 *   SLICE_RECORD_DESIRED    what slice_build() makes: the text is the whole
 *                           object, ready to be written;
 *   SLICE_RECORD_PUBLISHED  what a store read back (list, watch, a write's
 *                           answer, a file): the text is the object without
 *                           the fields the planner replaces on update
 *                           (spec.devices, sharedCounters,
 *                           perDeviceNodeSelection, nodeSelector, allNodes,
 *                           pool): metadata and the rest, which an update
 *                           keeps. The compared fields live on as digests.
 *
 * Records are immutable once made, and made without a tree of the whole
 * slice: from text or while a slice is built, one device's tree at a time
 * (the builder below; devices_text.h). Lists of records are in
 * record_list.c. Pure: no I/O, no logging.
 */
#ifndef DRALET_SLICES_RECORD_H
#define DRALET_SLICES_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "agent/slices/canon.h"

enum slice_record_kind {
	SLICE_RECORD_DESIRED,
	SLICE_RECORD_PUBLISHED,
};

struct slice_record {
	enum slice_record_kind kind;
	char *text;		/* compact JSON (see the kinds above), NUL-terminated */
	size_t text_len;
	/* metadata (NULL when missing or not a string) */
	char *name, *uid, *resource_version;
	bool has_spec;		/* spec is there (not null) */
	char *driver, *node_name;	/* spec.driver, spec.nodeName (NULL unless strings) */
	/* spec.pool: name (NULL unless a string), generation and
	 * resourceSliceCount (json_object_get_int64 of the value, 0 when
	 * missing); pool_odd when the pool holds anything the controller's
	 * equality would see as different from {name, generation, count}:
	 * another non-empty member, or a non-empty value of the wrong type */
	char *pool;
	int64_t generation, slice_count;
	bool pool_odd;
	/* device names: sorted, unique, each NUL-terminated, back to back (a
	 * device without a name counts as "") */
	char *names;
	size_t n_names, names_len;
	/* the compared spec fields (canon.h) */
	struct slice_digest digest;		/* every timeAdded left out */
	struct slice_digest digest_full;	/* as they are */
	bool time_added;	/* some compared field carries a timeAdded */
	unsigned gates;		/* SLICE_GATE_* (sync.h) whose fields are non-empty */
	unsigned gate_keys;	/* SLICE_GATE_* whose field keys are there at all */
	/* PUBLISHED only: JSON array of {"name", "taints"} for the devices with
	 * a taint that has a timeAdded (those taints only), so an update keeps
	 * the server's times; NULL when there are none */
	char *time_added_devices;
};

/*
 * Makes a record of @slice (a ResourceSlice object; borrowed, not modified).
 * On success *ret_rec is new (slice_record_free). -EINVAL when @slice is not
 * an object, -ENOMEM.
 */
int slice_record_from_json(struct json_object *slice, enum slice_record_kind kind,
			   struct slice_record **ret_rec);

/* The same from JSON text (@len bytes), one device's tree at a time.
 * -EINVAL when it is not one JSON object. */
int slice_record_from_text(const char *text, size_t len, enum slice_record_kind kind,
			   struct slice_record **ret_rec);

/*
 * Making a record one device at a time, so that no tree of every device
 * exists: @light is the slice without its devices (borrowed, a reference
 * kept until finish): its spec.devices is the placeholder of
 * devices_text.h, where the devices given one by one go (in order), or a
 * value that stands for itself (then no device is given). finish makes the
 * record (*ret_rec new) and frees the builder either way; free drops one
 * that is not finished. -EINVAL (@light not an object), -ENOMEM.
 */
struct slice_record_builder;
int slice_record_builder_new(enum slice_record_kind kind, struct json_object *light,
			     struct slice_record_builder **ret);
/* One element of spec.devices (borrowed). */
int slice_record_builder_device(struct slice_record_builder *b, struct json_object *device);
int slice_record_builder_finish(struct slice_record_builder *b, struct slice_record **ret_rec);
void slice_record_builder_free(struct slice_record_builder *b);

/* Parses the record's text; *ret_obj is a new tree (put it). -ENOMEM, -EINVAL. */
int slice_record_parse(const struct slice_record *rec, struct json_object **ret_obj);

/* A copy of @rec in *ret_rec (new). -ENOMEM. */
int slice_record_copy(const struct slice_record *rec, struct slice_record **ret_rec);

void slice_record_free(struct slice_record *rec);

/* True when the two records hold the same device names. */
bool slice_record_same_names(const struct slice_record *a, const struct slice_record *b);

/*
 * A list of records: one driver's desired slices, or a store's view of the
 * published ones. Reference counted, so a store can keep a desired list
 * while its caller drops its own reference.
 */
struct slice_list {
	unsigned refs;
	size_t n, cap;
	struct slice_record **items;	/* owned */
};

/* An empty list with one reference. -ENOMEM. */
int slice_list_new(struct slice_list **ret_list);
struct slice_list *slice_list_ref(struct slice_list *list);
/* Drops a reference; the last one frees the list and its records. NULL is fine. */
void slice_list_unref(struct slice_list *list);
/* Appends @rec (taken, also on failure). -ENOMEM. */
int slice_list_append(struct slice_list *list, struct slice_record *rec);
/* Index of the record named @name, or -1. */
long slice_list_find(const struct slice_list *list, const char *name);
/* Puts @rec (taken, also on failure) in place of the record with its name,
 * or appends it. -EINVAL when @rec has no name, -ENOMEM. */
int slice_list_put(struct slice_list *list, struct slice_record *rec);
/* Removes and frees item @i. */
void slice_list_remove(struct slice_list *list, size_t i);
/* Bytes of text the list holds (records' text and names). */
size_t slice_list_text_bytes(const struct slice_list *list);

/*
 * Records of every element of @array (json array of ResourceSlice objects;
 * borrowed). *ret_list is new. -EINVAL when @array is not an array or an
 * element not an object, -ENOMEM.
 */
int slice_list_from_json(struct json_object *array, enum slice_record_kind kind,
			 struct slice_list **ret_list);
/* The records' texts parsed into a new json array (for printing and tests). */
int slice_list_to_json(const struct slice_list *list, struct json_object **ret_array);

/*
 * Desired slices of several drivers (`dralet slices`): driver names and
 * their lists, in the order added. Each list is held by one reference.
 */
struct slice_by_driver {
	size_t n;
	char **drivers;
	struct slice_list **lists;
};

/* Adds @driver with @list (the caller's reference is taken, also on failure). */
int slice_by_driver_add(struct slice_by_driver *bd, const char *driver, struct slice_list *list);
/* The list of @driver (borrowed) or NULL. */
struct slice_list *slice_by_driver_get(const struct slice_by_driver *bd, const char *driver);
/* Frees everything; @bd is empty afterwards. */
void slice_by_driver_clear(struct slice_by_driver *bd);

#endif
