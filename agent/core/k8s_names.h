/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kubernetes name and value rules that resource.k8s.io/v1 validation applies
 * (kubernetes-api.md section 1.5), as pure functions. Used when a backend
 * sets a value and again before anything is published.
 */
#ifndef DRALET_K8S_NAMES_H
#define DRALET_K8S_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* DNS-1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters. */
bool k8s_valid_dns_label(const char *s);
/* DNS-1123 subdomain: dot-separated labels, at most @max characters. */
bool k8s_valid_dns_subdomain(const char *s, size_t max);
/* Driver name: lower-cased DNS subdomain of at most 63 characters. */
bool k8s_valid_driver_name(const char *s);
/* QualifiedName: C identifier (<= 32) or "<domain>/<C identifier>". */
bool k8s_valid_qualified_name(const char *s);
/* Label key (a device taint's key): [<DNS subdomain, <= 253>/]<name>, the
 * name 1-63 of [-A-Za-z0-9_.], starting and ending alphanumeric. */
bool k8s_valid_label_key(const char *s);
/* Semantic Versioning 2.0.0, at most 64 characters. */
bool k8s_valid_semver(const char *s);
/* Kubernetes resource.Quantity syntax. */
bool k8s_valid_quantity(const char *s);
/* The value of quantity @s as resource.Quantity.Value() gives it: an integer,
 * a fraction rounded up ("1500m" is 2, "1Gi" 1073741824). 0, -EINVAL (not a
 * quantity) or -ERANGE (beyond int64). k8s_quantity.c. */
int k8s_quantity_value(const char *s, int64_t *ret_value);

/*
 * Normalises a vendor version string to semver: a leading 'v' dropped,
 * leading zeros of numeric parts removed, missing minor/patch added as 0,
 * numeric parts beyond the third moved to build metadata ("96.00.89.00.01"
 * -> "96.0.89+00.01"). Returns 0, or -EINVAL when it cannot be made valid.
 */
int k8s_normalize_version(const char *in, char *out, size_t size);

/* Canonical quantity of a byte count (BinarySI: "80Gi", "1500") and of a
 * plain count (DecimalSI: "96", "1k"). Return the length or -ENOSPC. */
int k8s_quantity_binary(uint64_t value, char *out, size_t size);
int k8s_quantity_decimal(int64_t value, char *out, size_t size);

#endif
