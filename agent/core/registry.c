/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/core/registry.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/core/backend_call.h"
#include "agent/core/k8s_names.h"
#include "agent/lib/err_msg.h"
#include "agent/lib/trusted_path.h"

#define REGISTRY_MAX 256

struct registry {
	struct dralet_backend list[REGISTRY_MAX];	/* with the defaults filled in */
	size_t n;
	void *handles[REGISTRY_MAX];
	size_t n_handles;
};

static void report(registry_error_fn fn, void *ud, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void report(registry_error_fn fn, void *ud, const char *fmt, ...)
{
	struct err_msg msg;
	va_list ap;

	if (!fn)
		return;
	va_start(ap, fmt);
	err_vprintf(ERR_MSG_ARGS(&msg), 0, fmt, ap);
	va_end(ap);
	fn(ud, msg.text);
}

static bool usable(struct registry *reg, const struct dralet_backend *b, const char *origin,
		   registry_error_fn on_error, void *ud)
{
	if (b->abi != DRALET_BACKEND_ABI) {
		report(on_error, ud, "%s: backend %s was built for SDK ABI %u, this dralet speaks %u; "
		       "rebuild it against this dralet's SDK (pkg-config dralet-backend)",
		       origin, b->name ? b->name : "?", b->abi, DRALET_BACKEND_ABI);
		return false;
	}
	if (!b->name || !*b->name || !b->family || !k8s_valid_dns_label(b->family) ||
	    !b->default_driver || !k8s_valid_driver_name(b->default_driver) || !b->probe ||
	    !b->ids) {
		report(on_error, ud, "%s: backend %s lacks a name, family, valid default driver, "
		       "probe, or a match table", origin, b->name ? b->name : "?");
		return false;
	}
	if (registry_find(reg, b->name)) {
		report(on_error, ud, "%s: a backend named %s is already registered; this one is "
		       "ignored", origin, b->name);
		return false;
	}
	if (reg->n == REGISTRY_MAX) {
		report(on_error, ud, "%s: too many backends", origin);
		return false;
	}
	return true;
}

/* Registers @b: the one place its NULL operations become the defaults. */
static bool add(struct registry *reg, const struct dralet_backend *b, const char *origin,
		registry_error_fn on_error, void *ud)
{
	if (!usable(reg, b, origin, on_error, ud))
		return false;
	backend_fill_defaults(b, &reg->list[reg->n++]);
	return true;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void load_dir(struct registry *reg, const char *dir, registry_error_fn on_error, void *ud)
{
	char *names[REGISTRY_MAX];
	size_t n = 0;
	struct dirent *de;
	struct err_msg why;
	DIR *d;

	if (trusted_path_check(dir, ERR_MSG_ARGS(&why)) < 0) {
		report(on_error, ud, "--backend-dir %s: refusing to load backends: %s", dir,
		       why.text);
		return;
	}
	if (!(d = opendir(dir))) {
		report(on_error, ud, "--backend-dir %s: %s", dir, strerror(errno));
		return;
	}
	while ((de = readdir(d)) && n < REGISTRY_MAX) {
		size_t len = strlen(de->d_name);
		if (len > 3 && !strcmp(de->d_name + len - 3, ".so"))
			names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), compare_names);	/* a stable order across restarts */

	for (size_t i = 0; i < n; i++) {
		char path[4096];
		const struct dralet_backend *const *(*export_fn)(void);
		void *h;

		if (!names[i])
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (trusted_path_check(path, ERR_MSG_ARGS(&why)) < 0) {
			report(on_error, ud, "%s: refusing to load it: %s", path, why.text);
			goto next;
		}
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			report(on_error, ud, "%s: %s", path, dlerror());
			goto next;
		}
		*(void **)&export_fn = dlsym(h, "dralet_backend_export_v1");
		if (!export_fn) {
			report(on_error, ud, "%s: no dralet_backend_export_v1 (built with "
			       "DRALET_BACKEND_EXPORT for this SDK?)", path);
			dlclose(h);
			goto next;
		}
		const struct dralet_backend *const *list = export_fn();
		size_t added = 0;
		for (size_t j = 0; list && list[j]; j++)
			added += add(reg, list[j], path, on_error, ud);
		if (added && reg->n_handles < REGISTRY_MAX)
			reg->handles[reg->n_handles++] = h;
		else
			dlclose(h);
next:
		free(names[i]);
	}
}

int registry_new_with(const struct dralet_backend *const *builtin, const char *backend_dir,
		      registry_error_fn on_error, void *userdata, struct registry **ret_reg)
{
	struct registry *reg = calloc(1, sizeof(*reg));

	if (!reg)
		return -ENOMEM;
	if (backend_dir)
		load_dir(reg, backend_dir, on_error, userdata);
	for (size_t i = 0; builtin[i]; i++)
		add(reg, builtin[i], "in-tree", on_error, userdata);
	*ret_reg = reg;
	return 0;
}

int registry_new(const char *backend_dir, registry_error_fn on_error, void *userdata,
		 struct registry **ret_reg)
{
	return registry_new_with(registry_builtin, backend_dir, on_error, userdata, ret_reg);
}

void registry_free(struct registry *reg)
{
	if (!reg)
		return;
	for (size_t i = 0; i < reg->n_handles; i++)
		dlclose(reg->handles[i]);
	free(reg);
}

size_t registry_count(const struct registry *reg) { return reg->n; }

const struct dralet_backend *registry_get(const struct registry *reg, size_t i)
{
	return i < reg->n ? &reg->list[i] : NULL;
}

const struct dralet_backend *registry_find(const struct registry *reg, const char *name)
{
	for (size_t i = 0; i < reg->n; i++)
		if (!strcmp(reg->list[i].name, name))
			return &reg->list[i];
	return NULL;
}
