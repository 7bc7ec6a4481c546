/* SPDX-License-Identifier: Apache-2.0 */
/* Retry timing: exponential backoff with jitter, Retry-After. */
#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/lib/backoff.h"

#define RETRY_AFTER_MAX_MS (3600u * 1000u)

uint32_t backoff_next(struct backoff *b, uint32_t random)
{
	uint64_t d = b->base_ms ? b->base_ms : 1;
	for (uint32_t i = 0; i < b->attempt && d < b->max_ms; i++)
		d *= 2;
	if (d > b->max_ms)
		d = b->max_ms;
	if (b->attempt < 64)
		b->attempt++;
	b->paced = 0;
	uint64_t half = d / 2;
	return (uint32_t)(half + (d - half ? random % (d - half + 1) : 0));
}

void backoff_reset(struct backoff *b)
{
	b->attempt = 0;
	b->paced = 0;
}

uint32_t backoff_paced(struct backoff *b, uint32_t retry_after_ms, uint32_t floor_ms,
		       uint32_t cap_ms, uint32_t random)
{
	if (b->paced >= BACKOFF_PACED_MAX)
		return backoff_with_retry_after(backoff_next(b, random), 1, retry_after_ms, cap_ms);
	b->paced++;
	uint32_t d = retry_after_ms < floor_ms ? floor_ms : retry_after_ms;
	return d > cap_ms ? cap_ms : d;
}

int retry_after_parse(const char *value, time_t now, uint32_t *ret_ms)
{
	if (!value)
		return -EINVAL;
	while (isspace((unsigned char)*value))
		value++;
	size_t len = strlen(value);
	while (len && isspace((unsigned char)value[len - 1]))
		len--;
	if (len == 0)
		return -EINVAL;
	bool digits = true;
	for (size_t i = 0; i < len; i++)
		if (!isdigit((unsigned char)value[i]))
			digits = false;
	if (digits) {
		if (len > 7) {
			*ret_ms = RETRY_AFTER_MAX_MS;
			return 0;
		}
		unsigned long secs = strtoul(value, NULL, 10);
		uint64_t ms = (uint64_t)secs * 1000u;
		*ret_ms = ms > RETRY_AFTER_MAX_MS ? RETRY_AFTER_MAX_MS : (uint32_t)ms;
		return 0;
	}
	/* IMF-fixdate, the only date form servers should send (RFC 9110 5.6.7). */
	char buf[64];
	if (len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, value, len);
	buf[len] = '\0';
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	const char *end = strptime(buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
	if (!end || *end)
		return -EINVAL;
	time_t when = timegm(&tm);
	if (when == (time_t)-1)
		return -EINVAL;
	if (when <= now) {
		*ret_ms = 0;
		return 0;
	}
	uint64_t ms = (uint64_t)(when - now) * 1000u;
	*ret_ms = ms > RETRY_AFTER_MAX_MS ? RETRY_AFTER_MAX_MS : (uint32_t)ms;
	return 0;
}

uint32_t backoff_with_retry_after(uint32_t backoff_ms, int have_retry_after,
				  uint32_t retry_after_ms, uint32_t cap_ms)
{
	uint32_t d = backoff_ms;
	if (have_retry_after && retry_after_ms > d)
		d = retry_after_ms;
	return d > cap_ms ? cap_ms : d;
}
