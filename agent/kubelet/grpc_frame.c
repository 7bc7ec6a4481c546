/* SPDX-License-Identifier: Apache-2.0 */
/* gRPC framing, grpc-timeout and grpc-message encoding (see grpc_frame.h). */
#include "agent/kubelet/grpc_frame.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const status_names[GRPC_STATUS_MAX + 1] = {
	[GRPC_STATUS_OK] = "OK",
	[GRPC_STATUS_CANCELLED] = "CANCELLED",
	[GRPC_STATUS_UNKNOWN] = "UNKNOWN",
	[GRPC_STATUS_INVALID_ARGUMENT] = "INVALID_ARGUMENT",
	[GRPC_STATUS_DEADLINE_EXCEEDED] = "DEADLINE_EXCEEDED",
	[GRPC_STATUS_NOT_FOUND] = "NOT_FOUND",
	[GRPC_STATUS_ALREADY_EXISTS] = "ALREADY_EXISTS",
	[GRPC_STATUS_PERMISSION_DENIED] = "PERMISSION_DENIED",
	[GRPC_STATUS_RESOURCE_EXHAUSTED] = "RESOURCE_EXHAUSTED",
	[GRPC_STATUS_FAILED_PRECONDITION] = "FAILED_PRECONDITION",
	[GRPC_STATUS_ABORTED] = "ABORTED",
	[GRPC_STATUS_OUT_OF_RANGE] = "OUT_OF_RANGE",
	[GRPC_STATUS_UNIMPLEMENTED] = "UNIMPLEMENTED",
	[GRPC_STATUS_INTERNAL] = "INTERNAL",
	[GRPC_STATUS_UNAVAILABLE] = "UNAVAILABLE",
	[GRPC_STATUS_DATA_LOSS] = "DATA_LOSS",
	[GRPC_STATUS_UNAUTHENTICATED] = "UNAUTHENTICATED",
};

const char *grpc_status_name(int status)
{
	if (status < 0 || status > GRPC_STATUS_MAX)
		return "UNKNOWN_STATUS";
	return status_names[status];
}

int grpc_status_from_name(const char *name)
{
	for (int i = 0; i <= GRPC_STATUS_MAX; i++)
		if (!strcmp(name, status_names[i]))
			return i;
	return -EINVAL;
}

void grpc_frame_prefix(uint8_t out[GRPC_FRAME_PREFIX], uint32_t len)
{
	out[0] = 0;
	out[1] = (uint8_t)(len >> 24);
	out[2] = (uint8_t)(len >> 16);
	out[3] = (uint8_t)(len >> 8);
	out[4] = (uint8_t)len;
}

/* ---- deframer ---- */

/* Sticky error marker: prefix_have beyond the prefix size. */
#define DEFRAMER_FAILED (GRPC_FRAME_PREFIX + 1)

void grpc_deframer_init(struct grpc_deframer *d, size_t max_message)
{
	memset(d, 0, sizeof(*d));
	d->max_message = max_message;
}

void grpc_deframer_reset(struct grpc_deframer *d)
{
	free(d->msg);
	grpc_deframer_init(d, d->max_message);
}

bool grpc_deframer_idle(const struct grpc_deframer *d)
{
	return d->prefix_have == 0;
}

enum grpc_status grpc_deframer_error_status(int err)
{
	switch (err) {
	case -EMSGSIZE:
	case -ENOMEM:
		return GRPC_STATUS_RESOURCE_EXHAUSTED;
	case -ENOTSUP:
		return GRPC_STATUS_UNIMPLEMENTED;
	default:
		return GRPC_STATUS_INTERNAL;
	}
}

static int deframer_fail(struct grpc_deframer *d, int err)
{
	d->prefix_have = DEFRAMER_FAILED;
	return err;
}

/* Validates a complete prefix and sets up the message length. */
static int deframer_start_message(struct grpc_deframer *d)
{
	uint8_t flag = d->prefix[0];

	if (flag == 1)
		return deframer_fail(d, d->encoding_declared ? -ENOTSUP : -EPROTO);
	if (flag != 0)
		return deframer_fail(d, -EPROTO);
	d->msg_len = (size_t)d->prefix[1] << 24 | (size_t)d->prefix[2] << 16 |
		     (size_t)d->prefix[3] << 8 | (size_t)d->prefix[4];
	if (d->msg_len > d->max_message)
		return deframer_fail(d, -EMSGSIZE);
	d->msg_have = 0;
	return 0;
}

static int deframer_deliver(struct grpc_deframer *d, const uint8_t *msg, grpc_message_cb cb,
			    void *userdata)
{
	int r;

	d->n_messages++;
	r = cb(userdata, msg, d->msg_len);
	d->prefix_have = 0;
	d->msg_have = 0;
	d->msg_len = 0;
	if (r < 0)
		return deframer_fail(d, r);
	return 0;
}

