/* SPDX-License-Identifier: Apache-2.0 */
/* gRPC framing core: deframer, grpc-timeout, grpc-message, status names. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/kubelet/grpc_frame.h"

struct collected {
	size_t n;
	size_t lens[16];
	uint8_t data[16][64];
	int fail_at;	/* return an error on this message number (1-based), 0 never */
};

static int collect(void *userdata, const uint8_t *msg, size_t len)
{
	struct collected *c = userdata;

	if (c->fail_at && (int)c->n + 1 == c->fail_at)
		return -ECANCELED;
	assert_true(c->n < 16);
	assert_true(len <= 64);
	if (len)
		memcpy(c->data[c->n], msg, len);
	else
		assert_null(msg);
	c->lens[c->n++] = len;
	return 0;
}

/* Three messages (empty, "abc", 40 x 'z') in one buffer. */
static size_t build_stream(uint8_t *buf)
{
	size_t o = 0;

	grpc_frame_prefix(buf + o, 0);
	o += 5;
	grpc_frame_prefix(buf + o, 3);
	o += 5;
	memcpy(buf + o, "abc", 3);
	o += 3;
	grpc_frame_prefix(buf + o, 40);
	o += 5;
	memset(buf + o, 'z', 40);
	o += 40;
	return o;
}

static void check_stream(const struct collected *c)
{
	assert_int_equal(c->n, 3);
	assert_int_equal(c->lens[0], 0);
	assert_int_equal(c->lens[1], 3);
	assert_memory_equal(c->data[1], "abc", 3);
	assert_int_equal(c->lens[2], 40);
	for (int i = 0; i < 40; i++)
		assert_int_equal(c->data[2][i], 'z');
}

static void test_deframe_every_chunking(void **state)
{
	uint8_t buf[128];
	size_t len = build_stream(buf);

	(void)state;
	/* Every chunk size, including one byte at a time. */
	for (size_t chunk = 1; chunk <= len; chunk++) {
		struct grpc_deframer d;
		struct collected c = { 0 };

		grpc_deframer_init(&d, 1024);
		for (size_t off = 0; off < len; off += chunk) {
			size_t n = len - off < chunk ? len - off : chunk;

			assert_int_equal(grpc_deframer_feed(&d, buf + off, n, collect, &c), 0);
		}
		assert_true(grpc_deframer_idle(&d));
		check_stream(&c);
		assert_int_equal(d.n_messages, 3);
		grpc_deframer_reset(&d);
	}
}

static void test_deframe_split_points(void **state)
{
	uint8_t buf[128];
	size_t len = build_stream(buf);

	(void)state;
	/* Every pair of split points (three chunks). */
	for (size_t a = 0; a <= len; a++) {
		for (size_t b = a; b <= len; b++) {
			struct grpc_deframer d;
			struct collected c = { 0 };

			grpc_deframer_init(&d, 1024);
			assert_int_equal(grpc_deframer_feed(&d, buf, a, collect, &c), 0);
			assert_int_equal(grpc_deframer_feed(&d, buf + a, b - a, collect, &c), 0);
			assert_int_equal(grpc_deframer_feed(&d, buf + b, len - b, collect, &c), 0);
			check_stream(&c);
			grpc_deframer_reset(&d);
		}
	}
}

static void test_deframe_partial_is_not_idle(void **state)
{
	struct grpc_deframer d;
	struct collected c = { 0 };
	uint8_t buf[8];

	(void)state;
	grpc_deframer_init(&d, 1024);
	grpc_frame_prefix(buf, 3);
	memcpy(buf + 5, "ab", 2);
	assert_int_equal(grpc_deframer_feed(&d, buf, 3, collect, &c), 0);
	assert_false(grpc_deframer_idle(&d));
	assert_int_equal(grpc_deframer_feed(&d, buf + 3, 4, collect, &c), 0);
	assert_false(grpc_deframer_idle(&d));
	assert_int_equal(c.n, 0);
	grpc_deframer_reset(&d);
	assert_true(grpc_deframer_idle(&d));
}

static void test_deframe_size_cap(void **state)
{
	struct grpc_deframer d;
	struct collected c = { 0 };
	uint8_t buf[5];

	(void)state;
	grpc_deframer_init(&d, 16);
	grpc_frame_prefix(buf, 16);
	/* exactly the cap is fine (header only so far) */
	assert_int_equal(grpc_deframer_feed(&d, buf, 5, collect, &c), 0);
	grpc_deframer_reset(&d);
	grpc_frame_prefix(buf, 17);
	assert_int_equal(grpc_deframer_feed(&d, buf, 5, collect, &c), -EMSGSIZE);
	assert_int_equal(grpc_deframer_error_status(-EMSGSIZE), GRPC_STATUS_RESOURCE_EXHAUSTED);
	/* sticky */
	assert_int_equal(grpc_deframer_feed(&d, buf, 1, collect, &c), -EPROTO);
	grpc_deframer_reset(&d);
	/* 4 GiB - 1 declared with the default cap */
	grpc_deframer_init(&d, GRPC_DEFAULT_MAX_MESSAGE);
	uint8_t big[5] = { 0, 0xff, 0xff, 0xff, 0xff };
	assert_int_equal(grpc_deframer_feed(&d, big, 5, collect, &c), -EMSGSIZE);
	grpc_deframer_reset(&d);
}

