/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The layout pass, part one: the PCI tree. Checks bus numbering the way the
 * kernel assigns it (children on their bridge's secondary bus, sibling bus
 * ranges disjoint), generates the VFs at PF routing ID + offset + n*stride,
 * sorts all functions, builds sysfs paths, and hands out what the YAML left
 * automatic: subordinate buses, links, IRQs, IOMMU groups, BAR addresses.
 * Class-device numbering is in board_number.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boards/sim/board_model.h"

int board_number(struct board *b, const struct board_diag *d);

struct walk {
	struct board *b;
	const struct board_diag *d;
	struct board_func **tree;
	size_t n, cap;
};

static int push(struct walk *w, struct board_func *f)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 256;
		struct board_func **grown = realloc(w->tree, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		w->tree = grown;
		w->cap = cap;
	}
	f->dfs_index = w->n;
	w->tree[w->n++] = f;
	return 0;
}

static int collect(struct walk *w, struct board_func **children, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int r = push(w, children[i]);

		if (r < 0)
			return r;
		r = collect(w, children[i]->children, children[i]->n_children);
		if (r < 0)
			return r;
	}
	return 0;
}

static unsigned routing_id(const struct board_func *f)
{
	return f->bus << 8 | f->dev << 3 | f->fn;
}

/* Children of one bus: same bus number, multi-function flags. */
static int check_bus(struct walk *w, struct board_func **children, size_t n, unsigned bus,
		     const char *owner)
{
	for (size_t i = 0; i < n; i++) {
		struct board_func *f = children[i];

		if (f->bus != bus)
			return board_fail(w->d, f->at, "%s sits below %s, whose bus is %02x; it "
					  "must be on that bus (%04x:%02x:%02x.%u)", f->bdf, owner, bus,
					  f->domain, bus, f->dev, f->fn);
		for (size_t k = 0; k < n; k++)
			if (k != i && children[k]->dev == f->dev)
				f->multifunction = true;
	}
	return 0;
}

struct board_func *board_vf_new(struct arena *a, struct board_func *pf, unsigned n)
{
	unsigned rid = routing_id(pf) + pf->vf_offset + n * pf->vf_stride;
	struct board_func *vf = rid > 0xffff ? NULL : arena_alloc(a, sizeof(*vf));
	const char *drv;

	if (!vf)
		return NULL;
	vf->domain = pf->domain;
	vf->bus = rid >> 8;
	vf->dev = (rid >> 3) & 0x1f;
	vf->fn = rid & 7;
	snprintf(vf->bdf, sizeof(vf->bdf), "%04x:%02x:%02x.%u", vf->domain, vf->bus, vf->dev,
		 vf->fn);
	vf->kind = BOARD_ENDPOINT;
	vf->vendor = pf->vendor;
	vf->device = pf->vf_device;
	vf->sub_vendor = pf->vf_sub_vendor;
	vf->sub_device = pf->vf_sub_device;
	vf->class_code = pf->vf_class;
	vf->revision = pf->revision;
	drv = pf->vf_settings[n].driver ? pf->vf_settings[n].driver : pf->vf_driver;
	vf->driver = drv && drv[0] ? drv : NULL;
	vf->numa = pf->numa;
	vf->iommu_group = pf->vf_settings[n].iommu_group;
	vf->irq = 0;	/* VFs have no INTx */
	vf->acpi_index = -1;
	vf->drm.card = vf->drm.render = -1;
	vf->explicit_bus = -1;
	memcpy(vf->bars, pf->vf_bars, sizeof(vf->bars));
	vf->bars_set = true;
	vf->link_set = vf->max_link_set = true;	/* VF link registers are reserved: unknown */
	vf->root = pf->root;
	vf->parent = pf->parent;
	vf->physfn = pf;
	vf->vf_index = (int)n;
	vf->at = pf->at;
	return vf;
}

