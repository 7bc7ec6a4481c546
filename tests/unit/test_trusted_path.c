/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trusted_path_check over files and directories the test creates with bad
 * modes and owners: what the agent must refuse to load or read.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/lib/trusted_path.h"

struct tree {
	char dir[64];
	char file[128];
};

static int setup(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));
	int fd;

	snprintf(t->dir, sizeof(t->dir), "/tmp/dralet-trusted-XXXXXX");
	assert_non_null(mkdtemp(t->dir));	/* 0700, ours, in sticky /tmp */
	snprintf(t->file, sizeof(t->file), "%s/lib.so", t->dir);
	fd = open(t->file, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chmod(t->file, 0644), 0);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct tree *t = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", t->dir);
	assert_int_equal(system(cmd), 0);
	free(t);
	return 0;
}

static void expect_refused(const char *path, const char *want)
{
	char err[512] = "";

	assert_int_equal(trusted_path_check(path, err, sizeof(err)), -EPERM);
	if (!strstr(err, want))
		fail_msg("want \"%s\" in \"%s\"", want, err);
}

static void test_good_file(void **state)
{
	struct tree *t = *state;
	char err[512] = "";

	assert_int_equal(trusted_path_check(t->file, err, sizeof(err)), 0);
	assert_int_equal(trusted_path_check("/", err, sizeof(err)), 0);
	/* a directory writable by everyone with the sticky bit is fine */
	assert_int_equal(chmod(t->dir, 01777), 0);
	assert_int_equal(trusted_path_check(t->file, err, sizeof(err)), 0);
}

static void test_writable_file(void **state)
{
	struct tree *t = *state;
	char want[256];

	assert_int_equal(chmod(t->file, 0666), 0);
	snprintf(want, sizeof(want), "%s is writable by every user (mode 0666)", t->file);
	expect_refused(t->file, want);
	assert_int_equal(chmod(t->file, 0664), 0);
	assert_int_equal(chown(t->file, geteuid(), 4242), 0);
	snprintf(want, sizeof(want), "%s is writable by group 4242 (mode 0664)", t->file);
	expect_refused(t->file, want);
}

static void test_writable_directory(void **state)
{
	struct tree *t = *state;
	char want[256];

	assert_int_equal(chmod(t->dir, 0777), 0);
	snprintf(want, sizeof(want), "%s is writable by every user (mode 0777)", t->dir);
	expect_refused(t->file, want);
}

static void test_foreign_owner(void **state)
{
	struct tree *t = *state;
	char want[256];

	if (geteuid() != 0) {
		/* only root can give a file away: as a user, root's files are still trusted */
		char err[512] = "";
		assert_int_equal(trusted_path_check("/", err, sizeof(err)), 0);
		return;
	}
	assert_int_equal(chown(t->file, 4242, 0), 0);
	snprintf(want, sizeof(want), "%s is owned by uid 4242, not by root or the agent's user",
		 t->file);
	expect_refused(t->file, want);
}

static void test_link_in_writable_directory(void **state)
{
	struct tree *t = *state;
	char sub[128], link[192], want[256];

	/* a good file, reached through a link that anyone could swap */
	snprintf(sub, sizeof(sub), "%s/open", t->dir);
	assert_int_equal(mkdir(sub, 0777), 0);
	assert_int_equal(chmod(sub, 0777), 0);
	snprintf(link, sizeof(link), "%s/lib.so", sub);
	assert_int_equal(symlink(t->file, link), 0);
	snprintf(want, sizeof(want), "%s is writable by every user", sub);
	expect_refused(link, want);
	/* and a link from a good place to a file in a writable one */
	assert_int_equal(unlink(link), 0);
	assert_int_equal(rename(t->file, link), 0);
	snprintf(want, sizeof(want), "%s/good.so", t->dir);
	assert_int_equal(symlink(link, want), 0);
	expect_refused(want, "/open is writable by every user");
}

static void test_missing(void **state)
{
	struct tree *t = *state;
	char path[192], err[512] = "";

	snprintf(path, sizeof(path), "%s/nope.so", t->dir);
	assert_int_equal(trusted_path_check(path, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, path));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_good_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writable_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writable_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_owner, setup, teardown),
		cmocka_unit_test_setup_teardown(test_link_in_writable_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
