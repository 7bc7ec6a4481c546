/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/claims/stale_check.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/claims/engine.h"
#include "agent/kube/store.h"
#include "agent/lib/log.h"

/* Since when a claim has been seen reserved for nobody. */
struct unreserved {
	char *uid;
	uint64_t since_ms;
};

struct stale_check {
	struct claims_engine *engine;
	struct store *store;
	char *driver, *pool;
	uint64_t grace_ms;
	struct stale_check_metrics metrics;
	struct unreserved *unreserved;
	size_t n_unreserved;
	/* the UIDs of the previous check's claims; NULL before the first */
	char **seen;
	size_t n_seen;

	/* the check running (running == true) */
	bool running, asking, waiting;
	void (*done)(void *userdata);
	void *done_userdata;
	uint64_t now_ms;
	struct claims_entry *entries;
	size_t n, next;
	enum stale_verdict *verdicts;
	uint64_t *since_ms;		/* per entry: the unreserved time carried over */
	char **replaced_by;		/* per entry: the UID the store has now (logs) */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int stale_check_new(const struct stale_check_config *cfg, struct stale_check **ret_check)
{
	struct stale_check *sc;

	if (!cfg->engine || !cfg->store || !cfg->driver || !cfg->pool)
		return -EINVAL;
	if (!(sc = calloc(1, sizeof(*sc))))
		return -ENOMEM;
	sc->engine = cfg->engine;
	sc->store = cfg->store;
	sc->grace_ms = cfg->unreserved_grace_ms;
	sc->driver = strdup(cfg->driver);
	sc->pool = strdup(cfg->pool);
	if (!sc->driver || !sc->pool) {
		stale_check_free(sc);
		return -ENOMEM;
	}
	*ret_check = sc;
	return 0;
}

static void clear_unreserved(struct stale_check *sc)
{
	for (size_t i = 0; i < sc->n_unreserved; i++)
		free(sc->unreserved[i].uid);
	free(sc->unreserved);
	sc->unreserved = NULL;
	sc->n_unreserved = 0;
}

static void clear_seen(struct stale_check *sc)
{
	for (size_t i = 0; i < sc->n_seen; i++)
		free(sc->seen[i]);
	free(sc->seen);
	sc->seen = NULL;
	sc->n_seen = 0;
}

/* The claims of this check, for the next one to tell the new ones. Out of
 * memory, the next check asks about every claim, as the first does. */
static void remember_seen(struct stale_check *sc)
{
	char **seen = calloc(sc->n + 1, sizeof(*seen));

	clear_seen(sc);
	for (size_t i = 0; seen && i < sc->n; i++)
		if (!(seen[i] = strdup(sc->entries[i].uid))) {
			for (size_t k = 0; k < i; k++)
				free(seen[k]);
			free(seen);
			return;
		}
	sc->seen = seen;
	sc->n_seen = seen ? sc->n : 0;
}

static bool recent(const struct stale_check *sc, const char *uid)
{
	if (!sc->seen)
		return false;
	for (size_t i = 0; i < sc->n_seen; i++)
		if (!strcmp(sc->seen[i], uid))
			return false;
	return true;
}

static void clear_run(struct stale_check *sc)
{
	for (size_t i = 0; sc->replaced_by && i < sc->n; i++)
		free(sc->replaced_by[i]);
	free(sc->replaced_by);
	claims_entries_free(sc->entries, sc->n);
	free(sc->verdicts);
	free(sc->since_ms);
	sc->replaced_by = NULL;
	sc->entries = NULL;
	sc->verdicts = NULL;
	sc->since_ms = NULL;
	sc->n = sc->next = 0;
	sc->running = sc->asking = sc->waiting = false;
}

void stale_check_free(struct stale_check *sc)
{
	if (!sc)
		return;
	clear_run(sc);
	clear_unreserved(sc);
	clear_seen(sc);
	free(sc->driver);
	free(sc->pool);
	free(sc);
}

const struct stale_check_metrics *stale_check_metrics(const struct stale_check *sc)
{
	return &sc->metrics;
}

static uint64_t unreserved_since(const struct stale_check *sc, const char *uid)
{
	for (size_t i = 0; i < sc->n_unreserved; i++)
		if (!strcmp(sc->unreserved[i].uid, uid))
			return sc->unreserved[i].since_ms;
	return 0;
}

/* Remembers the claims seen reserved for nobody (and, through an answer
 * that decided nothing, those seen so before) for the next check. */
static void keep_unreserved(struct stale_check *sc)
{
	struct unreserved *next = calloc(sc->n + 1, sizeof(*next));
	size_t n = 0;

	for (size_t i = 0; next && i < sc->n; i++) {
		uint64_t since = sc->since_ms[i];

		if (sc->verdicts[i] == STALE_KEEP_UNRESERVED && !since)
			since = sc->now_ms ? sc->now_ms : 1;
		else if (sc->verdicts[i] != STALE_KEEP_UNRESERVED &&
			 sc->verdicts[i] != STALE_KEEP_UNKNOWN)
			since = 0;
		if (!since || !(next[n].uid = strdup(sc->entries[i].uid)))
			continue;
		next[n++].since_ms = since;
	}
	clear_unreserved(sc);
	if (!next) {
		log_error("driver %s: stale claims: out of memory; the grace periods start over",
			  sc->driver);
		return;
	}
	sc->unreserved = next;
	sc->n_unreserved = n;
}

static void finish(struct stale_check *sc)
{
	void (*done)(void *) = sc->done;
	void *userdata = sc->done_userdata;

	sc->metrics.runs++;
	remember_seen(sc);
	clear_run(sc);
	if (done)
		done(userdata);
}

static const char *why(const struct stale_check *sc, size_t i, char *buf, size_t size)
{
	switch (sc->verdicts[i]) {
	case STALE_GONE:
		return "its ResourceClaim is gone";
	case STALE_REPLACED:
		snprintf(buf, size, "its ResourceClaim was replaced (uid %s now)",
			 sc->replaced_by[i] ? sc->replaced_by[i] : "?");
		return buf;
	case STALE_DEALLOCATED:
		return "its ResourceClaim is no longer allocated";
	case STALE_ALLOCATED_ELSEWHERE:
		snprintf(buf, size, "its ResourceClaim has no device of this driver in pool %s "
			 "any more", sc->pool);
		return buf;
	case STALE_UNRESERVED:
		snprintf(buf, size, "its ResourceClaim has been reserved for nobody for %llu s",
			 (unsigned long long)((sc->now_ms - sc->since_ms[i]) / 1000u));
		return buf;
	default:
		return "kept";
	}
}

static void on_collected(void *userdata, const struct claims_result *results, size_t n)
{
	struct stale_check *sc = userdata;

	for (size_t k = 0; k < n; k++) {
		size_t i;

		for (i = 0; i < sc->n; i++)
			if (stale_verdict_collects(sc->verdicts[i]) &&
			    !strcmp(sc->entries[i].uid, results[k].uid))
				break;
		if (i == sc->n)
			continue;
		if (results[k].error) {
			sc->metrics.collect_failed++;
			log_error("driver %s: stale claim %s/%s (uid %s): unprepare failed: %s; "
				  "tried again at the next check", sc->driver, sc->entries[i].namespace_,
				  sc->entries[i].name, sc->entries[i].uid, results[k].error);
			continue;
		}
		sc->metrics.collected[sc->verdicts[i]]++;
		log_info("driver %s: collected stale claim %s/%s (uid %s): %s", sc->driver,
			 sc->entries[i].namespace_, sc->entries[i].name, sc->entries[i].uid,
			 stale_verdict_name(sc->verdicts[i]));
	}
	finish(sc);
}

/* Every claim judged: collect the stale ones. */
static void collect(struct stale_check *sc)
{
	struct claims_ref *refs = calloc(sc->n + 1, sizeof(*refs));
	size_t n = 0;
	char buf[320];
	int r;

	keep_unreserved(sc);
	if (!refs) {
		log_error("driver %s: stale claims: out of memory", sc->driver);
		finish(sc);
		return;
	}
	for (size_t i = 0; i < sc->n; i++) {
		if (!stale_verdict_collects(sc->verdicts[i]))
			continue;
		log_warn("driver %s: claim %s/%s (uid %s) is prepared but %s: unpreparing it",
			 sc->driver, sc->entries[i].namespace_, sc->entries[i].name,
			 sc->entries[i].uid, why(sc, i, buf, sizeof(buf)));
		refs[n++] = (struct claims_ref){ sc->entries[i].namespace_, sc->entries[i].name,
						 sc->entries[i].uid };
	}
	if (!n) {
		free(refs);
		finish(sc);
		return;
	}
	r = claims_collect(sc->engine, refs, n, on_collected, sc);
	free(refs);
	if (r < 0) {
		log_error("driver %s: stale claims: cannot unprepare: %s", sc->driver, strerror(-r));
		finish(sc);
	}
}

static void ask_next(struct stale_check *sc);

static void on_claim(void *userdata, int err, struct json_object *claim, const char *message)
{
	struct stale_check *sc = userdata;
	size_t i = sc->next - 1;
	const struct claims_entry *e = &sc->entries[i];
	struct stale_entry entry = { e->uid, e->namespace_, e->name };
	struct stale_observation seen = { STALE_ANSWER_UNKNOWN, NULL, sc->since_ms[i], false };
	const char *uid;

	if (err == 0 && claim) {
		seen.answer = STALE_ANSWER_CLAIM;
		seen.claim = claim;
	} else if (err == -ENOENT) {
		seen.answer = STALE_ANSWER_NOT_FOUND;
	} else {
		log_warn("driver %s: stale claims: no answer about claim %s/%s (%s); it stays "
			 "prepared", sc->driver, e->namespace_, e->name,
			 message && *message ? message : strerror(-err));
	}
	sc->verdicts[i] = stale_judge(&entry, &seen, sc->driver, sc->pool, sc->now_ms, sc->grace_ms);
	if (sc->verdicts[i] == STALE_REPLACED &&
	    (uid = json_object_get_string(json_object_object_get(
		     json_object_object_get(claim, "metadata"), "uid"))))
		sc->replaced_by[i] = strdup(uid);
	sc->waiting = false;
	if (!sc->asking)
		ask_next(sc);
}

/* Asks about the next claims, one request at a time (an answer that comes
 * at once is taken in the loop, not by recursion). */
static void ask_next(struct stale_check *sc)
{
	while (sc->next < sc->n) {
		const struct claims_entry *e = &sc->entries[sc->next];
		struct stale_entry entry = { e->uid, e->namespace_, e->name };

		sc->since_ms[sc->next] = unreserved_since(sc, e->uid);
		sc->next++;
		if (!*e->namespace_ || !*e->name || recent(sc, e->uid)) {
			struct stale_observation none = { STALE_ANSWER_UNKNOWN, NULL, 0,
							  recent(sc, e->uid) };
			sc->verdicts[sc->next - 1] = stale_judge(&entry, &none, sc->driver, sc->pool,
								 sc->now_ms, sc->grace_ms);
			continue;
		}
		sc->waiting = sc->asking = true;
		sc->store->ops->get_claim(sc->store, e->namespace_, e->name, on_claim, sc);
		sc->asking = false;
		if (sc->waiting)
			return;
	}
	collect(sc);
}

int stale_check_run(struct stale_check *sc, void (*done)(void *userdata), void *userdata)
{
	int r;

	if (sc->running)
		return -EBUSY;
	if ((r = claims_engine_entries(sc->engine, &sc->entries, &sc->n)) < 0)
		return r;
	sc->verdicts = calloc(sc->n + 1, sizeof(*sc->verdicts));
	sc->since_ms = calloc(sc->n + 1, sizeof(*sc->since_ms));
	sc->replaced_by = calloc(sc->n + 1, sizeof(*sc->replaced_by));
	if (!sc->verdicts || !sc->since_ms || !sc->replaced_by) {
		clear_run(sc);
		return -ENOMEM;
	}
	sc->running = true;
	sc->done = done;
	sc->done_userdata = userdata;
	sc->now_ms = now_ms();
	sc->next = 0;
	ask_next(sc);
	return 0;
}
