/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reloading the configuration file while the daemon runs: only its SR-IOV
 * policies take effect without a restart. A reload that finds the text
 * unchanged (the file touched, or its directory changed around it) does
 * nothing unless forced (SIGHUP); one that fails to load is logged and the
 * policies in force stay.
 *
 * Loop thread only.
 */
#ifndef DRALET_DAEMON_CONFIG_RELOAD_H
#define DRALET_DAEMON_CONFIG_RELOAD_H

#include <stdbool.h>

struct config_reload;
struct sriov_policies;

/* Remembers the text of @path now (copied; it was loaded at start).
 * 0 or -ENOMEM. */
int config_reload_new(const char *path, struct config_reload **ret);
void config_reload_free(struct config_reload *r);

/*
 * Loads the file again. Returns true with the new policies in *ret_pol
 * (owned by @r, valid until the next reload that returns true or the free),
 * false when nothing changed or the load failed (logged).
 */
bool config_reload_run(struct config_reload *r, bool forced, const struct sriov_policies **ret_pol);

#endif
