/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The claims engine of one DRA driver: NodePrepareResources and
 * NodeUnprepareResources without the transport (docs/claims.md).
 *
 * Per claim of a call: prepared claims are answered from the checkpoint
 * (their CDI spec written again when it went missing), others are read from
 * the store, checked (UID, allocation), planned (claim_plan.h), their
 * devices resolved and reserved (a device in use by another claim is an
 * error; adminAccess never takes a device exclusively), their configs
 * validated by the owning backends, and then prepared on a worker thread:
 * PrepareStarted on disk, each device prepared in order under its device
 * lock, the CDI spec written, PrepareCompleted on disk. A failure undoes the
 * devices already prepared and leaves no spec and no entry. Unprepare is the
 * mirror image and succeeds for claims it does not know.
 *
 * Errors are per claim and name the claim and the cause. Calls on one claim
 * UID run one after the other; different claims run in parallel (libuv's
 * thread pool: set UV_THREADPOOL_SIZE before the loop starts). A call whose
 * client went away still finishes (or rolls back) and records the outcome.
 * Another dralet on the same state directory (a rolling update's other
 * instance) runs its operations while this engine runs none: the lock across
 * instances (claims_lock.h, engine_lock.c) is held while any operation of
 * the engine runs, and the checkpoint read again when the other changed it.
 *
 * Threading: every function here runs on the loop thread, callbacks too,
 * except claims_engine_check_health.
 */
#ifndef DRALET_CLAIMS_ENGINE_H
#define DRALET_CLAIMS_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "agent/lib/prom_text.h"

struct device_set;
struct dralet_device;
struct store;
struct claims_engine;

struct claims_engine_config {
	uv_loop_t *loop;
	struct store *store;		/* borrowed: get_claim, record_event */
	const char *driver;		/* DRA driver name */
	const char *pool;		/* the node's pool (the node name) */
	/* the driver's devices (agent/core/device_set.h): the engine takes a
	 * reference, dropped when a rediscovery's set replaces it or at free */
	struct device_set *devices;
	const char *state_dir;		/* <plugins-dir>/<driver>: checkpoint.json */
	const char *cdi_dir;		/* where CDI specs go (/var/run/cdi) */
	const char *boot_id;		/* the node's boot ID, "" when unknown */
	/* A prepare or unprepare changed what discovery publishes
	 * (dralet_ctx_node_changed): called on the loop thread when the claim's
	 * operation is over. NULL: nobody asks. */
	void (*node_changed)(void *userdata);
	void *userdata;
};

/* Event reasons (docs/operations.md, "Events"). */
#define CLAIMS_EVENT_CHECKPOINT_UNREADABLE "CheckpointUnreadable"	/* Warning, the Node */
#define CLAIMS_EVENT_PREPARE_FAILED "PrepareFailed"	/* Warning, the ResourceClaim */

/* What one start did with the checkpoint (logged by the engine as well). */
struct claims_recovery_stats {
	bool corrupt;			/* the checkpoint was moved aside and rebuilt */
	bool boot_changed;
	unsigned kept, rewritten, rewrite_failed, rolled_back, unprepared, dropped, orphans_removed;
	unsigned rebuilt;		/* corrupt: claims rebuilt from their CDI specs */
	unsigned kept_unaccounted;	/* corrupt: specs kept that nothing was rebuilt from */
};

/*
 * Creates the engine: creates the state and CDI directories, loads the
 * checkpoint and recovers (docs/claims.md, "Recovery"), which may call
 * backends and write files, so call it before serving. The recovery, like
 * every prepare and unprepare later, holds the driver's lock across
 * instances (claims_lock.h: an flock on <state_dir>/checkpoint.lock for
 * one operation at a time, the checkpoint read again under it when another
 * dralet changed it), so the two instances of a rolling update serve at
 * once; the start waits while another instance's operation runs. A corrupt checkpoint
 * is moved aside with a loud error and a Warning Event about the Node
 * (reason CLAIMS_EVENT_CHECKPOINT_UNREADABLE, through the store's
 * record_event), and
 * the claims are rebuilt from the CDI specs on disk
 * (recovery_plan_unreadable); nothing is removed. @ret_stats
 * may be NULL. Everything in @cfg is copied (the device set is referenced).
 */
int claims_engine_new(const struct claims_engine_config *cfg, struct claims_engine **ret_engine,
		      struct claims_recovery_stats *ret_stats);

/* Frees an idle engine (see claims_engine_shutdown). */
void claims_engine_free(struct claims_engine *e);

struct claims_ref {
	const char *namespace_;
	const char *name;
	const char *uid;
};

