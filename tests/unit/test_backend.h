/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers the fpga/net/sriov/accel backend tests share: a prepare request
 * with its edits and undo, lookups for assertions, a whole discovery with
 * every in-tree backend, and the board files. Their nodes are board snippets
 * (board_snippet.h); test_tree.h changes them at run time. Header-only
 * (static helpers) so each test program stays one file.
 */
#ifndef DRALET_TEST_BACKEND_H
#define DRALET_TEST_BACKEND_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/core/config.h"
#include "agent/core/inventory.h"
#include "agent/core/registry.h"
#include "board_snippet.h"
#include "harness.h"
#include "test_tree.h"

/* A dralet_prepare_req with its edits and undo (release with t_req_clear). */
struct t_req {
	struct dralet_edits edits;
	struct dralet_undo undo;
	struct dralet_prepare_req req;
};

static inline void t_req_init(struct t_req *t, const char *config)
{
	memset(t, 0, sizeof(*t));
	t->req.claim = (struct dralet_claim_ref){ "uid-1", "default", "claim" };
	t->req.request = "req";
	t->req.config = config;
	t->req.edits = &t->edits;
	t->req.undo = &t->undo;
}

static inline void t_req_clear(struct t_req *t)
{
	edits_clear(&t->edits);
	undo_clear(&t->undo);
}

static inline const char *t_env(const struct t_req *t, const char *name)
{
	size_t len = strlen(name);
	for (size_t i = 0; i < t->edits.n_env; i++)
		if (!strncmp(t->edits.env[i], name, len) && t->edits.env[i][len] == '=')
			return t->edits.env[i] + len + 1;
	return NULL;
}

static inline const struct dralet_devnode *t_edit_node(const struct t_req *t, const char *path)
{
	for (size_t i = 0; i < t->edits.n_nodes; i++)
		if (!strcmp(t->edits.nodes[i].node.path, path))
			return &t->edits.nodes[i].node;
	return NULL;
}

static inline bool t_dev_node(const struct dralet_device *dev, const char *path)
{
	for (size_t i = 0; i < dralet_device_n_nodes(dev); i++)
		if (!strcmp(dralet_device_node(dev, i)->path, path))
			return true;
	return false;
}

static inline int attr_bool(const struct dralet_device *dev, const char *name)
{
	const struct dralet_attr *a = dralet_device_find_attr(dev, name);
	return a && a->type == DRALET_ATTR_BOOL ? a->bool_value : -1;
}

/* ---- a whole discovery (every in-tree backend, the ownership rule) ---- */

struct t_inv {
	char sys[4096], dev[4096], proc[4096], cfgpath[4200];
	struct hal_roots roots;
	struct config *cfg;
	struct registry *reg;
	struct inventory *inv;
};

/* Discovers the tree at @d with the agent's config @yaml (NULL: defaults). */
static inline int t_inv_open(struct t_inv *t, const char *d, const char *yaml)
{
	char err[512];
	int r;

	memset(t, 0, sizeof(*t));
	snprintf(t->sys, sizeof(t->sys), "%s/sys", d);
	snprintf(t->dev, sizeof(t->dev), "%s/dev", d);
	snprintf(t->proc, sizeof(t->proc), "%s/proc", d);
	t->roots = (struct hal_roots){ t->sys, t->dev, t->proc };
	if (yaml) {
		snprintf(t->cfgpath, sizeof(t->cfgpath), "%s/config.yaml", d);
		FILE *f = fopen(t->cfgpath, "w");
		if (!f)
			return -1;
		fputs(yaml, f);
		fclose(f);
	}
	r = config_load(yaml ? t->cfgpath : NULL, &t->cfg, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "config: %s\n", err);
		return r;
	}
	r = registry_new(NULL, NULL, NULL, &t->reg);
	if (r < 0)
		return r;
	return inventory_discover(&t->roots, t->cfg, t->reg, &t->inv);
}

static inline void t_inv_close(struct t_inv *t)
{
	inventory_free(t->inv);
	registry_free(t->reg);
	config_free(t->cfg);
}

static inline struct dralet_device *t_find(const struct t_inv *t, const char *driver,
					   const char *name)
{
	return inventory_find(t->inv, driver, name);
}

/* ---- simulated boards (boards/<name>.yaml) ---- */

#include <sys/stat.h>

#include "boards/sim/board.h"

/*
 * A materialized tree of board @name: $DRALET_TEST_BOARDS_DIR/<name> when that
 * holds one already, else boards/<name>.yaml materialized into a temporary
 * directory (*ret_temp true: remove it with board_remove_tree). NULL when
 * the board or the materializer is not there (the test is skipped).
 */
static inline char *t_board(const char *name, bool *ret_temp)
{
	char path[4096], err[512];
	const char *dir = getenv("DRALET_TEST_BOARDS_DIR");
	struct stat st;
	char *tree = NULL;

	*ret_temp = false;
	if (dir) {
		snprintf(path, sizeof(path), "%s/%s/sys", dir, name);
		if (stat(path, &st) == 0) {
			snprintf(path, sizeof(path), "%s/%s", dir, name);
			return strdup(path);
		}
	}
	snprintf(path, sizeof(path), "boards/%s.yaml", name);
	if (stat(path, &st) < 0) {
		print_message("board %s not found; skipped\n", path);
		return NULL;
	}
	if (board_materialize_temp(path, &tree, err, sizeof(err)) < 0) {
		print_message("board %s cannot be materialized (%s); skipped\n", path, err);
		return NULL;
	}
	*ret_temp = true;
	return tree;
}

static inline void t_board_free(char *tree, bool temp)
{
	if (tree && temp)
		board_remove_tree(tree);
	free(tree);
}

/* "rdma" + "0000:04:00.1" -> "rdma-0000-04-00-1" */
static inline void t_name(const char *kind, const char *address, char *buf, size_t size)
{
	size_t o = (size_t)snprintf(buf, size, "%s-", kind);
	for (const char *p = address; *p && o + 1 < size; p++)
		buf[o++] = (*p == ':' || *p == '.') ? '-' : *p;
	buf[o] = '\0';
}

#endif
