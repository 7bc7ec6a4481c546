/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/lib/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int log_verbosity;
static bool log_json;

void log_setup(int verbosity, bool json)
{
	log_verbosity = verbosity;
	log_json = json;
}

bool log_enabled(enum log_level level)
{
	return level != LOG_DEBUG || log_verbosity >= 4;
}

static size_t json_escape(char *out, size_t size, const char *in)
{
	size_t o = 0;

	for (; *in && o + 7 < size; in++) {
		unsigned char c = (unsigned char)*in;
		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c < 0x20) {
			o += (size_t)snprintf(out + o, size - o, "\\u%04x", c);
		} else {
			out[o++] = (char)c;
		}
	}
	out[o] = '\0';
	return o;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	char msg[2048], line[4608];
	struct timeval tv;
	struct tm tm;
	va_list ap;
	int n;

	if (!log_enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	gettimeofday(&tv, NULL);

	if (log_json) {
		char esc[4200];
		json_escape(esc, sizeof(esc), msg);
		if (level <= LOG_WARNING)
			n = snprintf(line, sizeof(line), "{\"ts\":%ld.%06ld,\"msg\":\"%s\",\"err\":\"%s\"}\n",
				     (long)tv.tv_sec, (long)tv.tv_usec,
				     level == LOG_ERROR ? "error" : "warning", esc);
		else
			n = snprintf(line, sizeof(line), "{\"ts\":%ld.%06ld,\"v\":%d,\"msg\":\"%s\"}\n",
				     (long)tv.tv_sec, (long)tv.tv_usec, level == LOG_DEBUG ? 4 : 0, esc);
	} else {
		localtime_r(&tv.tv_sec, &tm);
		n = snprintf(line, sizeof(line), "%c%02d%02d %02d:%02d:%02d.%06ld %7d dralet] %s\n",
			     "EWID"[level], tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			     tm.tm_sec, (long)tv.tv_usec, (int)getpid(), msg);
	}
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line)) {
		n = sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	ssize_t w = write(STDERR_FILENO, line, (size_t)n);
	(void)w;
}
