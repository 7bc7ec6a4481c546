/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which VFs are prepared for claims: read from the claims checkpoints
 * (<plugins-dir>/<driver>/checkpoint.json, docs/claims.md). Every entry
 * counts, in any state: a PrepareStarted claim may be changing its VF right
 * now, an UnprepareStarted one still holds it.
 */
#ifndef DRALET_SRIOV_PREPARED_H
#define DRALET_SRIOV_PREPARED_H

#include <stddef.h>

#include "agent/claims/checkpoint.h"
#include "agent/sriov/policy.h"

/* Adds the PCI functions of @ck's claims to @p. 0 or -ENOMEM. */
int sriov_prepared_from_checkpoint(const struct checkpoint *ck, struct sriov_prepared *p);

/*
 * Adds the PCI functions prepared in <@state_dir>/checkpoint.json (a
 * driver's state directory). A missing checkpoint adds nothing; one that
 * cannot be read gives -errno with the reason in @err, since its claims
 * would go unprotected.
 */
int sriov_prepared_load_dir(const char *state_dir, struct sriov_prepared *p, char *err,
			    size_t errlen);

/* The same for the directories <@plugins_dir>/<driver> of @drivers (other
 * plugins keep files of their own there). */
int sriov_prepared_load_drivers(const char *plugins_dir, const char *const *drivers, size_t n,
				struct sriov_prepared *p, char *err, size_t errlen);

#endif
