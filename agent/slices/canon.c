/* SPDX-License-Identifier: Apache-2.0 */
/* Canonical digests of the compared ResourceSlice fields (see canon.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "agent/lib/json_get.h"
#include "agent/slices/canon.h"

const char *const slice_canon_fields[] = { "nodeSelector", "allNodes", "devices", "sharedCounters",
					   "perDeviceNodeSelection", NULL };

bool slice_json_is_empty(struct json_object *o)
{
	if (!o)
		return true;
	switch (json_object_get_type(o)) {
	case json_type_null:
		return true;
	case json_type_array:
		return json_object_array_length(o) == 0;
	case json_type_object:
		return json_object_object_length(o) == 0;
	case json_type_string:
		return json_object_get_string_len(o) == 0;
	case json_type_boolean:
		return !json_object_get_boolean(o);
	case json_type_int:
		return json_object_get_int64(o) == 0;
	default:
		return false;
	}
}

/* ---- SipHash-2-4, streaming (one lane of the digest) ---- */

struct sip {
	uint64_t v0, v1, v2, v3;
	uint64_t tail;		/* bytes not yet in a full word, little-endian */
	unsigned n_tail;
	uint64_t total;
};

static inline uint64_t rotl(uint64_t x, unsigned b)
{
	return (x << b) | (x >> (64 - b));
}

