/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/lib/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
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

/* A line being built: appends stop @reserve bytes before the end, so the
 * closing quote, brace and newline always fit. */
struct line {
	char *buf;
	size_t size, len, reserve;
};

static void put_raw(struct line *l, const char *s)
{
	size_t n = strlen(s), limit = l->size - l->reserve;
	size_t room = l->len < limit ? limit - l->len : 0;

	if (n > room)
		n = room;
	memcpy(l->buf + l->len, s, n);
	l->len += n;
}

/* The closing text, which the reserve keeps room for. */
static void put_end(struct line *l, const char *s)
{
	size_t n = strlen(s);

	if (l->len + n >= l->size)
		n = l->size - l->len - 1;
	memcpy(l->buf + l->len, s, n);
	l->len += n;
}

/* @s in double quotes: JSON's escapes (RFC 8259 section 7) or Go's
 * strconv.Quote ones (klog's text values): \" \\ \n \t \r, other control
 * characters as \u00XX (JSON) or \xXX (Go). Bytes >= 0x80 pass as they are. */
static void put_quoted(struct line *l, const char *s, bool json)
{
	size_t limit = l->size - l->reserve;
	char esc[8];

	put_raw(l, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		const char *out = esc;

		switch (c) {
		case '"': out = "\\\""; break;
		case '\\': out = "\\\\"; break;
		case '\n': out = "\\n"; break;
		case '\t': out = "\\t"; break;
		case '\r': out = "\\r"; break;
		default:
			if (c < 0x20 || c == 0x7f)
				snprintf(esc, sizeof(esc), json ? "\\u%04x" : "\\x%02x", c);
			else
				esc[0] = (char)c, esc[1] = '\0';
		}
		if (l->len + strlen(out) + 1 > limit)	/* +1: the closing quote */
			break;
		put_raw(l, out);
	}
	put_end(l, "\"");
}

static void put_header_text(struct line *l, const struct log_record *rec)
{
	struct tm tm;
	time_t secs = rec->time.tv_sec;
	char head[64];

	localtime_r(&secs, &tm);
	snprintf(head, sizeof(head), "%c%02d%02d %02d:%02d:%02d.%06ld %7d dralet] ",
		 "EWID"[rec->level], tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (long)rec->time.tv_usec, rec->pid);
	put_raw(l, head);
}

size_t log_format(const struct log_record *rec, char *buf, size_t size)
{
	struct line l = { .buf = buf, .size = size, .reserve = 8 };
	const char *const *kv = rec->kv;
	char head[96];

	if (rec->json) {
		if (rec->level <= LOG_WARNING)
			snprintf(head, sizeof(head), "{\"ts\":%ld.%06ld,\"level\":\"%s\",\"msg\":",
				 (long)rec->time.tv_sec, (long)rec->time.tv_usec,
				 rec->level == LOG_ERROR ? "error" : "warning");
		else
			snprintf(head, sizeof(head), "{\"ts\":%ld.%06ld,\"v\":%d,\"msg\":",
				 (long)rec->time.tv_sec, (long)rec->time.tv_usec,
				 rec->level == LOG_DEBUG ? 4 : 0);
		put_raw(&l, head);
		put_quoted(&l, rec->msg, true);
		for (; kv && kv[0]; kv += 2) {
			if (!kv[1])
				continue;
			/* a field starts only when its key and the shortest value fit */
			if (l.len + strlen(kv[0]) + 6 > size - l.reserve)
				break;
			put_raw(&l, ",\"");
			put_raw(&l, kv[0]);
			put_raw(&l, "\":");
			put_quoted(&l, kv[1], true);
		}
		put_end(&l, "}\n");
	} else {
		put_header_text(&l, rec);
		if (!kv || !kv[0]) {
			put_raw(&l, rec->msg);
		} else {
			put_quoted(&l, rec->msg, false);
			for (; kv[0]; kv += 2) {
				if (!kv[1])
					continue;
				if (l.len + strlen(kv[0]) + 4 > size - l.reserve)
					break;
				put_raw(&l, " ");
				put_raw(&l, kv[0]);
				put_raw(&l, "=");
				put_quoted(&l, kv[1], false);
			}
		}
		put_end(&l, "\n");
	}
	buf[l.len] = '\0';
	return l.len;
}

static void log_vwrite(enum log_level level, const char *const *kv, const char *fmt, va_list ap)
{
	char msg[4096], line[LOG_LINE_MAX];
	struct log_record rec = { .level = level, .json = log_json, .pid = (int)getpid(),
				  .msg = msg, .kv = kv };
	size_t n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	gettimeofday(&rec.time, NULL);
	n = log_format(&rec, line, sizeof(line));
	ssize_t w = write(STDERR_FILENO, line, n);
	(void)w;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if (!log_enabled(level))
		return;
	va_start(ap, fmt);
	log_vwrite(level, NULL, fmt, ap);
	va_end(ap);
}

void log_fields(enum log_level level, const char *const *kv, const char *fmt, ...)
{
	va_list ap;

	if (!log_enabled(level))
		return;
	va_start(ap, fmt);
	log_vwrite(level, kv, fmt, ap);
	va_end(ap);
}
