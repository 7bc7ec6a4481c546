/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The items of a Kubernetes List body (GET .../resourceslices) one at a
 * time, without building the tree of the whole list: a page of 500 slices
 * as one json-c tree would cost a hundred megabytes. Pure: a validating scan
 * over the bytes; each item's text is handed out for the caller to parse.
 */
#ifndef DRALET_SLICES_LIST_BODY_H
#define DRALET_SLICES_LIST_BODY_H

#include <stddef.h>
#include <json-c/json.h>

/* One element of "items": @len bytes of JSON text (not NUL-terminated).
 * Return 0 to go on, a negative errno to stop (returned by the scan). */
typedef int (*slice_list_item_cb)(void *userdata, const char *text, size_t len);

/*
 * Scans @body (@len bytes): one JSON object (what follows it is ignored,
 * like a tokener that stops there). Calls @on_item for every element of its
 * top-level "items" array in order (the last "items" when the key repeats).
 * *ret_metadata (may be NULL) gets the top-level "metadata" object as a new
 * tree, or NULL when there is none. Returns 0, -EBADMSG when @body is not a
 * JSON object (or nests deeper than 64) or "items" is missing or neither an
 * array nor null, -ENOMEM, or the callback's error; *ret_metadata is only
 * set on success.
 */
int slice_list_body_scan(const char *body, size_t len, slice_list_item_cb on_item, void *userdata,
			 struct json_object **ret_metadata);

#endif
