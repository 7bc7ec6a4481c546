/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The per-backend switch for shared devices (consumable capacity,
 * include/dralet/sharing.h): backend option "sharing", "true" or "false"
 * (the default). Off by default because the scheduler (k8s.io/dynamic-
 * resource-allocation v0.37.2, allocateDevice) makes an adminAccess request
 * consume capacity too: on a shareable device a workload that took it all
 * would lock out admin-access monitoring (docs/sharing.md). Backends that
 * publish shareable devices declare it in their options table with
 * SHARING_OPTION.
 */
#ifndef DRALET_BACKENDS_SHARING_OPTION_H
#define DRALET_BACKENDS_SHARING_OPTION_H

#include <stdbool.h>

#include <dralet/backend.h>

#define SHARING_OPTION { "sharing", 0 }

/* True only when the option says "true"; an unknown value warns once per
 * call and also leaves sharing off (the exclusive behaviour is the safe one). */
bool sharing_enabled(struct dralet_backend_ctx *ctx);

#endif