static int make_vfs(struct walk *w, struct board_func *pf)
{
	struct arena *a = w->b->arena;

	pf->vfs = arena_alloc(a, (pf->num_vfs + 1) * sizeof(*pf->vfs));
	if (!pf->vfs)
		return -ENOMEM;
	for (unsigned n = 0; n < pf->num_vfs; n++) {
		unsigned rid = routing_id(pf) + pf->vf_offset + n * pf->vf_stride;

		if (rid > 0xffff)
			return board_fail(w->d, pf->at, "VF %u of %s would have routing ID %#x, beyond "
					  "bus ff (reduce num, offset or stride)", n, pf->bdf, rid);
		pf->vfs[n] = board_vf_new(a, pf, n);
		if (!pf->vfs[n])
			return -ENOMEM;
	}
	return 0;
}

static void max_bus_below(struct board_func **children, size_t n, unsigned *max)
{
	for (size_t i = 0; i < n; i++) {
		struct board_func *f = children[i];

		if (f->bus > *max)
			*max = f->bus;
		if (board_kind_is_bridge(f->kind) && f->explicit_bus > (int)*max)
			*max = (unsigned)f->explicit_bus;
		for (unsigned v = 0; v < f->num_vfs && f->vfs; v++)
			if (f->vfs[v]->bus > *max)
				*max = f->vfs[v]->bus;
		max_bus_below(f->children, f->n_children, max);
	}
}

/* Secondary buses of bridges without devices that did not name one. */
static void auto_buses(struct board_func **children, size_t n, unsigned *next)
{
	for (size_t i = 0; i < n; i++) {
		struct board_func *f = children[i];

		if (board_kind_is_bridge(f->kind) && !f->n_children)
			f->secondary = f->explicit_bus >= 0 ? (unsigned)f->explicit_bus : (*next)++;
		auto_buses(f->children, f->n_children, next);
	}
}

struct bus_range {
	unsigned lo, hi;
	const struct board_func *owner;
};

static int cmp_range(const void *x, const void *y)
{
	const struct bus_range *a = x, *b = y;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* Bottom-up subordinate numbers, then the disjointness of what sits below
 * one bus: child bridges' ranges and VFs that spill onto higher buses. */
static int bus_ranges(struct walk *w, struct board_func **children, size_t n, unsigned bus,
		      unsigned *ret_max)
{
	struct bus_range *ranges;
	size_t nr = 0;
	unsigned max = bus;
	int r = 0;

	ranges = calloc(2 * n + 1, sizeof(*ranges));
	if (!ranges)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct board_func *f = children[i];

		if (board_kind_is_bridge(f->kind)) {
			unsigned sub;

			if (f->n_children)
				f->secondary = f->children[0]->bus;
			if (f->secondary <= bus) {
				r = board_fail(w->d, f->at, "bridge %s: its secondary bus %02x must be "
					       "above its own bus %02x", f->bdf, f->secondary, bus);
				goto out;
			}
			r = check_bus(w, f->children, f->n_children, f->secondary, f->bdf);
			if (r < 0)
				goto out;
			r = bus_ranges(w, f->children, f->n_children, f->secondary, &sub);
			if (r < 0)
				goto out;
			f->subordinate = sub;
			ranges[nr++] = (struct bus_range){ f->secondary, sub, f };
			if (sub > max)
				max = sub;
		}
		if (f->num_vfs) {
			unsigned lo = 0x100, hi = 0;

			for (unsigned v = 0; v < f->num_vfs; v++) {
				unsigned vb = f->vfs[v]->bus;

				if (vb != bus && vb < lo)
					lo = vb;
				if (vb != bus && vb > hi)
					hi = vb;
			}
			if (hi) {
				ranges[nr++] = (struct bus_range){ lo, hi, f };
				if (hi > max)
					max = hi;
			}
		}
	}
	qsort(ranges, nr, sizeof(*ranges), cmp_range);
	for (size_t i = 1; i < nr; i++)
		if (ranges[i].lo <= ranges[i - 1].hi) {
			const struct board_func *a = ranges[i - 1].owner, *b = ranges[i].owner;

			r = board_fail(w->d, b->at, "buses %02x-%02x used %s %s overlap buses "
				       "%02x-%02x used %s %s", ranges[i].lo, ranges[i].hi,
				       b->n_children || board_kind_is_bridge(b->kind) ? "below"
										     : "by the VFs of",
				       b->bdf, ranges[i - 1].lo, ranges[i - 1].hi,
				       a->n_children || board_kind_is_bridge(a->kind) ? "below"
										     : "by the VFs of",
				       a->bdf);
			goto out;
		}
	*ret_max = max;
out:
	free(ranges);
	return r;
}

