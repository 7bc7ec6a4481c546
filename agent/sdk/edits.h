/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's side of struct dralet_edits and struct dralet_undo
 * (include/dralet/prepare.h): plain lists the CDI writer and the checkpoint
 * read back.
 */
#ifndef DRALET_EDITS_H
#define DRALET_EDITS_H

#include <stddef.h>
#include <dralet/prepare.h>

struct edits_mount {
	char *host_path;
	char *container_path;
	char *options;		/* comma-separated */
};

struct edits_node {
	struct hal_devnode node;	/* path owned */
	char *permissions;		/* NULL: rwm */
};

struct dralet_edits {
	char **env;			/* "NAME=value" */
	size_t n_env;
	struct edits_node *nodes;
	size_t n_nodes;
	struct edits_mount *mounts;
	size_t n_mounts;
};

struct undo_entry {
	char *key;
	char *value;
};

struct dralet_undo {
	struct undo_entry *entries;
	size_t n;
	/* Set by the claims engine for a prepare: makes the entries so far
	 * durable (checkpoint written). NULL: dralet_undo_commit() does nothing. */
	int (*commit)(void *userdata, const struct dralet_undo *undo);
	void *commit_userdata;
};

/* Release the contents (the structs themselves are caller-owned). */
void edits_clear(struct dralet_edits *e);
void undo_clear(struct dralet_undo *u);

#endif
