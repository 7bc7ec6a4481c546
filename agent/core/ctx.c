/* SPDX-License-Identifier: Apache-2.0 */
/* What the agent offers a backend during a call (include/dralet/backend.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "agent/lib/log.h"
#include "agent/lib/trusted_path.h"
#include "agent/core/backend_ctx.h"
#include "agent/core/k8s_names.h"
#include "hal/hal.h"

/* A backend may warn about the same thing on every rediscovery; the agent
 * logs the first few per backend and then only counts. */
#define WARNINGS_LOGGED_PER_BACKEND 50

const char *dralet_ctx_driver(const struct dralet_backend_ctx *ctx) { return ctx->driver; }
void *dralet_ctx_state(const struct dralet_backend_ctx *ctx) { return ctx->state; }
const char *dralet_ctx_state_dir(const struct dralet_backend_ctx *ctx) { return ctx->state_dir; }

const char *dralet_ctx_option(const struct dralet_backend_ctx *ctx, const char *key)
{
	struct json_object *v;

	if (!ctx->options || !json_object_object_get_ex(ctx->options, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

int dralet_trusted_file(const char *path, char *err, size_t errlen)
{
	return trusted_path_check(path, err, errlen);
}

const struct dralet_pci_func *dralet_ctx_find_pci(const struct dralet_backend_ctx *ctx,
					       const char *address)
{
	return ctx->scan && address ? hal_scan_find(ctx->scan, address) : NULL;
}

static const char *root_of(const struct dralet_backend_ctx *ctx, enum dralet_root root)
{
	switch (root) {
	case DRALET_ROOT_SYS: return ctx->roots->sys;
	case DRALET_ROOT_DEV: return ctx->roots->dev;
	case DRALET_ROOT_PROC: return ctx->roots->proc;
	}
	return NULL;
}

int dralet_root_path(const struct dralet_backend_ctx *ctx, enum dralet_root root,
		     const char *relpath, char *buf, size_t size)
{
	const char *r = root_of(ctx, root);

	if (!r || !relpath || strstr(relpath, ".."))
		return -EINVAL;
	while (*relpath == '/')
		relpath++;
	return hal_root_path(r, relpath, buf, size);
}

int dralet_read_file(const struct dralet_backend_ctx *ctx, enum dralet_root root,
		     const char *relpath, char *buf, size_t size)
{
	char path[4096];
	int r = dralet_root_path(ctx, root, relpath, path, sizeof(path));

	if (r < 0)
		return r;
	return hal_read_file(path, buf, size);
}

int dralet_read_pci_file(const struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
			 const char *name, char *buf, size_t size)
{
	char rel[4096];

	if (!func || !name || strstr(name, ".."))
		return -EINVAL;
	if (snprintf(rel, sizeof(rel), "%s/%s", func->sysfs_path, name) >= (int)sizeof(rel))
		return -ENAMETOOLONG;
	return dralet_read_file(ctx, DRALET_ROOT_SYS, rel, buf, size);
}

int dralet_devnode(const struct dralet_backend_ctx *ctx, const char *dev_path, unsigned major,
		   unsigned minor, char *path, struct dralet_devnode *ret_node)
{
	*ret_node = (struct dralet_devnode){ 0 };
	if (!dev_path || !path || strstr(dev_path, ".."))
		return -EINVAL;
	while (*dev_path == '/')
		dev_path++;
	if (!strncmp(dev_path, "dev/", 4))
		dev_path += 4;
	return hal_devnode_resolve(ctx->roots, dev_path, major, minor, path, DRALET_DEVNODE_PATH_MAX,
				   ret_node);
}

int dralet_char_major(const struct dralet_backend_ctx *ctx, const char *driver_name)
{
	return hal_char_major(ctx->roots, driver_name);
}

void dralet_ctx_warn(struct dralet_backend_ctx *ctx, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!ctx)
		return;
	ctx->warnings++;
	if (ctx->warnings > WARNINGS_LOGGED_PER_BACKEND)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_warn("backend %s: %s%s", ctx->backend->name, msg,
		 ctx->warnings == WARNINGS_LOGGED_PER_BACKEND ? " (further warnings not logged)"
							      : "");
}

void dralet_ctx_info(struct dralet_backend_ctx *ctx, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!ctx)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_info("backend %s: %s", ctx->backend->name, msg);
}

void dralet_ctx_node_changed(struct dralet_backend_ctx *ctx)
{
	if (ctx)
		ctx->node_changed = true;
}

void dralet_ctx_health_cause(struct dralet_backend_ctx *ctx, const char *taint_key)
{
	if (ctx && k8s_valid_label_key(taint_key))
		ctx->health_cause = taint_key;
}

void dralet_ctx_error(struct dralet_backend_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	if (!ctx)
		return;
	va_start(ap, fmt);
	vsnprintf(ctx->error, sizeof(ctx->error), fmt, ap);
	va_end(ap);
}
