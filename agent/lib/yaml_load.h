/* SPDX-License-Identifier: Apache-2.0 */
/*
 * YAML (1.2 core schema subset) to json-c objects, so that boards, the config
 * file and ResourceClaim files written as YAML or JSON go through one DOM.
 *
 * Plain scalars resolve like YAML 1.2's core schema: null/~/empty -> null,
 * true/false -> bool, decimal/0x/0o integers -> int, decimal floats ->
 * double, everything else (and every quoted scalar) -> string. Anchors and
 * aliases are supported; merge keys and tags other than the standard ones are
 * not. Only the first document of a stream is read.
 */
#ifndef DRALET_YAML_LOAD_H
#define DRALET_YAML_LOAD_H

#include <stddef.h>
#include <json-c/json.h>

/*
 * Parses @len bytes of YAML (JSON is YAML too). On success *ret_obj is a new
 * reference the caller puts with json_object_put(). On failure returns
 * -EINVAL and writes "line L column C: problem" into @err.
 */
int yaml_load_buffer(const char *buf, size_t len, struct json_object **ret_obj,
		     char *err, size_t errlen);

/* Same for a file; -errno when it cannot be read. */
int yaml_load_file(const char *path, struct json_object **ret_obj, char *err, size_t errlen);

#endif
