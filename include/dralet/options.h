/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dralet backend SDK: strict, table-driven decoding of configuration objects.
 *
 * A backend describes its opaque claim configuration (VfConfig, GpuConfig ...)
 * as a table of fields; the agent decodes the JSON text against it. Decoding
 * is strict: an unknown key, a wrong type, a value out of range or not in the
 * enum, a missing required key is an error naming the key's whole path:
 *
 *   VfConfig.vlan: must be between 0 and 4094
 *   GpuConfig.sharing: unknown field "mps" (known: strategy, timeSlicingConfig)
 *   apiVersion: "v2" is not supported (want "fpga.dralet.dev/v1alpha1")
 *
 * The agent reads its own configuration file with the same decoder, so the
 * two speak alike (sriov.policies[2].numVfs: must be between 0 and 65535).
 *
 * A table is an array of struct dralet_field ending with DRALET_FIELDS_END;
 * each field writes into the caller's struct at an offset (DRALET_AT):
 *
 *   struct my_config { int kind; char api[64]; bool has_vlan; int vlan; };
 *   static const struct dralet_field my_fields[] = {
 *       { "vlan", DRALET_FIELD_INT, DRALET_AT(struct my_config, vlan), .min = 0,
 *         .max = 4094, DRALET_SEEN(struct my_config, has_vlan) },
 *       DRALET_FIELDS_END,
 *   };
 *
 * Cross-field rules (qos needs a vlan) stay in the backend, after decoding.
 * Threads: any; the tables are read-only.
 */
#ifndef DRALET_OPTIONS_H
#define DRALET_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum dralet_field_type {
	DRALET_FIELD_BOOL,	/* true/false into a bool, or 0/1 into an int */
	DRALET_FIELD_INT,	/* an integer from .min to .max into a 1, 2, 4 or 8-byte integer */
	DRALET_FIELD_STRING,	/* copied into char[.size] (longer is an error), or given to .parse */
	DRALET_FIELD_ENUM,	/* one of .names (NULL-terminated): its index, into an int or enum */
	DRALET_FIELD_OBJECT,	/* an object decoded by .fields into the same struct; null: absent */
	DRALET_FIELD_REFUSED,	/* a known key that is refused: -EOPNOTSUPP with .help */
	DRALET_FIELD_CUSTOM,	/* .decode gets the raw value: the agent's own sections only */
};

/* Owned by the agent: the decoding in progress and a value in it. */
struct dralet_decoder;
struct dralet_value;

struct dralet_field {
	const char *name;		/* the key; NULL ends the table */
	enum dralet_field_type type;
	size_t offset;			/* of the destination in the decoded struct */
	size_t size;			/* of the destination */
	bool required;			/* absent is "<path>: is required" */
	size_t seen;			/* 0, or 1 + the offset of a bool set when the key is given */
	long long min, max;		/* INT */
	const char *const *names;	/* ENUM */
	const struct dralet_field *fields;	/* OBJECT */
	/* STRING, optional: checks/converts @text into @dst (instead of the copy);
	 * returns 0 or -errno with what is wrong in @why ("\"x\" is not a MAC
	 * address"), reported as "<path>: <why>". */
	int (*parse)(const char *text, void *dst, char *why, size_t whylen);
	/* CUSTOM: decodes @v into @dst (the destination at .offset). */
	int (*decode)(struct dralet_decoder *d, const struct dralet_value *v, void *dst);
	/* REFUSED: why the key is refused; BOOL, INT, STRING: what the value must
	 * be, for a value of the wrong type ("a file path"; default "a string" ...) */
	const char *help;
};

#define DRALET_AT(type, member) \
	.offset = offsetof(type, member), .size = sizeof(((type *)0)->member)
#define DRALET_SEEN(type, member) .seen = offsetof(type, member) + 1
#define DRALET_FIELDS_END { .name = NULL }

/*
 * The header every opaque configuration carries, and its other fields:
 * "apiVersion" must be one of @api_versions (the first is named in errors)
 * and "kind" one of @kinds (both NULL-terminated); the rest is decoded by
 * @fields below the kind's name (VfConfig.vlan).
 */
struct dralet_config_type {
	const char *const *api_versions;
	const char *const *kinds;
	const struct dralet_field *fields;
};

/*
 * Decodes @text, one strict JSON object and nothing after it, into @dst.
 * *ret_kind (may be NULL) is the index of the kind in @type->kinds. Returns 0;
 * -EINVAL (or what a .parse returned, -EOPNOTSUPP for a REFUSED field) with
 * "<path>: <problem>" in @err; -ENOMEM. @dst may be partly written on error.
 */
int dralet_config_decode(const char *text, const struct dralet_config_type *type, void *dst,
			 int *ret_kind, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
