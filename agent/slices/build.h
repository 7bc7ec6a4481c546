/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The slice builder: turns the devices of one DRA driver into the desired
 * resource.k8s.io/v1 ResourceSlice objects of the node's pool. Pure: no I/O,
 * no logging; problems go to a warning callback.
 *
 * Shape (kubelet-contract.md 4.4): one pool named after the node; devices
 * sorted by name, split into slices of at most 128 (64 when taints or
 * counters are published, the 1.35 limit), with counter sets laid out as the
 * server's version wants (counters_layout.h); metadata.generateName "<node>-<driver>-";
 * an owner reference to the Node (controller: true) when its UID is known;
 * spec.nodeName set. spec.pool.generation is left 0: the sync planner
 * (sync.h) decides the generation against what is already published.
 *
 * Every device is checked against the API rules before it goes in: a device
 * with an invalid or duplicate name is left out; an invalid attribute or
 * capacity (name, value, type, or beyond the 32 per device) is dropped.
 * Each is reported once through the warning callback, naming backend,
 * device and attribute; nothing invalid ever takes a slice down with it.
 */
#ifndef DRALET_SLICES_BUILD_H
#define DRALET_SLICES_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include <dralet/counters.h>
#include <dralet/device.h>
#include <dralet/sharing.h>

#include "agent/slices/record.h"

/* Feature-gated API fields (featureGates in the config). */
struct slice_options {
	/* DRADeviceTaints (beta in 1.36, GA in 1.37; on unless the config turns it
	 * off): an Unhealthy device gets a NoSchedule taint, keyed by its cause. A
	 * server without the gate drops the field, which the store notices
	 * (gates.h): no write loop, one warning. */
	bool device_taints;
	/* DRAPartitionableDevices: counter sets, consumptions and partitions
	 * (counters.h) are published; off: partitions are left out and whole
	 * devices published without consumptions. Default: on from 1.36 (beta),
	 * off before; the config's featureGates entry overrides
	 * (partitionable_explicit) */
	bool partitionable;
	bool partitionable_explicit;
	/* the Kubernetes minor version the slices are for (1.<minor>), which
	 * decides their layout (counters_layout.h); 0: the newest */
	unsigned server_minor;
	/* DRAConsumableCapacity (beta, on since 1.36; on unless the config turns
	 * it off): allowMultipleAllocations and capacity requestPolicy. A 1.34
	 * server drops them like the taints (gates.h). */
	bool consumable_capacity;
	unsigned max_devices;	/* per slice; 0 means the API limit */
};

/* The taint an Unhealthy device carries when device_taints is on and the
 * agent knows no more specific cause (taint_key). */
#define SLICE_TAINT_UNHEALTHY_KEY "dralet.dev/unhealthy"

/* One device as the builder sees it; every pointer borrowed. */
struct slice_device_in {
	const char *name;
	const char *backend;	/* for warnings; NULL reads "unknown" */
	const struct dralet_attr *attrs;
	size_t n_attrs;
	const struct dralet_capacity *caps;
	size_t n_caps;
	bool unhealthy;
	const char *taint_key;	/* the cause's taint key; NULL: SLICE_TAINT_UNHEALTHY_KEY */
	/* counter sets it owns, what it consumes, whether it is a partition
	 * (counters.h) */
	const struct dralet_counter_list *sets;
	size_t n_sets;
	const struct dralet_counter_list *uses;
	size_t n_uses;
	bool partition;
	bool allow_multiple;	/* include/dralet/sharing.h */
	/* parallel to caps: each capacity's request policy or NULL; NULL: none */
	const struct dralet_capacity_policy *const *cap_policies;
};

/* @what is the attribute/capacity name (or NULL for the device itself). */
typedef void (*slice_warn_fn)(void *userdata, const char *backend, const char *device,
			      const char *what, const char *problem);

/*
 * Builds the desired slices of @driver on @node_name from @devs (any order).
 * @node_uid may be NULL (no owner reference then; the apiserver store adds
 * it). @opts may be NULL (defaults). @warn may be NULL.
 * On success *ret_slices is a new list of SLICE_RECORD_DESIRED records (one
 * reference, slice_list_unref), empty when no device is valid. Each slice's
 * tree lives only while its text is made. -EINVAL when the driver or node
 * name is itself invalid, -ENOMEM.
 */
int slice_build(const char *driver, const char *node_name, const char *node_uid,
		const struct slice_device_in *devs, size_t n_devs, const struct slice_options *opts,
		slice_warn_fn warn, void *userdata, struct slice_list **ret_slices);

/*
 * Reads the alpha switches from a config document (YAML/JSON as json-c):
 * featureGates: {DRADeviceTaints: bool, DRAPartitionableDevices: bool,
 * DRAConsumableCapacity: bool}, and kubernetesVersion: "1.<minor>" (the
 * server the slices are for when the agent cannot ask it: the file store;
 * the apiserver's own /version wins).
 * @config may be NULL. Unknown gates are ignored (other modules may use
 * them). -EINVAL when featureGates, a known gate or kubernetesVersion has
 * the wrong type or form.
 */
int slice_options_from_config(struct json_object *config, struct slice_options *ret_opts);

/* @opts for a server of version 1.<minor> (0: the newest): server_minor set,
 * and partitionable to the gate's default there unless explicit. */
void slice_options_for_server(struct slice_options *opts, unsigned minor);

/* Largest number of devices one slice gets with @opts. */
unsigned slice_max_devices(const struct slice_options *opts, bool any_taints);

#endif
