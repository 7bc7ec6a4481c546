/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/core/edits.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool valid_env_name(const char *s)
{
	if (!s || !(isalpha((unsigned char)*s) || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_'))
			return false;
	return true;
}

static void *grow(void *array, size_t n, size_t size)
{
	return realloc(array, (n + 1) * size);
}

int dralet_edits_add_env(struct dralet_edits *e, const char *name, const char *value)
{
	char **env;
	char *entry;
	size_t len;

	if (!valid_env_name(name) || !value)
		return -EINVAL;
	if (asprintf(&entry, "%s=%s", name, value) < 0)
		return -ENOMEM;
	len = strlen(name) + 1;
	for (size_t i = 0; i < e->n_env; i++)	/* the last value of a name wins */
		if (!strncmp(e->env[i], entry, len)) {
			free(e->env[i]);
			e->env[i] = entry;
			return 0;
		}
	env = grow(e->env, e->n_env, sizeof(*env));
	if (!env) {
		free(entry);
		return -ENOMEM;
	}
	e->env = env;
	e->env[e->n_env++] = entry;
	return 0;
}

int dralet_edits_add_node(struct dralet_edits *e, const struct dralet_devnode *node,
			  const char *permissions)
{
	struct edits_node *nodes;
	char *path, *perm = NULL;

	if (!node || !node->path || node->path[0] != '/')
		return -EINVAL;
	if (permissions && (!*permissions || strspn(permissions, "rwm") != strlen(permissions)))
		return -EINVAL;
	for (size_t i = 0; i < e->n_nodes; i++)
		if (!strcmp(e->nodes[i].node.path, node->path))
			return 0;
	nodes = grow(e->nodes, e->n_nodes, sizeof(*nodes));
	if (!nodes)
		return -ENOMEM;
	e->nodes = nodes;
	path = strdup(node->path);
	if (permissions)
		perm = strdup(permissions);
	if (!path || (permissions && !perm)) {
		free(path);
		free(perm);
		return -ENOMEM;
	}
	e->nodes[e->n_nodes].node = *node;
	e->nodes[e->n_nodes].node.path = path;
	e->nodes[e->n_nodes++].permissions = perm;
	return 0;
}

int dralet_edits_add_mount(struct dralet_edits *e, const char *host_path,
			   const char *container_path, const char *options)
{
	struct edits_mount *mounts, m;

	if (!host_path || host_path[0] != '/' || !container_path || container_path[0] != '/')
		return -EINVAL;
	for (size_t i = 0; i < e->n_mounts; i++)
		if (!strcmp(e->mounts[i].container_path, container_path))
			return !strcmp(e->mounts[i].host_path, host_path) ? 0 : -EEXIST;
	mounts = grow(e->mounts, e->n_mounts, sizeof(*mounts));
	if (!mounts)
		return -ENOMEM;
	e->mounts = mounts;
	m.host_path = strdup(host_path);
	m.container_path = strdup(container_path);
	m.options = strdup(options ? options : "ro,nosuid,nodev,bind");
	if (!m.host_path || !m.container_path || !m.options) {
		free(m.host_path);
		free(m.container_path);
		free(m.options);
		return -ENOMEM;
	}
	e->mounts[e->n_mounts++] = m;
	return 0;
}

int edits_reserve(struct dralet_edits *e, size_t n_env, size_t n_nodes, size_t n_mounts)
{
	e->env = calloc(n_env + 1, sizeof(*e->env));
	e->nodes = calloc(n_nodes + 1, sizeof(*e->nodes));
	e->mounts = calloc(n_mounts + 1, sizeof(*e->mounts));
	return e->env && e->nodes && e->mounts ? 0 : -ENOMEM;
}

void edits_clear(struct dralet_edits *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->n_env; i++)
		free(e->env[i]);
	for (size_t i = 0; i < e->n_nodes; i++) {
		free((char *)e->nodes[i].node.path);
		free(e->nodes[i].permissions);
	}
	for (size_t i = 0; i < e->n_mounts; i++) {
		free(e->mounts[i].host_path);
		free(e->mounts[i].container_path);
		free(e->mounts[i].options);
	}
	free(e->env);
	free(e->nodes);
	free(e->mounts);
	memset(e, 0, sizeof(*e));
}

static int undo_store(struct dralet_undo *u, const char *key, const char *value)
{
	struct undo_entry *entries;
	char *v;

	if (!key || !*key || !value)
		return -EINVAL;
	if (!(v = strdup(value)))
		return -ENOMEM;
	for (size_t i = 0; i < u->n; i++)
		if (!strcmp(u->entries[i].key, key)) {
			free(u->entries[i].value);
			u->entries[i].value = v;
			return 0;
		}
	entries = grow(u->entries, u->n, sizeof(*entries));
	if (!entries || !(entries[u->n].key = strdup(key))) {
		if (entries)
			u->entries = entries;
		free(v);
		return -ENOMEM;
	}
	u->entries = entries;
	u->entries[u->n++].value = v;
	return 0;
}

int dralet_undo_set_all(struct dralet_undo *u, const struct dralet_undo_value *values, size_t n)
{
	int r = 0;

	if (!u || (n && !values))
		return -EINVAL;
	for (size_t i = 0; i < n && r == 0; i++)
		r = undo_store(u, values[i].key, values[i].value);
	if (r == 0 && n && u->persist)
		r = u->persist(u->persist_userdata, u);
	return r;
}

int dralet_undo_set(struct dralet_undo *u, const char *key, const char *value)
{
	return dralet_undo_set_all(u, &(struct dralet_undo_value){ key, value }, 1);
}

int undo_copy(struct dralet_undo *dst, const struct dralet_undo *src)
{
	struct dralet_undo copy = { 0 };

	for (size_t i = 0; i < src->n; i++)
		if (undo_store(&copy, src->entries[i].key, src->entries[i].value) < 0) {
			undo_clear(&copy);
			return -ENOMEM;
		}
	undo_clear(dst);
	dst->entries = copy.entries;
	dst->n = copy.n;
	return 0;
}

const char *dralet_undo_get(const struct dralet_undo *u, const char *key)
{
	for (size_t i = 0; u && i < u->n; i++)
		if (!strcmp(u->entries[i].key, key))
			return u->entries[i].value;
	return NULL;
}

void undo_clear(struct dralet_undo *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->n; i++) {
		free(u->entries[i].key);
		free(u->entries[i].value);
	}
	free(u->entries);
	u->entries = NULL;
	u->n = 0;
}
