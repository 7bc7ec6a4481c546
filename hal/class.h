/* SPDX-License-Identifier: Apache-2.0 */
/* Walking a sysfs class directory. Private to hal/. */
#ifndef DRALET_HAL_CLASS_H
#define DRALET_HAL_CLASS_H

#include "hal/scan_internal.h"

typedef void (*class_entry_fn)(struct hal_scan_private *s, const char *name, int fd,
			       const char *device_path, void *userdata);

/* Calls @fn for every entry of @class_dir ("class/net") whose name starts with
 * one of @prefixes (NULL-terminated; NULL for every entry) and whose link
 * resolves below devices/, with an O_PATH fd of the entry and its device path. */
void class_for_each(struct hal_scan_private *s, const char *class_dir,
		    const char *const *prefixes, class_entry_fn fn, void *userdata);

#endif
