/* SPDX-License-Identifier: Apache-2.0 */
/* Discovery helpers and device private data shared by the GPU backends. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

static void gpu_info_free(void *p)
{
	free(p);
}

struct gpu_info *gpu_info_attach(struct dralet_device *dev, enum gpu_type type)
{
	struct gpu_info *info = calloc(1, sizeof(*info));

	if (!info)
		return NULL;
	info->type = type;
	info->minor = -1;
	info->index = -1;
	dralet_device_set_private(dev, info, gpu_info_free);
	return info;
}

const struct gpu_info *gpu_info_of(const struct dralet_device *dev)
{
	return dev ? dralet_device_private(dev) : NULL;
}

bool gpu_text_ok(const char *s)
{
	if (!s || !*s)
		return false;
	for (; *s; s++)
		if (!isprint((unsigned char)*s))
			return false;
	return true;
}

bool gpu_parse_u64(const char *s, uint64_t *ret)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || isspace((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return false;
	*ret = v;
	return true;
}

bool gpu_read_pci_text(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		       const char *name, char *buf, size_t size)
{
	int r = dralet_read_pci_file(ctx, func, name, buf, size);

	if (r < 0)
		return false;
	/* leading blanks are not part of a name either */
	size_t skip = strspn(buf, " \t");
	if (skip)
		memmove(buf, buf + skip, strlen(buf + skip) + 1);
	if (!gpu_text_ok(buf)) {
		if (*buf)
			dralet_ctx_warn(ctx, "%s: %s is not text; ignored", func->address, name);
		return false;
	}
	return true;
}

bool gpu_read_pci_u64(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		      const char *name, uint64_t *ret)
{
	char buf[64];

	if (dralet_read_pci_file(ctx, func, name, buf, sizeof(buf)) < 0)
		return false;
	if (!gpu_parse_u64(buf, ret)) {
		dralet_ctx_warn(ctx, "%s: %s is not a number; ignored", func->address, name);
		return false;
	}
	return true;
}

int gpu_add_node(struct dralet_backend_ctx *ctx, struct dralet_device *dev, const char *dev_path,
		 int major, unsigned minor, bool warn_missing)
{
	char path[DRALET_DEVNODE_PATH_MAX];
	struct dralet_devnode node;
	int r = dralet_devnode(ctx, dev_path, major > 0 ? (unsigned)major : 0, minor, path, &node);

	if (r < 0 || !node.path) {
		if (warn_missing)
			dralet_ctx_warn(ctx, "device %s: /dev/%s not found", dralet_device_name(dev),
					dev_path);
		return r < 0 ? r : -ENOENT;
	}
	/* a placeholder file with unknown numbers is no usable node */
	if (node.major == 0 && node.minor == 0 && major <= 0) {
		dralet_ctx_warn(ctx, "device %s: numbers of /dev/%s unknown; node skipped",
				dralet_device_name(dev), dev_path);
		return -ENOENT;
	}
	return dralet_device_add_node(dev, &node);
}

static int name_index(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	uint64_t v;

	if (strncmp(name, prefix, n) || !gpu_parse_u64(name + n, &v) || v > 1u << 20)
		return -1;
	return (int)v;
}

void gpu_add_drm_nodes(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		       const struct dralet_pci_func *func)
{
	for (size_t i = 0; i < func->n_drm; i++) {
		const struct dralet_classdev *c = &func->drm[i];
		int card = name_index(c->name, "card"), render = name_index(c->name, "renderD");

		if (card >= 0)
			dralet_device_set_int(dev, "cardIndex", card);
		if (render >= 0)
			dralet_device_set_int(dev, "renderIndex", render);
		if (!c->node.path) {
			dralet_ctx_warn(ctx, "device %s: /dev/dri/%s not found",
					dralet_device_name(dev), c->name);
			continue;
		}
		dralet_device_add_node(dev, &c->node);
	}
}

void gpu_set_common(struct dralet_device *dev, const char *type)
{
	dralet_device_set_string(dev, "type", type);
}

void gpu_set_defaults(struct dralet_device *dev)
{
	bool memory = false;

	for (size_t i = 0; i < dralet_device_n_capacities(dev) && !memory; i++)
		memory = !strcmp(dralet_device_capacity(dev, i)->name, "memory");
	if (!memory)
		dralet_device_set_capacity(dev, "memory", "0");
	if (!dralet_device_find_attr(dev, "migProfile"))
		dralet_device_set_string(dev, "migProfile", "");
}
