/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers the GPU backend tests share: PCI functions with a bound driver,
 * DRM class devices, the fake NVML library's path, and capturing what the
 * agent logs (backend warnings) while a call runs.
 */
#ifndef DRALET_TEST_GPU_UTIL_H
#define DRALET_TEST_GPU_UTIL_H

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "log_capture.h"

#define ROOT0 "pci0000:00"

/* A function under @parent_path bound to @driver (NULL: unbound). */
static inline void gpu_tree_add(const char *d, const char *parent_path, const char *address,
				unsigned vendor, unsigned device, unsigned class_code,
				const char *driver, int numa)
{
	char rel[1024], target[1024], val[16];
	int depth = 3;	/* sys/devices/<root> */

	tree_add_pci(d, parent_path, address, vendor, device, class_code);
	for (const char *p = parent_path; *p; p++)
		depth += *p == '/';
	if (driver) {
		snprintf(rel, sizeof(rel), "sys/bus/pci/drivers/%s", driver);
		tree_mkdir(d, rel);
		snprintf(rel, sizeof(rel), "sys/devices/%s/%s/driver", parent_path, address);
		target[0] = '\0';
		for (int i = 0; i < depth; i++)
			strcat(target, "../");
		strcat(target, "bus/pci/drivers/");
		strcat(target, driver);
		tree_link(d, rel, target);
	}
	if (numa >= 0) {
		snprintf(rel, sizeof(rel), "sys/devices/%s/%s/numa_node", parent_path, address);
		snprintf(val, sizeof(val), "%d", numa);
		tree_write(d, rel, val);
	}
}

/* Writes <function dir>/<name>. */
static inline void gpu_tree_file(const char *d, const char *parent_path, const char *address,
				 const char *name, const char *content)
{
	char rel[1024];

	snprintf(rel, sizeof(rel), "sys/devices/%s/%s/%s", parent_path, address, name);
	tree_write(d, rel, content);
}

/* A DRM class device ("card0", "renderD128") of a function, with its node. */
static inline void gpu_tree_drm(const char *d, const char *parent_path, const char *address,
				const char *name, unsigned minor)
{
	char rel[1024], target[1024], val[32];

	snprintf(rel, sizeof(rel), "sys/devices/%s/%s/drm/%s/dev", parent_path, address, name);
	snprintf(val, sizeof(val), "226:%u", minor);
	tree_write(d, rel, val);
	snprintf(rel, sizeof(rel), "sys/class/drm/%s", name);
	snprintf(target, sizeof(target), "../../devices/%s/%s/drm/%s", parent_path, address, name);
	tree_link(d, rel, target);
	snprintf(rel, sizeof(rel), "dev/dri/%s", name);
	tree_write(d, rel, "");
}

/* Absolute path of a file of the build ("tests/lib/fake-nvml.so"). */
static inline char *build_path(const char *rel)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char path[PATH_MAX], *abs;

	snprintf(path, sizeof(path), "%s/%s", build, rel);
	abs = realpath(path, NULL);
	return abs ? abs : strdup(path);
}

/* Index of node @path in the device's nodes, or -1. */
static inline int node_index(const struct dralet_device *dev, const char *path)
{
	for (size_t i = 0; i < dralet_device_n_nodes(dev); i++)
		if (!strcmp(dralet_device_node(dev, i)->path, path))
			return (int)i;
	return -1;
}

/* The value of env NAME in @e, or NULL. */
static inline const char *edit_env(const struct dralet_edits *e, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < e->n_env; i++)
		if (!strncmp(e->env[i], name, n) && e->env[i][n] == '=')
			return e->env[i] + n + 1;
	return NULL;
}

static inline const struct edits_node *edit_node(const struct dralet_edits *e, const char *path)
{
	for (size_t i = 0; i < e->n_nodes; i++)
		if (!strcmp(e->nodes[i].node.path, path))
			return &e->nodes[i];
	return NULL;
}

static inline const struct edits_mount *edit_mount(const struct dralet_edits *e,
						   const char *container_path)
{
	for (size_t i = 0; i < e->n_mounts; i++)
		if (!strcmp(e->mounts[i].container_path, container_path))
			return &e->mounts[i];
	return NULL;
}

static inline bool attr_bool(const struct dralet_device *d, const char *name, bool missing)
{
	const struct dralet_attr *a = dralet_device_find_attr(d, name);
	return a && a->type == DRALET_ATTR_BOOL ? a->bool_value : missing;
}

#endif
