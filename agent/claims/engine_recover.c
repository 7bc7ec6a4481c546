/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Start of a claims engine: load the checkpoint, decide (recovery.h) and
 * carry out the decisions, then write the checkpoint that results.
 */
#include "agent/claims/engine_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/claims/cdi_files.h"
#include "agent/lib/atomic_file.h"
#include "agent/claims/checkpoint_file.h"
#include "agent/claims/device_metadata.h"
#include "agent/claims/recovery.h"
#include "agent/lib/log.h"
#include "agent/kube/store.h"

static bool lookup(void *userdata, const char *pool, const char *device,
		   struct ckpt_identity *ret_now)
{
	struct claims_engine *e = userdata;
	struct engine_device *d;

	if (strcmp(pool, e->pool) || !(d = engine_find_device(e, device)))
		return false;
	engine_device_identity(d->dev, ret_now);
	return true;
}

/* @aside, @err: where an unusable checkpoint went ("" when it could not be
 * moved) and why it is unusable. */
static struct checkpoint *load(struct claims_engine *e, struct claims_recovery_stats *st,
			       char aside[4096], char err[512])
{
	struct checkpoint *ck = NULL;
	int r = checkpoint_file_remove_stale(e->state_dir);

	if (r > 0)
		log_warn_kv(LOG_KV("driver", e->driver),
			    "driver %s: removed %d temporary checkpoint file(s) an interrupted write "
			    "left in %s", e->driver, r, e->state_dir);
	else if (r < 0)
		log_error_kv(LOG_KV("driver", e->driver, "err", strerror(-r)),
			     "driver %s: cannot look for temporary checkpoint files in %s: %s",
			     e->driver, e->state_dir, strerror(-r));
	r = checkpoint_file_load(e->state_dir, &ck, err, 512);

	if (r == -ENOENT)
		return checkpoint_new(e->driver, e->boot_id);
	if (r < 0) {
		/* never start empty: every spec would be an orphan and every
		 * reservation forgotten; engine_recover rebuilds instead */
		st->corrupt = true;
		if (checkpoint_file_move_aside(e->state_dir, aside, 4096) == 0)
			log_error_kv(LOG_KV("driver", e->driver, "err", err),
				     "driver %s: THE CHECKPOINT %s/%s IS UNUSABLE (%s); moved it to %s. "
				     "Rebuilding the prepared claims from the CDI specs in %s: nothing "
				     "is removed, their devices stay reserved until the kubelet "
				     "unprepares them; the undo state it held is lost, so the hardware "
				     "of those claims may need a look", e->driver, e->state_dir,
				     CHECKPOINT_FILE_NAME, err, aside, e->cdi_dir);
		else {
			aside[0] = '\0';
			log_error_kv(LOG_KV("driver", e->driver, "err", err),
				     "driver %s: THE CHECKPOINT %s/%s IS UNUSABLE (%s) and cannot be "
				     "moved aside; rebuilding the prepared claims from the CDI specs in "
				     "%s, removing nothing", e->driver, e->state_dir, CHECKPOINT_FILE_NAME,
				     err, e->cdi_dir);
		}
		return NULL;
	}
	if (strcmp(ck->driver, e->driver))
		log_warn_kv(LOG_KV("driver", e->driver),
			    "driver %s: the checkpoint in %s names driver %s; using it anyway",
			    e->driver, e->state_dir, ck->driver);
	return ck;
}