static int deframer_append(struct grpc_deframer *d, const uint8_t *data, size_t n)
{
	if (d->msg_have + n > d->msg_cap) {
		size_t cap = d->msg_cap ? d->msg_cap : 256;
		uint8_t *p;

		while (cap < d->msg_have + n)
			cap *= 2;
		if (cap > d->msg_len)
			cap = d->msg_len;
		p = realloc(d->msg, cap);
		if (!p)
			return deframer_fail(d, -ENOMEM);
		d->msg = p;
		d->msg_cap = cap;
	}
	memcpy(d->msg + d->msg_have, data, n);
	d->msg_have += n;
	return 0;
}

int grpc_deframer_feed(struct grpc_deframer *d, const uint8_t *data, size_t len,
		       grpc_message_cb cb, void *userdata)
{
	int r;

	if (d->prefix_have > GRPC_FRAME_PREFIX)
		return -EPROTO;
	while (len > 0) {
		if (d->prefix_have < GRPC_FRAME_PREFIX) {
			size_t n = GRPC_FRAME_PREFIX - d->prefix_have;

			if (n > len)
				n = len;
			memcpy(d->prefix + d->prefix_have, data, n);
			d->prefix_have += n;
			data += n;
			len -= n;
			if (d->prefix_have < GRPC_FRAME_PREFIX)
				break;
			r = deframer_start_message(d);
			if (r < 0)
				return r;
			if (d->msg_len == 0) {
				r = deframer_deliver(d, NULL, cb, userdata);
				if (r < 0)
					return r;
				continue;
			}
			if (len == 0)
				break;
		}
		/* Whole message in this chunk and nothing buffered: no copy. */
		if (d->msg_have == 0 && len >= d->msg_len) {
			size_t n = d->msg_len;

			r = deframer_deliver(d, n ? data : NULL, cb, userdata);
			if (r < 0)
				return r;
			data += n;
			len -= n;
			continue;
		}
		size_t n = d->msg_len - d->msg_have;

		if (n > len)
			n = len;
		r = deframer_append(d, data, n);
		if (r < 0)
			return r;
		data += n;
		len -= n;
		if (d->msg_have == d->msg_len) {
			r = deframer_deliver(d, d->msg, cb, userdata);
			if (r < 0)
				return r;
		}
	}
	/* A delivered message's buffer is kept for the next one; drop big ones. */
	if (d->prefix_have == 0 && d->msg_cap > 64 * 1024) {
		free(d->msg);
		d->msg = NULL;
		d->msg_cap = 0;
	}
	return 0;
}

/* ---- grpc-timeout ---- */

int grpc_timeout_parse(const char *value, size_t len, uint64_t *ret_ns)
{
	uint64_t n = 0, unit_ns;

	if (!value || len < 2 || len > 9)
		return -EINVAL;
	for (size_t i = 0; i + 1 < len; i++) {
		if (value[i] < '0' || value[i] > '9')
			return -EINVAL;
		n = n * 10 + (uint64_t)(value[i] - '0');
	}
	switch (value[len - 1]) {
	case 'H': unit_ns = 3600ull * 1000000000ull; break;
	case 'M': unit_ns = 60ull * 1000000000ull; break;
	case 'S': unit_ns = 1000000000ull; break;
	case 'm': unit_ns = 1000000ull; break;
	case 'u': unit_ns = 1000ull; break;
	case 'n': unit_ns = 1ull; break;
	default: return -EINVAL;
	}
	/* 99999999 H is 3.6e17 ns: fits in 64 bits. */
	*ret_ns = n * unit_ns;
	return 0;
}

uint64_t grpc_timeout_ns_to_ms(uint64_t ns)
{
	return ns / 1000000ull + (ns % 1000000ull ? 1 : 0);
}

void grpc_timeout_format(uint64_t ms, char out[16])
{
	static const struct { char unit; uint64_t ms; } units[] = {
		{ 'm', 1 }, { 'S', 1000 }, { 'M', 60000 }, { 'H', 3600000 },
	};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		uint64_t v = ms / units[i].ms + (ms % units[i].ms ? 1 : 0);

		if (v <= 99999999ull || i + 1 == sizeof(units) / sizeof(units[0])) {
			if (v > 99999999ull)
				v = 99999999ull;
			snprintf(out, 16, "%llu%c", (unsigned long long)v, units[i].unit);
			return;
		}
	}
}

/* ---- grpc-message ---- */

size_t grpc_message_encode(const char *in, size_t len, char *out, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t need = 1;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];
		bool plain = c >= 0x20 && c <= 0x7e && c != '%';

		need += plain ? 1 : 3;
	}
	if (need > size)
		return need;
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];

		if (c >= 0x20 && c <= 0x7e && c != '%') {
			out[o++] = (char)c;
		} else {
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
	return need;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

size_t grpc_message_decode(const char *in, size_t len, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		if (in[i] == '%' && i + 2 < len && hex_value(in[i + 1]) >= 0 &&
		    hex_value(in[i + 2]) >= 0) {
			out[o++] = (char)(hex_value(in[i + 1]) << 4 | hex_value(in[i + 2]));
			i += 2;
		} else {
			out[o++] = in[i];
		}
	}
	out[o] = '\0';
	return o;
}
