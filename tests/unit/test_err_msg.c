/* SPDX-License-Identifier: Apache-2.0 */
/*
 * err_msg (agent/lib/err_msg.h): the one formatter of error messages into a
 * caller's buffer or a struct err_msg; returns the -errno it is given.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include "agent/lib/err_msg.h"

static void test_caller_buffer(void **state)
{
	(void)state;
	char err[32] = "old";

	assert_int_equal(err_printf(err, sizeof(err), -EINVAL, "%s: %d", "bad", 7), -EINVAL);
	assert_string_equal(err, "bad: 7");
	assert_int_equal(err_printf(err, sizeof(err), 0, "x"), 0);
	assert_string_equal(err, "x");
}

static void test_truncated(void **state)
{
	(void)state;
	char err[8];

	err_printf(err, sizeof(err), -EIO, "%s", "0123456789");
	assert_string_equal(err, "0123456");
}

static void test_no_buffer(void **state)
{
	(void)state;
	char err[4] = "abc";

	assert_int_equal(err_printf(NULL, 64, -ENOENT, "ignored %s", "x"), -ENOENT);
	assert_int_equal(err_printf(err, 0, -ENOENT, "ignored"), -ENOENT);
	assert_string_equal(err, "abc");	/* a zero size writes nothing */
}

static void test_struct(void **state)
{
	(void)state;
	struct err_msg m;
	char big[ERR_MSG_MAX + 100];

	assert_int_equal(err_msg_set(&m, -EACCES, "HTTP %ld: %s", 403L, "forbidden"), -EACCES);
	assert_string_equal(m.text, "HTTP 403: forbidden");
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	err_msg_set(&m, 0, "%s", big);
	assert_int_equal(strlen(m.text), ERR_MSG_MAX - 1);
}

static int vwrap(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int vwrap(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = err_vprintf(err, errlen, -EBADMSG, fmt, ap);
	va_end(ap);
	return r;
}

static void test_va_list(void **state)
{
	(void)state;
	char err[32];

	assert_int_equal(vwrap(err, sizeof(err), "field %s at %zu", "uid", (size_t)3), -EBADMSG);
	assert_string_equal(err, "field uid at 3");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_caller_buffer),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_no_buffer),
		cmocka_unit_test(test_struct),
		cmocka_unit_test(test_va_list),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
