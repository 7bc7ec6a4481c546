/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Symbolic links below another root, followed as if that root were "/": the
 * host's files seen from the agent's container (/host), or a simulated
 * node's tree. An absolute link target starts again at the root and ".."
 * stops there, so nothing outside the root is ever looked at.
 */
#ifndef DRALET_BACKENDS_ROOT_PATH_H
#define DRALET_BACKENDS_ROOT_PATH_H

#include <stddef.h>

/*
 * Resolves every symbolic link in <@root>/<@rel>, one component at a time,
 * at most 40 of them. Writes the path it leads to, relative to @root (no
 * leading slash), to @out. Returns 0, -ENOENT (or another -errno from lstat)
 * when a component is missing, -ELOOP, or -ENAMETOOLONG.
 */
int root_resolve(const char *root, const char *rel, char *out, size_t size);

#endif
