/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The GPU family's opaque configuration, decoded strictly: every field is
 * known or the claim is rejected with the field's path, so a typo never
 * silently falls back to a default.
 *
 *   apiVersion: gpu.dralet.dev/v1alpha1     (or <driver name>/v1alpha1)
 *   kind: GpuConfig | MigDeviceConfig
 *   sharing:                                 (optional)
 *     strategy: TimeSlicing
 *     timeSlicingConfig:                     (optional)
 *       interval: Default | Short | Medium | Long
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "gpu.h"

static const char *const interval_names[] = { "Default", "Short", "Medium", "Long" };

const char *gpu_timeslice_name(enum gpu_timeslice t)
{
	return t >= GPU_TIMESLICE_DEFAULT && t <= GPU_TIMESLICE_LONG ? interval_names[t] : "None";
}

static int fail(struct dralet_backend_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct dralet_backend_ctx *ctx, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	dralet_ctx_error(ctx, "invalid %s parameters: %s", GPU_API_VERSION, msg);
	return -EINVAL;
}

/* Rejects keys of @obj not in @known (NULL-terminated); @where names @obj. */
static int only_known(struct dralet_backend_ctx *ctx, struct json_object *obj,
		      const char *const *known, const char *where)
{
	json_object_object_foreach(obj, key, val) {
		bool ok = false;
		(void)val;
		for (size_t i = 0; known[i] && !ok; i++)
			ok = !strcmp(key, known[i]);
		if (!ok)
			return fail(ctx, "unknown field \"%s%s\"", where, key);
	}
	return 0;
}

static int get_string(struct dralet_backend_ctx *ctx, struct json_object *obj, const char *key,
		      const char *where, bool required, const char **ret)
{
	struct json_object *v;
	char path[128];

	*ret = NULL;
	snprintf(path, sizeof(path), "%s%s", where, key);
	if (!json_object_object_get_ex(obj, key, &v) || json_object_is_type(v, json_type_null)) {
		if (required)
			return fail(ctx, "field \"%s\" is required", path);
		return 0;
	}
	if (!json_object_is_type(v, json_type_string))
		return fail(ctx, "field \"%s\" must be a string", path);
	*ret = json_object_get_string(v);
	return 0;
}

static int get_object(struct dralet_backend_ctx *ctx, struct json_object *obj, const char *key,
		      const char *where, struct json_object **ret)
{
	struct json_object *v;

	*ret = NULL;
	if (!json_object_object_get_ex(obj, key, &v) || json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_object))
		return fail(ctx, "field \"%s%s\" must be an object", where, key);
	*ret = v;
	return 0;
}

static int parse_sharing(struct dralet_backend_ctx *ctx, struct json_object *sharing,
			 struct gpu_config *cfg)
{
	static const char *const sharing_keys[] = { "strategy", "timeSlicingConfig", NULL };
	static const char *const ts_keys[] = { "interval", NULL };
	struct json_object *ts;
	const char *strategy, *interval;
	int r;

	if ((r = only_known(ctx, sharing, sharing_keys, "sharing.")) < 0 ||
	    (r = get_string(ctx, sharing, "strategy", "sharing.", true, &strategy)) < 0 ||
	    (r = get_object(ctx, sharing, "timeSlicingConfig", "sharing.", &ts)) < 0)
		return r;
	if (strcmp(strategy, "TimeSlicing")) {
		if (!strcmp(strategy, "MPS"))
			return fail(ctx, "sharing strategy \"%s\" is not supported by dralet%s",
				    strategy, " (supported: TimeSlicing)");
		return fail(ctx, "unknown sharing strategy \"%s\"%s", strategy,
			    " (supported: TimeSlicing)");
	}
	cfg->sharing = true;
	cfg->timeslice = GPU_TIMESLICE_DEFAULT;
	if (!ts)
		return 0;
	if ((r = only_known(ctx, ts, ts_keys, "sharing.timeSlicingConfig.")) < 0 ||
	    (r = get_string(ctx, ts, "interval", "sharing.timeSlicingConfig.", false, &interval)) < 0)
		return r;
	if (!interval)
		return 0;
	for (int i = 0; i < 4; i++)
		if (!strcmp(interval, interval_names[i])) {
			cfg->timeslice = (enum gpu_timeslice)i;
			cfg->interval_given = true;
			return 0;
		}
	return fail(ctx, "unknown time-slice interval \"%s\"%s", interval,
		    " (one of Default, Short, Medium, Long)");
}

