/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ld_so_conf_dirs: the directories of a root's ld.so.conf as ldconfig reads
 * them: includes (absolute globs below the root, relative ones beside the
 * including file, in name order), several
 * directories on a line, comments, "DIR=TYPE", hwcap lines, duplicates,
 * an include loop, a missing file.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "harness.h"
#include "backends/common/ld_so_conf.h"

static void test_includes_and_lines(void **state)
{
	char dirs[8][LD_SO_CONF_DIR_MAX], *d = tree_new();

	(void)state;
	tree_write(d, "etc/ld.so.conf", "# the loader's directories\n"
		   "include ld.so.conf.d/*.conf\n"
		   "  /opt/a/lib/ /opt/b/lib:/opt/c/lib,/opt/d/lib=libc6\n"
		   "hwcap 0 nosegneg\n"
		   "relative/ignored\n"
		   "include /etc/extra.conf # trailing comment\n");
	tree_write(d, "etc/ld.so.conf.d/10-nvidia.conf", "/usr/local/nvidia/lib64\n"
		   "include nested/*.conf\n");	/* beside this file, not below etc/ */
	tree_write(d, "etc/ld.so.conf.d/nested/a.conf", "/opt/nested\n");
	tree_write(d, "etc/nested/a.conf", "/not/this/one\n");
	tree_write(d, "etc/ld.so.conf.d/00-i386.conf", "/usr/lib/i386-linux-gnu\n/opt/a/lib\n");
	tree_write(d, "etc/ld.so.conf.d/README", "/not/a/conf/file\n");
	tree_write(d, "etc/extra.conf", "/opt/extra\n");
	assert_int_equal(ld_so_conf_dirs(d, dirs, 8), 8);
	assert_string_equal(dirs[0], "usr/lib/i386-linux-gnu");
	assert_string_equal(dirs[1], "opt/a/lib");
	assert_string_equal(dirs[2], "usr/local/nvidia/lib64");
	assert_string_equal(dirs[3], "opt/nested");
	assert_string_equal(dirs[4], "opt/b/lib");
	assert_string_equal(dirs[5], "opt/c/lib");
	assert_string_equal(dirs[6], "opt/d/lib");
	assert_string_equal(dirs[7], "opt/extra");
	/* no more than asked for */
	assert_int_equal(ld_so_conf_dirs(d, dirs, 2), 2);
	assert_string_equal(dirs[1], "opt/a/lib");
	tree_remove(d);
}

static void test_include_loop_and_missing_file(void **state)
{
	char dirs[4][LD_SO_CONF_DIR_MAX], *d = tree_new();

	(void)state;
	assert_int_equal(ld_so_conf_dirs(d, dirs, 4), 0);
	tree_write(d, "etc/ld.so.conf", "include ld.so.conf\n/lib/loop\n");
	assert_int_equal(ld_so_conf_dirs(d, dirs, 4), 1);
	assert_string_equal(dirs[0], "lib/loop");
	tree_remove(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_includes_and_lines),
		cmocka_unit_test(test_include_loop_and_missing_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
