/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The per-backend switch for shared devices (consumable capacity,
 * include/dralet/sharing.h): backend option "sharing", "true" (the default)
 * or "false". Backends that publish shareable devices declare it in their
 * options table with SHARING_OPTION.
 */
#ifndef DRALET_BACKENDS_SHARING_OPTION_H
#define DRALET_BACKENDS_SHARING_OPTION_H

#include <stdbool.h>

#include <dralet/backend.h>

#define SHARING_OPTION { "sharing", 0 }

/* False when the option says "false"; an unknown value warns once per call
 * and also turns sharing off (the exclusive behaviour is the safe one). */
bool sharing_enabled(struct dralet_backend_ctx *ctx);

#endif