int gpu_config_parse(struct dralet_backend_ctx *ctx, const char *text, struct gpu_config *ret)
{
	static const char *const top_keys[] = { "apiVersion", "kind", "sharing", NULL };
	struct gpu_config cfg = { .kind = GPU_CONFIG_NONE, .timeslice = GPU_TIMESLICE_NONE };
	struct json_tokener *tok;
	struct json_object *root, *sharing;
	const char *api, *kind;
	char own_api[128];
	int r;

	if (!text || !*text) {
		*ret = cfg;
		return 0;
	}
	tok = json_tokener_new();
	if (!tok)
		return -ENOMEM;
	root = json_tokener_parse_ex(tok, text, (int)strlen(text));
	if (!root || json_tokener_get_error(tok) != json_tokener_success ||
	    tok->char_offset != (int)strlen(text)) {
		json_tokener_free(tok);
		json_object_put(root);
		return fail(ctx, "not a JSON object");
	}
	json_tokener_free(tok);
	if (!json_object_is_type(root, json_type_object)) {
		json_object_put(root);
		return fail(ctx, "not a JSON object");
	}
	snprintf(own_api, sizeof(own_api), "%s/v1alpha1",
		 dralet_ctx_driver(ctx) ? dralet_ctx_driver(ctx) : GPU_DRIVER_DEFAULT);
	if ((r = only_known(ctx, root, top_keys, "")) < 0 ||
	    (r = get_string(ctx, root, "apiVersion", "", true, &api)) < 0 ||
	    (r = get_string(ctx, root, "kind", "", true, &kind)) < 0 ||
	    (r = get_object(ctx, root, "sharing", "", &sharing)) < 0)
		goto out;
	if (strcmp(api, GPU_API_VERSION) && strcmp(api, own_api)) {
		r = fail(ctx, "apiVersion \"%s\" is not %s", api, GPU_API_VERSION);
		goto out;
	}
	if (!strcmp(kind, "GpuConfig"))
		cfg.kind = GPU_CONFIG_GPU;
	else if (!strcmp(kind, "MigDeviceConfig"))
		cfg.kind = GPU_CONFIG_MIG;
	else {
		r = fail(ctx, "unknown kind \"%s\"%s", kind, " (GpuConfig or MigDeviceConfig)");
		goto out;
	}
	if (sharing && (r = parse_sharing(ctx, sharing, &cfg)) < 0)
		goto out;
	if (cfg.kind == GPU_CONFIG_MIG && cfg.interval_given) {
		r = fail(ctx, "%s: %s", "MigDeviceConfig",
			 "sharing.timeSlicingConfig is not supported for MIG devices (their "
			 "time-slice cannot be changed)");
		goto out;
	}
	*ret = cfg;
	r = 0;
out:
	json_object_put(root);
	return r;
}

int gpu_validate_config_no_sharing(struct dralet_backend_ctx *ctx, const char *config)
{
	struct gpu_config cfg;
	int r = gpu_config_parse(ctx, config, &cfg);

	if (r < 0)
		return r;
	if (cfg.kind == GPU_CONFIG_MIG) {
		dralet_ctx_error(ctx, "MigDeviceConfig applies to NVIDIA MIG devices only");
		return -EINVAL;
	}
	if (cfg.sharing) {
		dralet_ctx_error(ctx, "sharing strategy TimeSlicing is not supported by this device "
				      "(only NVIDIA GPUs can be time-sliced)");
		return -EOPNOTSUPP;
	}
	return 0;
}