static void test_deframe_compressed(void **state)
{
	struct grpc_deframer d;
	struct collected c = { 0 };
	uint8_t buf[6] = { 1, 0, 0, 0, 1, 'x' };

	(void)state;
	grpc_deframer_init(&d, 16);
	assert_int_equal(grpc_deframer_feed(&d, buf, 6, collect, &c), -EPROTO);
	assert_int_equal(grpc_deframer_error_status(-EPROTO), GRPC_STATUS_INTERNAL);
	grpc_deframer_reset(&d);

	grpc_deframer_init(&d, 16);
	d.encoding_declared = true;	/* grpc-encoding: gzip */
	assert_int_equal(grpc_deframer_feed(&d, buf, 6, collect, &c), -ENOTSUP);
	assert_int_equal(grpc_deframer_error_status(-ENOTSUP), GRPC_STATUS_UNIMPLEMENTED);
	grpc_deframer_reset(&d);

	buf[0] = 2;	/* not a valid flag at all */
	grpc_deframer_init(&d, 16);
	assert_int_equal(grpc_deframer_feed(&d, buf, 6, collect, &c), -EPROTO);
	grpc_deframer_reset(&d);
	assert_int_equal(c.n, 0);
}

static void test_deframe_callback_error(void **state)
{
	struct grpc_deframer d;
	struct collected c = { .fail_at = 2 };
	uint8_t buf[128];
	size_t len = build_stream(buf);

	(void)state;
	grpc_deframer_init(&d, 1024);
	assert_int_equal(grpc_deframer_feed(&d, buf, len, collect, &c), -ECANCELED);
	assert_int_equal(c.n, 1);
	grpc_deframer_reset(&d);
}

struct big_ctx {
	size_t got;
	const uint8_t *want;
};

static int collect_big(void *userdata, const uint8_t *msg, size_t len)
{
	struct big_ctx *ctx = userdata;

	assert_memory_equal(msg, ctx->want, len);
	ctx->got += len;
	return 0;
}

static void test_deframe_large_message_grows(void **state)
{
	struct grpc_deframer d;
	size_t len = 300000;
	uint8_t *buf = malloc(len + 5);
	struct big_ctx ctx = { 0, buf + 5 };

	(void)state;
	grpc_frame_prefix(buf, (uint32_t)len);
	for (size_t i = 0; i < len; i++)
		buf[5 + i] = (uint8_t)(i * 7);
	grpc_deframer_init(&d, GRPC_DEFAULT_MAX_MESSAGE);
	for (size_t off = 0; off < len + 5; off += 1000) {
		size_t n = len + 5 - off < 1000 ? len + 5 - off : 1000;

		assert_int_equal(grpc_deframer_feed(&d, buf + off, n, collect_big, &ctx), 0);
		/* memory follows the bytes that arrived, not the declared length */
		assert_true(d.msg_cap <= 2 * (off + n) + 256);
	}
	assert_int_equal(ctx.got, len);
	assert_true(grpc_deframer_idle(&d));
	grpc_deframer_reset(&d);
	free(buf);
}

static void test_timeout_parse(void **state)
{
	static const struct { const char *s; uint64_t ns; } ok[] = {
		{ "1S", 1000000000ull },
		{ "5S", 5000000000ull },
		{ "5010m", 5010000000ull },
		{ "44997970u", 44997970000ull },
		{ "1n", 1 },
		{ "0m", 0 },
		{ "2M", 120000000000ull },
		{ "1H", 3600000000000ull },
		{ "99999999H", 99999999ull * 3600000000000ull },
		{ "00000001S", 1000000000ull },
	};
	static const char *const bad[] = {
		"", "S", "1", "123456789S", "1s", "1h", "-1S", "+1S", " 1S", "1S ", "1.5S", "1x",
		"1SS", "0x1S", "１S",
	};
	uint64_t ns = 42;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(grpc_timeout_parse(ok[i].s, strlen(ok[i].s), &ns), 0);
		assert_int_equal(ns, ok[i].ns);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ns = 42;
		assert_int_equal(grpc_timeout_parse(bad[i], strlen(bad[i]), &ns), -EINVAL);
		assert_int_equal(ns, 42);	/* untouched on failure */
	}
	assert_int_equal(grpc_timeout_parse(NULL, 0, &ns), -EINVAL);
	/* length-delimited, not NUL-terminated */
	assert_int_equal(grpc_timeout_parse("7mXYZ", 2, &ns), 0);
	assert_int_equal(ns, 7000000ull);
}

