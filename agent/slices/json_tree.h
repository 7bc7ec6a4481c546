/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Small json-c helpers the slice pipeline and the stores share: parsing one
 * value from a span, shallow copies, and the Node owner reference of a
 * slice. Pure.
 */
#ifndef DRALET_SLICES_JSON_TREE_H
#define DRALET_SLICES_JSON_TREE_H

#include <stdbool.h>
#include <stddef.h>

struct json_object;

/* Any one JSON value from @len bytes (a trailing NUL or whitespace is fine).
 * *ret_ok: whether it parsed; the result is NULL for `null` and on failure.
 * The caller owns the result. */
struct json_object *json_tree_parse(const char *text, size_t len, bool *ret_ok);

/* One JSON object from @len bytes; NULL when it is not one (or no memory). */
struct json_object *json_tree_parse_object(const char *text, size_t len);

/* A new object with @src's members, shared by reference, except the names
 * in the NULL-terminated @skip (may be NULL). An empty object when @src is
 * NULL or not an object; NULL when out of memory. */
struct json_object *json_tree_shallow_copy(struct json_object *src, const char *const *skip);

/* Makes the Node @node (UID @uid) the controller owner of @slice, unless
 * @uid is NULL, @slice has no metadata object or already has owners. */
void json_tree_set_node_owner(struct json_object *slice, const char *node, const char *uid);

#endif
