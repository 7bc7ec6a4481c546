/* SPDX-License-Identifier: Apache-2.0 */
/* The Prometheus text exposition format (prom_text.h). */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/lib/prom_text.h"

const double prom_latency_bounds[] = { 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
				       0.5, 1, 2.5, 5, 10 };
const size_t prom_latency_n_bounds = sizeof(prom_latency_bounds) / sizeof(prom_latency_bounds[0]);

void prom_buf_free(struct prom_buf *b)
{
	free(b->data);
	*b = (struct prom_buf){ 0 };
}

static void put(struct prom_buf *b, const char *s, size_t n)
{
	if (b->error)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 1024;
		char *data;

		while (cap < b->len + n + 1)
			cap *= 2;
		if (!(data = realloc(b->data, cap))) {
			b->error = -ENOMEM;
			return;
		}
		b->data = data;
		b->cap = cap;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

static void puts_(struct prom_buf *b, const char *s)
{
	put(b, s, strlen(s));
}

void prom_raw(struct prom_buf *b, const char *text)
{
	puts_(b, text);
}

__attribute__((format(printf, 2, 3)))
static void printf_(struct prom_buf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		if (!b->error)
			b->error = -EOVERFLOW;
		return;
	}
	put(b, tmp, (size_t)n);
}

/* HELP text escapes backslash and newline; label values also double quotes. */
static void escaped(struct prom_buf *b, const char *s, bool quote)
{
	for (; *s; s++) {
		if (*s == '\\')
			puts_(b, "\\\\");
		else if (*s == '\n')
			puts_(b, "\\n");
		else if (quote && *s == '"')
			puts_(b, "\\\"");
		else
			put(b, s, 1);
	}
}

void prom_family(struct prom_buf *b, const char *name, const char *type, const char *help)
{
	printf_(b, "# HELP %s ", name);
	escaped(b, help, false);
	printf_(b, "\n# TYPE %s %s\n", name, type);
}

static void value(struct prom_buf *b, double v)
{
	if (isinf(v))
		puts_(b, v > 0 ? "+Inf" : "-Inf");
	else if (isnan(v))
		puts_(b, "NaN");
	else
		printf_(b, "%.17g", v);
}

static void labels_(struct prom_buf *b, const char *const *labels, const char *le)
{
	bool any = false;

	for (size_t i = 0; labels && labels[i] && labels[i + 1]; i += 2) {
		puts_(b, any ? "," : "{");
		printf_(b, "%s=\"", labels[i]);
		escaped(b, labels[i + 1], true);
		puts_(b, "\"");
		any = true;
	}
	if (le) {
		printf_(b, "%sle=\"%s\"", any ? "," : "{", le);
		any = true;
	}
	if (any)
		puts_(b, "}");
}

void prom_sample(struct prom_buf *b, const char *name, const char *const *labels, double v)
{
	puts_(b, name);
	labels_(b, labels, NULL);
	puts_(b, " ");
	value(b, v);
	puts_(b, "\n");
}

void prom_histogram_observe(struct prom_histogram *h, double v)
{
	for (size_t i = 0; i < h->n_bounds && i < PROM_MAX_BUCKETS; i++)
		if (v <= h->bounds[i]) {
			h->buckets[i]++;
			break;
		}
	h->count++;
	h->sum += v;
}

void prom_histogram_write(struct prom_buf *b, const char *name, const char *const *labels,
			  const struct prom_histogram *h)
{
	uint64_t cum = 0;
	char le[64];

	for (size_t i = 0; i < h->n_bounds && i < PROM_MAX_BUCKETS; i++) {
		cum += h->buckets[i];
		snprintf(le, sizeof(le), "%.15g", h->bounds[i]);
		printf_(b, "%s_bucket", name);
		labels_(b, labels, le);
		printf_(b, " %llu\n", (unsigned long long)cum);
	}
	printf_(b, "%s_bucket", name);
	labels_(b, labels, "+Inf");
	printf_(b, " %llu\n", (unsigned long long)h->count);
	printf_(b, "%s_sum", name);
	labels_(b, labels, NULL);
	puts_(b, " ");
	value(b, h->sum);
	printf_(b, "\n%s_count", name);
	labels_(b, labels, NULL);
	printf_(b, " %llu\n", (unsigned long long)h->count);
}
