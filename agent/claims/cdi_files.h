/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CDI spec files on disk (the I/O shell around cdi_spec.h): written
 * atomically with mode 0644 (cdi.md section 4), removed, and listed by vendor
 * so recovery can find the files of ours that no claim owns.
 */
#ifndef DRALET_CDI_FILES_H
#define DRALET_CDI_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

/*
 * Writes @spec as <dir>/<file> (temp file, fsync, rename; the directory is
 * not fsynced). A runtime never reads a torn spec, and after a power loss
 * the spec is whole or missing: missing, the start writes it again from the
 * checkpoint (or the claim died with the boot); whole, the start removes it
 * when no claim owns it. 0 or -errno.
 */
int cdi_files_write(const char *dir, const char *file, struct json_object *spec);
/* Removes <dir>/<file>; a missing file is fine. Not fsynced: a spec that
 * comes back after a power loss is one no claim owns, which the start
 * removes. */
int cdi_files_remove(const char *dir, const char *file);
bool cdi_files_exists(const char *dir, const char *file);

/*
 * The spec files of @vendor in @dir: names of the form
 * "<vendor>-<class>_<uid>.json" whose "kind" starts with "<vendor>/" (so a
 * driver whose name extends ours is never mistaken for us). Also removes
 * temporary files a crash left behind. *ret_names: malloc'd array of
 * malloc'd names, sorted (cdi_files_free_list). A missing directory is an
 * empty list.
 */
int cdi_files_list(const char *dir, const char *vendor, char ***ret_names, size_t *ret_n);
void cdi_files_free_list(char **names, size_t n);

#endif