static bool carry_out(struct claims_engine *e, struct checkpoint *ck,
		      const struct recovery_action *a, struct claims_recovery_stats *st)
{
	struct ckpt_claim *c = a->kind == RECOVERY_REMOVE_ORPHAN ||
			       a->kind == RECOVERY_KEEP_UNACCOUNTED ? NULL : ck->claims[a->claim];
	struct err_msg err = { "" };
	char *uid = NULL, **uids;
	int r;

	switch (a->kind) {
	case RECOVERY_KEEP:
		st->kept++;
		return false;
	case RECOVERY_REWRITE_SPEC:
		r = engine_write_specs(e, c, true, ERR_MSG_ARGS(&err));
		if (r < 0) {
			st->rewrite_failed++;
			log_error_kv(LOG_KV("driver", e->driver, "uid", c->uid),
				     "driver %s: claim %s/%s (uid %s): %s; cannot write it again: %s",
				     e->driver, c->namespace_, c->name, c->uid, a->reason, err.text);
		} else {
			st->rewritten++;
			log_info_kv(LOG_KV("driver", e->driver, "uid", c->uid),
				    "driver %s: claim %s/%s (uid %s): %s; wrote it again", e->driver,
				    c->namespace_, c->name, c->uid, a->reason);
		}
		return false;
	case RECOVERY_ROLLBACK:
	case RECOVERY_FINISH_UNPREPARE:
		if (a->kind == RECOVERY_ROLLBACK)
			st->rolled_back++;
		else
			st->unprepared++;
		r = engine_unprepare_devices(e, c, true, ERR_MSG_ARGS(&err));
		if (r < 0) {
			log_error_kv(LOG_KV("driver", e->driver, "uid", c->uid),
				     "driver %s: claim %s/%s (uid %s): %s, and undoing it failed: %s; "
				     "kept for another try", e->driver, c->namespace_, c->name, c->uid,
				     a->reason, err.text);
			return false;
		}
		log_warn_kv(LOG_KV("driver", e->driver, "uid", c->uid),
			    "driver %s: claim %s/%s (uid %s): %s; %s", e->driver, c->namespace_,
			    c->name, c->uid, a->reason,
			    a->kind == RECOVERY_ROLLBACK ? "rolled back" : "unprepared");
		return true;
	case RECOVERY_DROP_CHANGED:
		st->dropped++;
		log_error_kv(LOG_KV("driver", e->driver, "uid", c->uid),
			     "driver %s: claim %s/%s (uid %s) DROPPED: %s; its CDI spec is removed and "
			     "the hardware is left alone", e->driver, c->namespace_, c->name, c->uid,
			     a->reason);
		return true;
	case RECOVERY_DROP_REBOOT:
		st->dropped++;
		log_info_kv(LOG_KV("driver", e->driver, "uid", c->uid),
			    "driver %s: claim %s/%s (uid %s) forgotten: %s", e->driver, c->namespace_,
			    c->name, c->uid, a->reason);
		return true;
	case RECOVERY_REBUILT:
		st->rebuilt++;
		if ((uid = strdup(c->uid)) &&
		    (uids = realloc(e->rebuilt_uids, (e->n_rebuilt_uids + 1) * sizeof(*uids)))) {
			e->rebuilt_uids = uids;
			e->rebuilt_uids[e->n_rebuilt_uids++] = uid;
			uid = NULL;
		}
		free(uid);
		log_warn_kv(LOG_KV("driver", e->driver),
			    "driver %s: claim with uid %s: %s; its devices stay reserved until the "
			    "kubelet unprepares it", e->driver, c->uid, a->reason);
		return false;
	case RECOVERY_KEEP_UNACCOUNTED:
		st->kept_unaccounted++;
		log_error_kv(LOG_KV("driver", e->driver),
			     "driver %s: CDI spec %s/%s kept although no claim can be rebuilt from it "
			     "(%s); remove it by hand once no container uses it", e->driver, e->cdi_dir,
			     a->file, a->reason);
		return false;
	case RECOVERY_REMOVE_ORPHAN:
		r = cdi_files_remove(e->cdi_dir, a->file);
		if (r < 0) {
			log_error_kv(LOG_KV("driver", e->driver, "err", strerror(-r)),
				     "driver %s: cannot remove orphan CDI spec %s/%s: %s", e->driver,
				     e->cdi_dir, a->file, strerror(-r));
		} else {
			st->orphans_removed++;
			log_info_kv(LOG_KV("driver", e->driver),
				    "driver %s: removed CDI spec %s/%s: %s", e->driver, e->cdi_dir,
				    a->file, a->reason);
		}
		return false;
	}
	return false;
}

/* The checkpoint is unusable: the plan that rebuilds it from the spec files. */
static int plan_unreadable(struct claims_engine *e, char **files, size_t n_files,
			   struct checkpoint **ret_ck, struct recovery_plan **ret_plan)
{
	struct recovery_spec *specs = calloc(n_files + 1, sizeof(*specs));
	int r;

