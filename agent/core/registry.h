/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The backend registry: backends loaded from --backend-dir (shared objects
 * exporting dralet_backend_export_v1) first, then the static list of in-tree
 * backends. That order is the tie-break of the ownership rule in
 * include/dralet/backend.h.
 */
#ifndef DRALET_REGISTRY_H
#define DRALET_REGISTRY_H

#include <stddef.h>
#include <dralet/backend.h>

struct registry;

/* Called once per shared object or backend that cannot be used. */
typedef void (*registry_error_fn)(void *userdata, const char *message);

/* Builds the registry; @backend_dir may be NULL. Unusable shared objects are
 * reported through @on_error and skipped. The registry keeps its own copy of
 * each backend's ops table with every NULL operation replaced by the agent's
 * default (backend_fill_defaults): what registry_get/registry_find return. */
int registry_new(const char *backend_dir, registry_error_fn on_error, void *userdata,
		 struct registry **ret_reg);
/* Same with another in-tree list (NULL-terminated): for tests and tools. */
int registry_new_with(const struct dralet_backend *const *builtin, const char *backend_dir,
		      registry_error_fn on_error, void *userdata, struct registry **ret_reg);
void registry_free(struct registry *reg);

size_t registry_count(const struct registry *reg);
const struct dralet_backend *registry_get(const struct registry *reg, size_t i);
const struct dralet_backend *registry_find(const struct registry *reg, const char *name);

/* The in-tree backends, NULL-terminated. */
extern const struct dralet_backend *const registry_builtin[];

#endif
