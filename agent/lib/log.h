/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's logger: one line per message on stderr, written with a single
 * write(2) so lines from several threads never interleave. Only agent/ logs;
 * libraries (hal, backends, protocol cores) return errors and warnings.
 * Never pass secrets (tokens, keys) to the logger.
 *
 * A message may carry structured fields: short key/value pairs (LOG_KV), the
 * keys of docs/operations.md ("driver", "claim", "uid", "pod", "device",
 * "backend", "pf", "err"). Formats (docs/operations.md, "Logs"):
 *
 *   text  klog's header, then klog's printf form (message as is) without
 *         fields, or klog's structured form with them:
 *           I1202 08:30:00.123456    1234 dralet] "prepared" driver="gpu.x" claim="ns/a"
 *         (message and values quoted, so one message stays one line)
 *   json  {"ts":1764664200.123456,"v":0,"msg":"prepared","driver":"gpu.x",...}:
 *         "v" (0 info, 4 debug) on info and debug lines, "level" ("error",
 *         "warning") on the others.
 */
#ifndef DRALET_LOG_H
#define DRALET_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/time.h>

enum log_level {
	LOG_ERROR = 0,
	LOG_WARNING = 1,
	LOG_INFO = 2,
	LOG_DEBUG = 3,	/* shown with --v=4 and above */
};

/* Fields: alternating key and value, ended by a NULL key; a NULL value leaves
 * its field out (a claim without a known pod). Keys are plain words. */
#define LOG_KV(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* verbosity: klog --v value (0: info and up; >= 4: debug). */
void log_setup(int verbosity, bool json);
bool log_enabled(enum log_level level);
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* @kv: LOG_KV(...) or NULL (borrowed). */
void log_fields(enum log_level level, const char *const *kv, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The arguments (and a LOG_KV array) are evaluated only when the level is on. */
#define log_at(level, ...)                                 \
	do {                                               \
		if (log_enabled(level))                    \
			log_msg((level), __VA_ARGS__);     \
	} while (0)
#define log_kv_at(level, kv, ...)                                  \
	do {                                                       \
		if (log_enabled(level))                            \
			log_fields((level), (kv), __VA_ARGS__);    \
	} while (0)

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_at(LOG_DEBUG, __VA_ARGS__)

#define log_error_kv(kv, ...) log_fields(LOG_ERROR, (kv), __VA_ARGS__)
#define log_warn_kv(kv, ...) log_fields(LOG_WARNING, (kv), __VA_ARGS__)
#define log_info_kv(kv, ...) log_fields(LOG_INFO, (kv), __VA_ARGS__)
#define log_debug_kv(kv, ...) log_kv_at(LOG_DEBUG, (kv), __VA_ARGS__)

/* One line as the logger writes it (pure; the unit tests' seam). */
struct log_record {
	enum log_level level;
	bool json;
	struct timeval time;	/* text: local time, as klog */
	int pid;
	const char *msg;
	const char *const *kv;	/* NULL: no fields */
};

/* A buffer this size holds any line: longer messages and values are cut
 * (the JSON stays valid, the line ends with '\n'). */
#define LOG_LINE_MAX 8192

/* Writes @rec's line, '\n' included, into @buf (@size >= 128) and returns its
 * length (< @size, NUL-terminated). */
size_t log_format(const struct log_record *rec, char *buf, size_t size);

#endif