static void test_timeout_ms_and_format(void **state)
{
	char buf[16];
	uint64_t ns;

	(void)state;
	assert_int_equal(grpc_timeout_ns_to_ms(0), 0);
	assert_int_equal(grpc_timeout_ns_to_ms(1), 1);
	assert_int_equal(grpc_timeout_ns_to_ms(1000000), 1);
	assert_int_equal(grpc_timeout_ns_to_ms(1000001), 2);
	grpc_timeout_format(1000, buf);
	assert_string_equal(buf, "1000m");
	grpc_timeout_format(45000, buf);
	assert_string_equal(buf, "45000m");
	/* 100000000 ms needs 9 digits: seconds instead */
	grpc_timeout_format(100000000ull, buf);
	assert_string_equal(buf, "100000S");
	grpc_timeout_format(UINT64_MAX / 2, buf);
	assert_string_equal(buf, "99999999H");
	/* whatever we format parses back to at least the timeout */
	for (uint64_t ms = 1; ms < 10000000000000ull; ms = ms * 7 + 3) {
		grpc_timeout_format(ms, buf);
		assert_int_equal(grpc_timeout_parse(buf, strlen(buf), &ns), 0);
		assert_true(grpc_timeout_ns_to_ms(ns) >= ms);
	}
}

static void test_message_encoding(void **state)
{
	char out[128];
	const char *in = "it's 100% \"done\"\n\xc3\xa9";
	size_t need;

	(void)state;
	need = grpc_message_encode(in, strlen(in), NULL, 0);
	assert_int_equal(need, strlen("it's 100%25 \"done\"%0A%C3%A9") + 1);
	assert_int_equal(grpc_message_encode(in, strlen(in), out, sizeof(out)), need);
	assert_string_equal(out, "it's 100%25 \"done\"%0A%C3%A9");
	/* too small: nothing written, size returned */
	memset(out, 'x', sizeof(out));
	assert_int_equal(grpc_message_encode(in, strlen(in), out, 4), need);
	assert_int_equal(out[0], 'x');
	/* decode round trip */
	char dec[128];
	assert_int_equal(grpc_message_decode(out, 0, dec), 0);
	grpc_message_encode(in, strlen(in), out, sizeof(out));
	assert_int_equal(grpc_message_decode(out, strlen(out), dec), strlen(in));
	assert_string_equal(dec, in);
	/* broken sequences stay as they are */
	assert_int_equal(grpc_message_decode("50%", 3, dec), 3);
	assert_string_equal(dec, "50%");
	grpc_message_decode("%zz%4", 5, dec);
	assert_string_equal(dec, "%zz%4");
	grpc_message_decode("a%41%4a", 7, dec);
	assert_string_equal(dec, "aAJ");
	/* empty */
	assert_int_equal(grpc_message_encode("", 0, out, sizeof(out)), 1);
	assert_string_equal(out, "");
}

static void test_status_names(void **state)
{
	(void)state;
	assert_string_equal(grpc_status_name(GRPC_STATUS_OK), "OK");
	assert_string_equal(grpc_status_name(GRPC_STATUS_UNIMPLEMENTED), "UNIMPLEMENTED");
	assert_string_equal(grpc_status_name(GRPC_STATUS_UNAUTHENTICATED), "UNAUTHENTICATED");
	assert_string_equal(grpc_status_name(17), "UNKNOWN_STATUS");
	assert_string_equal(grpc_status_name(-1), "UNKNOWN_STATUS");
	for (int i = 0; i <= GRPC_STATUS_MAX; i++)
		assert_int_equal(grpc_status_from_name(grpc_status_name(i)), i);
	assert_int_equal(grpc_status_from_name("ok"), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deframe_every_chunking),
		cmocka_unit_test(test_deframe_split_points),
		cmocka_unit_test(test_deframe_partial_is_not_idle),
		cmocka_unit_test(test_deframe_size_cap),
		cmocka_unit_test(test_deframe_compressed),
		cmocka_unit_test(test_deframe_callback_error),
		cmocka_unit_test(test_deframe_large_message_grows),
		cmocka_unit_test(test_timeout_parse),
		cmocka_unit_test(test_timeout_ms_and_format),
		cmocka_unit_test(test_message_encoding),
		cmocka_unit_test(test_status_names),
	};

	return cmocka_run_group_tests_name("grpc_frame", tests, NULL, NULL);
}
