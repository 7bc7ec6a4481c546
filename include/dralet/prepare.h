/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dralet backend SDK: what prepare and unprepare work with.
 *
 * Prepare fills the container edits of one device (they become the
 * device's entry in the claim's CDI spec) and records in the undo state
 * whatever unprepare will need to put the device back (the previous driver,
 * VF settings ...), before changing anything. The undo state is kept in the
 * agent's checkpoint, so it survives restarts and crashes: unprepare must
 * work from it alone, even in a new process. Keys and values are short
 * strings. A prepare that records no undo state changes nothing on the node
 * (it only describes the device to the container), and the agent then skips
 * the write-ahead entry in its checkpoint.
 *
 * Opaque configuration reaches the backend as JSON object text (the
 * "parameters" of an opaque config whose driver is the backend's), already
 * selected and merged by the agent; validate_config must reject unknown
 * fields, and prepare may assume the text passed validation.
 *
 * Errors: 0 or -errno. Say why with dralet_ctx_error(); the message reaches
 * the kubelet (and the pod's events) prefixed with the claim and device.
 */
#ifndef DRALET_PREPARE_H
#define DRALET_PREPARE_H

#include <dralet/backend.h>
#include <dralet/pci.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Adds "NAME=value" to the container's environment. NAME must be a valid
 * environment variable name ([A-Za-z_][A-Za-z0-9_]*). */
int dralet_edits_add_env(struct dralet_edits *edits, const char *name, const char *value);

/* Adds a character device node with its real major:minor (the node as
 * resolved on the host). @permissions: "rw", "rwm" ... or NULL for the
 * default (rwm). */
int dralet_edits_add_node(struct dralet_edits *edits, const struct dralet_devnode *node,
			  const char *permissions);

/* Bind-mounts @host_path at @container_path; @options is a comma-separated
 * list ("ro,nosuid,nodev,bind"), NULL for "ro,nosuid,nodev,bind". */
int dralet_edits_add_mount(struct dralet_edits *edits, const char *host_path,
			   const char *container_path, const char *options);

/* One undo value: a key and the value to keep under it. */
struct dralet_undo_value {
	const char *key;
	const char *value;
};

/*
 * Sets (or replaces) @n undo values and makes them durable, in one write,
 * before returning: the agent writes them to its checkpoint, so that a crash
 * right after leaves enough behind to undo the change. Call it BEFORE
 * changing the device (the driver it was bound to, before rebinding it),
 * with every value the change needs at once: each call is one synchronous
 * checkpoint write. A negative return means they could not be recorded
 * (some may be kept in memory, none is known to be on disk): change nothing
 * and fail the prepare. @n == 0 records nothing and writes nothing.
 */
int dralet_undo_set_all(struct dralet_undo *undo, const struct dralet_undo_value *values,
			size_t n);
/* dralet_undo_set_all() with one value. */
int dralet_undo_set(struct dralet_undo *undo, const char *key, const char *value);
/* The value for @key, or NULL. */
const char *dralet_undo_get(const struct dralet_undo *undo, const char *key);


#ifdef __cplusplus
}
#endif
#endif /* DRALET_PREPARE_H */