static inline void sip_round(struct sip *s)
{
	s->v0 += s->v1;
	s->v1 = rotl(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = rotl(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = rotl(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = rotl(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = rotl(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = rotl(s->v2, 32);
}

static void sip_init(struct sip *s, uint64_t k0, uint64_t k1)
{
	*s = (struct sip){
		.v0 = k0 ^ 0x736f6d6570736575ull,
		.v1 = k1 ^ 0x646f72616e646f6dull,
		.v2 = k0 ^ 0x6c7967656e657261ull,
		.v3 = k1 ^ 0x7465646279746573ull,
	};
}

static inline void sip_word(struct sip *s, uint64_t m)
{
	s->v3 ^= m;
	sip_round(s);
	sip_round(s);
	s->v0 ^= m;
}

static void sip_feed(struct sip *s, const void *data, size_t len)
{
	const unsigned char *p = data;
	s->total += len;
	while (len && s->n_tail) {
		s->tail |= (uint64_t)*p++ << (8 * s->n_tail);
		len--;
		if (++s->n_tail == 8) {
			sip_word(s, s->tail);
			s->tail = 0;
			s->n_tail = 0;
		}
	}
	for (; len >= 8; p += 8, len -= 8) {
		uint64_t m = 0;
		for (unsigned i = 0; i < 8; i++)
			m |= (uint64_t)p[i] << (8 * i);
		sip_word(s, m);
	}
	for (; len; len--)
		s->tail |= (uint64_t)*p++ << (8 * s->n_tail++);
}

static uint64_t sip_final(struct sip *s)
{
	uint64_t b = (s->total << 56) | s->tail;
	sip_word(s, b);
	s->v2 ^= 0xff;
	for (int i = 0; i < 4; i++)
		sip_round(s);
	return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

/* Per-process keys: digests are never stored or sent, only compared. */
static uint64_t keys[4];
static bool keyed;

static void init_keys(void)
{
	if (keyed)
		return;
	if (getrandom(keys, sizeof(keys), GRND_NONBLOCK) != (ssize_t)sizeof(keys)) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		keys[0] = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32);
		keys[1] = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull;
		keys[2] = (uint64_t)(uintptr_t)&keys ^ 0x2545f4914f6cdd1dull;
		keys[3] = keys[0] * 0xff51afd7ed558ccdull + keys[1];
	}
	keyed = true;
}

/* ---- the canonical encoding ---- */

enum { TO_STRIPPED = 1, TO_FULL = 2 };

struct enc {
	struct sip lane[2][2];	/* [stripped, full][lane] */
	bool time_added;
};

static void emit(struct enc *e, unsigned to, const void *data, size_t len)
{
	for (unsigned k = 0; k < 2; k++) {
		if (!(to & (1u << k)))
			continue;
		sip_feed(&e->lane[k][0], data, len);
		sip_feed(&e->lane[k][1], data, len);
	}
}

static void emit_tag(struct enc *e, unsigned to, char tag)
{
	emit(e, to, &tag, 1);
}

static void emit_bytes(struct enc *e, unsigned to, char tag, const char *s, size_t len)
{
	uint64_t n = len;
	emit_tag(e, to, tag);
	emit(e, to, &n, sizeof(n));
	emit(e, to, s, len);
}

static int cmp_keys(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void encode(struct enc *e, unsigned to, struct json_object *o);

/* Members with a non-empty value, in key order. */
static void encode_object(struct enc *e, unsigned to, struct json_object *o)
{
	const char *small[64], **keys_sorted = small;
	size_t n = 0, cap = sizeof(small) / sizeof(small[0]);
	size_t total = (size_t)json_object_object_length(o);
	if (total > cap) {
		keys_sorted = malloc(total * sizeof(*keys_sorted));
		cap = keys_sorted ? total : 0;
	}
	emit_tag(e, to, '{');
	if (keys_sorted) {
		json_object_object_foreach(o, key, val) {
			if (val && !strcmp(key, "timeAdded"))
				e->time_added = true;
			if (!slice_json_is_empty(val) && n < cap)
				keys_sorted[n++] = key;
		}
		if (n > 8) {
			qsort(keys_sorted, n, sizeof(*keys_sorted), cmp_keys);
		} else {
			for (size_t i = 1; i < n; i++)
				for (size_t j = i; j > 0 && strcmp(keys_sorted[j - 1], keys_sorted[j]) > 0; j--) {
					const char *t = keys_sorted[j];
					keys_sorted[j] = keys_sorted[j - 1];
					keys_sorted[j - 1] = t;
				}
		}
	} else {
		/* No memory for a key list: pick the keys in order, one scan each. */
		const char *prev = NULL;
		for (;;) {
			const char *next = NULL;
			json_object_object_foreach(o, key, val) {
				if (val && !strcmp(key, "timeAdded"))
					e->time_added = true;
				if (slice_json_is_empty(val) || (prev && strcmp(key, prev) <= 0))
					continue;
				if (!next || strcmp(key, next) < 0)
					next = key;
			}
			if (!next)
				break;
			struct json_object *v = json_object_object_get(o, next);
			unsigned sub = !strcmp(next, "timeAdded") ? (to & ~(unsigned)TO_STRIPPED) : to;
			emit_bytes(e, sub, 'k', next, strlen(next));
			encode(e, sub, v);
			prev = next;
		}
		emit_tag(e, to, '}');
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct json_object *v = json_object_object_get(o, keys_sorted[i]);
		unsigned sub = !strcmp(keys_sorted[i], "timeAdded") ? (to & ~(unsigned)TO_STRIPPED) : to;
		emit_bytes(e, sub, 'k', keys_sorted[i], strlen(keys_sorted[i]));
		encode(e, sub, v);
	}
	emit_tag(e, to, '}');
	if (keys_sorted != small)
		free(keys_sorted);
}

static void encode(struct enc *e, unsigned to, struct json_object *o)
{
	if (!to)
		return;
	if (slice_json_is_empty(o)) {
		emit_tag(e, to, 'n');
		return;
	}
	switch (json_object_get_type(o)) {
	case json_type_object:
		encode_object(e, to, o);
		return;
	case json_type_array: {
		size_t n = json_object_array_length(o);
		emit_tag(e, to, '[');
		for (size_t i = 0; i < n; i++)
			encode(e, to, json_object_array_get_idx(o, i));
		emit_tag(e, to, ']');
		return;
	}
	case json_type_string:
		emit_bytes(e, to, 's', json_object_get_string(o), (size_t)json_object_get_string_len(o));
		return;
	case json_type_boolean:
		emit_tag(e, to, 't');	/* false is empty */
		return;
	case json_type_int: {
		int64_t s = json_object_get_int64(o);
		uint64_t u = json_object_get_uint64(o);
		if (s == INT64_MAX && u > (uint64_t)INT64_MAX) {
			emit_tag(e, to, 'u');
			emit(e, to, &u, sizeof(u));
		} else {
			emit_tag(e, to, 'i');
			emit(e, to, &s, sizeof(s));
		}
		return;
	}
	case json_type_double: {
		double d = json_object_get_double(o);
		if (d == 0)
			d = 0;	/* -0.0 equals 0.0 */
		emit_tag(e, to, 'd');
		emit(e, to, &d, sizeof(d));
		return;
	}
	default:
		emit_tag(e, to, 'n');
		return;
	}
}

struct slice_canon {
	struct enc e;
	size_t n_devices;
};

static void canon_begin(struct slice_canon *c, struct json_object *spec)
{
	*c = (struct slice_canon){ .e.time_added = false };
	init_keys();
	for (unsigned k = 0; k < 2; k++) {
		sip_init(&c->e.lane[k][0], keys[0], keys[1]);
		sip_init(&c->e.lane[k][1], keys[2], keys[3]);
	}
	for (unsigned f = 0; slice_canon_fields[f]; f++) {
		char tag[2] = { 'F', (char)('0' + f) };
		emit(&c->e, TO_STRIPPED | TO_FULL, tag, sizeof(tag));
		if (!strcmp(slice_canon_fields[f], "devices"))
			return;
		encode(&c->e, TO_STRIPPED | TO_FULL, json_get(spec, slice_canon_fields[f]));
	}
}

static void canon_device(struct slice_canon *c, struct json_object *device)
{
	if (!c->n_devices++)
		emit_tag(&c->e, TO_STRIPPED | TO_FULL, '[');
	encode(&c->e, TO_STRIPPED | TO_FULL, device);
}

static void canon_end(struct slice_canon *c, struct json_object *spec,
		      struct json_object *devices_if_none, struct slice_digest *ret_stripped,
		      struct slice_digest *ret_full, bool *ret_time_added)
{
	if (c->n_devices)
		emit_tag(&c->e, TO_STRIPPED | TO_FULL, ']');
	else
		encode(&c->e, TO_STRIPPED | TO_FULL, devices_if_none);
	bool after = false;
	for (unsigned f = 0; slice_canon_fields[f]; f++) {
		if (!after) {
			after = !strcmp(slice_canon_fields[f], "devices");
			continue;
		}
		char tag[2] = { 'F', (char)('0' + f) };
		emit(&c->e, TO_STRIPPED | TO_FULL, tag, sizeof(tag));
		encode(&c->e, TO_STRIPPED | TO_FULL, json_get(spec, slice_canon_fields[f]));
	}
	struct slice_digest *out[2] = { ret_stripped, ret_full };
	for (unsigned k = 0; k < 2; k++) {
		uint64_t a = sip_final(&c->e.lane[k][0]), b = sip_final(&c->e.lane[k][1]);
		if (out[k])
			*out[k] = (struct slice_digest){ { a, b } };
	}
	if (ret_time_added)
		*ret_time_added = c->e.time_added;
}

void slice_canon_digest(struct json_object *spec, struct slice_digest *ret_stripped,
			struct slice_digest *ret_full, bool *ret_time_added)
{
	struct slice_canon c;
	struct json_object *devices = json_get(spec, "devices");
	canon_begin(&c, spec);
	bool list = devices && json_object_is_type(devices, json_type_array);
	for (size_t i = 0; list && i < json_object_array_length(devices); i++)
		canon_device(&c, json_object_array_get_idx(devices, i));
	canon_end(&c, spec, list ? NULL : devices, ret_stripped, ret_full, ret_time_added);
}

int slice_canon_begin(struct json_object *spec, struct slice_canon **ret)
{
	struct slice_canon *c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	canon_begin(c, spec);
	*ret = c;
	return 0;
}

void slice_canon_device(struct slice_canon *c, struct json_object *device)
{
	canon_device(c, device);
}

void slice_canon_end(struct slice_canon *c, struct json_object *spec,
		     struct json_object *devices_if_none, struct slice_digest *ret_stripped,
		     struct slice_digest *ret_full, bool *ret_time_added)
{
	canon_end(c, spec, devices_if_none, ret_stripped, ret_full, ret_time_added);
	free(c);
}

void slice_canon_free(struct slice_canon *c)
{
	free(c);
}
