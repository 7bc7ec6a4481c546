/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/claims/cdi_spec.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/claims/cdi_names.h"
#include "agent/core/edits.h"
#include "agent/lib/err_msg.h"
#include "agent/lib/json_get.h"

enum cdi_version { V030, V040, V050, V060, V070, V110 };
static const char *const version_names[] = { "0.3.0", "0.4.0", "0.5.0", "0.6.0", "0.7.0", "1.1.0" };

static int add_string(struct json_object *o, const char *key, const char *value)
{
	struct json_object *s = json_object_new_string(value);

	if (!s || json_object_object_add(o, key, s) < 0) {
		json_object_put(s);
		return -ENOMEM;
	}
	return 0;
}

static int add_int(struct json_object *o, const char *key, int64_t value)
{
	struct json_object *v = json_object_new_int64(value);

	if (!v || json_object_object_add(o, key, v) < 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static int append(struct json_object *array, struct json_object *item)
{
	if (!item || json_object_array_add(array, item) < 0) {
		json_object_put(item);
		return -ENOMEM;
	}
	return 0;
}

/* Splits "a,b,c" into a JSON array of strings. */
static struct json_object *split_options(const char *options)
{
	struct json_object *a = json_object_new_array();
	const char *p = options;

	while (a && p && *p) {
		size_t len = strcspn(p, ",");
		if (len && append(a, json_object_new_string_len(p, (int)len)) < 0) {
			json_object_put(a);
			return NULL;
		}
		p += len + (p[len] == ',');
	}
	return a;
}

static struct json_object *render_node(const struct edits_node *n)
{
	struct json_object *o = json_object_new_object();
	int r;

	if (!o)
		return NULL;
	r = add_string(o, "path", n->node.path);
	if (!r && (n->node.major || n->node.minor)) {
		r = add_string(o, "type", "c");
		if (!r)
			r = add_int(o, "major", n->node.major);
		if (!r)
			r = add_int(o, "minor", n->node.minor);
	}
	if (!r && n->permissions)
		r = add_string(o, "permissions", n->permissions);
	if (r) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static struct json_object *render_mount(const struct edits_mount *m)
{
	struct json_object *o = json_object_new_object(), *opts;

	if (!o || add_string(o, "hostPath", m->host_path) ||
	    add_string(o, "containerPath", m->container_path))
		goto fail;
	if (m->options && *m->options) {
		if (!(opts = split_options(m->options)))
			goto fail;
		if (json_object_object_add(o, "options", opts) < 0) {
			json_object_put(opts);
			goto fail;
		}
	}
	return o;
fail:
	json_object_put(o);
	return NULL;
}

static int add_list(struct json_object *edits, const char *key, struct json_object *list)
{
	if (!list)
		return -ENOMEM;
	if (!json_object_array_length(list)) {
		json_object_put(list);
		return 0;
	}
	if (json_object_object_add(edits, key, list) < 0) {
		json_object_put(list);
		return -ENOMEM;
	}
	return 0;
}

static struct json_object *render_edits(const struct dralet_edits *e)
{
	struct json_object *o = json_object_new_object();
	struct json_object *env = json_object_new_array();
	struct json_object *nodes = json_object_new_array();
	struct json_object *mounts = json_object_new_array();
	int r = (o && env && nodes && mounts) ? 0 : -ENOMEM;

	for (size_t i = 0; !r && i < e->n_env; i++)
		r = append(env, json_object_new_string(e->env[i]));
	for (size_t i = 0; !r && i < e->n_nodes; i++)
		r = append(nodes, render_node(&e->nodes[i]));
	for (size_t i = 0; !r && i < e->n_mounts; i++)
		r = append(mounts, render_mount(&e->mounts[i]));
	if (!r) {
		r = add_list(o, "env", env);
		env = NULL;
	}
	if (!r) {
		r = add_list(o, "deviceNodes", nodes);
		nodes = NULL;
	}
	if (!r) {
		r = add_list(o, "mounts", mounts);
		mounts = NULL;
	}
	json_object_put(env);
	json_object_put(nodes);
	json_object_put(mounts);
	if (r) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static bool edits_empty(const struct dralet_edits *e)
{
	return !e || (!e->n_env && !e->n_nodes && !e->n_mounts);
}

int cdi_spec_render(const char *vendor, const char *class_, const struct cdi_spec_device *devices,
		    size_t n_devices, struct json_object **ret_spec, char *err, size_t errlen)
{
	struct json_object *spec, *list;
	char kind[512];
	int r;

	if (!cdi_vendor_valid(vendor) || !cdi_class_valid(class_, true))
		return err_printf(err, errlen, -EINVAL, "\"%s/%s\" is not a valid CDI kind",
				  vendor ? vendor : "", class_ ? class_ : "");
	if (!n_devices)
		return err_printf(err, errlen, -EINVAL, "a CDI spec needs at least one device");
	for (size_t i = 0; i < n_devices; i++) {
		if (!cdi_device_name_valid(devices[i].name))
			return err_printf(err, errlen, -EINVAL, "\"%s\" is not a valid CDI device "
					  "name", devices[i].name ? devices[i].name : "");
		if (edits_empty(devices[i].edits))
			return err_printf(err, errlen, -EINVAL, "CDI device %s has no container "
					  "edits", devices[i].name);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(devices[i].name, devices[j].name))
				return err_printf(err, errlen, -EINVAL, "CDI device name %s is "
						  "used twice", devices[i].name);
	}
	snprintf(kind, sizeof(kind), "%s/%s", vendor, class_);
	spec = json_object_new_object();
	list = json_object_new_array();
	r = spec && list ? 0 : -ENOMEM;
	if (!r)
		r = add_string(spec, "cdiVersion", "0.3.0");	/* set below */
	if (!r)
		r = add_string(spec, "kind", kind);
	for (size_t i = 0; !r && i < n_devices; i++) {
		struct json_object *d = json_object_new_object(), *edits;

		if (!d || add_string(d, "name", devices[i].name) ||
		    !(edits = render_edits(devices[i].edits))) {
			json_object_put(d);
			r = -ENOMEM;
			break;
		}
		if (json_object_object_add(d, "containerEdits", edits) < 0) {
			json_object_put(edits);
			json_object_put(d);
			r = -ENOMEM;
			break;
		}
		r = append(list, d);
	}
	if (!r) {
		r = json_object_object_add(spec, "devices", list) < 0 ? -ENOMEM : 0;
		if (!r)
			list = NULL;
	}
	if (!r)
		r = add_string(spec, "cdiVersion", cdi_spec_min_version(spec));
	json_object_put(list);
	if (r) {
		json_object_put(spec);
		return err_printf(err, errlen, r, "out of memory");
	}
	*ret_spec = spec;
	return 0;
}

/* ---- minimum version ---- */

static size_t length(struct json_object *a)
{
	return a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

static enum cdi_version raise_to(enum cdi_version v, enum cdi_version min)
{
	return v > min ? v : min;
}

static enum cdi_version edits_version(struct json_object *edits)
{
	enum cdi_version v = V030;
	struct json_object *a, *rdt;

	if (!edits)
		return v;
	a = json_get(edits, "mounts");
	for (size_t i = 0; i < length(a); i++)
		if (json_get(json_object_array_get_idx(a, i), "type"))
			v = raise_to(v, V040);
	a = json_get(edits, "deviceNodes");
	for (size_t i = 0; i < length(a); i++)
		if (json_get(json_object_array_get_idx(a, i), "hostPath"))
			v = raise_to(v, V050);
	if ((rdt = json_get(edits, "intelRdt"))) {
		v = raise_to(v, V070);
		if (json_get(rdt, "schemata") || json_get(rdt, "enableMonitoring"))
			v = raise_to(v, V110);
	}
	if (json_get(edits, "additionalGids"))
		v = raise_to(v, V070);
	if (json_get(edits, "netDevices"))
		v = raise_to(v, V110);
	return v;
}

const char *cdi_spec_min_version(struct json_object *spec)
{
	enum cdi_version v = V030;
	struct json_object *kind = json_get(spec, "kind"), *devs;

	if (json_get(spec, "annotations"))
		v = raise_to(v, V060);
	if (kind && json_object_is_type(kind, json_type_string)) {
		const char *slash = strchr(json_object_get_string(kind), '/');
		if (slash && strchr(slash, '.'))
			v = raise_to(v, V060);
	}
	v = raise_to(v, edits_version(json_get(spec, "containerEdits")));
	devs = json_get(spec, "devices");
	for (size_t i = 0; i < length(devs); i++) {
		struct json_object *d = json_object_array_get_idx(devs, i), *name;

		name = json_get(d, "name");
		if (name && json_object_is_type(name, json_type_string) &&
		    isdigit((unsigned char)json_object_get_string(name)[0]))
			v = raise_to(v, V050);
		if (json_get(d, "annotations"))
			v = raise_to(v, V060);
		v = raise_to(v, edits_version(json_get(d, "containerEdits")));
	}
	return version_names[v];
}

char *cdi_spec_text(struct json_object *spec)
{
	const char *s = json_object_to_json_string_ext(spec, JSON_C_TO_STRING_PRETTY |
						       JSON_C_TO_STRING_SPACED |
						       JSON_C_TO_STRING_NOSLASHESCAPE);
	char *out;

	if (!s || asprintf(&out, "%s\n", s) < 0)
		return NULL;
	return out;
}
