/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers the GPU backend tests share (their nodes are board snippets,
 * board_snippet.h): the fake NVML library's path, lookups in a device's
 * nodes and a prepare's edits, and capturing what the agent logs (backend
 * warnings) while a call runs.
 */
#ifndef DRALET_TEST_GPU_UTIL_H
#define DRALET_TEST_GPU_UTIL_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "log_capture.h"

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
