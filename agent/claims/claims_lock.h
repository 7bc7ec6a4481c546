/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The per-operation lock of one driver's claims state, shared by every dralet
 * on the node: an exclusive flock on <state_dir>/checkpoint.lock, taken for
 * one operation (a prepare or unprepare, the start's recovery, an SR-IOV
 * apply) and released after it, so that the two instances of a rolling
 * update (--pod-uid) serve at once and never change the checkpoint, the CDI
 * specs or sriov_numvfs at the same time (the upstream helper's
 * kubeletplugin.RollingUpdate contract: docs/operations.md, "Rolling
 * update"). flock locks belong to an open file: two claims_lock objects on one
 * directory exclude each other even inside one process.
 *
 * The file also carries a generation: a holder that may change the
 * checkpoint bumps it when it takes the lock (before any write, so a holder
 * killed after writing is still noticed), and the next holder learns from
 * it whether the checkpoint changed since it last held the lock, without
 * reading the checkpoint (claims_lock_take_turn). The value is text, one
 * decimal number; it is not fsynced (after a reboot every start reads the
 * checkpoint anyway).
 *
 * Not thread-safe: one owner drives an object (the engine's loop thread).
 */
#ifndef DRALET_CLAIMS_LOCK_H
#define DRALET_CLAIMS_LOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLAIMS_LOCK_FILE_NAME "checkpoint.lock"

struct claims_lock;

/* Opens (creating, mode 0600) <@state_dir>/checkpoint.lock, the directory
 * too (0750, as the engine makes it). Nothing is locked yet. *ret_lock:
 * free with claims_lock_free (which releases the lock when held). 0 or
 * -errno. */
int claims_lock_open(const char *state_dir, struct claims_lock **ret_lock);
void claims_lock_free(struct claims_lock *l);

/* Takes the lock without waiting: 0, -EWOULDBLOCK while another open file
 * holds it, or another -errno. Taking it when held already is 0. */
int claims_lock_try(struct claims_lock *l);
/* Takes the lock, waiting as long as it takes (the start, the CLI). */
int claims_lock_wait(struct claims_lock *l);
void claims_lock_release(struct claims_lock *l);
bool claims_lock_held(const struct claims_lock *l);

/*
 * Lock held, for a holder that may change the checkpoint: *ret_changed says
 * whether another holder may have changed it since this object last took a
 * turn (always true for the first turn), and the generation is bumped for
 * the others. 0 or -errno (the file cannot be read or written; then
 * *ret_changed is true: read the checkpoint again to be safe).
 */
int claims_lock_take_turn(struct claims_lock *l, bool *ret_changed);

/* ---- pure core (tests) ---- */

/* The generation written in @len bytes of @text: 0 for an empty or
 * unreadable one (any value differs from a bumped one, so a torn file only
 * costs a read of the checkpoint). */
uint64_t claims_lock_parse_generation(const char *text, size_t len);
/* Whether the checkpoint may have changed since @mine (the generation this
 * object left; 0: it never took a turn) given @in_file. */
bool claims_lock_changed_since(uint64_t mine, uint64_t in_file);

/*
 * Several drivers' locks at once (an SR-IOV apply reads every driver's
 * checkpoint): taken in the order of their paths, so two takers never wait
 * for each other crosswise. With @wait false, -EWOULDBLOCK when one is busy
 * (none is held then). *ret_locks (claims_locks_free: released and freed)
 * has @n entries.
 */
int claims_locks_take(const char *const *state_dirs, size_t n, bool wait,
		      struct claims_lock ***ret_locks);
void claims_locks_free(struct claims_lock **locks, size_t n);

#endif
