/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/lib/arena.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_CHUNK (64u * 1024u)

struct chunk {
	struct chunk *next;
	size_t used, size;
	_Alignas(16) unsigned char data[];
};

/* Scans fill functions on several threads; one uncontended lock per
 * allocation is cheaper than per-thread arenas to merge. */
struct arena {
	pthread_mutex_t lock;
	struct chunk *head;
};

struct arena *arena_new(void)
{
	struct arena *a = calloc(1, sizeof(struct arena));

	if (a)
		pthread_mutex_init(&a->lock, NULL);
	return a;
}

void arena_free(struct arena *a)
{
	if (!a)
		return;
	for (struct chunk *c = a->head, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	pthread_mutex_destroy(&a->lock);
	free(a);
}

static void *alloc_locked(struct arena *a, size_t size)
{
	struct chunk *c = a->head;
	size_t need = (size + 15) & ~(size_t)15;

	if (!c || c->size - c->used < need) {
		size_t cap = need > ARENA_CHUNK / 4 ? need : ARENA_CHUNK;
		struct chunk *n = malloc(sizeof(*n) + cap);
		if (!n)
			return NULL;
		n->size = cap;
		n->used = 0;
		/* a big one-off block goes behind the current chunk so its free
		 * space stays usable */
		if (c && cap == need) {
			n->next = c->next;
			c->next = n;
		} else {
			n->next = c;
			a->head = n;
		}
		c = n;
	}
	void *p = c->data + c->used;
	c->used += need;
	memset(p, 0, size);
	return p;
}

void *arena_alloc(struct arena *a, size_t size)
{
	void *p;

	pthread_mutex_lock(&a->lock);
	p = alloc_locked(a, size);
	pthread_mutex_unlock(&a->lock);
	return p;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *p;

	if (!s)
		return NULL;
	p = arena_alloc(a, n + 1);
	if (p)
		memcpy(p, s, n);
	return p;
}

char *arena_strdup(struct arena *a, const char *s)
{
	return s ? arena_strndup(a, s, strlen(s)) : NULL;
}

char *arena_printf(struct arena *a, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	if ((size_t)n < sizeof(buf))
		return arena_strndup(a, buf, (size_t)n);
	char *p = arena_alloc(a, (size_t)n + 1);
	if (!p)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

void *arena_memdup(struct arena *a, const void *p, size_t size)
{
	void *q;

	if (size == 0)
		return NULL;
	q = arena_alloc(a, size);
	if (q)
		memcpy(q, p, size);
	return q;
}
