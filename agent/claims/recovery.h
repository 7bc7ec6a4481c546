/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What to do with a driver's checkpoint when the agent starts (pure): the
 * decisions only; the engine carries them out (docs/claims.md, "Recovery").
 *
 *   boot ID changed            every claim is dropped without touching the
 *                              hardware (its prepared state died with the
 *                              old boot); the kubelet prepares them again
 *   PrepareStarted             roll back: unprepare every device with the
 *                              recorded undo state, drop the entry
 *   UnprepareStarted           finish the unprepare the same way
 *   PrepareCompleted           keep; if a device is gone or is another
 *                              device now (PCI function, IDs or uuid
 *                              differ) drop it without touching hardware;
 *                              if one of its CDI spec files is missing,
 *                              write it again from the checkpoint
 *   a started entry whose device changed is dropped the same way
 *   spec files of our vendor that no kept claim owns are removed
 *   checkpoint unreadable      recovery_plan_unreadable: claims rebuilt from
 *                              the spec files, nothing removed
 */
#ifndef DRALET_RECOVERY_H
#define DRALET_RECOVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "agent/claims/checkpoint.h"

enum recovery_kind {
	RECOVERY_KEEP,
	RECOVERY_REWRITE_SPEC,
	RECOVERY_ROLLBACK,
	RECOVERY_FINISH_UNPREPARE,
	RECOVERY_DROP_CHANGED,
	RECOVERY_DROP_REBOOT,
	RECOVERY_REMOVE_ORPHAN,
	RECOVERY_REBUILT,		/* unreadable checkpoint: claim rebuilt from a spec file */
	RECOVERY_KEEP_UNACCOUNTED,	/* unreadable checkpoint: a spec nothing is rebuilt from, kept */
};

struct recovery_action {
	enum recovery_kind kind;
	size_t claim;		/* index in the checkpoint (not for REMOVE_ORPHAN, KEEP_UNACCOUNTED) */
	const char *file;	/* REMOVE_ORPHAN, REBUILT, KEEP_UNACCOUNTED: the spec file
				 * (borrowed from the input) */
	char reason[320];	/* why, for the log */
};

struct recovery_plan {
	bool boot_changed;
	struct recovery_action *actions;	/* one per claim in checkpoint order, then orphans */
	size_t n_actions;
};

/*
 * What the node has now for a checkpointed device: fills @ret_now (strings
 * borrowed until the next call) and returns true, or false when the device
 * is not there any more.
 */
typedef bool (*recovery_lookup_fn)(void *userdata, const char *pool, const char *device,
				   struct ckpt_identity *ret_now);

/* True when @now is still the device @was describes. */
bool recovery_same_device(const struct ckpt_identity *was, const struct ckpt_identity *now);

/*
 * @ck: the checkpoint read at start (borrowed). @boot_id: the boot ID now
 * ("" when unknown: then no boot change is assumed). @spec_files: our spec
 * files present in the CDI directory (cdi_files_list), borrowed.
 * *ret_plan: recovery_plan_free.
 */
int recovery_plan_build(const struct checkpoint *ck, const char *boot_id, recovery_lookup_fn lookup,
			void *userdata, const char *vendor, char *const *spec_files,
			size_t n_spec_files, struct recovery_plan **ret_plan);
void recovery_plan_free(struct recovery_plan *plan);

/* A spec file of ours found in the CDI directory (both borrowed). */
struct recovery_spec {
	const char *file;		/* its name in the CDI directory */
	struct json_object *spec;	/* its content; NULL when it cannot be parsed */
};

/*
 * The checkpoint cannot be read (corrupt, newer): what it held is rebuilt
 * from what is left, and nothing is destroyed that cannot be accounted for
 * (docs/claims.md, "Recovery"). Every spec file is kept. The claims whose
 * devices it describes come back (recovery_rebuild.c) as PrepareCompleted
 * entries without undo state: UID and CDI class from the file name; pool,
 * device and adminAccess from the DRALET_DEVICE_<NAME>=<driver>/<pool>/<dev>
 * and DRA_ADMIN_ACCESS entries the agent puts into every device's edits;
 * the edits themselves; the identity of the device now (unknown for a
 * device not on the node, which then is not reserved); namespace, name and
 * requests unknown ("", none) until the store or the kubelet tells. Their
 * devices stay reserved until the kubelet unprepares them. One action per
 * file, in order: REBUILT (@claim: its entry in *ret_ck) or
 * KEEP_UNACCOUNTED. *ret_ck: checkpoint_free; *ret_plan: recovery_plan_free.
 */
int recovery_plan_unreadable(const char *driver, const char *vendor, const char *boot_id,
			     const struct recovery_spec *specs, size_t n, recovery_lookup_fn lookup,
			     void *userdata, struct checkpoint **ret_ck,
			     struct recovery_plan **ret_plan);

const char *recovery_kind_name(enum recovery_kind kind);

#endif
