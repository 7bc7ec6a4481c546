/* SPDX-License-Identifier: Apache-2.0 */
/* Kubernetes name/value rules, quantities and version normalisation. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "agent/core/k8s_names.h"

static void test_dns_labels(void **state)
{
	(void)state;
	assert_true(k8s_valid_dns_label("gpu-0000-3b-00-0"));
	assert_true(k8s_valid_dns_label("a"));
	assert_false(k8s_valid_dns_label(""));
	assert_false(k8s_valid_dns_label("-a"));
	assert_false(k8s_valid_dns_label("a-"));
	assert_false(k8s_valid_dns_label("A"));
	assert_false(k8s_valid_dns_label("a.b"));
	assert_true(k8s_valid_dns_label("a23456789012345678901234567890123456789012345678901234567890123"));
	assert_false(k8s_valid_dns_label("a234567890123456789012345678901234567890123456789012345678901234"));
}

static void test_driver_and_qualified_names(void **state)
{
	(void)state;
	assert_true(k8s_valid_driver_name("gpu.dralet.dev"));
	assert_false(k8s_valid_driver_name("GPU.dralet.dev"));
	assert_false(k8s_valid_driver_name("gpu..dev"));
	assert_true(k8s_valid_qualified_name("memory"));
	assert_true(k8s_valid_qualified_name("_x1"));
	assert_true(k8s_valid_qualified_name("resource.kubernetes.io/pcieRoot"));
	assert_false(k8s_valid_qualified_name("1x"));
	assert_false(k8s_valid_qualified_name("a/b/c"));
	assert_false(k8s_valid_qualified_name("pcie-root"));
	assert_false(k8s_valid_qualified_name("Example.com/x"));
	assert_false(k8s_valid_qualified_name("x23456789012345678901234567890123"));	/* 33 */
	assert_true(k8s_valid_qualified_name("x2345678901234567890123456789012"));	/* 32 */
}

static void test_label_keys(void **state)
{
	(void)state;
	assert_true(k8s_valid_label_key("dralet.dev/pcie-aer"));
	assert_true(k8s_valid_label_key("dralet.dev/ecc-double-bit"));
	assert_true(k8s_valid_label_key("unhealthy"));
	assert_true(k8s_valid_label_key("example.com/Fan_1.x"));
	assert_false(k8s_valid_label_key(NULL));
	assert_false(k8s_valid_label_key(""));
	assert_false(k8s_valid_label_key("dralet.dev/"));
	assert_false(k8s_valid_label_key("/xid"));
	assert_false(k8s_valid_label_key("dralet.dev/-xid"));
	assert_false(k8s_valid_label_key("dralet.dev/xid-"));
	assert_false(k8s_valid_label_key("not a key!"));
	assert_false(k8s_valid_label_key("a/b/c"));
	assert_false(k8s_valid_label_key("Dralet.dev/xid"));	/* the prefix is lower case */
	assert_true(k8s_valid_label_key("x23456789012345678901234567890123456789012345678901234567890123"));
	assert_false(k8s_valid_label_key("x234567890123456789012345678901234567890123456789012345678901234"));
}

static void test_semver(void **state)
{
	char out[80];

	(void)state;
	assert_true(k8s_valid_semver("1.2.3"));
	assert_true(k8s_valid_semver("1.2.3-rc.1+build.5"));
	assert_false(k8s_valid_semver("1.2"));
	assert_false(k8s_valid_semver("01.2.3"));
	assert_false(k8s_valid_semver("1.2.3-01"));
	assert_int_equal(k8s_normalize_version("550.54.15", out, sizeof(out)), 0);
	assert_string_equal(out, "550.54.15");
	assert_int_equal(k8s_normalize_version("535.104.05", out, sizeof(out)), 0);
	assert_string_equal(out, "535.104.5");
	assert_int_equal(k8s_normalize_version("12.4", out, sizeof(out)), 0);
	assert_string_equal(out, "12.4.0");
	assert_int_equal(k8s_normalize_version("v9", out, sizeof(out)), 0);
	assert_string_equal(out, "9.0.0");
	assert_int_equal(k8s_normalize_version("96.00.89.00.01", out, sizeof(out)), 0);
	assert_string_equal(out, "96.0.89+00.01");
	assert_int_equal(k8s_normalize_version("abc", out, sizeof(out)), -EINVAL);
	assert_int_equal(k8s_normalize_version("1..2", out, sizeof(out)), -EINVAL);
	assert_int_equal(k8s_normalize_version("", out, sizeof(out)), -EINVAL);
}

static void test_quantities(void **state)
{
	char out[32];

	(void)state;
	k8s_quantity_binary(85899345920ull, out, sizeof(out));
	assert_string_equal(out, "80Gi");
	k8s_quantity_binary(85520809984ull, out, sizeof(out));
	assert_string_equal(out, "81559Mi");
	k8s_quantity_binary(1000, out, sizeof(out));
	assert_string_equal(out, "1000");
	k8s_quantity_binary(1024, out, sizeof(out));
	assert_string_equal(out, "1Ki");
	k8s_quantity_binary(1500, out, sizeof(out));
	assert_string_equal(out, "1500");
	k8s_quantity_decimal(132, out, sizeof(out));
	assert_string_equal(out, "132");
	k8s_quantity_decimal(1000, out, sizeof(out));
	assert_string_equal(out, "1k");
	k8s_quantity_decimal(0, out, sizeof(out));
	assert_string_equal(out, "0");
	assert_true(k8s_valid_quantity("80Gi"));
	assert_true(k8s_valid_quantity("1.5"));
	assert_true(k8s_valid_quantity("500m"));
	assert_true(k8s_valid_quantity("1e3"));
	assert_false(k8s_valid_quantity("80GB"));
	assert_false(k8s_valid_quantity(""));
	assert_false(k8s_valid_quantity("Gi"));
	assert_int_equal(k8s_quantity_binary(85899345920ull, out, 3), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dns_labels),
		cmocka_unit_test(test_driver_and_qualified_names),
		cmocka_unit_test(test_label_keys),
		cmocka_unit_test(test_semver),
		cmocka_unit_test(test_quantities),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
