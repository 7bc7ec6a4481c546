/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The in-tree backends, in tie-break order: vendor-specific backends before
 * the generic ones of their family.
 */
#include "backends/registry.h"

const struct dralet_backend *const registry_builtin[] = {
	NULL,
};
