/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Error messages: the text a failing call leaves its caller next to the
 * -errno it returns, for a log line or to pass on.
 *
 * Interfaces take the caller's buffer as (char *err, size_t errlen); @err
 * may be NULL (no message wanted). err_printf is the one formatter for such
 * a buffer. struct err_msg is one message kept by value (a failure described
 * for a log line, a cause that gets a prefix); ERR_MSG_ARGS(&m) passes it
 * where (err, errlen) is wanted.
 *
 *   return err_printf(err, errlen, -EINVAL, "%s: not a mapping", path);
 *
 *   struct err_msg why;
 *   err_msg_set(&why, 0, "HTTP %ld", status);
 *   log_warn("...: %s", why.text);
 */
#ifndef DRALET_LIB_ERR_MSG_H
#define DRALET_LIB_ERR_MSG_H

#include <stdarg.h>
#include <stddef.h>

#define ERR_MSG_MAX 1024

struct err_msg {
	char text[ERR_MSG_MAX];
};

#define ERR_MSG_ARGS(m) (m)->text, sizeof((m)->text)

/* printf into @err (@errlen bytes, truncated; nothing when @err is NULL or
 * @errlen 0). Returns @r. */
int err_printf(char *err, size_t errlen, int r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int err_vprintf(char *err, size_t errlen, int r, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

/* printf into the struct err_msg @m; returns @r. */
#define err_msg_set(m, r, ...) err_printf(ERR_MSG_ARGS(m), (r), __VA_ARGS__)

#endif
