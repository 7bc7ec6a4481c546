/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Whether a file the agent loads code or settings from (a backend shared
 * object, the NVML library, a tool it runs, its configuration) can be
 * changed only by root or the agent's own user. The agent runs as root on
 * a node: a file, or a directory above it, that another user may write
 * lets that user run code as root.
 *
 * The rule, for the file, the file a symbolic link leads to, and every
 * directory above either up to /: owned by root or the agent's effective
 * user, and not writable by the group (unless the group is root's) or by
 * everyone. Two kinds of directories writable by others are fine:
 *   - with the sticky bit (/tmp): nobody but an entry's owner may replace
 *     that entry, and the entry is checked itself;
 *   - a root-owned mount point (another filesystem than its parent's): a
 *     volume the container runtime mounted, whose mode says nothing about
 *     who can reach it. The kubelet creates ConfigMap and Secret volume
 *     directories with mode 0777 (kubernetes/kubernetes issue 125876, 136032)
 *     below /var/lib/kubelet/pods, which only root can enter on the node.
 */
#ifndef DRALET_TRUSTED_PATH_H
#define DRALET_TRUSTED_PATH_H

#include <stddef.h>

/* 0 when @path passes; -EPERM with the offending path and why in @err; or
 * -errno when a part cannot be looked at (-ENOENT ...), also explained. */
int trusted_path_check(const char *path, char *err, size_t errlen);

#endif
