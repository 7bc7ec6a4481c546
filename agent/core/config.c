/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/core/config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dralet/backend.h>

#include "agent/core/k8s_names.h"
#include "agent/core/options_json.h"
#include "agent/core/sriov_policy_config.h"
#include "agent/lib/err_msg.h"
#include "agent/lib/trusted_path.h"
#include "agent/lib/yaml_load.h"

/* apiVersion and kind: any value (the file format has one version) */
static int decode_anything(struct dralet_decoder *d, const struct dralet_value *v, void *dst)
{
	return 0;
}

static int parse_driver_name(const char *text, void *dst, char *why, size_t whylen)
{
	if (!k8s_valid_driver_name(text))
		return err_printf(why, whylen, -EINVAL,
				  "must be a lower-case DNS subdomain of at most 63 characters");
	*(const char **)dst = text;
	return 0;
}

static int parse_board_path(const char *text, void *dst, char *why, size_t whylen)
{
	if (!*text)
		return err_printf(why, whylen, -EINVAL, "must be a board file path");
	*(const char **)dst = text;
	return 0;
}

/* options: strings by key (which keys, the backend says: config_check_options) */
static int decode_options(struct dralet_decoder *d, const struct dralet_value *value,
			  void *dst)
{
	struct json_object *v = decoder_json(value);

	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_object))
		return decoder_fail(d, -EINVAL, "must be an object");
	json_object_object_foreach(v, key, val) {
		if (!json_object_is_type(val, json_type_string)) {
			decoder_push_key(d, key);
			return decoder_fail(d, -EINVAL, "must be a string (quote numbers)");
		}
	}
	*(struct json_object **)dst = v;
	return 0;
}

static const struct dralet_field backend_fields[] = {
	{ "enabled", DRALET_FIELD_BOOL, DRALET_AT(struct config_backend, enabled) },
	{ "driver", DRALET_FIELD_STRING, DRALET_AT(struct config_backend, driver),
	  .parse = parse_driver_name,
	  .help = "a lower-case DNS subdomain of at most 63 characters" },
	{ "options", DRALET_FIELD_CUSTOM, DRALET_AT(struct config_backend, options),
	  .decode = decode_options },
	DRALET_FIELDS_END,
};

/* backends: settings by backend name */
static int decode_backends(struct dralet_decoder *d, const struct dralet_value *value,
			   void *dst)
{
	struct json_object *v = decoder_json(value);
	struct config *cfg = dst;

	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_object))
		return decoder_fail(d, -EINVAL, "must be an object by backend name");
	cfg->backends = calloc((size_t)json_object_object_length(v) + 1, sizeof(*cfg->backends));
	if (!cfg->backends)
		return -ENOMEM;
	json_object_object_foreach(v, name, val) {
		struct config_backend *b = &cfg->backends[cfg->n_backends];
		size_t mark = decoder_push_key(d, name);
		int r;

		b->name = name;
		b->enabled = true;
		if ((r = decoder_object(d, val, backend_fields, b)) < 0)
			return r;
		decoder_pop(d, mark);
		cfg->n_backends++;
	}
	return 0;
}

/* Kubernetes alpha API fields dralet may publish (agent/slices/build.h reads
 * them from the root); checked here only. */
static int decode_gates(struct dralet_decoder *d, const struct dralet_value *v, void *dst)
{
	static const struct dralet_field gate_fields[] = {
		{ "DRADeviceTaints", DRALET_FIELD_BOOL, .offset = 0, .size = sizeof(bool) },
		{ "DRAPartitionableDevices", DRALET_FIELD_BOOL, .offset = 1, .size = sizeof(bool) },
		DRALET_FIELDS_END,
	};
	bool gates[2];

	return decoder_object(d, decoder_json(v), gate_fields, gates);
}

/* "1.34" or "v1.34.2": read by slice_options_from_config (slices/build.h). */
static int parse_kubernetes_version(const char *text, void *dst, char *why, size_t whylen)
{
	unsigned major, minor;

	(void)dst;
	if (sscanf(text + (*text == 'v'), "%u.%u", &major, &minor) != 2 || major != 1 || !minor ||
	    minor > 999)
		return err_printf(why, whylen, -EINVAL, "want \"1.<minor>\", e.g. \"1.34\"");
	return 0;
}

