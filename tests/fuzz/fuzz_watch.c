/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the watch-stream parser (agent/kube/watch.c). The
 * first byte picks a chunk size, so the fuzzer explores chunk boundaries as
 * well as contents; a small event cap exercises the size limit. Invariants:
 * feeding never crashes or leaks, an error sticks until reset, and the same
 * bytes give the same events whatever the chunking.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/kube/watch.h"

struct tally {
	size_t events;
	unsigned long sum;	/* a cheap digest of types and versions */
};

static int count(void *userdata, const struct kube_watch_event *ev)
{
	struct tally *t = userdata;
	t->events++;
	t->sum = t->sum * 31 + (unsigned long)ev->type + (unsigned long)ev->code;
	for (const char *p = ev->resource_version; p && *p; p++)
		t->sum = t->sum * 31 + (unsigned char)*p;
	return 0;
}

static int run(const uint8_t *data, size_t size, size_t chunk, size_t cap, struct tally *t)
{
	struct kube_watch_parser *p;
	int r = 0;
	if (kube_watch_parser_new(cap, &p) < 0)
		return -1;
	for (size_t off = 0; off < size && r == 0; off += chunk) {
		size_t n = size - off < chunk ? size - off : chunk;
		r = kube_watch_parser_feed(p, (const char *)data + off, n, count, t);
	}
	if (r < 0 && kube_watch_parser_feed(p, "\n", 1, count, t) == 0)
		abort();	/* errors must stick until reset */
	kube_watch_parser_reset(p);
	kube_watch_parser_free(p);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t chunk = 1 + data[0] % 64;
	size_t cap = data[0] & 0x80 ? 256 : 0;
	data++;
	size--;
	struct tally a = { 0 }, b = { 0 };
	int ra = run(data, size, chunk, cap, &a);
	int rb = run(data, size, size ? size : 1, cap, &b);
	/* One chunk or many: the same outcome. */
	if (ra != rb || a.events != b.events || a.sum != b.sum)
		abort();
	return 0;
}
