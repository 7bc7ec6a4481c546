/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Name and value rules of the kube-apiserver (1.34) for the objects dralet
 * writes: DNS labels and subdomains, driver and pool names, qualified
 * attribute names, semantic versions, quantities. Pure predicates over
 * strings (kubernetes-api.md section 1.5); NULL is never valid.
 */
#ifndef DRALET_SLICES_VALIDATE_H
#define DRALET_SLICES_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>

#define SLICE_DEVICES_MAX 128		/* ResourceSliceMaxDevices */
#define SLICE_ATTRS_AND_CAPS_MAX 32	/* ResourceSliceMaxAttributesAndCapacitiesPerDevice */
#define SLICE_VALUE_MAX 64		/* DeviceAttributeMaxValueLength */
#define SLICE_ID_MAX 32			/* DeviceMaxIDLength */
#define SLICE_DOMAIN_MAX 63		/* DeviceMaxDomainLength, DriverNameMaxLength */
#define SLICE_POOL_NAME_MAX 253		/* PoolNameMaxLength */
#define SLICE_TAINTS_MAX 4		/* DeviceTaintsMaxLength */

/* [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters. */
bool valid_dns_label(const char *s);
/* DNS labels joined by '.', at most 253 characters. */
bool valid_dns_subdomain(const char *s);
/* Lower-cased, a DNS subdomain of at most 63 characters (CSI driver rule). */
bool valid_driver_name(const char *s);
/* At most 253 characters; '/'-separated DNS subdomains. */
bool valid_pool_name(const char *s);
/* C identifier of at most 32 characters, optionally "domain/" in front with
 * the domain following the driver-name rule. Exactly one '/' at most. */
bool valid_qualified_name(const char *s);
/* Semantic Versioning 2.0.0, at most 64 characters. */
bool valid_semver(const char *s);
/* A Kubernetes quantity: [+-]digits[.digits] with an optional binary (Ki..Ei),
 * decimal (n u m k M G T P E) or exponent (e3, E-2) suffix. */
bool valid_quantity(const char *s);

#endif