static const struct dralet_field config_fields[] = {
	{ "apiVersion", DRALET_FIELD_CUSTOM, .decode = decode_anything },
	{ "kind", DRALET_FIELD_CUSTOM, .decode = decode_anything },
	{ "backends", DRALET_FIELD_CUSTOM, .decode = decode_backends },
	{ "publishUnsafeDevices", DRALET_FIELD_BOOL, DRALET_AT(struct config, publish_unsafe) },
	{ "pciIDs", DRALET_FIELD_STRING, DRALET_AT(struct config, pci_ids),
	  .parse = decoder_borrow_string, .help = "a file path" },
	{ "featureGates", DRALET_FIELD_CUSTOM, .decode = decode_gates },
	{ "kubernetesVersion", DRALET_FIELD_STRING, .parse = parse_kubernetes_version,
	  .help = "\"1.<minor>\", e.g. \"1.34\"" },
	{ "healthCheckIntervalSeconds", DRALET_FIELD_INT,
	  DRALET_AT(struct config, health_interval_s), .min = 1,
	  .max = CONFIG_HEALTH_INTERVAL_MAX_S },
	{ "sriov", DRALET_FIELD_CUSTOM, DRALET_AT(struct config, sriov),
	  .decode = sriov_policies_decode },
	{ "simulatedBoard", DRALET_FIELD_STRING, DRALET_AT(struct config, simulated_board),
	  .parse = parse_board_path, .help = "a board file path" },
	DRALET_FIELDS_END,
};

static int parse(struct config *cfg, char *err, size_t errlen)
{
	struct dralet_decoder d;

	if (!cfg->root)
		return 0;	/* an empty file */
	if (!json_object_is_type(cfg->root, json_type_object))
		return err_printf(err, errlen, -EINVAL, "the configuration must be a mapping");
	decoder_init(&d, "", err, errlen);
	return decoder_object(&d, cfg->root, config_fields, cfg);
}

int config_load(const char *path, struct config **ret_cfg, char *err, size_t errlen)
{
	struct config *cfg = calloc(1, sizeof(*cfg));
	struct err_msg why = { "" };
	int r = 0;

	if (!cfg || !(cfg->sriov = calloc(1, sizeof(*cfg->sriov)))) {
		free(cfg);
		return -ENOMEM;
	}
	cfg->health_interval_s = CONFIG_HEALTH_INTERVAL_DEFAULT_S;
	if (path && (r = trusted_path_check(path, ERR_MSG_ARGS(&why))) < 0)
		err_printf(err, errlen, r, "%s: refusing the configuration: %s", path, why.text);
	else if (path && (r = yaml_load_file(path, &cfg->root, ERR_MSG_ARGS(&why))) < 0)
		err_printf(err, errlen, r, "%s: %s", path, r == -EINVAL ? why.text : strerror(-r));
	else if (path && (r = parse(cfg, ERR_MSG_ARGS(&why))) < 0)
		err_printf(err, errlen, r, "%s: %s", path, why.text);
	if (r < 0) {
		config_free(cfg);
		return r;
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

/* A DRALET_OPTION_TRUSTED_FILE value that is a path: refused unless only root
 * (or the agent's user) can change the file and every directory above it. */
static int parse_trusted_file(const char *text, void *dst, char *why, size_t whylen)
{
	struct err_msg cause;
	int r;

	if (strchr(text, '/') && (r = trusted_path_check(text, ERR_MSG_ARGS(&cause))) < 0)
		return err_printf(why, whylen, r, "refusing %s: %s", text, cause.text);
	return 0;
}

int config_check_options(const struct config_backend *b, const struct dralet_option *known,
			 char *err, size_t errlen)
{
	struct dralet_field *fields;
	struct dralet_decoder d;
	const char *value;
	size_t n = 0;
	int r;

	if (!b->options)
		return 0;
	while (known && known[n].name)
		n++;
	if (!(fields = calloc(n + 1, sizeof(*fields))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		fields[i] = (struct dralet_field){
			.name = known[i].name, .type = DRALET_FIELD_STRING, .size = sizeof(value),
			.parse = known[i].flags & DRALET_OPTION_TRUSTED_FILE
					 ? parse_trusted_file : decoder_borrow_string,
			.help = "a string (quote numbers)",
		};
	decoder_init(&d, "backends", err, errlen);
	decoder_push_key(&d, b->name);
	decoder_push_key(&d, "options");
	r = decoder_object(&d, b->options, fields, &value);
	free(fields);
	return r;
}

const struct config_backend *config_backend(const struct config *cfg, const char *name)
{
	for (size_t i = 0; cfg && i < cfg->n_backends; i++)
		if (!strcmp(cfg->backends[i].name, name))
			return &cfg->backends[i];
	return NULL;
}
