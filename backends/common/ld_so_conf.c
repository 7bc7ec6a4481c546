/* SPDX-License-Identifier: Apache-2.0 */
/* The directories of a root's ld.so.conf (ld_so_conf.h). */
#include <glob.h>
#include <stdio.h>
#include <string.h>

#include "ld_so_conf.h"

#define INCLUDE_DEPTH 4

struct dir_list {
	const char *root;
	char (*dirs)[LD_SO_CONF_DIR_MAX];
	size_t n, max;
};

static void add_dir(struct dir_list *l, const char *dir)
{
	size_t len;

	while (*dir == '/')
		dir++;
	len = strlen(dir);
	while (len && dir[len - 1] == '/')
		len--;
	if (!len || len >= LD_SO_CONF_DIR_MAX || l->n == l->max)
		return;
	for (size_t i = 0; i < l->n; i++)
		if (strlen(l->dirs[i]) == len && !strncmp(l->dirs[i], dir, len))
			return;
	memcpy(l->dirs[l->n], dir, len);
	l->dirs[l->n++][len] = '\0';
}

static void read_conf(struct dir_list *l, const char *path, int depth);

/* The files @pattern names, read in name order: an absolute pattern below the
 * root, a relative one beside the file @from (as ldconfig does). */
static void include(struct dir_list *l, const char *from, const char *pattern, int depth)
{
	const char *slash = strrchr(from, '/');
	char full[4096];
	glob_t g;
	int n;

	if (pattern[0] == '/')
		n = snprintf(full, sizeof(full), "%s%s", l->root, pattern);
	else
		n = snprintf(full, sizeof(full), "%.*s/%s", (int)(slash - from), from, pattern);
	if (n < 0 || n >= (int)sizeof(full))
		return;
	if (glob(full, 0, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc; i++)
		read_conf(l, g.gl_pathv[i], depth + 1);
	globfree(&g);
}

static void read_conf(struct dir_list *l, const char *path, int depth)
{
	char line[1024], *save, *word;
	FILE *f;

	if (depth > INCLUDE_DEPTH || !(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = line;

		line[strcspn(line, "#\n")] = '\0';
		p += strspn(p, " \t");
		if (!strncmp(p, "include", 7) && (p[7] == ' ' || p[7] == '\t')) {
			for (word = strtok_r(p + 8, " \t", &save); word;
			     word = strtok_r(NULL, " \t", &save))
				include(l, path, word, depth);
			continue;
		}
		if (!strncmp(p, "hwcap", 5))	/* an old ldconfig's; names no directory */
			continue;
		for (word = strtok_r(p, " \t:,", &save); word; word = strtok_r(NULL, " \t:,", &save)) {
			word[strcspn(word, "=")] = '\0';	/* "DIR=TYPE" of old files */
			if (word[0] == '/')
				add_dir(l, word);
		}
	}
	fclose(f);
}

size_t ld_so_conf_dirs(const char *root, char (*dirs)[LD_SO_CONF_DIR_MAX], size_t max)
{
	struct dir_list l = { root, dirs, 0, max };
	char path[4096];

	if (snprintf(path, sizeof(path), "%s/etc/ld.so.conf", root) < (int)sizeof(path))
		read_conf(&l, path, 0);
	return l.n;
}