	if (!specs)
		return -ENOMEM;
	for (size_t i = 0; i < n_files; i++) {
		char path[4096], *text = NULL;
		size_t len;

		specs[i].file = files[i];
		if (snprintf(path, sizeof(path), "%s/%s", e->cdi_dir, files[i]) < (int)sizeof(path) &&
		    atomic_file_read(path, 4u << 20, &text, &len) == 0)
			specs[i].spec = json_tokener_parse(text);
		free(text);
	}
	r = recovery_plan_unreadable(e->driver, e->vendor, e->boot_id, specs, n_files, lookup, e,
				     ret_ck, ret_plan);
	for (size_t i = 0; i < n_files; i++)
		json_object_put(specs[i].spec);
	free(specs);
	return r;
}

/* The unusable checkpoint, told to the cluster (an Event about the Node). */
static void warn_unreadable(struct claims_engine *e, const struct claims_recovery_stats *st,
			    const char *aside, const char *err)
{
	char msg[2048];

	snprintf(msg, sizeof(msg), "driver %s: the checkpoint %s/%s was unreadable (%s) and %s%s; "
		 "%u prepared claim(s) rebuilt from their CDI specs in %s, their devices reserved "
		 "until the kubelet unprepares them; %u CDI spec(s) kept that no claim could be "
		 "rebuilt from; nothing was removed, the undo state is lost: check the hardware "
		 "of those claims", e->driver, e->state_dir, CHECKPOINT_FILE_NAME, err,
		 *aside ? "was moved to " : "could not be moved aside", aside, st->rebuilt,
		 e->cdi_dir, st->kept_unaccounted);
	e->store->ops->record_event(e->store, NULL, "Warning", CLAIMS_EVENT_CHECKPOINT_UNREADABLE,
				     msg);
}

/* "<namespace>_<name>" is a claim of the checkpoint (device_metadata_remove_others). */
static int claim_known(void *userdata, const char *ns_name)
{
	const struct checkpoint *ck = userdata;

	for (size_t i = 0; i < ck->n_claims; i++) {
		const struct ckpt_claim *c = ck->claims[i];
		size_t n = c->namespace_ ? strlen(c->namespace_) : 0;

		if (n && c->name && !strncmp(ns_name, c->namespace_, n) && ns_name[n] == '_' &&
		    !strcmp(ns_name + n + 1, c->name))
			return 1;
	}
	return 0;
}

/* The device metadata of claims unprepared or forgotten while the agent was down. */
static void remove_other_metadata(struct claims_engine *e, const struct checkpoint *ck)
{
	int r = device_metadata_remove_others(e->state_dir, claim_known, (void *)ck);

	if (r < 0)
		log_error_kv(LOG_KV("driver", e->driver, "err", strerror(-r)),
			     "driver %s: cannot remove stale device metadata below %s/"
			     DEVICE_METADATA_HOST_SUBDIR ": %s", e->driver, e->state_dir, strerror(-r));
	else if (r > 0)
		log_info_kv(LOG_KV("driver", e->driver),
			    "driver %s: removed the device metadata of %d claim(s) no longer "
			    "prepared", e->driver, r);
}

