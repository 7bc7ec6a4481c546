/* SPDX-License-Identifier: Apache-2.0 */
/* Calling a backend's operations (backend_call.h). */
#include "agent/core/backend_call.h"

#include <string.h>

#include "agent/core/backend_ctx.h"
#include "agent/lib/err_msg.h"
#include "agent/lib/log.h"
#include "hal/hal.h"

static int entry_score(const struct dralet_pci_id *id, const struct dralet_pci_func *f)
{
	if (id->vendor != DRALET_PCI_ANY && id->vendor != f->vendor_id)
		return 0;
	if (id->device != DRALET_PCI_ANY && id->device != f->device_id)
		return 0;
	if ((f->class_code & id->class_mask) != id->class_code)
		return 0;
	if (id->device != DRALET_PCI_ANY)
		return DRALET_SCORE_DEVICE;
	if (id->vendor != DRALET_PCI_ANY)
		return DRALET_SCORE_VENDOR_CLASS;
	return DRALET_SCORE_CLASS;
}

const struct dralet_pci_id *backend_table_match(const struct dralet_backend *b,
						const struct dralet_pci_func *func, int *ret_score)
{
	const struct dralet_pci_id *best = NULL;
	int best_score = 0;

	for (const struct dralet_pci_id *id = b->ids; id->vendor || id->device || id->class_mask;
	     id++) {
		int score = entry_score(id, func);
		if (score > best_score) {
			best_score = score;
			best = id;
		}
	}
	*ret_score = best_score;
	return best;
}

int backend_call_score(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		       const struct dralet_pci_id **ret_id)
{
	const struct dralet_backend *b = ctx->backend;
	int score;
	const struct dralet_pci_id *id = backend_table_match(b, func, &score);

	*ret_id = NULL;
	if (!id)
		return 0;
	ctx->error[0] = '\0';
	score = b->filter(ctx, func, id, score);
	if (score < 0) {
		log_warn("backend %s: matching %s failed: %s", b->name, func->address,
			 strerror(-score));
		return 0;
	}
	if (score > 0)
		*ret_id = id;
	return score;
}

int backend_call_init(struct dralet_backend_ctx *ctx)
{
	ctx->error[0] = '\0';
	return ctx->backend->init(ctx, &ctx->state);
}

void backend_call_fini(struct dralet_backend_ctx *ctx)
{
	ctx->backend->fini(ctx->state);
	ctx->state = NULL;
}

int backend_call_probe(struct dralet_backend_ctx *ctx, struct device_sink *sink,
		       const struct dralet_pci_func *func, const struct dralet_pci_id *id)
{
	int r;

	ctx->error[0] = '\0';
	ctx->sink = sink;
	r = ctx->backend->probe(ctx, func, id);
	ctx->sink = NULL;
	return r;
}

void backend_call_remove(struct dralet_backend_ctx *ctx, struct dralet_device *dev)
{
	ctx->backend->remove(ctx, dev);
}

/* The failure of a call on a copy of the context: the backend's message, or
 * the errno's text. */
static int failure(const struct dralet_backend_ctx *ctx, int r, char *err, size_t errlen)
{
	if (r >= 0)
		return 0;
	return err_printf(err, errlen, r, "%s", ctx->error[0] ? ctx->error : strerror(-r));
}

/* A private copy of @dev's context with its error cleared. */
static struct dralet_backend_ctx copy_of(const struct dralet_device *dev)
{
	struct dralet_backend_ctx ctx = *dralet_device_ctx(dev);

	ctx.error[0] = '\0';
	ctx.health_cause = NULL;
	return ctx;
}

static void lock(pthread_mutex_t *m)
{
	if (m)
		pthread_mutex_lock(m);
}

static void unlock(pthread_mutex_t *m)
{
	if (m)
		pthread_mutex_unlock(m);
}

int backend_call_validate(const struct dralet_device *dev, const char *config, char *err,
			  size_t errlen)
{
	struct dralet_backend_ctx ctx = copy_of(dev);

	return failure(&ctx, ctx.backend->validate_config(&ctx, config), err, errlen);
}

int backend_call_prepare(struct dralet_device *dev, pthread_mutex_t *m,
			 struct dralet_prepare_req *req, char *err, size_t errlen)
{
	struct dralet_backend_ctx ctx = copy_of(dev);
	int r;

	lock(m);
	r = ctx.backend->prepare(&ctx, dev, req);
	unlock(m);
	if (ctx.node_changed)
		device_note_node_changed(dev);
	return failure(&ctx, r, err, errlen);
}

int backend_call_unprepare(struct dralet_device *dev, pthread_mutex_t *m,
			   const struct dralet_claim_ref *claim, const struct dralet_undo *undo,
			   char *err, size_t errlen)
{
	struct dralet_backend_ctx ctx = copy_of(dev);
	int r;

	lock(m);
	r = ctx.backend->unprepare(&ctx, dev, claim, undo);
	unlock(m);
	if (ctx.node_changed)
		device_note_node_changed(dev);
	return failure(&ctx, r, err, errlen);
}

int backend_call_health(struct dralet_device *dev, pthread_mutex_t *m, char *why,
			size_t why_size)
{
	struct dralet_backend_ctx ctx = copy_of(dev);
	int r;

	lock(m);
	r = ctx.backend->health(&ctx, dev);
	device_set_backend_health_cause(dev, r == DRALET_HEALTH_UNHEALTHY ? ctx.health_cause : NULL);
	unlock(m);
	return err_printf(why, why_size, r, "%s", r == DRALET_HEALTH_HEALTHY ? ""
						 : ctx.error[0] ? ctx.error
						 : r < 0 ? strerror(-r) : "");
}