static int cmp_addr(const void *x, const void *y)
{
	const struct board_func *a = *(struct board_func *const *)x;
	const struct board_func *b = *(struct board_func *const *)y;

	if (a->domain != b->domain)
		return a->domain < b->domain ? -1 : 1;
	if (routing_id(a) != routing_id(b))
		return routing_id(a) < routing_id(b) ? -1 : 1;
	return 0;
}

static void inherit_links(struct board_func **children, size_t n, const struct board_func *up)
{
	for (size_t i = 0; i < n; i++) {
		struct board_func *f = children[i];

		if (!f->link_set && up)
			f->link = up->link;
		if (!f->max_link_set)
			f->max_link = f->link_set || !up ? f->link : up->max_link;
		inherit_links(f->children, f->n_children, f);
	}
}

/* Natural alignment. Non-prefetchable (and 32-bit) BARs must sit below a
 * bridge's 32-bit memory window, so they share one cursor below 4 GiB;
 * 64-bit prefetchable ones go to the root's high window. */
static int place_bar(struct walk *w, struct board_func *f, struct board_bar *bar,
		     uint64_t *next32, struct board_root *root)
{
	bool high = bar->is64 && bar->prefetch;
	uint64_t *next = high ? &root->mmio_next : next32;
	uint64_t start = (*next + bar->size - 1) & ~(bar->size - 1);

	if (!high && start + bar->size > 0xfc000000ull)
		return board_fail(w->d, f->at, "%s: the board's non-prefetchable BARs exceed the "
				  "2 GiB below 4 GiB; make large BARs \"pref\"", f->bdf);
	bar->start = start;
	*next = start + bar->size;
	return 0;
}

static void widen(struct board_func *bridge, const struct board_bar *bar)
{
	int which = bar->is64 && bar->prefetch;
	uint64_t end = bar->start + bar->size - 1;

	if (!bridge->win_end[which] || bar->start < bridge->win_start[which])
		bridge->win_start[which] = bar->start;
	if (end > bridge->win_end[which])
		bridge->win_end[which] = end;
}

