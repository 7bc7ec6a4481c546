/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gRPC over HTTP/2, the parts that are plain bytes (grpc/grpc
 * doc/PROTOCOL-HTTP2.md): status codes, Length-Prefixed-Message framing,
 * the grpc-timeout header and grpc-message percent-encoding. Sans-I/O: no
 * sockets, no allocation except where a function says so, no logging.
 */
#ifndef DRALET_GRPC_FRAME_H
#define DRALET_GRPC_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* gRPC status codes (grpc/grpc doc/statuscodes.md). */
enum grpc_status {
	GRPC_STATUS_OK = 0,
	GRPC_STATUS_CANCELLED = 1,
	GRPC_STATUS_UNKNOWN = 2,
	GRPC_STATUS_INVALID_ARGUMENT = 3,
	GRPC_STATUS_DEADLINE_EXCEEDED = 4,
	GRPC_STATUS_NOT_FOUND = 5,
	GRPC_STATUS_ALREADY_EXISTS = 6,
	GRPC_STATUS_PERMISSION_DENIED = 7,
	GRPC_STATUS_RESOURCE_EXHAUSTED = 8,
	GRPC_STATUS_FAILED_PRECONDITION = 9,
	GRPC_STATUS_ABORTED = 10,
	GRPC_STATUS_OUT_OF_RANGE = 11,
	GRPC_STATUS_UNIMPLEMENTED = 12,
	GRPC_STATUS_INTERNAL = 13,
	GRPC_STATUS_UNAVAILABLE = 14,
	GRPC_STATUS_DATA_LOSS = 15,
	GRPC_STATUS_UNAUTHENTICATED = 16,
};
#define GRPC_STATUS_MAX 16

/* "OK", "CANCELLED", ... ; "UNKNOWN_STATUS" for values outside 0..16. */
const char *grpc_status_name(int status);

/* Reverse of grpc_status_name (exact, upper case); -EINVAL when unknown. */
int grpc_status_from_name(const char *name);

/* Default cap on one received message (grpc-go's default, 4 MiB). */
#define GRPC_DEFAULT_MAX_MESSAGE (4u * 1024 * 1024)
#define GRPC_FRAME_PREFIX 5

/* Writes the 5-byte prefix (compressed flag 0, big-endian @len). */
void grpc_frame_prefix(uint8_t out[GRPC_FRAME_PREFIX], uint32_t len);

/*
 * Incremental decoder of Length-Prefixed-Messages over arbitrary chunking.
 * Feed bytes with grpc_deframer_feed(); each complete message is handed to
 * the callback. The struct is public so it can live inside another struct;
 * treat its fields as private.
 */
struct grpc_deframer {
	size_t max_message;	/* messages longer than this are refused */
	bool encoding_declared;	/* a grpc-encoding other than identity was sent */
	uint8_t prefix[GRPC_FRAME_PREFIX];
	size_t prefix_have;
	uint8_t *msg;		/* owned; message being assembled, grown as bytes */
	size_t msg_len, msg_have, msg_cap;	/* arrive (not by the declared length) */
	size_t n_messages;	/* complete messages delivered so far */
};

/*
 * Called once per complete message. @msg is borrowed for the call (it may be
 * NULL when @len is 0). A negative return stops grpc_deframer_feed, which
 * returns that value.
 */
typedef int (*grpc_message_cb)(void *userdata, const uint8_t *msg, size_t len);

void grpc_deframer_init(struct grpc_deframer *d, size_t max_message);
/* Frees the partial message; the deframer may be initialised again. */
void grpc_deframer_reset(struct grpc_deframer *d);

/*
 * Consumes all @len bytes. Returns 0, a negative callback return, or:
 *   -EMSGSIZE  a message is longer than max_message   (RESOURCE_EXHAUSTED)
 *   -EPROTO    compressed flag set but no grpc-encoding, or a flag other
 *              than 0/1                               (INTERNAL)
 *   -ENOTSUP   compressed flag set with a declared encoding, which this
 *              implementation does not decode         (UNIMPLEMENTED)
 *   -ENOMEM
 * After an error the deframer only accepts grpc_deframer_reset().
 */
int grpc_deframer_feed(struct grpc_deframer *d, const uint8_t *data, size_t len,
		       grpc_message_cb cb, void *userdata);

/* True when no partial message is pending (a clean end of stream). */
bool grpc_deframer_idle(const struct grpc_deframer *d);

/* The status a grpc_deframer_feed error maps to. */
enum grpc_status grpc_deframer_error_status(int err);

/*
 * Parses a grpc-timeout value ("1S", "44997970u": 1-8 ASCII digits and one
 * unit of H M S m u n) into nanoseconds. Returns 0, or -EINVAL for anything
 * else (empty, sign, spaces, 9+ digits, unknown unit); *ret_ns untouched then.
 */
int grpc_timeout_parse(const char *value, size_t len, uint64_t *ret_ns);

/* Nanoseconds to whole milliseconds, rounded up (a 1 ns deadline is 1 ms). */
uint64_t grpc_timeout_ns_to_ms(uint64_t ns);

/*
 * Formats a timeout of @ms milliseconds as a grpc-timeout value (at most 8
 * digits, the finest unit that fits) into @out (at least 16 bytes).
 */
void grpc_timeout_format(uint64_t ms, char out[16]);

/*
 * Percent-encodes @len bytes for grpc-message: bytes outside 0x20..0x7E and
 * '%' become %XX. Returns the encoded length written to @out including the
 * terminating NUL, or the size needed when @size is too small (so call with
 * size 0 to measure). Encoding of @len bytes needs at most 3*len+1.
 */
size_t grpc_message_encode(const char *in, size_t len, char *out, size_t size);

/*
 * Decodes a grpc-message value in place-safe fashion into @out (at least
 * len+1 bytes): valid %XX sequences are decoded, broken ones are kept as-is
 * (the spec forbids failing). Returns the decoded length (NUL-terminated).
 */
size_t grpc_message_decode(const char *in, size_t len, char *out);

#endif
