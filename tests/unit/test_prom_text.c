/* SPDX-License-Identifier: Apache-2.0 */
/* The Prometheus text format writer: families, label escaping, histograms. The
 * whole output is also parsed by python3-prometheus-client (test_metrics.py). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "agent/lib/prom_text.h"

static void test_family_and_escaping(void **state)
{
	struct prom_buf b = { 0 };
	const char *labels[] = { "driver", "gpu.dralet.dev", "why", "a \"b\"\\c\nd", NULL };

	(void)state;
	prom_family(&b, "dralet_x", "gauge", "Help with a\nnewline and \\.");
	prom_sample(&b, "dralet_x", labels, 2.5);
	prom_sample(&b, "dralet_y", NULL, 3);
	prom_sample(&b, "dralet_z", NULL, INFINITY);
	assert_int_equal(b.error, 0);
	assert_string_equal(b.data,
			    "# HELP dralet_x Help with a\\nnewline and \\\\.\n"
			    "# TYPE dralet_x gauge\n"
			    "dralet_x{driver=\"gpu.dralet.dev\",why=\"a \\\"b\\\"\\\\c\\nd\"} 2.5\n"
			    "dralet_y 3\n"
			    "dralet_z +Inf\n");
	prom_buf_free(&b);
	assert_null(b.data);
}

static void test_histogram(void **state)
{
	static const double bounds[] = { 0.01, 0.1, 1 };
	struct prom_histogram h = { .bounds = bounds, .n_bounds = 3 };
	struct prom_buf b = { 0 };
	const char *labels[] = { "driver", "d", NULL };

	(void)state;
	prom_histogram_observe(&h, 0.005);
	prom_histogram_observe(&h, 0.01);	/* le is inclusive */
	prom_histogram_observe(&h, 0.5);
	prom_histogram_observe(&h, 7);		/* only +Inf */
	prom_histogram_write(&b, "lat", labels, &h);
	assert_int_equal(b.error, 0);
	assert_string_equal(b.data,
			    "lat_bucket{driver=\"d\",le=\"0.01\"} 2\n"
			    "lat_bucket{driver=\"d\",le=\"0.1\"} 2\n"
			    "lat_bucket{driver=\"d\",le=\"1\"} 3\n"
			    "lat_bucket{driver=\"d\",le=\"+Inf\"} 4\n"
			    "lat_sum{driver=\"d\"} 7.5149999999999997\n"
			    "lat_count{driver=\"d\"} 4\n");
	prom_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_family_and_escaping),
		cmocka_unit_test(test_histogram),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
