/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The rules of a capacity request policy (include/dralet/sharing.h), pure:
 * used by the SDK setter and again by the slice builder for policies that
 * come from elsewhere (a devices file).
 */
#ifndef DRALET_CAPACITY_POLICY_H
#define DRALET_CAPACITY_POLICY_H

#include <dralet/sharing.h>

/* The first rule @p breaks for a capacity whose value is quantity
 * @capacity, as a phrase ("validValues are not sorted ..."), or NULL. */
const char *capacity_policy_problem(const struct dralet_capacity_policy *p, const char *capacity);

#endif
