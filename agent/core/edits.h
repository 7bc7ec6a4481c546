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
	struct dralet_devnode node;	/* path owned */
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
	/* Called by dralet_undo_set[_all]() once per call, from the backend's
	 * thread: makes the undo state durable (the claims engine writes it to
	 * the checkpoint) before the backend goes on to change the device.
	 * NULL: kept in memory only. Returns 0 or -errno. */
	int (*persist)(void *userdata, const struct dralet_undo *undo);
	void *persist_userdata;
};

/* Allocates @e's arrays for up to the given counts (each NULL-terminated;
 * the counts themselves stay 0 for the caller to fill). Returns 0 or -ENOMEM,
 * after which edits_clear() releases what was allocated. */
int edits_reserve(struct dralet_edits *e, size_t n_env, size_t n_nodes, size_t n_mounts);
/* Release the contents (the structs themselves are caller-owned). */
void edits_clear(struct dralet_edits *e);
void undo_clear(struct dralet_undo *u);
/* Copies @src's entries into @dst (replacing them; not the persist hook). */
int undo_copy(struct dralet_undo *dst, const struct dralet_undo *src);

#endif
