/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's side of struct dralet_backend_ctx: one per enabled backend
 * instance, created by the inventory. Private to agent/.
 */
#ifndef DRALET_BACKEND_CTX_H
#define DRALET_BACKEND_CTX_H

#include <json-c/json.h>
#include <dralet/backend.h>

struct hal_roots;
struct hal_scan;
struct node_ops;
struct sriov_policies;

/* Devices created by the probe that is running (owned by the sink). */
struct device_sink {
	struct dralet_device **items;
	size_t n, cap;
};

struct dralet_backend_ctx {
	const struct dralet_backend *backend;
	const char *driver;		/* owned by the config */
	char *state_dir;		/* owned: <config state_root>/<driver>, or NULL */
	struct json_object *options;	/* borrowed: object of string values, may be NULL */
	void *state;			/* from the backend's init */
	const struct hal_roots *roots;	/* borrowed */
	const struct hal_scan *scan;	/* borrowed, set during a discovery */
	const struct node_ops *node;	/* borrowed; NULL: the real node below roots */
	const struct sriov_policies *sriov;	/* borrowed from the config: VFs on demand */
	struct device_sink *sink;	/* set while probe runs */
	char error[512];		/* message of the last failed operation */
	const char *health_cause;	/* dralet_ctx_health_cause of the health call */
	bool node_changed;		/* dralet_ctx_node_changed in a prepare or unprepare */
	unsigned warnings;		/* warnings recorded so far */
};

/* Frees every device in the sink (calling the backend's remove op and the
 * private data destructor) and the sink's array. */
void device_sink_clear(struct device_sink *sink, struct dralet_backend_ctx *ctx);

/* Frees one device (remove op + private destructor). */
void dralet_device_free(struct dralet_backend_ctx *ctx, struct dralet_device *dev);

/* A device's counter sets and consumptions (device_counters.c, SDK
 * counters.h): owned by the device, freed with it; NULL until the first. */
struct device_counters;
struct device_counters **device_counters_slot(struct dralet_device *dev);
const struct device_counters *device_counters_of(const struct dralet_device *dev);
void device_counters_free(struct device_counters *c);

/* The context a device was created with. */
struct dralet_backend_ctx *dralet_device_ctx(const struct dralet_device *dev);

/* The taint key an Unhealthy device's slices carry for the cause the agent
 * found (a static string, "dralet.dev/pcie-aer"), or NULL for the generic one
 * (a backend's verdict). Set by the health monitor on the loop thread with the
 * health; read by the slice builder. */
/* A prepare or unprepare of @dev changed what discovery publishes
 * (dralet_ctx_node_changed): noted by backend_call on the worker thread,
 * taken (read and cleared) on the loop thread (device_set.h). */
void device_note_node_changed(struct dralet_device *dev);
bool device_take_node_changed(struct dralet_device *dev);

void device_set_health_taint(struct dralet_device *dev, const char *key);
const char *device_health_taint(const struct dralet_device *dev);

/* The cause the backend named for its last Unhealthy health answer
 * (dralet_ctx_health_cause), NULL for none or another answer. Set by
 * backend_call_health, read by the health monitor's worker right after. */
void device_set_backend_health_cause(struct dralet_device *dev, const char *key);
const char *device_backend_health_cause(const struct dralet_device *dev);

/* The sharing facts of a device (device_sharing.c, include/dralet/sharing.h):
 * the slot the device owns, NULL until a backend marks the device shareable. */
struct device_sharing;
struct device_sharing **device_sharing_slot(struct dralet_device *dev);
const struct device_sharing *device_sharing_of(const struct dralet_device *dev);
void device_sharing_free(struct device_sharing *sharing);

#endif
