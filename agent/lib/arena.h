/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A bump allocator: everything one scan produces lives in one arena and is
 * released at once. Allocations are zeroed and 16-byte aligned, and may come
 * from several threads at once.
 */
#ifndef DRALET_HAL_ARENA_H
#define DRALET_HAL_ARENA_H

#include <stddef.h>

struct arena;

struct arena *arena_new(void);
void arena_free(struct arena *a);	/* accepts NULL */
void *arena_alloc(struct arena *a, size_t size);	/* NULL on ENOMEM */
char *arena_strdup(struct arena *a, const char *s);	/* NULL for NULL or ENOMEM */
char *arena_strndup(struct arena *a, const char *s, size_t n);
char *arena_printf(struct arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Copies @n elements of @size bytes (NULL when n == 0). */
void *arena_memdup(struct arena *a, const void *p, size_t size);

#endif
