/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one place the agent calls a backend's operations (include/dralet/
 * backend.h). Every call clears the context's error first. The calls made on
 * worker threads (validate, prepare, unprepare, health) run on a private copy
 * of the device's context, so calls on other devices share nothing, and
 * prepare, unprepare and health hold the device's lock when one is given.
 *
 * The ops table must have been through backend_fill_defaults (the registry
 * and the test harness do it when they take a backend): no operation is NULL
 * and nothing here tests for one.
 */
#ifndef DRALET_BACKEND_CALL_H
#define DRALET_BACKEND_CALL_H

#include <pthread.h>
#include <stddef.h>

#include <dralet/backend.h>

struct device_sink;

/* Copies @b into @out with every NULL operation replaced by the agent's
 * default (the defaults are documented in include/dralet/backend.h). */
void backend_fill_defaults(const struct dralet_backend *b, struct dralet_backend *out);

/* The best entry of @b's match table for @func (the highest score, the first
 * on a tie) and its score in *ret_score; NULL (and 0) when none matches. */
const struct dralet_pci_id *backend_table_match(const struct dralet_backend *b,
						const struct dralet_pci_func *func, int *ret_score);

/* Scores @func for ctx's backend: the match table, then the filter with the
 * entry that matched. Returns the score (0: not the backend's; a failing
 * filter is logged and scores 0) and that entry in *ret_id (NULL with 0). */
int backend_call_score(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		       const struct dralet_pci_id **ret_id);

/* init into ctx->state; fini releases it (only after an init that worked). */
int backend_call_init(struct dralet_backend_ctx *ctx);
void backend_call_fini(struct dralet_backend_ctx *ctx);

/* Probes @func (matched by entry @id) on @ctx itself, the devices going to
 * @sink; the devices keep @ctx for their later calls. */
int backend_call_probe(struct dralet_backend_ctx *ctx, struct device_sink *sink,
		       const struct dralet_pci_func *func, const struct dralet_pci_id *id);
void backend_call_remove(struct dralet_backend_ctx *ctx, struct dralet_device *dev);

/*
 * The operations on a probed device, each on a copy of its context. They
 * return 0 or the backend's -errno; on failure @err gets the backend's
 * message (dralet_ctx_error), or the errno's text when it gave none.
 * @lock may be NULL (no other thread calls the device).
 */
int backend_call_validate(const struct dralet_device *dev, const char *config, char *err,
			  size_t errlen);
int backend_call_prepare(struct dralet_device *dev, pthread_mutex_t *lock,
			 struct dralet_prepare_req *req, char *err, size_t errlen);
int backend_call_unprepare(struct dralet_device *dev, pthread_mutex_t *lock,
			   const struct dralet_claim_ref *claim, const struct dralet_undo *undo,
			   char *err, size_t errlen);
/* Returns the device's current enum dralet_health, or -errno. Unless it is
 * healthy, @why (NUL-terminated, may be empty) says why: what the backend said
 * with dralet_ctx_error, or the errno's text. */
int backend_call_health(struct dralet_device *dev, pthread_mutex_t *lock, char *why,
			size_t why_size);

#endif
