/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/claims/stale_plan.h"

#include <string.h>

#include "agent/lib/json_get.h"

bool stale_verdict_collects(enum stale_verdict v)
{
	return v == STALE_GONE || v == STALE_REPLACED || v == STALE_DEALLOCATED ||
	       v == STALE_ALLOCATED_ELSEWHERE || v == STALE_UNRESERVED;
}

const char *stale_verdict_name(enum stale_verdict v)
{
	switch (v) {
	case STALE_KEEP_IN_USE: return "in_use";
	case STALE_KEEP_UNKNOWN: return "unknown";
	case STALE_KEEP_UNNAMED: return "unnamed";
	case STALE_KEEP_UNRESERVED: return "unreserved_grace";
	case STALE_KEEP_RECENT: return "recent";
	case STALE_GONE: return "gone";
	case STALE_REPLACED: return "replaced";
	case STALE_DEALLOCATED: return "deallocated";
	case STALE_ALLOCATED_ELSEWHERE: return "allocated_elsewhere";
	case STALE_UNRESERVED: return "unreserved";
	}
	return "unknown";
}

static bool known(const char *s)
{
	return s && *s;
}

/* True when an allocation result names this driver in this pool. */
static bool allocated_here(struct json_object *allocation, const char *driver, const char *pool)
{
	struct json_object *results =
		json_get_array(json_get_object(allocation, "devices"), "results");
	size_t n = results ? json_object_array_length(results) : 0;

	for (size_t i = 0; i < n; i++) {
		struct json_object *r = json_object_array_get_idx(results, i);
		const char *d = json_get_str(r, "driver"), *p = json_get_str(r, "pool");

		if (d && p && !strcmp(d, driver) && !strcmp(p, pool))
			return true;
	}
	return false;
}

enum stale_verdict stale_judge(const struct stale_entry *entry,
			       const struct stale_observation *seen, const char *driver,
			       const char *pool, uint64_t now_ms, uint64_t grace_ms)
{
	struct json_object *status, *allocation, *reserved;
	const char *uid;

	if (!known(entry->namespace_) || !known(entry->name))
		return STALE_KEEP_UNNAMED;
	if (seen->recent)
		return STALE_KEEP_RECENT;
	if (seen->answer == STALE_ANSWER_NOT_FOUND)
		return STALE_GONE;
	if (seen->answer != STALE_ANSWER_CLAIM || !json_object_is_type(seen->claim, json_type_object))
		return STALE_KEEP_UNKNOWN;
	uid = json_get_str_at(seen->claim, JSON_PATH("metadata", "uid"));
	if (!known(uid))
		return STALE_KEEP_UNKNOWN;	/* not a claim we can judge */
	if (strcmp(uid, entry->uid))
		return STALE_REPLACED;
	status = json_get_object(seen->claim, "status");
	if (!(allocation = json_get_object(status, "allocation")))
		return STALE_DEALLOCATED;
	if (!allocated_here(allocation, driver, pool))
		return STALE_ALLOCATED_ELSEWHERE;
	reserved = json_get_array(status, "reservedFor");
	if (reserved && json_object_array_length(reserved) > 0)
		return STALE_KEEP_IN_USE;
	if (seen->unreserved_since_ms && now_ms >= seen->unreserved_since_ms &&
	    now_ms - seen->unreserved_since_ms >= grace_ms)
		return STALE_UNRESERVED;
	return STALE_KEEP_UNRESERVED;
}

size_t stale_plan(const struct stale_entry *entries, const struct stale_observation *seen,
		  size_t n, const char *driver, const char *pool, uint64_t now_ms,
		  uint64_t grace_ms, enum stale_verdict *ret_verdicts)
{
	size_t collect = 0;

	for (size_t i = 0; i < n; i++) {
		ret_verdicts[i] = stale_judge(&entries[i], &seen[i], driver, pool, now_ms, grace_ms);
		collect += stale_verdict_collects(ret_verdicts[i]);
	}
	return collect;
}
