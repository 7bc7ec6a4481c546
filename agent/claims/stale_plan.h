/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Stale claims (pure): which checkpointed claims to unprepare because their
 * ResourceClaim says they are no longer this node's, and why
 * (docs/claims.md, "Stale claims"). The decisions only; the I/O shell
 * (stale_check.h) asks the store and unprepares through the engine.
 *
 *   the store could not answer         keep (a 5xx, a timeout, no network:
 *                                      never collect on a transient error)
 *   the entry has no namespace/name    keep (rebuilt from a CDI spec and
 *                                      never named by the kubelet: nothing
 *                                      to ask about)
 *   prepared since the previous check  keep, not asked (the kubelet prepared
 *                                      it moments ago, for a pod it runs;
 *                                      asked at the next check)
 *   the claim is not found             collect: gone
 *   it has another UID                 collect: replaced (the old one is gone)
 *   no status.allocation               collect: deallocated
 *   no allocation result of this driver
 *     in this node's pool              collect: allocated elsewhere
 *   status.reservedFor empty           keep the first time; collect once it
 *                                      has been seen empty for the grace
 *                                      period (the kubelet's reconcile loop
 *                                      unprepares the claims of pods no
 *                                      longer active by itself: it has the
 *                                      first go)
 *   otherwise                          keep: in use
 */
#ifndef DRALET_CLAIMS_STALE_PLAN_H
#define DRALET_CLAIMS_STALE_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

/* What the store said about one claim. */
enum stale_answer {
	STALE_ANSWER_CLAIM,		/* the ResourceClaim object */
	STALE_ANSWER_NOT_FOUND,		/* definitely not there (an apiserver 404 for
					 * the object; the file store's -ENOENT) */
	STALE_ANSWER_UNKNOWN,		/* anything else: no decision on it */
};

enum stale_verdict {
	STALE_KEEP_IN_USE,
	STALE_KEEP_UNKNOWN,		/* no definite answer */
	STALE_KEEP_UNNAMED,		/* not asked: no namespace/name */
	STALE_KEEP_UNRESERVED,		/* reservedFor empty, within the grace period */
	STALE_KEEP_RECENT,		/* not asked: new since the previous check */
	STALE_GONE,
	STALE_REPLACED,
	STALE_DEALLOCATED,
	STALE_ALLOCATED_ELSEWHERE,
	STALE_UNRESERVED,
};

/* True for the verdicts that collect the claim. */
bool stale_verdict_collects(enum stale_verdict v);

/* One word for logs and the metric's "reason" label ("gone", "replaced",
 * "deallocated", "allocated_elsewhere", "unreserved"; the keeps have names
 * too: "in_use", "unknown", "unnamed", "unreserved_grace"). */
const char *stale_verdict_name(enum stale_verdict v);

/* A checkpointed claim (strings borrowed). */
struct stale_entry {
	const char *uid;
	const char *namespace_;	/* NULL or "" when unknown */
	const char *name;
};

/* What is known of it now. */
struct stale_observation {
	enum stale_answer answer;
	struct json_object *claim;	/* STALE_ANSWER_CLAIM (borrowed) */
	/* when a check first saw it allocated here with reservedFor empty,
	 * in the caller's monotonic milliseconds; 0: not seen so */
	uint64_t unreserved_since_ms;
	/* not in the checkpoint at the previous check (never true at a
	 * process's first check: those claims may be from before a crash) */
	bool recent;
};

/*
 * The verdict on one entry. @driver and @pool: this engine's driver and the
 * node's pool. @now_ms: the same clock as unreserved_since_ms; @grace_ms:
 * how long reservedFor must have been seen empty.
 */
enum stale_verdict stale_judge(const struct stale_entry *entry,
			       const struct stale_observation *seen, const char *driver,
			       const char *pool, uint64_t now_ms, uint64_t grace_ms);

/* The verdicts on @n entries into @ret_verdicts (n of them); returns how
 * many collect. */
size_t stale_plan(const struct stale_entry *entries, const struct stale_observation *seen,
		  size_t n, const char *driver, const char *pool, uint64_t now_ms,
		  uint64_t grace_ms, enum stale_verdict *ret_verdicts);

#endif
