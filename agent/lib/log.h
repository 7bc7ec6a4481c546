/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's logger: one line per message on stderr, written with a single
 * write(2) so lines from several threads never interleave. Text format is
 * klog's ("E1202 08:30:00.123456   1234 dralet] message"); --log-format=json
 * writes klog's JSON shape ({"ts":..., "v":..., "msg":...}). Only agent/ logs;
 * libraries (hal, backends, protocol cores) return errors and warnings.
 * Never pass secrets (tokens, keys) to the logger.
 */
#ifndef DRALET_LOG_H
#define DRALET_LOG_H

#include <stdbool.h>

enum log_level {
	LOG_ERROR = 0,
	LOG_WARNING = 1,
	LOG_INFO = 2,
	LOG_DEBUG = 3,	/* shown with -v / --v=4 and above */
};

/* verbosity: klog --v value (0: info and up; >= 4: debug). */
void log_setup(int verbosity, bool json);
bool log_enabled(enum log_level level);
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
