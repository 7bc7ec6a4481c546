/* SPDX-License-Identifier: Apache-2.0 */
/* Which devices and counter sets go into which slice (counters_layout.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/slices/counters_layout.h"

#define NONE ((size_t)-1)

enum counters_layout_kind counters_layout_kind(const struct slice_options *opts)
{
	if (!opts || !opts->partitionable)
		return COUNTERS_LAYOUT_OFF;
	if (opts->server_minor && opts->server_minor < 35)
		return COUNTERS_LAYOUT_INLINE;
	return COUNTERS_LAYOUT_SEPARATE;
}

struct planner {
	const struct slice_device_in *const *devs;
	size_t n;
	slice_warn_fn warn;
	void *userdata;
	const struct dralet_counter_list **sets;	/* the pool's sets, first owner wins */
	size_t n_sets;
	bool *left_out;		/* per device */
	size_t *parent;		/* INLINE: union-find over sets */
	struct counters_layout *out;
};

static void warn(const struct planner *p, size_t dev, const char *what, const char *problem)
{
	if (p->warn)
		p->warn(p->userdata, p->devs[dev]->backend ? p->devs[dev]->backend : "unknown",
			p->devs[dev]->name, what, problem);
}

static size_t find_set(const struct planner *p, const char *name)
{
	for (size_t i = 0; i < p->n_sets; i++)
		if (!strcmp(p->sets[i]->set, name))
			return i;
	return NONE;
}

static bool set_has(const struct dralet_counter_list *set, const char *counter)
{
	for (size_t k = 0; k < set->n; k++)
		if (!strcmp(set->counters[k].name, counter))
			return true;
	return false;
}

/* The pool's sets, and the devices whose consumptions name no owned set. */
static void check(struct planner *p)
{
	for (size_t i = 0; i < p->n; i++)
		for (size_t s = 0; s < p->devs[i]->n_sets; s++) {
			const struct dralet_counter_list *set = &p->devs[i]->sets[s];
			if (find_set(p, set->set) != NONE)
				warn(p, i, set->set, "counter set already owned by another device; "
						     "left out");
			else
				p->sets[p->n_sets++] = set;
		}
	for (size_t i = 0; i < p->n; i++)
		for (size_t u = 0; u < p->devs[i]->n_uses && !p->left_out[i]; u++) {
			const struct dralet_counter_list *use = &p->devs[i]->uses[u];
			size_t s = find_set(p, use->set);
			for (size_t k = 0; s != NONE && k < use->n && !p->left_out[i]; k++)
				if (!set_has(p->sets[s], use->counters[k].name)) {
					warn(p, i, use->counters[k].name, "consumes a counter its set "
						"does not have; device not published");
					p->left_out[i] = true;
				}
			if (s == NONE) {
				warn(p, i, use->set, "consumes from a counter set no device owns; "
						     "device not published");
				p->left_out[i] = true;
			}
		}
}

static struct counters_slice *new_slice(struct planner *p, size_t max_devices, size_t max_sets)
{
	struct counters_layout *l = p->out;
	struct counters_slice *slices = realloc(l->slices, (l->n_slices + 1) * sizeof(*slices));
	if (!slices)
		return NULL;
	l->slices = slices;
	struct counters_slice *s = &slices[l->n_slices++];
	*s = (struct counters_slice){ 0 };
	s->devices = calloc(max_devices + 1, sizeof(*s->devices));
	s->sets = calloc(max_sets + 1, sizeof(*s->sets));
	return s->devices && s->sets ? s : NULL;
}

/* Slices of at most @per of the devices @take says, in order. */
static int chunk_devices(struct planner *p, unsigned per, bool (*take)(struct planner *, size_t))
{
	struct counters_slice *cur = NULL;
	for (size_t i = 0; i < p->n; i++) {
		if (!take(p, i))
			continue;
		if ((!cur || cur->n_devices == per) && !(cur = new_slice(p, per, 0)))
			return -ENOMEM;
		cur->devices[cur->n_devices++] = i;
	}
	return 0;
}