static int allocate_bars(struct walk *w)
{
	struct board *b = w->b;
	uint64_t next32 = 0x80000000ull;

	for (size_t r = 0; r < b->n_roots; r++) {
		b->roots[r].mmio_base = 0x200000000000ull + (uint64_t)r * 0x40000000000ull;
		b->roots[r].mmio_next = b->roots[r].mmio_base;
	}
	for (size_t i = 0; i < w->n; i++) {
		struct board_func *f = w->tree[i];
		int rc;

		if (f->physfn)
			continue;	/* slices of the PF's SR-IOV resource, below */
		if (!f->bars_set && !board_kind_is_bridge(f->kind))
			f->bars[0] = (struct board_bar){ .size = 1u << 20, .is64 = true };
		for (int s = 0; s < 6; s++) {
			if (!f->bars[s].size)
				continue;
			rc = place_bar(w, f, &f->bars[s], &next32, f->root);
			if (rc < 0)
				return rc;
			for (struct board_func *up = f->parent; up; up = up->parent)
				widen(up, &f->bars[s]);
		}
		for (int s = 0; s < 6 && f->has_sriov; s++) {
			if (!f->vf_bars[s].size)
				continue;
			/* one VF BAR per VF, back to back, aligned to one */
			f->vf_res[s] = f->vf_bars[s];
			rc = place_bar(w, f, &f->vf_res[s], &next32, f->root);
			if (rc < 0)
				return rc;
			f->vf_res[s].size = f->vf_bars[s].size * f->total_vfs;
			if (f->vf_res[s].is64 && f->vf_res[s].prefetch)
				f->root->mmio_next = f->vf_res[s].start + f->vf_res[s].size;
			else
				next32 = f->vf_res[s].start + f->vf_res[s].size;
			if (next32 > 0xfc000000ull)
				return board_fail(w->d, f->at, "%s: VF BARs exceed the space below 4 GiB; "
						  "make them \"pref\"", f->bdf);
			for (struct board_func *up = f->parent; up; up = up->parent)
				widen(up, &f->vf_res[s]);
		}
	}
	for (size_t i = 0; i < w->n; i++) {
		struct board_func *vf = w->tree[i];

		if (!vf->physfn)
			continue;
		for (int s = 0; s < 6; s++)
			if (vf->bars[s].size)
				vf->bars[s].start = vf->physfn->vf_res[s].start +
						    (uint64_t)vf->vf_index * vf->bars[s].size;
	}
	return 0;
}

static int assign_iommu_groups(struct walk *w)
{
	struct board *b = w->b;
	unsigned char *used;
	int next = 0;

	if (!b->iommu) {
		for (size_t i = 0; i < w->n; i++)
			if (w->tree[i]->iommu_group >= 0)
				return board_fail(w->d, w->tree[i]->at, "%s has 'iommu_group' but the "
						  "board has 'iommu: false'", w->tree[i]->bdf);
		return 0;
	}
	used = calloc(65536, 1);
	if (!used)
		return -ENOMEM;
	for (size_t i = 0; i < w->n; i++)
		if (w->tree[i]->iommu_group >= 0)
			used[w->tree[i]->iommu_group] = 1;
	for (size_t i = 0; i < w->n; i++) {
		if (w->tree[i]->iommu_group != -1)
			continue;
		while (next < 65536 && used[next])
			next++;
		if (next == 65536) {
			free(used);
			return board_fail(w->d, NULL, "more than 65536 IOMMU groups");
		}
		w->tree[i]->iommu_group = next++;
	}
	free(used);
	return 0;
}

static int make_paths(struct walk *w)
{
	struct arena *a = w->b->arena;

	for (size_t i = 0; i < w->n; i++) {
		struct board_func *f = w->tree[i];
		const char *up = f->parent ? f->parent->sysfs_path : NULL;

		f->sysfs_path = up ? arena_printf(a, "%s/%s", up, f->bdf)
				   : arena_printf(a, "devices/%s/%s", f->root->name, f->bdf);
		if (!f->sysfs_path)
			return -ENOMEM;
	}
	return 0;
}

