/* SPDX-License-Identifier: Apache-2.0 */
/*
 * root_resolve: links followed below a root as if it were "/": absolute
 * targets start at the root, ".." stops there, intermediate directories that
 * are links, chains, loops, missing components.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <cmocka.h>

#include "harness.h"
#include "backends/common/root_path.h"

static void test_links_below_the_root(void **state)
{
	char *d = tree_new(), out[256];

	(void)state;
	tree_write(d, "usr/local/nvidia/lib64/libcuda.so.550.54.15", "ELF");
	assert_int_equal(tree_link(d, "usr/local/nvidia/lib64/libcuda.so.1", "libcuda.so.550.54.15"), 0);
	/* absolute: the root's /usr/local/..., not the agent's */
	assert_int_equal(tree_link(d, "usr/lib/libcuda.so.1", "/usr/local/nvidia/lib64/libcuda.so.1"), 0);
	assert_int_equal(root_resolve(d, "usr/lib/libcuda.so.1", out, sizeof(out)), 0);
	assert_string_equal(out, "usr/local/nvidia/lib64/libcuda.so.550.54.15");
	/* a directory on the way that is a link (merged /usr), and ".." that stops at the root */
	assert_int_equal(tree_link(d, "lib", "usr/lib"), 0);
	assert_int_equal(root_resolve(d, "lib/libcuda.so.1", out, sizeof(out)), 0);
	assert_string_equal(out, "usr/local/nvidia/lib64/libcuda.so.550.54.15");
	assert_int_equal(tree_link(d, "usr/lib/up", "../../../../../usr/local"), 0);
	assert_int_equal(root_resolve(d, "usr/lib/up/nvidia/./lib64//libcuda.so.1", out,
				      sizeof(out)), 0);
	assert_string_equal(out, "usr/local/nvidia/lib64/libcuda.so.550.54.15");
	/* a plain file is itself */
	assert_int_equal(root_resolve(d, "usr/local/nvidia/lib64/libcuda.so.550.54.15", out,
				      sizeof(out)), 0);
	assert_string_equal(out, "usr/local/nvidia/lib64/libcuda.so.550.54.15");
	/* missing, dangling, looping */
	assert_int_equal(root_resolve(d, "usr/lib/libnvidia-ml.so.1", out, sizeof(out)), -ENOENT);
	assert_int_equal(tree_link(d, "usr/lib/dangling", "/nowhere/x"), 0);
	assert_int_equal(root_resolve(d, "usr/lib/dangling", out, sizeof(out)), -ENOENT);
	assert_int_equal(tree_link(d, "l1", "l2"), 0);
	assert_int_equal(tree_link(d, "l2", "/l1"), 0);
	assert_int_equal(root_resolve(d, "l1", out, sizeof(out)), -ELOOP);
	/* the result must fit */
	assert_int_equal(root_resolve(d, "usr/lib/libcuda.so.1", out, 8), -ENAMETOOLONG);
	tree_remove(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_links_below_the_root),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