static bool take_whole(struct planner *p, size_t i)
{
	return !p->devs[i]->partition;
}

static bool take_published(struct planner *p, size_t i)
{
	return !p->left_out[i];
}

static int plan_off(struct planner *p, unsigned per)
{
	return chunk_devices(p, per, take_whole);
}

static int plan_separate(struct planner *p, unsigned per)
{
	struct counters_layout *l = p->out;
	check(p);
	for (size_t i = 0; i < p->n; i++)
		if (!p->left_out[i] && p->devs[i]->n_uses)
			l->with_uses[i] = l->any_uses = true;
	for (size_t s = 0; s < p->n_sets; s += DRALET_COUNTER_SETS_PER_SLICE_MAX) {
		struct counters_slice *cs = new_slice(p, 0, DRALET_COUNTER_SETS_PER_SLICE_MAX);
		if (!cs)
			return -ENOMEM;
		for (size_t k = s; k < p->n_sets && k < s + DRALET_COUNTER_SETS_PER_SLICE_MAX; k++)
			cs->sets[cs->n_sets++] = p->sets[k];
	}
	if ((p->n_sets || l->any_uses) && per > DRALET_DEVICES_PER_SLICE_WITH_COUNTERS)
		per = DRALET_DEVICES_PER_SLICE_WITH_COUNTERS;
	return chunk_devices(p, per, take_published);
}

/* ---- INLINE (1.34) ---- */

static size_t root(size_t *parent, size_t s)
{
	while (parent[s] != s)
		s = parent[s] = parent[parent[s]];
	return s;
}

/* The group (root set) of device @i's consumptions, NONE without any. */
static size_t device_group(const struct planner *p, size_t i)
{
	if (p->left_out[i] || !p->devs[i]->n_uses)
		return NONE;
	return root(p->parent, find_set(p, p->devs[i]->uses[0].set));
}

struct group_size {
	size_t counters, devices, consumed;
};

static void group_add_devices(const struct planner *p, size_t g, struct group_size *sz)
{
	for (size_t i = 0; i < p->n; i++)
		if (device_group(p, i) == g) {
			sz->devices++;
			for (size_t u = 0; u < p->devs[i]->n_uses; u++)
				sz->consumed += p->devs[i]->uses[u].n;
		}
}

static bool fits(const struct group_size *a, const struct group_size *b, unsigned per)
{
	return a->counters + b->counters <= COUNTERS_INLINE_SET_COUNTERS_MAX &&
	       a->devices + b->devices <= per &&
	       a->consumed + b->consumed <= COUNTERS_INLINE_CONSUMED_MAX;
}

/* Group @g is too big for one slice: its partitions go, its other devices
 * lose their consumptions, its sets are not published. */
static void break_group(struct planner *p, size_t g)
{
	for (size_t i = 0; i < p->n; i++) {
		if (device_group(p, i) != g)
			continue;
		warn(p, i, NULL, p->devs[i]->partition
			? "its counter sets and their consumers exceed one 1.34 slice (32 counters, "
			  "1024 consumed); partition not published"
			: "its counter sets and their consumers exceed one 1.34 slice; published "
			  "without consumesCounters");
		if (p->devs[i]->partition)
			p->left_out[i] = true;
		else
			p->out->with_uses[i] = false;
	}
}

static bool take_plain(struct planner *p, size_t i)
{
	return !p->left_out[i] && !p->out->with_uses[i];
}

