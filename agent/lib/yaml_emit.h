/* SPDX-License-Identifier: Apache-2.0 */
/* json-c objects written as block-style YAML (for -o yaml outputs). */
#ifndef DRALET_YAML_EMIT_H
#define DRALET_YAML_EMIT_H

#include <stdio.h>
#include <json-c/json.h>

/* Writes @obj as a YAML document to @out. Strings that a YAML reader would
 * take for another type, or that need escaping, are double-quoted, so
 * yaml_load of the output gives back @obj. Returns 0 or -EIO. */
int yaml_emit(struct json_object *obj, FILE *out);

#endif
