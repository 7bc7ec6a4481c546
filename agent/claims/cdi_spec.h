/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Rendering one CDI spec (cdi.md section 2), pure: a kind and a list of
 * devices with their container edits become a json-c object carrying the
 * lowest cdiVersion its fields need (cdi.md section 1), so every runtime
 * that knows that version accepts it.
 */
#ifndef DRALET_CDI_SPEC_H
#define DRALET_CDI_SPEC_H

#include <stddef.h>
#include <json-c/json.h>

struct dralet_edits;

struct cdi_spec_device {
	const char *name;			/* CDI device name (cdi_device_name) */
	const struct dralet_edits *edits;	/* must not be empty */
};

/*
 * Renders the spec for kind "<vendor>/<class>". *ret_spec is a new object
 * (caller puts it). -EINVAL with the reason in @err when a name breaks the
 * CDI rules, a device has no edits, or two devices share a name.
 */
int cdi_spec_render(const char *vendor, const char *class_, const struct cdi_spec_device *devices,
		    size_t n_devices, struct json_object **ret_spec, char *err, size_t errlen);

/*
 * The lowest CDI version @spec needs, as a string ("0.5.0"): 0.3.0, raised
 * by mounts[].type (0.4.0), deviceNodes[].hostPath or a device name starting
 * with a digit (0.5.0), annotations or a dot in the class (0.6.0), intelRdt
 * or additionalGids (0.7.0), netDevices or intelRdt.schemata /
 * enableMonitoring (1.1.0). Reads the object only.
 */
const char *cdi_spec_min_version(struct json_object *spec);

/* The JSON text of @spec as written to disk (malloc'd, newline-terminated). */
char *cdi_spec_text(struct json_object *spec);

#endif
