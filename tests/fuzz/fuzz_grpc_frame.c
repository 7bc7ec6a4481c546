/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The gRPC framing core on arbitrary bytes: the deframer over a chunking
 * chosen by the input (it must deliver the same messages as one big feed),
 * grpc-timeout parsing, and grpc-message encode/decode round trips.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/kubelet/grpc_frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct digest {
	size_t n;
	size_t bytes;
	uint64_t sum;
};

static int on_message(void *userdata, const uint8_t *msg, size_t len)
{
	struct digest *d = userdata;

	d->n++;
	d->bytes += len;
	for (size_t i = 0; i < len; i++)
		d->sum = d->sum * 31 + msg[i];
	return 0;
}

static int feed(const uint8_t *data, size_t size, size_t chunk, bool encoding,
		struct digest *d)
{
	struct grpc_deframer df;
	int r = 0;

	grpc_deframer_init(&df, 4096);
	df.encoding_declared = encoding;
	for (size_t off = 0; off < size && r == 0; off += chunk) {
		size_t n = size - off < chunk ? size - off : chunk;

		r = grpc_deframer_feed(&df, data + off, n, on_message, d);
	}
	if (r == 0 && !grpc_deframer_idle(&df))
		r = 1;
	grpc_deframer_reset(&df);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct digest whole = { 0 }, chunked = { 0 };
	size_t chunk;
	bool encoding;
	uint64_t ns;
	int r1, r2;

	if (size < 1)
		return 0;
	chunk = (size_t)(data[0] % 17) + 1;
	encoding = data[0] & 0x80;
	data++;
	size--;

	/* Chunking never changes what comes out. */
	r1 = feed(data, size, size ? size : 1, encoding, &whole);
	r2 = feed(data, size, chunk, encoding, &chunked);
	if (r1 != r2 || whole.n != chunked.n || whole.bytes != chunked.bytes ||
	    whole.sum != chunked.sum)
		abort();
	(void)grpc_deframer_error_status(r1);

	/* grpc-timeout: parse, and what parses formats back to at least itself. */
	if (grpc_timeout_parse((const char *)data, size < 12 ? size : 12, &ns) == 0) {
		char buf[16];
		uint64_t ms = grpc_timeout_ns_to_ms(ns), back;

		grpc_timeout_format(ms, buf);
		if (grpc_timeout_parse(buf, strlen(buf), &back) < 0)
			abort();
		if (ms <= 99999999ull && grpc_timeout_ns_to_ms(back) < ms)
			abort();
	}

	/* grpc-message: decode(encode(x)) == x, and decoding junk is safe. */
	size_t need = grpc_message_encode((const char *)data, size, NULL, 0);
	char *enc = malloc(need);
	char *dec = malloc(need > size ? need : size + 1);

	if (grpc_message_encode((const char *)data, size, enc, need) != need)
		abort();
	for (size_t i = 0; i + 1 < need; i++)
		if ((unsigned char)enc[i] < 0x20 || (unsigned char)enc[i] > 0x7e)
			abort();
	if (grpc_message_decode(enc, need - 1, dec) != size || memcmp(dec, data, size))
		abort();
	grpc_message_decode((const char *)data, size, dec);
	free(enc);
	free(dec);
	(void)grpc_status_name((int)(size % 40) - 5);
	return 0;
}
