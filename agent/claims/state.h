/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The prepared-claims state of one driver: the checkpoint in memory, shared
 * by the loop thread and the prepare workers under one mutex, and made
 * durable with group commit: claims_state_sync() returns once a file that
 * contains every change made before the call is on disk; concurrent callers
 * share one write.
 *
 * Rules: read or change the checkpoint only between claims_state_lock()
 * and claims_state_unlock(), and call claims_state_changed() under the lock
 * after a change, naming the entry changed. A claim entry is changed only by the operation that holds
 * its UID (the engine runs one operation per UID at a time), so that
 * operation may read its own entry without the lock.
 */
#ifndef DRALET_CLAIMS_STATE_H
#define DRALET_CLAIMS_STATE_H

#include <stdint.h>

#include "agent/claims/checkpoint.h"
#include "agent/lib/prom_text.h"
#include "agent/lib/atomic_file.h"

struct claims_state;

/* Takes ownership of @ck; @dir is where checkpoint.json lives (copied);
 * @sync: what of each write must survive a power loss (engine.c says which). */
int claims_state_new(const char *dir, struct checkpoint *ck, enum atomic_file_sync sync,
		     struct claims_state **ret_state);
void claims_state_free(struct claims_state *s);

void claims_state_lock(struct claims_state *s);
void claims_state_unlock(struct claims_state *s);
/* The checkpoint (lock held). */
struct checkpoint *claims_state_checkpoint(struct claims_state *s);
/* Marks a change of entry @c: its content, or its coming or going (lock
 * held). NULL: the checkpoint as a whole (every entry is written anew). */
void claims_state_changed(struct claims_state *s, struct ckpt_claim *c);

/* Replaces the checkpoint with @ck (taken over), just read from the file
 * another dralet wrote (claims_lock.h): it counts as durable. Only while no
 * operation holds an entry of the old one and nothing is being written. */
void claims_state_replace(struct claims_state *s, struct checkpoint *ck);

/* Blocks until every change made so far is in the file, written as the
 * @sync given to claims_state_new says (lock NOT held).
 * 0, or the -errno of the write that should have carried them. */
int claims_state_sync(struct claims_state *s);

/* Number of checkpoint files written so far (tests, benchmarks). */
uint64_t claims_state_writes(struct claims_state *s);

/* The time each checkpoint write took, from the temporary file's creation
 * to the rename being durable (a copy, taken under the lock; the writer
 * observes under the lock it already holds). */
void claims_state_write_seconds(struct claims_state *s, struct prom_histogram *ret);

#endif