static int plan_inline(struct planner *p, unsigned per)
{
	struct counters_layout *l = p->out;
	check(p);
	for (size_t s = 0; s < p->n_sets; s++)
		p->parent[s] = s;
	for (size_t i = 0; i < p->n; i++) {
		if (p->left_out[i])
			continue;
		for (size_t u = 1; u < p->devs[i]->n_uses; u++)
			p->parent[root(p->parent, find_set(p, p->devs[i]->uses[u].set))] =
				root(p->parent, find_set(p, p->devs[i]->uses[0].set));
		l->with_uses[i] = p->devs[i]->n_uses > 0;
	}
	struct counters_slice *cur = NULL;
	struct group_size cur_size = { 0 };
	for (size_t g = 0; g < p->n_sets; g++) {
		if (root(p->parent, g) != g)
			continue;
		struct group_size sz = { 0 };
		for (size_t s = 0; s < p->n_sets; s++)
			if (root(p->parent, s) == g)
				sz.counters += p->sets[s]->n;
		group_add_devices(p, g, &sz);
		if (!fits(&(struct group_size){ 0 }, &sz, per)) {
			break_group(p, g);
			continue;
		}
		if (!cur || !fits(&cur_size, &sz, per)) {
			/* at most 32 counters: at most 32 non-empty sets */
			if (!(cur = new_slice(p, per, COUNTERS_INLINE_SET_COUNTERS_MAX)))
				return -ENOMEM;
			cur_size = (struct group_size){ 0 };
		}
		for (size_t s = 0; s < p->n_sets; s++)
			if (root(p->parent, s) == g)
				cur->sets[cur->n_sets++] = p->sets[s];
		cur_size.counters += sz.counters;
		cur_size.devices += sz.devices;
		cur_size.consumed += sz.consumed;
	}
	/* each slice's devices: the consumers of its sets, in order */
	for (size_t k = 0; k < l->n_slices; k++) {
		struct counters_slice *s = &l->slices[k];
		for (size_t i = 0; i < p->n; i++) {
			size_t g = l->with_uses[i] ? device_group(p, i) : NONE;
			for (size_t j = 0; g != NONE && j < s->n_sets; j++)
				if (root(p->parent, find_set(p, s->sets[j]->set)) == g) {
					s->devices[s->n_devices++] = i;
					break;
				}
		}
	}
	for (size_t i = 0; i < p->n; i++)
		l->any_uses |= l->with_uses[i];
	return chunk_devices(p, per, take_plain);
}

int counters_layout_plan(const struct slice_device_in *const *devs, size_t n,
			 enum counters_layout_kind kind, unsigned per, slice_warn_fn warn_fn,
			 void *userdata, struct counters_layout **ret)
{
	size_t max_sets = 0;
	for (size_t i = 0; i < n; i++)
		max_sets += devs[i]->n_sets;
	struct planner p = {
		.devs = devs, .n = n, .warn = warn_fn, .userdata = userdata,
		.sets = calloc(max_sets + 1, sizeof(*p.sets)),
		.left_out = calloc(n + 1, sizeof(*p.left_out)),
		.parent = calloc(max_sets + 1, sizeof(*p.parent)),
		.out = calloc(1, sizeof(*p.out)),
	};
	int r = -ENOMEM;
	if (!p.sets || !p.left_out || !p.parent || !p.out ||
	    !(p.out->with_uses = calloc(n + 1, sizeof(*p.out->with_uses))))
		goto out;
	if (per == 0)
		per = 1;
	switch (kind) {
	case COUNTERS_LAYOUT_OFF: r = plan_off(&p, per); break;
	case COUNTERS_LAYOUT_SEPARATE: r = plan_separate(&p, per); break;
	case COUNTERS_LAYOUT_INLINE: r = plan_inline(&p, per); break;
	default: r = -EINVAL;
	}
	if (r == 0) {
		*ret = p.out;
		p.out = NULL;
	}
out:
	counters_layout_free(p.out);
	free(p.sets);
	free(p.left_out);
	free(p.parent);
	return r;
}

void counters_layout_free(struct counters_layout *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n_slices; i++) {
		free(l->slices[i].devices);
		free(l->slices[i].sets);
	}
	free(l->slices);
	free(l->with_uses);
	free(l);
}
