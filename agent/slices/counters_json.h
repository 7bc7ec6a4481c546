/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The JSON of counters (partitionable devices): a slice's spec.sharedCounters
 * and a device's consumesCounters, counters in name order. Pure.
 */
#ifndef DRALET_SLICES_COUNTERS_JSON_H
#define DRALET_SLICES_COUNTERS_JSON_H

#include <stddef.h>
#include <json-c/json.h>

#include <dralet/counters.h>

/* Adds @key: [{<set key>: set, counters: {name: {value}}}...] to @obj for
 * @lists (@n of them, pointers borrowed): "sharedCounters" with "name",
 * "consumesCounters" with "counterSet". Nothing when @n is 0. -ENOMEM. */
int counters_json_add(struct json_object *obj, const char *key, const char *set_key,
		      const struct dralet_counter_list *const *lists, size_t n);

#endif
