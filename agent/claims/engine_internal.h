/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Inside the claims engine: shared by engine.c (the loop side: calls,
 * per-UID queues, reservations), engine_work.c (the worker side: backend
 * calls, CDI specs, checkpoint changes) and engine_recover.c (start).
 */
#ifndef DRALET_CLAIMS_ENGINE_INTERNAL_H
#define DRALET_CLAIMS_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "agent/claims/checkpoint.h"
#include "agent/claims/claim_plan.h"
#include "agent/claims/engine.h"
#include "agent/claims/share_ledger.h"
#include "agent/claims/state.h"
#include "agent/lib/atomic_file.h"
#include "agent/lib/err_msg.h"

struct engine_device {
	struct dralet_device *dev;
	const char *name;		/* borrowed from the device */
	pthread_mutex_t lock;		/* one backend call on the device at a time */
	struct share_ledger holders;	/* loop only: the claims (and shares) holding it */
};

struct uid_queue {
	char *uid;
	struct op *head, *tail;		/* head is running, the rest wait */
	struct uid_queue *next;
};

struct claims_engine {
	uv_loop_t *loop;
	struct store *store;
	char *driver, *pool, *vendor, *state_dir, *cdi_dir, *boot_id;
	/* What of a checkpoint and a device metadata write must survive a power
	 * loss (engine.c, durable_enough) */
	enum atomic_file_sync ckpt_sync, metadata_sync;
	struct device_set *set;		/* a reference: what devices[] points into */
	struct engine_device *devices;	/* one per device of the set, in its order (by name) */
	size_t n_devices;
	struct claims_state *state;
	/* the per-operation lock across dralet instances (claims_lock.h),
	 * loop only: held while holds > 0; ops waiting for it, in order */
	struct claims_lock *lock;
	unsigned holds;
	struct op *lock_waiters, **lock_waiters_tail;
	struct engine_lock_retry *lock_retry;	/* NULL while nobody waits */
	struct uid_queue *queues;	/* loop only */
	unsigned calls_in_flight;	/* loop only */
	bool shutting_down;
	void (*shutdown_cb)(void *userdata);
	void *shutdown_userdata;
	/* loop only: the start found the checkpoint unreadable
	 * (claims_engine_recovery_note) */
	bool recovered_unreadable;
	char **rebuilt_uids;		/* claims rebuilt then and not seen unprepared yet */
	size_t n_rebuilt_uids;
	unsigned n_rebuilt, kept_unaccounted;
	struct claims_engine_metrics metrics;	/* loop only */
	void (*node_changed)(void *userdata);	/* claims_engine_config */
	void *userdata;
};

enum op_kind {
	OP_PREPARE,	/* prepare from a plan */
	OP_HIT,		/* already prepared: answer from the checkpoint */
	OP_UNPREPARE,
};

/* A device of a successful answer (owned strings). */
struct op_device {
	char *pool;
	char *device;
	char *share_id;		/* NULL: an exclusive allocation */
	char **request_names;
	size_t n_request_names;
	char *cdi_id;
};

struct call;

/* One claim of a call. */
struct op {
	struct call *call;
	char *namespace_, *name, *uid;
	char *pod;		/* "<ns>/<name>" the claim is reserved for, when known (logs) */
	struct op *next_queued;
	struct op *next_waiting;	/* engine's lock_waiters */
	bool holding;			/* counted in the engine's holds */
	void (*run)(struct op *op);	/* what runs once the lock is held */
	enum op_kind kind;
	uv_work_t work;
	struct claim_plan *plan;		/* OP_PREPARE; OP_HIT of a rebuilt entry */
	struct engine_device **targets;		/* OP_PREPARE: one per plan device */
	uint64_t started_ns;
	/* outcome, set by the worker or the loop */
	char *error;
	struct op_device *devices;
	size_t n_devices;
	size_t n_unprepared;			/* OP_UNPREPARE: devices unprepared (the log) */
};

/* ---- engine_work.c (worker threads; also used at start) ---- */
void engine_work_prepare(struct claims_engine *e, struct op *op);
void engine_work_hit(struct claims_engine *e, struct op *op);
void engine_work_unprepare(struct claims_engine *e, struct op *op);

/* Calls the backends' unprepare for the devices of @c, last first (only the
 * prepared ones unless @all). Devices gone from the node are skipped. 0 or
 * the first error, with the cause in @err. */
int engine_unprepare_devices(struct claims_engine *e, const struct ckpt_claim *c, bool all,
			     char *err, size_t errlen);
/* Writes the claim's CDI spec files (only the missing ones when @only_missing). */
int engine_write_specs(struct claims_engine *e, const struct ckpt_claim *c, bool only_missing,
		       char *err, size_t errlen);
/* Removes the claim's CDI spec files and its device metadata files. */
int engine_remove_claim_files(struct claims_engine *e, const struct ckpt_claim *c);

/* True for an entry rebuilt from its CDI spec (recovery_plan_unreadable)
 * whose requests nobody has told yet. */
bool engine_entry_rebuilt(const struct ckpt_claim *c);

/* ---- engine.c ---- */
/* Sets @op's error to "claim <namespace>/<name> (uid <uid>): <the message>"
 * (either thread: the op's own field). */
void op_fail(struct op *op, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
struct engine_device *engine_find_device(struct claims_engine *e, const char *name);
/* The identity facts of @dev (strings borrowed from the device). */
void engine_device_identity(const struct dralet_device *dev, struct ckpt_identity *ret);
/* Makes the reservations of @uid match its checkpoint entry (loop thread). */
void engine_sync_reservations(struct claims_engine *e, const char *uid);

/* ---- engine_lock.c (the loop side of claims_lock.h) ---- */
/* Runs @run(@op) once the engine holds the lock across instances (at once
 * when it does), the checkpoint read again first when another instance
 * changed it; on failure @op fails and is done without running. */
void engine_lock_hold(struct claims_engine *e, struct op *op, void (*run)(struct op *op));
/* @op's operation is over: the lock goes when no operation holds it. */
void engine_lock_unhold(struct claims_engine *e, struct op *op);
/* Shutdown: ops still waiting fail ("shutting down"), the retry stops. */
void engine_lock_cancel_waiters(struct claims_engine *e);
/* The start's turn: waits for the lock (blocking), then bumps the
 * generation; engine_lock_end_start releases it. 0 or -errno (logged). */
int engine_lock_start(struct claims_engine *e);
void engine_lock_end_start(struct claims_engine *e);
/* Makes every device reservation match the checkpoint (loop, no op running). */
void engine_sync_all_reservations(struct claims_engine *e);
/* The loop side of finishing an op (engine.c). */
void engine_op_done(struct op *op);

/* ---- engine_status.c ---- */
/* Hands the claim device status of a finished @op to the store (loop thread):
 * the entries of a successful prepare's devices, their removal after an
 * unprepare that undid devices; nothing for failures and cached answers. */
void engine_report_status(struct claims_engine *e, const struct op *op);

/* ---- engine_recover.c ---- */
int engine_recover(struct claims_engine *e, struct claims_recovery_stats *stats);
void engine_recover_free(struct claims_engine *e);

#endif
