/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/claims/claims_lock.h"

#include "agent/lib/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

struct claims_lock {
	int fd;
	bool held;
	uint64_t generation;	/* the one this object left in the file; 0: none yet */
	char *path;
};

/* 20 digits and a newline: every write overwrites the whole value */
#define GENERATION_TEXT_LEN 21

int claims_lock_open(const char *state_dir, struct claims_lock **ret_lock)
{
	struct claims_lock *l = calloc(1, sizeof(*l));
	int r;

	if (!l || asprintf(&l->path, "%s/%s", state_dir, CLAIMS_LOCK_FILE_NAME) < 0) {
		free(l);
		return -ENOMEM;
	}
	if ((r = atomic_file_mkdirs(state_dir, 0750)) < 0) {
		free(l->path);
		free(l);
		return r;
	}
	l->fd = open(l->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (l->fd < 0) {
		r = -errno;
		free(l->path);
		free(l);
		return r;
	}
	*ret_lock = l;
	return 0;
}

void claims_lock_free(struct claims_lock *l)
{
	if (!l)
		return;
	close(l->fd);	/* releases the flock */
	free(l->path);
	free(l);
}

int claims_lock_try(struct claims_lock *l)
{
	if (l->held)
		return 0;
	if (flock(l->fd, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK ? -EWOULDBLOCK : -errno;
	l->held = true;
	return 0;
}

int claims_lock_wait(struct claims_lock *l)
{
	if (l->held)
		return 0;
	while (flock(l->fd, LOCK_EX) < 0)
		if (errno != EINTR)
			return -errno;
	l->held = true;
	return 0;
}

void claims_lock_release(struct claims_lock *l)
{
	if (!l || !l->held)
		return;
	flock(l->fd, LOCK_UN);
	l->held = false;
}

bool claims_lock_held(const struct claims_lock *l)
{
	return l && l->held;
}

uint64_t claims_lock_parse_generation(const char *text, size_t len)
{
	uint64_t g = 0;
	size_t i = 0;

	while (i < len && text[i] == ' ')
		i++;
	if (i == len || text[i] < '0' || text[i] > '9')
		return 0;
	for (; i < len && text[i] >= '0' && text[i] <= '9'; i++) {
		uint64_t digit = (uint64_t)(text[i] - '0');

		if (g > (UINT64_MAX - digit) / 10)
			return 0;
		g = g * 10 + digit;
	}
	return i == len || text[i] == '\n' ? g : 0;
}

bool claims_lock_changed_since(uint64_t mine, uint64_t in_file)
{
	return mine == 0 || mine != in_file;
}

int claims_lock_take_turn(struct claims_lock *l, bool *ret_changed)
{
	char text[GENERATION_TEXT_LEN + 1];
	uint64_t in_file, next;
	ssize_t n;

	*ret_changed = true;
	if (!l->held)
		return -ENOLCK;
	n = pread(l->fd, text, GENERATION_TEXT_LEN, 0);
	if (n < 0)
		return -errno;
	in_file = claims_lock_parse_generation(text, (size_t)n);
	*ret_changed = claims_lock_changed_since(l->generation, in_file);
	next = in_file + 1 ? in_file + 1 : 1;	/* 0 means "never" */
	snprintf(text, sizeof(text), "%020" PRIu64 "\n", next);
	n = pwrite(l->fd, text, GENERATION_TEXT_LEN, 0);
	if (n != GENERATION_TEXT_LEN) {
		l->generation = 0;	/* unknown: the next turn reads again */
		return n < 0 ? -errno : -EIO;
	}
	l->generation = next;
	return 0;
}

/* ---- several ---- */

struct by_path {
	const char *dir;
	size_t index;
};

static int compare_path(const void *a, const void *b)
{
	return strcmp(((const struct by_path *)a)->dir, ((const struct by_path *)b)->dir);
}

void claims_locks_free(struct claims_lock **locks, size_t n)
{
	for (size_t i = 0; locks && i < n; i++)
		claims_lock_free(locks[i]);
	free(locks);
}

int claims_locks_take(const char *const *state_dirs, size_t n, bool wait,
		      struct claims_lock ***ret_locks)
{
	struct claims_lock **locks = calloc(n + 1, sizeof(*locks));
	struct by_path *order = calloc(n + 1, sizeof(*order));
	int r = locks && order ? 0 : -ENOMEM;

	for (size_t i = 0; !r && i < n; i++)
		order[i] = (struct by_path){ state_dirs[i], i };
	if (!r)
		qsort(order, n, sizeof(*order), compare_path);
	for (size_t i = 0; !r && i < n; i++) {
		struct claims_lock **l = &locks[order[i].index];

		r = claims_lock_open(order[i].dir, l);
		if (!r)
			r = wait ? claims_lock_wait(*l) : claims_lock_try(*l);
	}
	free(order);
	if (r < 0) {
		claims_locks_free(locks, n);
		return r;
	}
	*ret_locks = locks;
	return 0;
}
