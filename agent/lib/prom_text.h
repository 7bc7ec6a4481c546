/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Prometheus text exposition format (version 0.0.4), sans-I/O: metric
 * families, samples with labels, and fixed-bucket histograms into a growing
 * buffer. Label values are escaped (backslash, double quote, newline); names
 * are the caller's constants and are not checked.
 *
 * Threads: a prom_buf or prom_histogram belongs to one thread at a time.
 * Errors: the first allocation failure sticks in ->error (-ENOMEM); the
 * functions then do nothing, and the caller checks ->error once at the end.
 */
#ifndef DRALET_PROM_TEXT_H
#define DRALET_PROM_TEXT_H

#include <stddef.h>
#include <stdint.h>

struct prom_buf {
	char *data;	/* NUL-terminated text, malloc'd; prom_buf_free releases it */
	size_t len, cap;
	int error;
};

void prom_buf_free(struct prom_buf *b);

/* Appends @text as it is. */
void prom_raw(struct prom_buf *b, const char *text);

/* "# HELP <name> <help>" and "# TYPE <name> <type>" (counter, gauge, histogram). */
void prom_family(struct prom_buf *b, const char *name, const char *type, const char *help);

/* "<name>{k="v",...} <value>"; @labels is NULL or a NULL-terminated list of
 * key, value pairs. */
void prom_sample(struct prom_buf *b, const char *name, const char *const *labels, double value);

#define PROM_MAX_BUCKETS 16

/* A histogram with upper bounds @bounds (ascending, at most PROM_MAX_BUCKETS;
 * +Inf is implied). Zero-initialize, then set ->bounds and ->n_bounds. */
struct prom_histogram {
	const double *bounds;
	size_t n_bounds;
	uint64_t buckets[PROM_MAX_BUCKETS];	/* observations <= bounds[i] (not cumulative) */
	uint64_t count;
	double sum;
};

void prom_histogram_observe(struct prom_histogram *h, double value);

/* <name>_bucket{...,le="..."} (cumulative, +Inf last), <name>_sum, <name>_count. */
void prom_histogram_write(struct prom_buf *b, const char *name, const char *const *labels,
			  const struct prom_histogram *h);

/* Bounds in seconds for request latencies: 1 ms to 10 s. */
extern const double prom_latency_bounds[];
extern const size_t prom_latency_n_bounds;

#endif
