/* SPDX-License-Identifier: Apache-2.0 */
/* Durable file replacement: whole writes, streamed writes, failures that
 * leave the old content and no temporary file behind. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/lib/atomic_file.h"
#include "agent/claims/checkpoint.h"

/* fsync, counted: this definition is the one libdralet.a's atomic_file.o links to */
static int n_fsync;
int fsync(int fd)
{
	n_fsync++;
	return (int)syscall(SYS_fsync, fd);
}

/* write(2) to one file descriptor, counted (the same way) */
static int count_fd = -1, n_writes;
ssize_t write(int fd, const void *buf, size_t n)
{
	if (fd == count_fd)
		n_writes++;
	return syscall(SYS_write, fd, buf, n);
}

static char *read_text(const char *dir, const char *name)
{
	char path[4096], *text = NULL;
	size_t len;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (atomic_file_read(path, 1 << 20, &text, &len) < 0)
		return NULL;
	return text;
}

/* Entries of @dir other than "." and "..". */
static int n_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	assert_non_null(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static int setup(void **state)
{
	static char dir[64];
	snprintf(dir, sizeof(dir), "/tmp/dralet-atomic-XXXXXX");
	assert_non_null(mkdtemp(dir));
	*state = dir;
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", (char *)*state);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_write_replaces_with_mode(void **state)
{
	const char *dir = *state;
	char path[4096], *text;
	struct stat st;

	assert_int_equal(atomic_file_write(dir, "f.json", "old", 3, 0644), 0);
	assert_int_equal(atomic_file_write(dir, "f.json", "new content", 11, 0600), 0);
	text = read_text(dir, "f.json");
	assert_string_equal(text, "new content");
	free(text);
	snprintf(path, sizeof(path), "%s/f.json", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(n_entries(dir), 1);
	assert_int_equal(atomic_file_write(dir, "a/b", "x", 1, 0600), -EINVAL);
}

static int write_lines(void *userdata, FILE *out)
{
	int n = *(int *)userdata;
	for (int i = 0; i < n; i++)
		fprintf(out, "line %d\n", i);
	return 0;
}

static int fail_halfway(void *userdata, FILE *out)
{
	(void)userdata;
	fputs("half of it", out);
	return -ENOMEM;
}

static void test_produce_streams_content(void **state)
{
	const char *dir = *state;
	int n = 20000;	/* several times the stream's buffer */
	char *text;

	assert_int_equal(atomic_file_produce(dir, "big", 0600, write_lines, &n), 0);
	text = read_text(dir, "big");
	assert_non_null(text);
	assert_true(strncmp(text, "line 0\nline 1\n", 14) == 0);
	assert_non_null(strstr(text, "line 19999\n"));
	assert_int_equal(strlen(text), 208890);	/* sum of the lines' lengths */
	free(text);
	assert_int_equal(n_entries(dir), 1);
}

static void test_writer_error_keeps_old_content(void **state)
{
	const char *dir = *state;
	char *text;

	assert_int_equal(atomic_file_write(dir, "f", "kept", 4, 0600), 0);
	assert_int_equal(atomic_file_produce(dir, "f", 0600, fail_halfway, NULL), -ENOMEM);
	text = read_text(dir, "f");
	assert_string_equal(text, "kept");
	free(text);
	assert_int_equal(n_entries(dir), 1);	/* no temporary file left */
}

static void test_begin_abort_leaves_nothing(void **state)
{
	const char *dir = *state;
	struct atomic_file af;

	assert_int_equal(atomic_file_begin(&af, dir, "g", 0600), 0);
	fputs("never seen", af.out);
	assert_int_equal(n_entries(dir), 1);	/* the temporary file */
	atomic_file_abort(&af);
	assert_int_equal(n_entries(dir), 0);
	assert_int_equal(atomic_file_commit(&af), -EINVAL);	/* nothing to commit */
	assert_int_equal(atomic_file_begin(&af, "/nonexistent-dralet-dir", "g", 0600), -ENOENT);
}

static bool named_checkpoint(const char *name, void *userdata)
{
	return !strcmp(name, userdata);
}

static void touch(const char *dir, const char *name, const char *content)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_non_null(f = fopen(path, "w"));
	fputs(content, f);
	fclose(f);
}

/* Only our own temporaries go: regular files named .<ours>.XXXXXX; never a
 * symlink (nor what it points to), another name or another shape. */
static void test_remove_stale_only_ours(void **state)
{
	const char *dir = *state;
	char path[4096], outside[4096], *text;

	touch(dir, ".checkpoint.json.aB3dE9", "half a checkpoint");
	touch(dir, ".checkpoint.json.Zz0011", "another");
	touch(dir, ".checkpoint.json.corrupt", "not a temporary name");
	touch(dir, ".checkpoint.json.ab-def", "not mkostemp's letters");
	touch(dir, ".other.json.aB3dE9", "not ours");
	touch(dir, "checkpoint.json", "the real one");
	snprintf(outside, sizeof(outside), "%s.outside", dir);
	touch("/tmp", outside + 5, "keep me");
	snprintf(path, sizeof(path), "%s/.checkpoint.json.LnK123", dir);
	assert_int_equal(symlink(outside, path), 0);
	snprintf(path, sizeof(path), "%s/.checkpoint.json.DiR123", dir);
	assert_int_equal(mkdir(path, 0700), 0);

	assert_int_equal(atomic_file_remove_stale(dir, named_checkpoint, "checkpoint.json"), 2);
	assert_int_equal(n_entries(dir), 6);
	assert_null(read_text(dir, ".checkpoint.json.aB3dE9"));
	assert_null(read_text(dir, ".checkpoint.json.Zz0011"));
	text = read_text(dir, "checkpoint.json");
	assert_string_equal(text, "the real one");
	free(text);
	snprintf(path, sizeof(path), "%s/.checkpoint.json.LnK123", dir);
	assert_int_equal(access(path, F_OK), 0);	/* the link is still there ... */
	assert_non_null(text = read_text("/tmp", outside + 5));	/* ... and its target */
	assert_string_equal(text, "keep me");
	free(text);
	unlink(outside);
	assert_int_equal(atomic_file_remove_stale("/nonexistent/dralet", named_checkpoint,
						  "checkpoint.json"), 0);
}

/* A temporary file whose writes fail as on a full disk (/dev/full under its fd). */
static void begin_on_full_disk(struct atomic_file *af, const char *dir)
{
	int full = open("/dev/full", O_WRONLY | O_CLOEXEC);

	assert_true(full >= 0);
	assert_int_equal(atomic_file_begin(af, dir, "checkpoint.json", 0600), 0);
	assert_int_equal(dup2(full, af->fd), af->fd);
	close(full);
}

/* A full disk is reported as ENOSPC, whether the write fails while the
 * content is produced (large: past the stream's buffer) or at commit. */
static void test_full_disk_is_enospc(void **state)
{
	const char *dir = *state;
	struct checkpoint *ck = checkpoint_new("gpu.dralet.dev", "boot");
	struct atomic_file af;
	int r;

	for (int i = 0; i < 2000; i++) {
		struct ckpt_claim *c = calloc(1, sizeof(*c));
		char uid[64];
		snprintf(uid, sizeof(uid), "%08x-0000-4000-8000-000000000000", i);
		c->uid = strdup(uid);
		c->namespace_ = strdup("namespace-of-a-claim");
		c->name = strdup("name-of-a-claim");
		c->state = CKPT_PREPARE_COMPLETED;
		assert_int_equal(checkpoint_add(ck, c), 0);
	}
	/* what the claims state does: stream the checkpoint, then commit */
	begin_on_full_disk(&af, dir);
	r = checkpoint_write(ck, af.out);
	assert_true(r < 0);
	assert_int_equal(atomic_file_fail(&af, r), -ENOSPC);
	checkpoint_free(ck);
	assert_int_equal(n_entries(dir), 0);

	begin_on_full_disk(&af, dir);
	fputs("{}", af.out);
	assert_int_equal(atomic_file_commit(&af), -ENOSPC);
	assert_int_equal(n_entries(dir), 0);
}

/* What each sync level fsyncs: the file and the directory, the file, nothing;
 * the content is replaced whole in every case. */
static void test_sync_levels(void **state)
{
	const char *dir = *state;
	static const struct { enum atomic_file_sync sync; int fsyncs; } levels[] = {
		{ ATOMIC_FILE_SYNC_DIR, 2 }, { ATOMIC_FILE_SYNC_FILE, 1 }, { ATOMIC_FILE_SYNC_NONE, 0 },
	};
	struct atomic_file af;
	char *text;

	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		char content[32];

		snprintf(content, sizeof(content), "level %zu", i);
		n_fsync = 0;
		assert_int_equal(atomic_file_write_sync(dir, "f", content, strlen(content), 0644,
							levels[i].sync), 0);
		assert_int_equal(n_fsync, levels[i].fsyncs);
		assert_non_null(text = read_text(dir, "f"));
		assert_string_equal(text, content);
		free(text);
	}
	n_fsync = 0;
	assert_int_equal(atomic_file_write(dir, "f", "x", 1, 0644), 0);
	assert_int_equal(n_fsync, 2);	/* the default: everything */

	assert_int_equal(atomic_file_begin(&af, dir, "g", 0600), 0);
	assert_int_equal(af.sync, ATOMIC_FILE_SYNC_DIR);
	af.sync = ATOMIC_FILE_SYNC_FILE;
	fputs("streamed", af.out);
	n_fsync = 0;
	assert_int_equal(atomic_file_commit(&af), 0);
	assert_int_equal(n_fsync, 1);
	assert_non_null(text = read_text(dir, "g"));
	assert_string_equal(text, "streamed");
	free(text);
	assert_int_equal(n_entries(dir), 2);	/* no temporary file left */
}

/* mkdir -p from the leaf up: missing parents are made, existing ones are fine,
 * a file in the way is an error. */
static void test_mkdirs(void **state)
{
	const char *dir = *state;
	char path[256], file[256];
	mode_t old_umask = umask(022);
	struct stat st;
	FILE *f;

	snprintf(path, sizeof(path), "%s/a/b/c/", dir);
	assert_int_equal(atomic_file_mkdirs(path, 0750), 0);
	umask(old_umask);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0750);
	snprintf(path, sizeof(path), "%s/a", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0750);	/* the parents too */
	snprintf(path, sizeof(path), "%s/a/b/c/", dir);
	assert_int_equal(atomic_file_mkdirs(path, 0750), 0);	/* there already */
	snprintf(path, sizeof(path), "%s/a/b/d", dir);
	assert_int_equal(atomic_file_mkdirs(path, 0755), 0);	/* one new, under a parent */
	assert_int_equal(stat(path, &st), 0);
	snprintf(file, sizeof(file), "%s/a/file", dir);
	assert_non_null(f = fopen(file, "w"));
	fclose(f);
	snprintf(path, sizeof(path), "%s/a/file/x/y", dir);
	assert_int_equal(atomic_file_mkdirs(path, 0755), -ENOTDIR);
	assert_int_equal(atomic_file_mkdirs("", 0755), -EINVAL);
}

/* A streamed file goes out in large writes, not stdio's 8 KiB: 48 KiB in
 * small pieces is one write(2). */
static void test_streamed_in_large_writes(void **state)
{
	const char *dir = *state;
	struct atomic_file af;
	char piece[100];
	char *text;

	memset(piece, 'x', sizeof(piece));
	assert_int_equal(atomic_file_begin(&af, dir, "big", 0600), 0);
	count_fd = af.fd;
	n_writes = 0;
	for (int i = 0; i < 480; i++)
		assert_int_equal(fwrite(piece, 1, sizeof(piece), af.out), sizeof(piece));
	assert_int_equal(atomic_file_commit(&af), 0);
	count_fd = -1;
	assert_int_equal(n_writes, 1);
	assert_non_null(text = read_text(dir, "big"));
	assert_int_equal(strlen(text), 48000);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write_replaces_with_mode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_produce_streams_content, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writer_error_keeps_old_content, setup, teardown),
		cmocka_unit_test_setup_teardown(test_begin_abort_leaves_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remove_stale_only_ours, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_disk_is_enospc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_levels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mkdirs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_streamed_in_large_writes, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
