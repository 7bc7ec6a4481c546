/* SPDX-License-Identifier: Apache-2.0 */
/* client-go's EventCorrelator decisions for dralet's Events (see event_recorder.h). */
#include "agent/kube/event_recorder.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_S 1000000000LL

/* One key of a table; which fields mean something depends on the table. */
struct entry {
	char *key;
	int64_t used;			/* for least-recently-used eviction */
	/* spam filter */
	double tokens;
	int64_t refilled_ns;
	/* aggregation: hashes of the distinct messages of the window */
	uint64_t messages[EVENT_AGGREGATE_MAX];
	unsigned n_messages;
	int64_t last_ns;
	/* counting */
	char *name;
	int count;
	int64_t first_ns;
	bool created;			/* a CREATE of it was handed out */
};

struct table {
	struct entry *entries;
	size_t n, cap;
};

struct event_recorder {
	char *node;
	struct table spam, aggregate, sent;
	int64_t last_name_ns;	/* names stay distinct within one nanosecond */
	int64_t tick;
	char *message;		/* the last combined message */
	char name[KUBE_EVENT_NAME_MAX];
};

int event_recorder_new(const char *node, struct event_recorder **ret_recorder)
{
	struct event_recorder *r;

	if (!node || !*node)
		return -EINVAL;
	if (!(r = calloc(1, sizeof(*r))) || !(r->node = strdup(node))) {
		free(r);
		return -ENOMEM;
	}
	*ret_recorder = r;
	return 0;
}

static void table_clear(struct table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->entries[i].key);
		free(t->entries[i].name);
	}
	free(t->entries);
}

void event_recorder_free(struct event_recorder *r)
{
	if (!r)
		return;
	table_clear(&r->spam);
	table_clear(&r->aggregate);
	table_clear(&r->sent);
	free(r->message);
	free(r->node);
	free(r);
}

/* The entry of @key, made (zeroed) when missing; the least recently used one
 * is replaced when the table is full. NULL on ENOMEM. */
static struct entry *table_get(struct event_recorder *r, struct table *t, const char *key,
			       bool *ret_new)
{
	struct entry *e = NULL;
	char *copy;

	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->entries[i].key, key)) {
			t->entries[i].used = ++r->tick;
			*ret_new = false;
			return &t->entries[i];
		}
	if (!(copy = strdup(key)))
		return NULL;
	if (t->n == EVENT_CACHE_MAX) {
		e = &t->entries[0];
		for (size_t i = 1; i < t->n; i++)
			if (t->entries[i].used < e->used)
				e = &t->entries[i];
		free(e->key);
		free(e->name);
	} else {
		if (t->n == t->cap) {
			size_t cap = t->cap ? t->cap * 2 : 16;
			struct entry *grown = realloc(t->entries, cap * sizeof(*grown));
			if (!grown) {
				free(copy);
				return NULL;
			}
			t->entries = grown;
			t->cap = cap;
		}
		e = &t->entries[t->n++];
	}
	memset(e, 0, sizeof(*e));
	e->key = copy;
	e->used = ++r->tick;
	*ret_new = true;
	return e;
}

