/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's behaviour for the operations a backend leaves NULL, filled in
 * once when the backend is registered (as rdma-core's verbs_set_ops does), so
 * no caller tests an operation for NULL (include/dralet/backend.h).
 */
#include "agent/core/backend_call.h"

#include <errno.h>

#include <dralet/device.h>

#include "agent/core/backend_ctx.h"

static int keep_table_score(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
			    const struct dralet_pci_id *id, int score)
{
	(void)ctx;
	(void)func;
	(void)id;
	return score;
}

static int no_state(struct dralet_backend_ctx *ctx, void **ret_state)
{
	(void)ctx;
	*ret_state = NULL;
	return 0;
}

static void nothing_to_release(void *state)
{
	(void)state;
}

static void nothing_attached(struct dralet_backend_ctx *ctx, struct dralet_device *dev)
{
	(void)ctx;
	(void)dev;
}

static int takes_no_config(struct dralet_backend_ctx *ctx, const char *config)
{
	(void)config;
	dralet_ctx_error(ctx, "backend %s takes no opaque config", ctx->backend->name);
	return -EOPNOTSUPP;
}

static int cannot_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			  struct dralet_prepare_req *req)
{
	(void)dev;
	(void)req;
	dralet_ctx_error(ctx, "the backend cannot prepare");
	return -EOPNOTSUPP;
}

static int nothing_to_undo(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			   const struct dralet_claim_ref *claim, const struct dralet_undo *undo)
{
	(void)ctx;
	(void)dev;
	(void)claim;
	(void)undo;
	return 0;
}

static int health_as_probed(struct dralet_backend_ctx *ctx, struct dralet_device *dev)
{
	(void)ctx;
	return dralet_device_health(dev);
}

void backend_fill_defaults(const struct dralet_backend *b, struct dralet_backend *out)
{
	*out = *b;
#define DEFAULT(op, fn) \
	if (!out->op)   \
		out->op = fn
	DEFAULT(filter, keep_table_score);
	DEFAULT(init, no_state);
	DEFAULT(fini, nothing_to_release);
	DEFAULT(remove, nothing_attached);
	DEFAULT(validate_config, takes_no_config);
	DEFAULT(prepare, cannot_prepare);
	DEFAULT(unprepare, nothing_to_undo);
	DEFAULT(health, health_as_probed);
#undef DEFAULT
}