int engine_recover(struct claims_engine *e, struct claims_recovery_stats *st)
{
	char aside[4096] = "", err[512] = "";
	struct checkpoint *ck = load(e, st, aside, err);
	struct recovery_plan *plan = NULL;
	char **files = NULL;
	size_t n_files = 0;
	bool *drop = NULL;
	int r;

	if (!ck && !st->corrupt)
		return -ENOMEM;
	r = cdi_files_list(e->cdi_dir, e->vendor, &files, &n_files);
	if (r < 0) {
		log_error_kv(LOG_KV("driver", e->driver, "err", strerror(-r)),
			     "driver %s: cannot list %s: %s", e->driver, e->cdi_dir, strerror(-r));
		files = NULL;
		n_files = 0;
	}
	if (st->corrupt)
		r = plan_unreadable(e, files, n_files, &ck, &plan);
	else
		r = recovery_plan_build(ck, e->boot_id, lookup, e, e->vendor, files, n_files,
					&plan);
	if (r == 0 && !(drop = calloc(ck->n_claims + 1, sizeof(*drop))))
		r = -ENOMEM;
	if (r < 0)
		goto out;
	st->boot_changed = plan->boot_changed;
	if (plan->boot_changed)
		log_warn_kv(LOG_KV("driver", e->driver),
			    "driver %s: the node rebooted since the checkpoint was written (boot %s, "
			    "now %s): forgetting its %zu claim(s)", e->driver, ck->boot_id, e->boot_id,
			    ck->n_claims);
	for (size_t i = 0; i < plan->n_actions; i++) {
		bool d = carry_out(e, ck, &plan->actions[i], st);
		if (d)
			drop[plan->actions[i].claim] = true;
	}
	for (size_t i = ck->n_claims; i-- > 0;)
		if (drop[i])
			checkpoint_remove(ck, ck->claims[i]->uid);
	if (!st->corrupt)	/* an unreadable checkpoint accounts for nothing: keep all */
		remove_other_metadata(e, ck);
	if (e->boot_id[0]) {
		char *b = strdup(e->boot_id);
		if (b) {
			free(ck->boot_id);
			ck->boot_id = b;
		}
	}
	{
		char *d = strdup(e->driver);
		if (d) {
			free(ck->driver);
			ck->driver = d;
		}
	}
	r = claims_state_new(e->state_dir, ck, e->ckpt_sync, &e->state);
	if (r < 0)
		goto out;
	ck = NULL;
	claims_state_lock(e->state);
	claims_state_changed(e->state, NULL);
	claims_state_unlock(e->state);
	r = claims_state_sync(e->state);
	if (r < 0)
		log_error_kv(LOG_KV("driver", e->driver, "err", strerror(-r)),
			     "driver %s: cannot write the checkpoint in %s: %s; prepares will fail "
			     "until it can be written", e->driver, e->state_dir, strerror(-r));
	r = 0;
	log_info_kv(LOG_KV("driver", e->driver),
		    "driver %s: %zu prepared claim(s) after start (kept %u, CDI specs rewritten %u, "
		    "CDI specs that could not be rewritten %u, rolled back %u, unprepared %u, "
		    "dropped %u, orphan specs removed %u)", e->driver, claims_engine_n_claims(e),
		    st->kept, st->rewritten, st->rewrite_failed, st->rolled_back, st->unprepared,
		    st->dropped, st->orphans_removed);
	if (st->corrupt)
		log_error_kv(LOG_KV("driver", e->driver),
			     "driver %s: recovered from an unusable checkpoint: %u claim(s) rebuilt "
			     "from their CDI specs (their devices reserved until the kubelet "
			     "unprepares them), %u spec(s) kept that no claim could be rebuilt from",
			     e->driver, st->rebuilt, st->kept_unaccounted);
	if (st->corrupt) {
		warn_unreadable(e, st, aside, err);
		e->recovered_unreadable = true;
		e->n_rebuilt = st->rebuilt;
		e->kept_unaccounted = st->kept_unaccounted;
	}
out:
	free(drop);
	recovery_plan_free(plan);
	cdi_files_free_list(files, n_files);
	checkpoint_free(ck);
	return r;
}

void engine_recover_free(struct claims_engine *e)
{
	for (size_t i = 0; i < e->n_rebuilt_uids; i++)
		free(e->rebuilt_uids[i]);
	free(e->rebuilt_uids);
}

bool claims_engine_recovery_note(struct claims_engine *e, char *buf, size_t size)
{
	size_t kept = 0;
	int n;

	buf[0] = '\0';
	if (!e->recovered_unreadable)
		return false;
	/* a rebuilt claim not in the checkpoint when asked is unprepared: forgotten */
	claims_state_lock(e->state);
	for (size_t i = 0; i < e->n_rebuilt_uids; i++) {
		if (checkpoint_find(claims_state_checkpoint(e->state), e->rebuilt_uids[i]))
			e->rebuilt_uids[kept++] = e->rebuilt_uids[i];
		else
			free(e->rebuilt_uids[i]);
	}
	claims_state_unlock(e->state);
	e->n_rebuilt_uids = kept;
	if (!kept && !e->kept_unaccounted)
		return false;
	n = snprintf(buf, size, "checkpoint was unreadable: %u claim(s) rebuilt from CDI specs, "
		     "%zu still prepared", e->n_rebuilt, kept);
	if (e->kept_unaccounted && n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, "; %u CDI spec(s) kept that no claim could be "
			 "rebuilt from", e->kept_unaccounted);
	return true;
}
