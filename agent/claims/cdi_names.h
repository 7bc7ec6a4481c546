/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CDI naming (cdi.md sections 3 and 5), pure:
 *   vendor          k8s.<driver>                      k8s.gpu.dralet.dev
 *   class           the backend family                gpu
 *   kind            <vendor>/<class>                  k8s.gpu.dralet.dev/gpu
 *   device name     <claimUID>-<device>               0a1b...-gpu-0000-3b-00-0
 *                   <claimUID>-<device>-<shareID>     a share of a shared device
 *   qualified name  <kind>=<device name>              what NodePrepareResources returns
 *   spec file       <vendor>-<class>_<claimUID>.json  one per claim and class
 * Device names start with the claim UID so a name is never reused (runtimes
 * cache specs), and the spec file name lets us find our files again.
 */
#ifndef DRALET_CDI_NAMES_H
#define DRALET_CDI_NAMES_H

#include <stdbool.h>
#include <stddef.h>

/* Vendor: a letter first, a letter or digit last, [A-Za-z0-9_.-] inside. */
bool cdi_vendor_valid(const char *vendor);
/* Class: like a vendor; dots only when @allow_dots (spec 0.6.0 and later). */
bool cdi_class_valid(const char *class_, bool allow_dots);
/* Device name: a letter or digit first and last, [A-Za-z0-9_.:-] inside. */
bool cdi_device_name_valid(const char *name);

/*
 * Builders: write into @buf and return the length, or -ENAMETOOLONG when it
 * does not fit, -EINVAL when the result would not be a valid CDI name.
 */
int cdi_vendor_of_driver(const char *driver, char *buf, size_t size);
/* The class for a backend family; "device" when the family is no valid class. */
const char *cdi_class_of_family(const char *family);
/* @share_id: the allocation's shareID, NULL for an exclusive one; two
 * shares of one device in one claim get two names. */
int cdi_device_name(const char *claim_uid, const char *device, const char *share_id, char *buf,
		    size_t size);
int cdi_qualified_name(const char *vendor, const char *class_, const char *device_name,
		       char *buf, size_t size);
int cdi_spec_file_name(const char *vendor, const char *class_, const char *claim_uid,
		       char *buf, size_t size);

/*
 * Splits a file name made by cdi_spec_file_name for @vendor back into class
 * and claim UID. Returns 0, or -EINVAL when @file is not such a name.
 */
int cdi_parse_spec_file_name(const char *vendor, const char *file, char *class_buf,
			     size_t class_size, char *uid_buf, size_t uid_size);

/*
 * Splits "vendor/class=name"; the parts are copied into the buffers.
 * Returns 0, or -EINVAL when a part is missing or breaks its rule (dots in
 * the class are accepted).
 */
int cdi_parse_qualified_name(const char *qualified, char *vendor, size_t vendor_size,
			     char *class_, size_t class_size, char *name, size_t name_size);

#endif