struct claims_device_result {
	const char *pool;
	const char *device;
	const char *share_id;	/* the allocation's shareID (a shared device), or NULL */
	const char *const *request_names;	/* base request names ("req" of "req/sub") */
	size_t n_request_names;
	const char *const *cdi_ids;
	size_t n_cdi_ids;
};

struct claims_result {
	const char *uid;
	const char *error;		/* NULL on success */
	const struct claims_device_result *devices;
	size_t n_devices;
};

/* Results in request order, borrowed for the duration of the callback. */
typedef void (*claims_done_cb)(void *userdata, const struct claims_result *results, size_t n);

/*
 * Starts a prepare (or unprepare) of @n claims (copied). @cb runs once, when
 * every claim is done; it may run before the function returns (nothing to do,
 * or the engine is shutting down). Returns 0, or -ENOMEM (then @cb never runs).
 */
int claims_prepare(struct claims_engine *e, const struct claims_ref *claims, size_t n,
		   claims_done_cb cb, void *userdata);
int claims_unprepare(struct claims_engine *e, const struct claims_ref *claims, size_t n,
		     claims_done_cb cb, void *userdata);

/*
 * Unprepares @n claims found stale (stale_check.h) the way claims_unprepare
 * does: the same per-UID queue, undo, CDI spec and metadata removal and
 * checkpoint write. Unlike the kubelet's unprepare it writes no claim device
 * status (the ResourceClaim is gone or another's) and leaves the kubelet
 * call metrics alone. A later NodeUnprepareResources of these claims
 * succeeds with nothing to do. Returns as claims_unprepare.
 */
int claims_collect(struct claims_engine *e, const struct claims_ref *claims, size_t n,
		   claims_done_cb cb, void *userdata);

/* A checkpointed claim (owned strings; "" for an unknown namespace/name). */
struct claims_entry {
	char *uid, *namespace_, *name;
};

/* The claims in the checkpoint now, in its order: *ret_entries
 * (claims_entries_free) and *ret_n. 0 or -ENOMEM. Loop thread. */
int claims_engine_entries(struct claims_engine *e, struct claims_entry **ret_entries,
			  size_t *ret_n);
void claims_entries_free(struct claims_entry *entries, size_t n);

/*
 * Refuses new calls (their claims get an error) and runs @cb once no call is
 * in flight any more (maybe before returning). Then free the engine.
 */
void claims_engine_shutdown(struct claims_engine *e, void (*cb)(void *userdata), void *userdata);

/* True when no prepare or unprepare call is in flight (loop thread). */
bool claims_engine_idle(const struct claims_engine *e);

/*
 * Replaces the driver's devices after a rediscovery: the engine takes a
 * reference to @set and drops the one to its old set. Only while idle
 * (-EBUSY otherwise), on the loop thread; the reservations of prepared
 * claims carry over by device name. -ENOMEM: nothing changes (the engine
 * keeps its set).
 */
int claims_engine_set_devices(struct claims_engine *e, struct device_set *set);

/*
 * Worker threads (the one function here that is not loop-only): runs the
 * owning backend's health op on @dev, one of the engine's devices, under
 * its device lock, so it never overlaps a prepare or unprepare of that
 * device (backend.h). Returns the enum dralet_health, -ENODEV (not one of
 * the engine's devices) or the op's -errno; a backend without a health op
 * keeps the health its probe set. The devices must not be replaced while it
 * runs (claims_engine_set_devices).
 */
int claims_engine_check_health(struct claims_engine *e, struct dralet_device *dev, char *why,
			       size_t why_size);

/*
 * After a start that found the checkpoint unreadable: writes the note the
 * driver's health answers carry (docs/health.md, "After an unreadable
 * checkpoint") into @buf and returns true while a claim rebuilt then is
 * still prepared or a spec was kept that no claim could be rebuilt from;
 * otherwise false and "". Loop thread.
 */
bool claims_engine_recovery_note(struct claims_engine *e, char *buf, size_t size);

/* Claims in the checkpoint / checkpoint files written (tests, metrics). */
size_t claims_engine_n_claims(struct claims_engine *e);

/* What the engine measured since it started (loop thread): the time of each
 * claim's prepare and unprepare (from the kubelet's call to the answer),
 * successful or not, and how many failed. */
struct claims_engine_metrics {
	struct prom_histogram prepare_seconds, unprepare_seconds;
	uint64_t prepares_failed, unprepares_failed;
};
const struct claims_engine_metrics *claims_engine_metrics(const struct claims_engine *e);
uint64_t claims_engine_checkpoint_writes(struct claims_engine *e);
/* The checkpoint writes' durations (a copy; any thread). */
void claims_engine_checkpoint_write_seconds(struct claims_engine *e, struct prom_histogram *ret);

#endif
