/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Health of NVIDIA devices: the thin NVML shell around the verdict of
 * nvidia_events.h (docs/health.md, "NVIDIA GPUs: NVML events").
 *
 * Each published device gets a watch at probe: an NVML event set registered
 * for the XID critical and double-bit ECC events its GPU supports (a MIG
 * device registers on its parent GPU and keeps the events of its own
 * instance). Every health round drains the set with a zero timeout, so the
 * worker never blocks, and reads the GPU recovery action. An NVML without
 * the event calls (or a GPU without the events) leaves the set NULL: no
 * event source, the other checks stay.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "nvidia.h"

/* the most events one round takes from a set; the rest wait for the next */
#define NVIDIA_EVENTS_PER_ROUND 256

static nvml_event_set register_events(const struct nvml *n, nvml_device gpu)
{
	const unsigned long long wanted = NVML_EVENT_XID | NVML_EVENT_DOUBLE_BIT_ECC;
	unsigned long long types = 0;
	nvml_event_set set = NULL;

	if (!gpu || !n->event_set_create || !n->supported_event_types || !n->register_events ||
	    !n->event_set_wait_v2 || !n->event_set_free)
		return NULL;
	if (n->supported_event_types(gpu, &types) != NVML_OK || !(types & wanted) ||
	    n->event_set_create(&set) != NVML_OK)
		return NULL;
	if (n->register_events(gpu, types & wanted, set) != NVML_OK) {
		n->event_set_free(set);
		return NULL;
	}
	return set;
}

int nvidia_watch_add(struct nvidia_state *st, const struct dralet_device *dev, nvml_device gpu,
		     const struct nvidia_place *place)
{
	struct nvidia_watch *w = calloc(1, sizeof(*w)), **grown;

	if (!w)
		return -ENOMEM;
	grown = realloc(st->watches, (st->n_watches + 1) * sizeof(*grown));
	if (!grown) {
		free(w);
		return -ENOMEM;
	}
	st->watches = grown;
	w->dev = dev;
	w->place = *place;
	w->set = st->nvml ? register_events(st->nvml, gpu) : NULL;
	st->watches[st->n_watches++] = w;
	return 0;
}

static void watch_free(struct nvidia_state *st, struct nvidia_watch *w)
{
	if (w->set)
		st->nvml->event_set_free(w->set);
	free(w);
}

void nvidia_watch_remove(struct nvidia_state *st, const struct dralet_device *dev)
{
	for (size_t i = 0; st && i < st->n_watches; i++)
		if (st->watches[i]->dev == dev) {
			watch_free(st, st->watches[i]);
			st->watches[i] = st->watches[--st->n_watches];
			return;
		}
}

void nvidia_watch_clear(struct nvidia_state *st)
{
	for (size_t i = 0; i < st->n_watches; i++)
		watch_free(st, st->watches[i]);
	free(st->watches);
	st->watches = NULL;
	st->n_watches = 0;
}

static struct nvidia_watch *watch_of(const struct nvidia_state *st, const struct dralet_device *dev)
{
	for (size_t i = 0; i < st->n_watches; i++)
		if (st->watches[i]->dev == dev)
			return st->watches[i];
	return NULL;
}

static void note_lost(int r, struct nvidia_nvml_facts *facts)
{
	if (r == NVML_ERR_GPU_IS_LOST)
		facts->lost = true;
}

/* The polled facts of GPU @h (unknown ones stay as they are). */
static void read_facts(const struct nvml *n, nvml_device h, struct nvidia_nvml_facts *facts)
{
	unsigned pending = 0, corrected, uncorrected, remap_pending = 0, failure = 0;
	int r;

	if (n->field_values) {
		struct nvml_field_value fv = { .field_id = NVML_FI_DEV_GET_GPU_RECOVERY_ACTION };

		r = n->field_values(h, 1, &fv);
		note_lost(r, facts);
		note_lost(fv.ret, facts);
		if (r == NVML_OK && fv.ret == NVML_OK)
			facts->recovery_action = fv.value.ui > 999 ? 999 : (int)fv.value.ui;
	}
	if (n->retired_pages_pending) {
		r = n->retired_pages_pending(h, &pending);
		note_lost(r, facts);
		facts->retired_pages_pending = r == NVML_OK && pending;
	}
	if (n->remapped_rows) {
		r = n->remapped_rows(h, &corrected, &uncorrected, &remap_pending, &failure);
		note_lost(r, facts);
		facts->remap_failure = r == NVML_OK && failure;
		facts->remap_pending = r == NVML_OK && remap_pending;
	}
}

/* Takes what the set holds now (timeout 0: never waits). */
static void drain(const struct nvml *n, struct nvidia_watch *w, int64_t now,
		  struct nvidia_nvml_facts *facts)
{
	for (int i = 0; i < NVIDIA_EVENTS_PER_ROUND; i++) {
		struct nvml_event_data e = { 0 };
		int r = n->event_set_wait_v2(w->set, &e, 0);

		note_lost(r, facts);
		if (r != NVML_OK)
			return;	/* NVML_ERROR_TIMEOUT: nothing (more) pending */
		if (nvidia_event_concerns(&e, &w->place))
			nvidia_event_note(&w->events, &e, now);
	}
}

int nvidia_health(struct dralet_backend_ctx *ctx, struct dralet_device *dev)
{
	struct nvidia_state *st = dralet_ctx_state(ctx);
	const struct dralet_pci_func *f = dralet_device_pci(dev);
	struct nvidia_nvml_facts facts = { .recovery_action = NVIDIA_RECOVERY_UNKNOWN };
	struct nvidia_watch *w;
	int64_t now = (int64_t)time(NULL);
	const char *taint;
	char why[256];
	nvml_device h;
	int r = gpu_health_pci(ctx, dev);

	if (r != DRALET_HEALTH_HEALTHY || !st || !st->nvml || !f || gpu_is_vfio_form(dev))
		return r;
	w = watch_of(st, dev);
	r = st->nvml->by_pci_bus_id(f->address, &h);
	if (r == NVML_ERR_GPU_IS_LOST)
		facts.lost = true;
	else if (r != NVML_OK)
		return DRALET_HEALTH_HEALTHY;	/* PCI says fine, NVML says nothing */
	else
		read_facts(st->nvml, h, &facts);
	if (w && w->set)
		drain(st->nvml, w, now, &facts);
	r = nvidia_health_verdict(w ? &w->events : NULL, &facts, now, why, sizeof(why), &taint);
	if (r != DRALET_HEALTH_HEALTHY) {
		dralet_ctx_error(ctx, "%s", why);
		dralet_ctx_health_cause(ctx, taint);	/* NULL keeps the generic taint */
	}
	return r;
}
