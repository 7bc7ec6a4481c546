/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The strict decoder of <dralet/options.h> on parsed JSON (json-c): what the
 * agent's own configuration (agent/core/config.c, sriov_policy_config.c)
 * uses, and what dralet_config_decode() runs after parsing the text.
 *
 * Messages are "<path>: <problem>", the path built from @root, the keys
 * (".key") and list indices ("[2]") on the way down. Single-threaded per
 * decoder; the decoder lives on the caller's stack.
 */
#ifndef DRALET_CORE_OPTIONS_JSON_H
#define DRALET_CORE_OPTIONS_JSON_H

#include <stddef.h>
#include <json-c/json.h>

#include <dralet/options.h>

struct dralet_decoder {
	char *err;
	size_t errlen;
	char path[256];
	size_t len;		/* of path */
};

/* Starts a decoding whose messages go to @err; @root ("" or "sriov") is the
 * path of the top object. */
void decoder_init(struct dralet_decoder *d, const char *root, char *err, size_t errlen);

/* Decodes the object @obj by @fields into @base (the struct the offsets are
 * in). NULL @obj is an empty object. */
int decoder_object(struct dralet_decoder *d, struct json_object *obj,
		   const struct dralet_field *fields, void *base);

/* The path goes down by ".key" or "[index]" and back up to @mark (what push
 * returned). */
size_t decoder_push_key(struct dralet_decoder *d, const char *key);
size_t decoder_push_index(struct dralet_decoder *d, size_t index);
void decoder_pop(struct dralet_decoder *d, size_t mark);

/* Reports "<path>: <message>" and returns @r (-EINVAL ...). */
int decoder_fail(struct dralet_decoder *d, int r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The JSON of a value a CUSTOM field's decode gets (NULL: JSON null). */
static inline struct json_object *decoder_json(const struct dralet_value *v)
{
	return (struct json_object *)(void *)(v);
}

/* A .parse that keeps a pointer to the string (const char * at the offset):
 * for documents that outlive the decoded struct, as the agent's configuration. */
int decoder_borrow_string(const char *text, void *dst, char *why, size_t whylen);

#endif
