/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/claims/cdi_files.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/claims/cdi_names.h"
#include "agent/claims/cdi_spec.h"
#include "agent/lib/atomic_file.h"
#include "agent/lib/json_get.h"

#define CDI_SPEC_MAX_BYTES (4u << 20)

int cdi_files_write(const char *dir, const char *file, struct json_object *spec)
{
	char *text = cdi_spec_text(spec);
	int r;

	if (!text)
		return -ENOMEM;
	r = atomic_file_write_sync(dir, file, text, strlen(text), 0644, ATOMIC_FILE_SYNC_FILE);
	free(text);
	return r;
}

int cdi_files_remove(const char *dir, const char *file)
{
	char path[4096];

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
}

bool cdi_files_exists(const char *dir, const char *file)
{
	char path[4096];

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path))
		return false;
	return access(path, F_OK) == 0;
}

/* True when the file's kind belongs to @vendor. */
static bool kind_is_ours(const char *dir, const char *file, const char *vendor)
{
	char path[4096], *data = NULL;
	size_t len, vlen = strlen(vendor);
	struct json_object *o;
	bool ours = false;

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path) ||
	    atomic_file_read(path, CDI_SPEC_MAX_BYTES, &data, &len) < 0)
		return false;
	o = json_tokener_parse(data);
	free(data);
	const char *k = json_get_str(o, "kind");
	if (k)
		ours = !strncmp(k, vendor, vlen) && k[vlen] == '/';
	json_object_put(o);
	return ours;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A spec file name of @vendor (not of a driver whose name extends ours). */
static bool spec_name_of(const char *name, void *vendor)
{
	char cls[256], uid[256];

	return cdi_parse_spec_file_name(vendor, name, cls, sizeof(cls), uid, sizeof(uid)) == 0;
}

int cdi_files_list(const char *dir, const char *vendor, char ***ret_names, size_t *ret_n)
{
	char **names = NULL, cls[256], uid[256];
	size_t n = 0;
	struct dirent *de;
	DIR *d;

	atomic_file_remove_stale(dir, spec_name_of, (void *)vendor);
	d = opendir(dir);
	if (!d) {
		if (errno != ENOENT)
			return -errno;
		*ret_names = NULL;
		*ret_n = 0;
		return 0;
	}
	while ((de = readdir(d))) {
		char **grown;

		if (cdi_parse_spec_file_name(vendor, de->d_name, cls, sizeof(cls), uid,
					     sizeof(uid)) < 0 ||
		    !kind_is_ours(dir, de->d_name, vendor))
			continue;
		grown = realloc(names, (n + 1) * sizeof(*names));
		if (!grown || !(grown[n] = strdup(de->d_name))) {
			names = grown ? grown : names;
			closedir(d);
			cdi_files_free_list(names, n);
			return -ENOMEM;
		}
		names = grown;
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), compare_names);
	*ret_names = names;
	*ret_n = n;
	return 0;
}

void cdi_files_free_list(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}
