/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/core/config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dralet/backend.h>

#include "agent/lib/trusted_path.h"
#include "agent/core/k8s_names.h"
#include "agent/core/sriov_policy_config.h"
#include "agent/lib/yaml_load.h"

#define CONFIG_ERROR(err, errlen, ...) (snprintf((err), (errlen), __VA_ARGS__), -EINVAL)

static int check_keys(struct json_object *obj, const char *where, const char *const *allowed,
		      char *err, size_t errlen)
{
	json_object_object_foreach(obj, key, val) {
		bool ok = false;
		(void)val;
		for (const char *const *a = allowed; *a; a++)
			ok |= !strcmp(key, *a);
		if (!ok)
			return CONFIG_ERROR(err, errlen, "%s: unknown key '%s'", where, key);
	}
	return 0;
}

static int parse_backend(const char *name, struct json_object *obj, struct config_backend *b,
			 char *err, size_t errlen)
{
	static const char *const keys[] = { "enabled", "driver", "options", NULL };
	struct json_object *v;
	char where[160];
	int r;

	snprintf(where, sizeof(where), "backends.%s", name);
	b->name = name;
	b->enabled = true;
	if (!obj)
		return 0;
	if (!json_object_is_type(obj, json_type_object))
		return CONFIG_ERROR(err, errlen, "%s: must be a mapping", where);
	if ((r = check_keys(obj, where, keys, err, errlen)) < 0)
		return r;
	if (json_object_object_get_ex(obj, "enabled", &v)) {
		if (!json_object_is_type(v, json_type_boolean))
			return CONFIG_ERROR(err, errlen, "%s.enabled: must be true or false", where);
		b->enabled = json_object_get_boolean(v);
	}
	if (json_object_object_get_ex(obj, "driver", &v)) {
		if (!json_object_is_type(v, json_type_string) ||
		    !k8s_valid_driver_name(json_object_get_string(v)))
			return CONFIG_ERROR(err, errlen,
					    "%s.driver: must be a lower-case DNS subdomain of at "
					    "most 63 characters", where);
		b->driver = json_object_get_string(v);
	}
	if (json_object_object_get_ex(obj, "options", &v) && v) {
		if (!json_object_is_type(v, json_type_object))
			return CONFIG_ERROR(err, errlen, "%s.options: must be a mapping", where);
		json_object_object_foreach(v, key, val) {
			if (!json_object_is_type(val, json_type_string))
				return CONFIG_ERROR(err, errlen, "%s.options.%s: must be a string "
						    "(quote numbers)", where, key);
		}
		b->options = v;
	}
	return 0;
}

static int parse(struct config *cfg, char *err, size_t errlen)
{
	static const char *const keys[] = { "apiVersion", "kind", "backends",
					    "publishUnsafeDevices", "pciIDs", "featureGates",
					    "healthCheckIntervalSeconds", "sriov", "simulatedBoard",
					    NULL };
	static const char *const gates[] = { "DRADeviceTaints", "DRAPartitionableDevices", NULL };
	struct json_object *v;
	int r;

	if (!cfg->root)
		return 0;	/* an empty file */
	if (!json_object_is_type(cfg->root, json_type_object))
		return CONFIG_ERROR(err, errlen, "the configuration must be a mapping");
	if ((r = check_keys(cfg->root, "config", keys, err, errlen)) < 0)
		return r;
	if (json_object_object_get_ex(cfg->root, "publishUnsafeDevices", &v)) {
		if (!json_object_is_type(v, json_type_boolean))
			return CONFIG_ERROR(err, errlen, "publishUnsafeDevices: must be true or false");
		cfg->publish_unsafe = json_object_get_boolean(v);
	}
	if (json_object_object_get_ex(cfg->root, "pciIDs", &v)) {
		if (!json_object_is_type(v, json_type_string))
			return CONFIG_ERROR(err, errlen, "pciIDs: must be a file path");
		cfg->pci_ids = json_object_get_string(v);
	}
	if (json_object_object_get_ex(cfg->root, "simulatedBoard", &v)) {
		if (!json_object_is_type(v, json_type_string) || !*json_object_get_string(v))
			return CONFIG_ERROR(err, errlen, "simulatedBoard: must be a board file path");
		cfg->simulated_board = json_object_get_string(v);
	}
	if (json_object_object_get_ex(cfg->root, "healthCheckIntervalSeconds", &v)) {
		int64_t s = json_object_get_int64(v);
		if (!json_object_is_type(v, json_type_int) || s < 1 ||
		    s > CONFIG_HEALTH_INTERVAL_MAX_S)
			return CONFIG_ERROR(err, errlen, "healthCheckIntervalSeconds: must be an "
					    "integer from 1 to %d", CONFIG_HEALTH_INTERVAL_MAX_S);
		cfg->health_interval_s = (unsigned)s;
	}
	if (json_object_object_get_ex(cfg->root, "sriov", &v) && v) {
		sriov_policies_free(cfg->sriov);
		cfg->sriov = NULL;
		if ((r = sriov_policies_parse(v, &cfg->sriov, err, errlen)) < 0)
			return r;
	}
	/* Kubernetes alpha API fields dralet may publish (agent/slices/build.h). */
	if (json_object_object_get_ex(cfg->root, "featureGates", &v) && v) {
		if (!json_object_is_type(v, json_type_object))
			return CONFIG_ERROR(err, errlen, "featureGates: must be a mapping of gate names to true/false");
		if ((r = check_keys(v, "featureGates", gates, err, errlen)) < 0)
			return r;
		json_object_object_foreach(v, gate, on) {
			if (!json_object_is_type(on, json_type_boolean))
				return CONFIG_ERROR(err, errlen, "featureGates.%s: must be true or false", gate);
		}
	}
	if (json_object_object_get_ex(cfg->root, "backends", &v) && v) {
		if (!json_object_is_type(v, json_type_object))
			return CONFIG_ERROR(err, errlen, "backends: must be a mapping by backend name");
		cfg->backends = calloc((size_t)json_object_object_length(v) + 1,
				       sizeof(*cfg->backends));
		if (!cfg->backends)
			return -ENOMEM;
		json_object_object_foreach(v, name, val) {
			r = parse_backend(name, val, &cfg->backends[cfg->n_backends], err, errlen);
			if (r < 0)
				return r;
			cfg->n_backends++;
		}
	}
	return 0;
}

