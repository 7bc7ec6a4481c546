/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the NVIDIA kernel driver says in procfs (linux-devices.md 4.4):
 * driver/nvidia/gpus/<address>/information, driver/nvidia/version,
 * driver/nvidia-caps/mig-minors and driver/nvidia/capabilities/.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvidia.h"

/* Splits "Key:<blanks>value" in place; NULL when the line has no colon. */
static char *split_line(char *line, char **ret_value)
{
	char *colon = strchr(line, ':'), *v, *end;

	if (!colon)
		return NULL;
	*colon = '\0';
	for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
		;
	end = v + strlen(v);
	while (end > v && isspace((unsigned char)end[-1]))
		*--end = '\0';
	*ret_value = v;
	return line;
}

static void copy_text(struct dralet_backend_ctx *ctx, const char *address, const char *key,
		      const char *value, char *out, size_t size)
{
	if (!gpu_text_ok(value) || strlen(value) >= size) {
		dralet_ctx_warn(ctx, "%s: proc information \"%s\" is not usable text; ignored",
				address, key);
		return;
	}
	snprintf(out, size, "%s", value);
}

int nvidia_proc_gpu_read(struct dralet_backend_ctx *ctx, const char *address,
			 struct nvidia_proc_gpu *ret)
{
	char rel[128], buf[4096], *save = NULL;
	int r;

	*ret = (struct nvidia_proc_gpu){ .minor = -1 };
	snprintf(rel, sizeof(rel), "driver/nvidia/gpus/%s/information", address);
	r = dralet_read_file(ctx, DRALET_ROOT_PROC, rel, buf, sizeof(buf));
	if (r < 0)
		return r;
	ret->found = true;
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *value, *key = split_line(line, &value);
		uint64_t v;

		if (!key)
			continue;
		if (!strcmp(key, "Model"))
			copy_text(ctx, address, key, value, ret->model, sizeof(ret->model));
		else if (!strcmp(key, "GPU UUID"))
			copy_text(ctx, address, key, value, ret->uuid, sizeof(ret->uuid));
		else if (!strcmp(key, "Video BIOS"))
			copy_text(ctx, address, key, value, ret->vbios, sizeof(ret->vbios));
		else if (!strcmp(key, "GPU Excluded"))
			ret->excluded = !strcasecmp(value, "Yes");
		else if (!strcmp(key, "Device Minor")) {
			if (gpu_parse_u64(value, &v) && v < 255)
				ret->minor = (int)v;
			else
				dralet_ctx_warn(ctx, "%s: proc information \"Device Minor\" is not a "
						     "minor number; ignored", address);
		}
	}
	/* a UUID that is not one is worse than none */
	if (ret->uuid[0] && strncmp(ret->uuid, "GPU-", 4)) {
		dralet_ctx_warn(ctx, "%s: proc information GPU UUID \"%s\" ignored", address,
				ret->uuid);
		ret->uuid[0] = '\0';
	}
	return 0;
}

int nvidia_proc_driver_version(struct dralet_backend_ctx *ctx, char *buf, size_t size)
{
	char text[1024], *save = NULL;
	int r = dralet_read_file(ctx, DRALET_ROOT_PROC, "driver/nvidia/version", text, sizeof(text));

	if (r < 0)
		return r;
	/* the first blank-separated word of the NVRM line that looks like a
	 * dotted version: "... Kernel Module  550.54.15  Tue Mar 5 ..." */
	char *nl = strchr(text, '\n');
	if (nl)
		*nl = '\0';
	for (char *w = strtok_r(text, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		size_t digits = strspn(w, "0123456789."), len = strlen(w);
		if (digits == len && isdigit((unsigned char)w[0]) && strchr(w, '.') &&
		    w[len - 1] != '.' && len < size) {
			snprintf(buf, size, "%s", w);
			return 0;
		}
	}
	dralet_ctx_warn(ctx, "proc driver/nvidia/version has no version number; ignored");
	return -EINVAL;
}

/* "<prefix><number>" at *p: advances *p past it. */
static bool take_number(const char **p, const char *prefix, unsigned *ret)
{
	size_t n = strlen(prefix);
	char *end;
	unsigned long v;

	if (strncmp(*p, prefix, n) || !isdigit((unsigned char)(*p)[n]))
		return false;
	v = strtoul(*p + n, &end, 10);
	if (v > (1u << 20))
		return false;
	*ret = (unsigned)v;
	*p = end;
	return true;
}

/* "gpu0/gi1/ci0/access 22" or "gpu0/gi1/access 21"; false for "config 1",
 * "monitor 2" and garbage. The file lists every possible instance of every
 * GPU (thousands of lines), so it is parsed by hand, once, when a MIG device
 * first needs a minor. */
static bool parse_cap_line(const char *line, struct nvidia_cap_minor *ret)
{
	unsigned gpu, gi, ci = 0, minor;
	bool has_ci;
	const char *p = line;

	if (!take_number(&p, "gpu", &gpu) || !take_number(&p, "/gi", &gi))
		return false;
	has_ci = take_number(&p, "/ci", &ci);
	if (strncmp(p, "/access ", 8))
		return false;
	p += 8;
	if (!take_number(&p, "", &minor) || (*p && *p != '\n') || ci > 1024)
		return false;
	*ret = (struct nvidia_cap_minor){ gpu, gi, has_ci ? (int)ci : -1, minor };
	return true;
}

static int load_cap_minors(struct dralet_backend_ctx *ctx, struct nvidia_state *st)
{
	char path[4096], line[256];
	size_t cap = 0;
	FILE *f;
	int r = dralet_root_path(ctx, DRALET_ROOT_PROC, "driver/nvidia-caps/mig-minors", path,
				 sizeof(path));

	if (r < 0)
		return r;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct nvidia_cap_minor c;
		if (!parse_cap_line(line, &c))
			continue;
		if (st->n_caps == cap) {
			cap = cap ? cap * 2 : 256;
			struct nvidia_cap_minor *caps = realloc(st->caps, cap * sizeof(*caps));
			if (!caps) {
				fclose(f);
				return -ENOMEM;
			}
			st->caps = caps;
		}
		st->caps[st->n_caps++] = c;
	}
	fclose(f);
	return 0;
}

int nvidia_cap_minor(struct dralet_backend_ctx *ctx, struct nvidia_state *st, unsigned gpu,
		     unsigned gi, int ci)
{
	int minor = -ENOENT;

	pthread_mutex_lock(&st->caps_lock);
	if (!st->caps_loaded) {
		st->caps_loaded = true;
		load_cap_minors(ctx, st);	/* no file: no MIG capabilities, -ENOENT below */
	}
	for (size_t i = 0; i < st->n_caps && minor < 0; i++)
		if (st->caps[i].gpu == gpu && st->caps[i].gi == gi && st->caps[i].ci == ci)
			minor = (int)st->caps[i].minor;
	pthread_mutex_unlock(&st->caps_lock);
	return minor;
}

bool nvidia_proc_has_gpu_instances(struct dralet_backend_ctx *ctx, int minor)
{
	char rel[128], path[4096];
	struct dirent *e;
	bool found = false;
	DIR *d;

	if (minor < 0)
		return false;
	snprintf(rel, sizeof(rel), "driver/nvidia/capabilities/gpu%d/mig", minor);
	if (dralet_root_path(ctx, DRALET_ROOT_PROC, rel, path, sizeof(path)) < 0 ||
	    !(d = opendir(path)))
		return false;
	while (!found && (e = readdir(d)))
		found = !strncmp(e->d_name, "gi", 2) && isdigit((unsigned char)e->d_name[2]);
	closedir(d);
	return found;
}
