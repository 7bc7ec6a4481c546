/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What to send for each Event the agent records (pure: no I/O, the time is an
 * argument; one thread). The decisions and defaults of client-go's
 * EventCorrelator (k8s.io/client-go tools/record/events_cache.go:
 * maxLruCacheEntries, defaultAggregateMaxEvents, defaultAggregateIntervalInSeconds,
 * defaultSpamBurst, defaultSpamQPS; EventCorrelate), in its order:
 *
 *  1. aggregation: per object, type and reason, the distinct messages of the
 *     last 10 minutes; from the 10th on, the Event becomes one whose message
 *     is "(combined from similar events): <message>" and whose key is the
 *     object, type and reason (so later ones update it);
 *  2. counting: an Event equal to one sent before (object, type, reason,
 *     message) is a repeat: a PATCH of that Event (count + 1, lastTimestamp,
 *     message), not a new one;
 *  3. spam filter: a token bucket per object and reason, 25 tokens, one more
 *     every 5 minutes; an Event without a token is skipped (its count is
 *     still kept, so the next repeat sent carries it).
 *
 * One difference: client-go's spam key is the source and the object only;
 * dralet's adds the reason, so a flood of one kind on the Node (a device
 * flapping) does not silence another (a refused SR-IOV count).
 * Each table keeps at most EVENT_CACHE_MAX keys, the least recently used
 * going first.
 */
#ifndef DRALET_KUBE_EVENT_RECORDER_H
#define DRALET_KUBE_EVENT_RECORDER_H

#include <stdint.h>

#include "agent/kube/event.h"

#define EVENT_CACHE_MAX 4096		/* maxLruCacheEntries */
#define EVENT_AGGREGATE_MAX 10		/* defaultAggregateMaxEvents */
#define EVENT_AGGREGATE_WINDOW_S 600	/* defaultAggregateIntervalInSeconds */
#define EVENT_SPAM_BURST 25		/* defaultSpamBurst */
#define EVENT_SPAM_REFILL_S 300		/* defaultSpamQPS = 1/300 */
#define EVENT_COMBINED_PREFIX "(combined from similar events): "

enum event_action {
	EVENT_SKIP,	/* rate-limited: send nothing */
	EVENT_CREATE,	/* POST the Event */
	EVENT_PATCH,	/* the Event exists (ret->name): PATCH its count */
};

struct event_recorder;

/* @node: source.host of every Event (copied). 0 or -ENOMEM / -EINVAL. */
int event_recorder_new(const char *node, struct event_recorder **ret_recorder);
void event_recorder_free(struct event_recorder *r);	/* NULL is fine */

/*
 * One occurrence at @now_ns (nanoseconds since the epoch). Returns the action
 * and, for CREATE and PATCH, fills @ret (strings borrowed from the recorder
 * and the arguments: valid until the next call or the arguments' end), or
 * -ENOMEM / -EINVAL (then nothing is counted).
 */
int event_recorder_observe(struct event_recorder *r, const struct kube_object_ref *obj,
			   const char *type, const char *reason, const char *message,
			   int64_t now_ns, struct kube_event *ret);

#endif
