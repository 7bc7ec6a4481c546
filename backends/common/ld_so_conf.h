/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The library directories a root's /etc/ld.so.conf names, read as ldconfig
 * reads it (ld.so.conf(5)): directory names separated by blanks, ':' or ',',
 * '#' comments, and "include PATTERN" lines whose globs (absolute: below the
 * root; relative: beside the including file, as glibc's ldconfig has it)
 * name more such files. These are the directories the
 * root's loader cache covers beyond the standard ones, where a driver kept
 * outside them registers its libraries (GKE: /usr/local/nvidia/lib64).
 */
#ifndef DRALET_BACKENDS_LD_SO_CONF_H
#define DRALET_BACKENDS_LD_SO_CONF_H

#include <stddef.h>

#define LD_SO_CONF_DIR_MAX 256

/*
 * Fills @dirs with up to @max directories that <root>/etc/ld.so.conf names,
 * relative to @root (no leading slash, no trailing one), in the order ldconfig
 * meets them, each once. Includes nest at most 4 deep; a missing file adds
 * nothing. Returns how many were stored.
 */
size_t ld_so_conf_dirs(const char *root, char (*dirs)[LD_SO_CONF_DIR_MAX], size_t max);

#endif
