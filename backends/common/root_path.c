/* SPDX-License-Identifier: Apache-2.0 */
/* Symbolic links followed below a root (root_path.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "root_path.h"

#define PATH_BUF 4096
#define LINKS_MAX 40

/* Puts @text in front of what is left to walk (@rest), with a slash between. */
static int push_front(char *rest, const char *text, size_t text_len)
{
	size_t rest_len = strlen(rest);

	if (text_len + 1 + rest_len + 1 > PATH_BUF)
		return -ENAMETOOLONG;
	memmove(rest + text_len + 1, rest, rest_len + 1);
	memcpy(rest, text, text_len);
	rest[text_len] = '/';
	return 0;
}

int root_resolve(const char *root, const char *rel, char *out, size_t size)
{
	char rest[PATH_BUF], done[PATH_BUF] = "", full[2 * PATH_BUF], target[PATH_BUF];
	unsigned links = 0;
	struct stat st;
	int r;

	if (snprintf(rest, sizeof(rest), "%s", rel) >= (int)sizeof(rest))
		return -ENAMETOOLONG;
	for (char *p = rest; *p;) {
		size_t len = strcspn(p, "/"), done_len = strlen(done);
		char name[PATH_BUF];

		memcpy(name, p, len);
		name[len] = '\0';
		memmove(rest, p + len + (p[len] == '/'), strlen(p + len + (p[len] == '/')) + 1);
		p = rest;
		if (!len || !strcmp(name, "."))
			continue;
		if (!strcmp(name, "..")) {	/* stops at the root */
			char *slash = strrchr(done, '/');
			*(slash ? slash : done) = '\0';
			continue;
		}
		if (done_len + 1 + len + 1 > sizeof(done))
			return -ENAMETOOLONG;
		if (done_len)
			done[done_len++] = '/';
		memcpy(done + done_len, name, len + 1);
		if (snprintf(full, sizeof(full), "%s/%s", root, done) >= (int)sizeof(full))
			return -ENAMETOOLONG;
		if (lstat(full, &st) < 0)
			return -errno;
		if (!S_ISLNK(st.st_mode))
			continue;
		ssize_t n = readlink(full, target, sizeof(target) - 1);
		if (n < 0)
			return -errno;
		if (++links > LINKS_MAX)
			return -ELOOP;
		*(done_len ? strrchr(done, '/') : done) = '\0';	/* the link: replaced by its target */
		if (target[0] == '/')
			done[0] = '\0';		/* which starts again at the root */
		if ((r = push_front(rest, target, (size_t)n)) < 0)
			return r;
	}
	if (snprintf(out, size, "%s", done) >= (int)size)
		return -ENAMETOOLONG;
	return 0;
}