int board_layout(struct board *b, const struct board_diag *d)
{
	struct walk w = { .b = b, .d = d };
	size_t n_tree;
	int r;

	for (size_t i = 0; i < b->n_roots; i++) {
		r = collect(&w, b->roots[i].children, b->roots[i].n_children);
		if (r < 0)
			goto out;
	}
	n_tree = w.n;
	b->all_cpus = arena_printf(b->arena, "0-%u", b->nr_cpus ? b->nr_cpus - 1 : 0);
	if (!b->all_cpus) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < b->n_roots; i++)
		if (b->roots[i].numa >= (int)b->n_numa) {
			r = board_fail(d, b->roots[i].at, "%s is on NUMA node %d, but the board has %zu",
				       b->roots[i].name, b->roots[i].numa, b->n_numa);
			goto out;
		}
	for (size_t i = 0; i < n_tree; i++)
		if (w.tree[i]->numa >= (int)b->n_numa) {
			r = board_fail(d, w.tree[i]->at, "%s is on NUMA node %d, but the board has %zu",
				       w.tree[i]->bdf, w.tree[i]->numa, b->n_numa);
			goto out;
		}
	for (size_t i = 0; i < n_tree; i++) {
		struct board_func *f = w.tree[i];

		if (!f->num_vfs)
			continue;
		r = make_vfs(&w, f);
		if (r < 0)
			goto out;
		for (unsigned v = 0; v < f->num_vfs; v++) {
			r = push(&w, f->vfs[v]);
			if (r < 0)
				goto out;
		}
	}

	/* bus numbers, root by root */
	for (size_t i = 0; i < b->n_roots; i++) {
		struct board_root *root = &b->roots[i];
		unsigned max = root->bus, next;

		r = check_bus(&w, root->children, root->n_children, root->bus, root->name);
		if (r < 0)
			goto out;
		max_bus_below(root->children, root->n_children, &max);
		next = max + 1;
		auto_buses(root->children, root->n_children, &next);
		if (next > 0x100) {
			r = board_fail(d, root->at, "%s runs out of bus numbers", root->name);
			goto out;
		}
		r = bus_ranges(&w, root->children, root->n_children, root->bus, &root->subordinate);
		if (r < 0)
			goto out;
	}
	for (size_t i = 0; i < b->n_roots; i++)
		for (size_t k = 0; k < i; k++) {
			struct board_root *x = &b->roots[i], *y = &b->roots[k];

			if (x->domain == y->domain && x->bus <= y->subordinate &&
			    y->bus <= x->subordinate) {
				r = board_fail(d, x->at, "host bridge %s (buses %02x-%02x) overlaps %s "
					       "(buses %02x-%02x)", x->name, x->bus, x->subordinate,
					       y->name, y->bus, y->subordinate);
				goto out;
			}
		}

	/* every address once */
	b->n_funcs = w.n;
	b->tree = arena_alloc(b->arena, (w.n + 1) * sizeof(*b->tree));
	b->funcs = arena_alloc(b->arena, (w.n + 1) * sizeof(*b->funcs));
	if (!b->tree || !b->funcs) {
		r = -ENOMEM;
		goto out;
	}
	if (w.n) {	/* a board without functions has no walk (w.tree NULL) */
		memcpy(b->tree, w.tree, w.n * sizeof(*w.tree));
		memcpy(b->funcs, w.tree, w.n * sizeof(*w.tree));
		qsort(b->funcs, w.n, sizeof(*b->funcs), cmp_addr);
	}
	for (size_t i = 1; i < w.n; i++)
		if (!cmp_addr(&b->funcs[i - 1], &b->funcs[i])) {
			struct board_func *x = b->funcs[i - 1], *y = b->funcs[i];
			struct board_func *later = x->dfs_index > y->dfs_index ? x : y;
			struct board_func *other = later == x ? y : x;

			if (later->physfn)
				r = board_fail(d, later->at, "duplicate PCI address %s: VF %d of %s "
					       "collides with %s%s", later->bdf, later->vf_index,
					       later->physfn->bdf, other->physfn ? "a VF of " : "",
					       other->physfn ? other->physfn->bdf : "a function declared "
										   "elsewhere");
			else
				r = board_fail(d, later->at, "duplicate PCI address %s", later->bdf);
			goto out;
		}

	for (size_t i = 0; i < b->n_roots; i++)
		inherit_links(b->roots[i].children, b->roots[i].n_children, NULL);
	{
		int irq = 24;

		for (size_t i = 0; i < w.n; i++)
			if (w.tree[i]->irq < 0)
				w.tree[i]->irq = irq++;
	}
	if ((r = make_paths(&w)) < 0 || (r = assign_iommu_groups(&w)) < 0 ||
	    (r = allocate_bars(&w)) < 0)
		goto out;
	r = board_number(b, d);
out:
	free(w.tree);
	return r;
}

void board_free(struct board *b)
{
	if (b) {
		arena_free(b->arena);
		b->arena = NULL;
	}
}