/* FNV-1a: distinct messages are told apart by their hash. */
static uint64_t hash(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static const char *opt(const char *s)
{
	return s ? s : "";
}

/* Keys join their parts with a byte no name or reason holds. */
static char *object_key(const struct kube_object_ref *obj, const char *type, const char *reason,
			const char *message)
{
	char *key;

	if (asprintf(&key, "%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s", opt(obj->api_version),
		     opt(obj->kind), opt(obj->namespace_), opt(obj->name), opt(obj->uid),
		     opt(type), opt(reason), opt(message)) < 0)
		return NULL;
	return key;
}

/* Step 1. Sets *ret_combined when the Event becomes the combined one. */
static int aggregate(struct event_recorder *r, const struct kube_object_ref *obj,
		     const char *type, const char *reason, const char *message, int64_t now_ns,
		     bool *ret_combined)
{
	char *key = object_key(obj, type, reason, NULL);
	struct entry *e;
	uint64_t h = hash(message);
	bool fresh, seen = false;

	if (!key || !(e = table_get(r, &r->aggregate, key, &fresh))) {
		free(key);
		return -ENOMEM;
	}
	free(key);
	if (fresh || now_ns - e->last_ns > EVENT_AGGREGATE_WINDOW_S * NS_PER_S)
		e->n_messages = 0;
	e->last_ns = now_ns;
	for (unsigned i = 0; i < e->n_messages; i++)
		seen |= e->messages[i] == h;
	if (!seen && e->n_messages < EVENT_AGGREGATE_MAX)
		e->messages[e->n_messages++] = h;
	*ret_combined = e->n_messages >= EVENT_AGGREGATE_MAX;
	if (*ret_combined)
		e->n_messages--;	/* the set never grows past the limit */
	return 0;
}

/* Step 3: true when the object and reason have a token left. */
static int spam_allows(struct event_recorder *r, const struct kube_object_ref *obj,
		       const char *reason, int64_t now_ns)
{
	char *key = object_key(obj, NULL, reason, NULL);
	struct entry *e;
	bool fresh;

	if (!key || !(e = table_get(r, &r->spam, key, &fresh))) {
		free(key);
		return -ENOMEM;
	}
	free(key);
	if (fresh) {
		e->tokens = EVENT_SPAM_BURST;
	} else if (now_ns > e->refilled_ns) {
		e->tokens += (double)(now_ns - e->refilled_ns) / (EVENT_SPAM_REFILL_S * NS_PER_S);
		if (e->tokens > EVENT_SPAM_BURST)
			e->tokens = EVENT_SPAM_BURST;
	}
	e->refilled_ns = now_ns > e->refilled_ns ? now_ns : e->refilled_ns;
	if (e->tokens < 1)
		return 0;
	e->tokens -= 1;
	return 1;
}

int event_recorder_observe(struct event_recorder *r, const struct kube_object_ref *obj,
			   const char *type, const char *reason, const char *message,
			   int64_t now_ns, struct kube_event *ret)
{
	struct entry *e;
	bool combined, fresh;
	char *key;
	int allowed, err;

	if (!obj || !obj->name || !*obj->name || !type || !reason || !message)
		return -EINVAL;
	if ((err = aggregate(r, obj, type, reason, message, now_ns, &combined)) < 0)
		return err;
	if (combined) {
		free(r->message);
		if (asprintf(&r->message, "%s%s", EVENT_COMBINED_PREFIX, message) < 0) {
			r->message = NULL;
			return -ENOMEM;
		}
		message = r->message;
	}
	/* step 2: a combined Event is counted under the key without the message */
	key = object_key(obj, type, reason, combined ? NULL : message);
	if (!key || !(e = table_get(r, &r->sent, key, &fresh))) {
		free(key);
		return -ENOMEM;
	}
	free(key);
	if (!e->name) {
		int64_t stamp = now_ns > r->last_name_ns ? now_ns : r->last_name_ns + 1;
		if (kube_event_name_for(obj, stamp, r->name, sizeof(r->name)) < 0 ||
		    !(e->name = strdup(r->name)))
			return -ENOMEM;	/* a later call makes the name again */
		r->last_name_ns = stamp;
		e->first_ns = now_ns;
	}
	e->count++;
	if ((allowed = spam_allows(r, obj, reason, now_ns)) < 0)
		return allowed;
	if (!allowed)
		return EVENT_SKIP;
	*ret = (struct kube_event){
		.node = r->node, .obj = *obj, .name = e->name, .type = type, .reason = reason,
		.message = message, .count = e->count, .first_ns = e->first_ns, .last_ns = now_ns,
	};
	if (e->created)
		return EVENT_PATCH;
	e->created = true;
	return EVENT_CREATE;
}
