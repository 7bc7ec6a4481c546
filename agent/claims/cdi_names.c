/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/claims/cdi_names.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static bool is_alpha(char c) { return isascii((unsigned char)c) && isalpha((unsigned char)c); }
static bool is_alnum(char c) { return isascii((unsigned char)c) && isalnum((unsigned char)c); }

static bool name_ok(const char *s, bool first_digit_ok, const char *inner)
{
	size_t len;

	if (!s || !(len = strlen(s)))
		return false;
	if (!(first_digit_ok ? is_alnum(s[0]) : is_alpha(s[0])) || !is_alnum(s[len - 1]))
		return false;
	for (size_t i = 1; i + 1 < len; i++)
		if (!is_alnum(s[i]) && !strchr(inner, s[i]))
			return false;
	return true;
}

bool cdi_vendor_valid(const char *vendor)
{
	return name_ok(vendor, false, "_.-");
}

bool cdi_class_valid(const char *class_, bool allow_dots)
{
	return name_ok(class_, false, allow_dots ? "_.-" : "_-");
}

bool cdi_device_name_valid(const char *name)
{
	return name_ok(name, true, "_.:-");
}

static int put(char *buf, size_t size, int n)
{
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= size)
		return -ENAMETOOLONG;
	return n;
}

int cdi_vendor_of_driver(const char *driver, char *buf, size_t size)
{
	int n = put(buf, size, snprintf(buf, size, "k8s.%s", driver ? driver : ""));

	if (n >= 0 && !cdi_vendor_valid(buf))
		return -EINVAL;
	return n;
}

const char *cdi_class_of_family(const char *family)
{
	return family && cdi_class_valid(family, false) ? family : "device";
}

int cdi_device_name(const char *claim_uid, const char *device, const char *share_id, char *buf,
		    size_t size)
{
	int n = put(buf, size, share_id ? snprintf(buf, size, "%s-%s-%s", claim_uid, device, share_id)
					: snprintf(buf, size, "%s-%s", claim_uid, device));

	if (n >= 0 && !cdi_device_name_valid(buf))
		return -EINVAL;
	return n;
}

int cdi_qualified_name(const char *vendor, const char *class_, const char *device_name,
		       char *buf, size_t size)
{
	if (!cdi_vendor_valid(vendor) || !cdi_class_valid(class_, true) ||
	    !cdi_device_name_valid(device_name))
		return -EINVAL;
	return put(buf, size, snprintf(buf, size, "%s/%s=%s", vendor, class_, device_name));
}

int cdi_spec_file_name(const char *vendor, const char *class_, const char *claim_uid,
		       char *buf, size_t size)
{
	if (!cdi_vendor_valid(vendor) || !cdi_class_valid(class_, true) || !claim_uid ||
	    !*claim_uid || strchr(claim_uid, '/') || strchr(claim_uid, '_'))
		return -EINVAL;
	return put(buf, size, snprintf(buf, size, "%s-%s_%s.json", vendor, class_, claim_uid));
}

static int copy_part(const char *s, size_t len, char *buf, size_t size)
{
	if (len >= size)
		return -ENAMETOOLONG;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return 0;
}

int cdi_parse_spec_file_name(const char *vendor, const char *file, char *class_buf,
			     size_t class_size, char *uid_buf, size_t uid_size)
{
	size_t vlen = strlen(vendor), flen = strlen(file);
	const char *rest, *underscore, *end;

	if (flen <= vlen + 1 + 5 || strncmp(file, vendor, vlen) || file[vlen] != '-' ||
	    strcmp(file + flen - 5, ".json"))
		return -EINVAL;
	rest = file + vlen + 1;
	end = file + flen - 5;
	underscore = memrchr(rest, '_', (size_t)(end - rest));
	if (!underscore || underscore == rest || underscore + 1 == end)
		return -EINVAL;
	if (copy_part(rest, (size_t)(underscore - rest), class_buf, class_size) < 0 ||
	    copy_part(underscore + 1, (size_t)(end - underscore - 1), uid_buf, uid_size) < 0)
		return -EINVAL;
	if (!cdi_class_valid(class_buf, true))
		return -EINVAL;
	return 0;
}

int cdi_parse_qualified_name(const char *qualified, char *vendor, size_t vendor_size,
			     char *class_, size_t class_size, char *name, size_t name_size)
{
	const char *slash = strchr(qualified, '/');
	const char *eq = slash ? strchr(slash, '=') : NULL;

	if (!slash || !eq)
		return -EINVAL;
	if (copy_part(qualified, (size_t)(slash - qualified), vendor, vendor_size) < 0 ||
	    copy_part(slash + 1, (size_t)(eq - slash - 1), class_, class_size) < 0 ||
	    copy_part(eq + 1, strlen(eq + 1), name, name_size) < 0)
		return -EINVAL;
	if (!cdi_vendor_valid(vendor) || !cdi_class_valid(class_, true) ||
	    !cdi_device_name_valid(name))
		return -EINVAL;
	return 0;
}
