/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The per-operation lock across dralet instances (agent/claims/claims_lock.h):
 * two objects on one directory exclude each other (as two processes do), the
 * generation tells a holder whether another one took a turn since its own,
 * and several drivers' locks are taken all or none.
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

#include "agent/claims/claims_lock.h"

struct dirs {
	char root[64], a[128], b[128];
};

static int setup(void **state)
{
	struct dirs *d = calloc(1, sizeof(*d));

	snprintf(d->root, sizeof(d->root), "/tmp/dralet-lock-XXXXXX");
	assert_non_null(mkdtemp(d->root));
	snprintf(d->a, sizeof(d->a), "%s/plugins/a.example.com", d->root);
	snprintf(d->b, sizeof(d->b), "%s/plugins/b.example.com", d->root);
	*state = d;
	return 0;
}

static int teardown(void **state)
{
	struct dirs *d = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", d->root);
	assert_int_equal(system(cmd), 0);
	free(d);
	return 0;
}

static void test_parse_generation(void **state)
{
	(void)state;
	assert_int_equal(claims_lock_parse_generation("00000000000000000042\n", 21), 42);
	assert_int_equal(claims_lock_parse_generation("7", 1), 7);
	assert_int_equal(claims_lock_parse_generation("", 0), 0);
	assert_int_equal(claims_lock_parse_generation("abc\n", 4), 0);
	assert_int_equal(claims_lock_parse_generation("12x\n", 4), 0);	/* torn: unknown */
	assert_int_equal(claims_lock_parse_generation("99999999999999999999\n", 21), 0);
	assert_int_equal(claims_lock_parse_generation("18446744073709551615\n", 21),
			 18446744073709551615u);
}

static void test_changed_since(void **state)
{
	(void)state;
	assert_true(claims_lock_changed_since(0, 0));	/* never took a turn: read */
	assert_true(claims_lock_changed_since(0, 9));
	assert_false(claims_lock_changed_since(9, 9));
	assert_true(claims_lock_changed_since(9, 10));
	assert_true(claims_lock_changed_since(9, 0));	/* file emptied or torn */
}

static void test_two_objects_exclude_each_other(void **state)
{
	struct dirs *d = *state;
	struct claims_lock *one, *two;
	struct stat st;
	char path[192];

	assert_int_equal(claims_lock_open(d->a, &one), 0);	/* makes the directory */
	assert_int_equal(claims_lock_open(d->a, &two), 0);
	snprintf(path, sizeof(path), "%s/" CLAIMS_LOCK_FILE_NAME, d->a);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(claims_lock_try(one), 0);
	assert_true(claims_lock_held(one));
	assert_int_equal(claims_lock_try(one), 0);	/* held already */
	assert_int_equal(claims_lock_try(two), -EWOULDBLOCK);
	assert_false(claims_lock_held(two));
	claims_lock_release(one);
	assert_false(claims_lock_held(one));
	assert_int_equal(claims_lock_try(two), 0);
	assert_int_equal(claims_lock_try(one), -EWOULDBLOCK);
	claims_lock_free(two);	/* freeing releases it */
	assert_int_equal(claims_lock_wait(one), 0);
	claims_lock_free(one);
}

static uint64_t generation_in_file(const char *dir)
{
	char path[192], text[64] = "";
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/" CLAIMS_LOCK_FILE_NAME, dir);
	assert_non_null(f = fopen(path, "r"));
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	assert_int_equal(n, 21);
	return claims_lock_parse_generation(text, n);
}

static void test_turns(void **state)
{
	struct dirs *d = *state;
	struct claims_lock *one, *two;
	bool changed;
	FILE *f;
	char path[192];

	assert_int_equal(claims_lock_open(d->a, &one), 0);
	assert_int_equal(claims_lock_open(d->a, &two), 0);
	assert_int_equal(claims_lock_take_turn(one, &changed), -ENOLCK);	/* not held */

	assert_int_equal(claims_lock_try(one), 0);
	assert_int_equal(claims_lock_take_turn(one, &changed), 0);
	assert_true(changed);			/* its first turn */
	assert_int_equal(generation_in_file(d->a), 1);
	claims_lock_release(one);

	/* nobody else took a turn: nothing to read again */
	assert_int_equal(claims_lock_try(one), 0);
	assert_int_equal(claims_lock_take_turn(one, &changed), 0);
	assert_false(changed);
	assert_int_equal(generation_in_file(d->a), 2);
	claims_lock_release(one);

	/* the other instance's turn: its first, then the first one's sees it */
	assert_int_equal(claims_lock_try(two), 0);
	assert_int_equal(claims_lock_take_turn(two, &changed), 0);
	assert_true(changed);
	claims_lock_release(two);
	assert_int_equal(claims_lock_try(one), 0);
	assert_int_equal(claims_lock_take_turn(one, &changed), 0);
	assert_true(changed);
	assert_int_equal(generation_in_file(d->a), 4);
	claims_lock_release(one);

	/* a torn or foreign value: read again, and numbering goes on from 1 */
	snprintf(path, sizeof(path), "%s/" CLAIMS_LOCK_FILE_NAME, d->a);
	assert_non_null(f = fopen(path, "w"));
	fputs("garbage", f);
	fclose(f);
	assert_int_equal(claims_lock_try(one), 0);
	assert_int_equal(claims_lock_take_turn(one, &changed), 0);
	assert_true(changed);
	assert_int_equal(generation_in_file(d->a), 1);
	claims_lock_free(one);
	claims_lock_free(two);
}

static void test_several_all_or_none(void **state)
{
	struct dirs *d = *state;
	const char *dirs[2] = { d->b, d->a };	/* not in path order */
	struct claims_lock **locks, *other, *probe;

	assert_int_equal(claims_locks_take(dirs, 2, false, &locks), 0);
	assert_true(claims_lock_held(locks[0]) && claims_lock_held(locks[1]));
	assert_int_equal(claims_lock_open(d->b, &other), 0);
	assert_int_equal(claims_lock_try(other), -EWOULDBLOCK);
	claims_locks_free(locks, 2);
	assert_int_equal(claims_lock_try(other), 0);

	/* b busy: a is not kept either */
	assert_int_equal(claims_locks_take(dirs, 2, false, &locks), -EWOULDBLOCK);
	assert_int_equal(claims_lock_open(d->a, &probe), 0);
	assert_int_equal(claims_lock_try(probe), 0);
	claims_lock_free(probe);
	claims_lock_free(other);
	assert_int_equal(claims_locks_take(dirs, 2, true, &locks), 0);
	claims_locks_free(locks, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_generation),
		cmocka_unit_test(test_changed_since),
		cmocka_unit_test_setup_teardown(test_two_objects_exclude_each_other, setup, teardown),
		cmocka_unit_test_setup_teardown(test_turns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_several_all_or_none, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
