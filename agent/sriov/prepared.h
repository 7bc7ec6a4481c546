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

struct claims_lock;

/*
 * sriov_prepared_load_drivers under the drivers' claims locks
 * (agent/claims/claims_lock.h, taken in a fixed order): while they are held
 * no dralet on the node prepares or unprepares a claim of those drivers, so
 * the VFs read are all the prepared ones (a rolling update's other instance's
 * too) and an SR-IOV apply made meanwhile is the node's only one. With @wait
 * false, -EWOULDBLOCK while another dralet's operation runs (nothing is held
 * then: try again). On success *ret_locks holds the @n locks: release them
 * with claims_locks_free(*ret_locks, @n) after the apply. On failure nothing
 * is held.
 */
int sriov_prepared_lock_drivers(const char *plugins_dir, const char *const *drivers, size_t n,
				bool wait, struct claims_lock ***ret_locks,
				struct sriov_prepared *p, char *err, size_t errlen);

#endif
