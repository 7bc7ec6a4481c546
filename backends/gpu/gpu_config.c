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
 *   memoryPartition: NPS1 | NPS4 ...         (optional; AMD Instinct only:
 *                                             the mode the claim needs)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <dralet/options.h>

#include "gpu.h"

static const char *const interval_names[] = { "Default", "Short", "Medium", "Long", NULL };

const char *gpu_timeslice_name(enum gpu_timeslice t)
{
	return t >= GPU_TIMESLICE_DEFAULT && t <= GPU_TIMESLICE_LONG ? interval_names[t] : "None";
}

/* Reports @msg as the reason the parameters are invalid; returns @r. */
static int invalid(struct dralet_backend_ctx *ctx, int r, const char *msg)
{
	dralet_ctx_error(ctx, "invalid %s parameters: %s", GPU_API_VERSION, msg);
	return r;
}

static int parse_strategy(const char *text, void *dst, char *why, size_t whylen)
{
	if (!strcmp(text, "TimeSlicing"))
		return 0;
	snprintf(why, whylen, !strcmp(text, "MPS")
		 ? "sharing strategy \"%.64s\" is not supported by dralet (supported: TimeSlicing)"
		 : "unknown sharing strategy \"%.64s\" (supported: TimeSlicing)", text);
	return -EINVAL;
}

static const struct dralet_field time_slicing_fields[] = {
	{ "interval", DRALET_FIELD_ENUM, DRALET_AT(struct gpu_config, timeslice),
	  .names = interval_names, DRALET_SEEN(struct gpu_config, interval_given) },
	DRALET_FIELDS_END,
};

static const struct dralet_field sharing_fields[] = {
	{ "strategy", DRALET_FIELD_STRING, .required = true, .parse = parse_strategy },
	{ "timeSlicingConfig", DRALET_FIELD_OBJECT, .fields = time_slicing_fields },
	DRALET_FIELDS_END,
};

static const struct dralet_field gpu_fields[] = {
	{ "sharing", DRALET_FIELD_OBJECT, .fields = sharing_fields,
	  DRALET_SEEN(struct gpu_config, sharing) },
	{ "memoryPartition", DRALET_FIELD_STRING, DRALET_AT(struct gpu_config, memory_partition) },
	DRALET_FIELDS_END,
};

static int parse(struct dralet_backend_ctx *ctx, const char *text, bool amd,
		 struct gpu_config *ret)
{
	static const char *const kinds[] = { "GpuConfig", "MigDeviceConfig", NULL };
	struct gpu_config cfg = { .kind = GPU_CONFIG_NONE, .timeslice = GPU_TIMESLICE_NONE };
	char own_api[128], err[400];
	const char *const api_versions[] = { GPU_API_VERSION, own_api, NULL };
	const struct dralet_config_type type = { api_versions, kinds, gpu_fields };
	int kind, r;

	if (!text || !*text) {
		*ret = cfg;
		return 0;
	}
	snprintf(own_api, sizeof(own_api), "%s/v1alpha1",
		 dralet_ctx_driver(ctx) ? dralet_ctx_driver(ctx) : GPU_DRIVER_DEFAULT);
	if ((r = dralet_config_decode(text, &type, &cfg, &kind, err, sizeof(err))) < 0)
		return r == -ENOMEM ? r : invalid(ctx, -EINVAL, err);
	cfg.kind = kind == 1 ? GPU_CONFIG_MIG : GPU_CONFIG_GPU;
	if (cfg.sharing && !cfg.interval_given)
		cfg.timeslice = GPU_TIMESLICE_DEFAULT;
	if (cfg.kind == GPU_CONFIG_MIG && cfg.interval_given)
		return invalid(ctx, -EINVAL, "MigDeviceConfig.sharing.timeSlicingConfig: is not "
			       "supported for MIG devices (their time-slice cannot be changed)");
	if (cfg.memory_partition[0] && (!amd || cfg.kind == GPU_CONFIG_MIG))
		return invalid(ctx, -EINVAL, "memoryPartition: applies to AMD Instinct GPUs only");
	*ret = cfg;
	return 0;
}

int gpu_config_parse(struct dralet_backend_ctx *ctx, const char *text, struct gpu_config *ret)
{
	return parse(ctx, text, false, ret);
}

int gpu_config_parse_amd(struct dralet_backend_ctx *ctx, const char *text,
			 struct gpu_config *ret)
{
	return parse(ctx, text, true, ret);
}

static int validate_no_sharing(struct dralet_backend_ctx *ctx, const char *config, bool amd)
{
	struct gpu_config cfg;
	int r = parse(ctx, config, amd, &cfg);

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

int gpu_validate_config_no_sharing(struct dralet_backend_ctx *ctx, const char *config)
{
	return validate_no_sharing(ctx, config, false);
}

int gpu_validate_config_amd(struct dralet_backend_ctx *ctx, const char *config)
{
	return validate_no_sharing(ctx, config, true);
}
