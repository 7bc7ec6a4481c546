/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/claims/claim_ref.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "agent/core/k8s_names.h"
#include "agent/lib/err_msg.h"

static bool valid_uid(const char *s)
{
	size_t len = strlen(s);

	return len > 0 && len <= CLAIM_UID_MAX && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == len;
}

/* -EINVAL with "claim <field> "<value>" (N characters) is not <rule>". */
static int refuse(const char *field, const char *value, const char *rule, char *err,
		  size_t errlen)
{
	size_t len = strlen(value);

	if (!len)
		return err_printf(err, errlen, -EINVAL, "the request names no claim %s", field);
	return err_printf(err, errlen, -EINVAL, "claim %s \"%.64s%s\" (%zu characters) is not %s",
			  field, value, len > 64 ? "..." : "", len, rule);
}

int claim_ref_check(const char *namespace_, const char *name, const char *uid, char *err,
		    size_t errlen)
{
	namespace_ = namespace_ ? namespace_ : "";
	name = name ? name : "";
	uid = uid ? uid : "";
	if (!valid_uid(uid))
		return refuse("uid", uid, "a Kubernetes UID (at most 36 characters: a-z, 0-9, '-')",
			      err, errlen);
	if (!k8s_valid_dns_label(namespace_))
		return refuse("namespace", namespace_, "a DNS-1123 label (at most 63 characters: "
			      "a-z, 0-9, '-', alphanumeric at both ends)", err, errlen);
	if (!k8s_valid_dns_subdomain(name, 253))
		return refuse("name", name, "a DNS-1123 subdomain (at most 253 characters: "
			      "a-z, 0-9, '-', '.')", err, errlen);
	return 0;
}