int config_load(const char *path, struct config **ret_cfg, char *err, size_t errlen)
{
	struct config *cfg = calloc(1, sizeof(*cfg));
	char msg[512];
	int r;

	if (!cfg || !(cfg->sriov = calloc(1, sizeof(*cfg->sriov)))) {
		free(cfg);
		return -ENOMEM;
	}
	cfg->health_interval_s = CONFIG_HEALTH_INTERVAL_DEFAULT_S;
	if (path && (r = trusted_path_check(path, msg, sizeof(msg))) < 0) {
		snprintf(err, errlen, "%s: refusing the configuration: %s", path, msg);
		config_free(cfg);
		return r;
	}
	if (path) {
		r = yaml_load_file(path, &cfg->root, msg, sizeof(msg));
		if (r < 0) {
			snprintf(err, errlen, "%s: %s", path, r == -EINVAL ? msg : strerror(-r));
			config_free(cfg);
			return r;
		}
		r = parse(cfg, msg, sizeof(msg));
		if (r < 0) {
			snprintf(err, errlen, "%s: %s", path, msg);
			config_free(cfg);
			return r;
		}
	}
	*ret_cfg = cfg;
	return 0;
}

void config_free(struct config *cfg)
{
	if (!cfg)
		return;
	free(cfg->backends);
	sriov_policies_free(cfg->sriov);
	json_object_put(cfg->root);
	free(cfg);
}

int config_check_options(const struct config_backend *b, const struct dralet_option *known,
			 char *err, size_t errlen)
{
	if (!b->options)
		return 0;
	json_object_object_foreach(b->options, key, val) {
		const struct dralet_option *o = known;
		char names[512] = "";
		size_t len = 0;

		while (o && o->name && strcmp(o->name, key))
			o++;
		if (o && o->name) {
			const char *value = json_object_get_string(val);
			int r;

			if (!(o->flags & DRALET_OPTION_TRUSTED_FILE) || !strchr(value, '/'))
				continue;
			r = trusted_path_check(value, names, sizeof(names));
			if (r < 0) {
				snprintf(err, errlen, "backends.%s.options.%s: refusing %s: %s",
					 b->name, key, value, names);
				return r;
			}
			continue;
		}
		for (o = known; o && o->name && len < sizeof(names); o++)
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
						len ? ", " : "", o->name);
		return CONFIG_ERROR(err, errlen, "backends.%s.options.%s: unknown option (%s%s)",
				    b->name, key, len ? "known: " : "the backend takes no options",
				    names);
	}
	return 0;
}

const struct config_backend *config_backend(const struct config *cfg, const char *name)
{
	for (size_t i = 0; cfg && i < cfg->n_backends; i++)
		if (!strcmp(cfg->backends[i].name, name))
			return &cfg->backends[i];
	return NULL;
}
