/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/lib/err_msg.h"

#include <stdio.h>

int err_vprintf(char *err, size_t errlen, int r, const char *fmt, va_list ap)
{
	if (err && errlen)
		vsnprintf(err, errlen, fmt, ap);
	return r;
}

int err_printf(char *err, size_t errlen, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vprintf(err, errlen, r, fmt, ap);
	va_end(ap);
	return r;
}
