/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The store: where ResourceClaims are read and ResourceSlices are written.
 * Two implementations behind one ops table: the file store (--store DIR:
 * DIR/resourceclaims/<namespace>/<name>.{json,yaml} read,
 * DIR/resourceslices/<name>.json written, DIR/events/<name>.json written,
 * DIR/resourceclaimstatus/<namespace>/<name>/<driver>.json written)
 * and the kube-apiserver store.
 * All calls and callbacks happen on the agent's libuv loop thread.
 */
#ifndef DRALET_STORE_H
#define DRALET_STORE_H

#include <json-c/json.h>

#include "agent/kube/event.h"

struct store;
struct slice_list;

/*
 * Result of get_claim: err 0 and @claim (a resource.k8s.io/v1 ResourceClaim;
 * borrowed, valid during the callback — take a reference to keep it), or
 * -ENOENT (definitely not found: an apiserver's NotFound about the object,
 * or no claim file in an existing claims directory; the stale-claim check
 * unprepares on it) / another -errno with @message saying why.
 */
typedef void (*store_claim_cb)(void *userdata, int err, struct json_object *claim,
			       const char *message);

struct store_ops {
	const char *name;	/* "file", "apiserver" */
	void (*get_claim)(struct store *s, const char *namespace_, const char *name,
			  store_claim_cb cb, void *userdata);
	/*
	 * Makes the published ResourceSlices of @driver equal @slices (desired
	 * records from slice_build(); borrowed: the store takes its own
	 * reference and keeps it until the next publish of @driver, so the
	 * list must not change afterwards). Asynchronous: the store converges
	 * in the background and keeps doing so (repairs deletions) until the
	 * next call. -EINVAL without a driver or list.
	 */
	int (*publish)(struct store *s, const char *driver, struct slice_list *slices);
	/*
	 * Tells the cluster about something on this node a person has to look
	 * at: a core/v1 Event (kube/event.h) about @obj (borrowed; NULL: the
	 * agent's Node), @type "Warning" or "Normal", @reason one UpperCamelCase
	 * word, @message text (all copied). Counted, combined and rate-limited
	 * as client-go's recorder does (kube/event_recorder.h). Never blocks:
	 * the apiserver store queues the request and sends it from the loop,
	 * one at a time (retried; a failure logged; a full queue drops it,
	 * counted and logged); the file store writes DIR/events/<name>.json at
	 * once (a repeat rewrites its Event's file with the new count).
	 */
	void (*record_event)(struct store *s, const struct kube_object_ref *obj, const char *type,
			     const char *reason, const char *message);
	/*
	 * Sets the status.devices entries driver @driver owns in ResourceClaim
	 * @namespace_/@name (KEP-4817) to @devices, a JSON array of
	 * AllocatedDeviceStatus objects (borrowed; [] after an unprepare: they
	 * go); the other drivers' entries stay. Fire and forget, as warn: the
	 * apiserver store applies it in the background (server-side apply, field
	 * manager @driver; retried; a newer call for the same claim and driver
	 * replaces one not sent yet) and sends no [] (the apiserver drops the
	 * entries when the claim is deallocated); the file store writes
	 * DIR/resourceclaimstatus/<namespace>/<name>/<driver>.json at once.
	 */
	void (*set_claim_status)(struct store *s, const char *namespace_, const char *name,
				 const char *driver, struct json_object *devices);
	void (*destroy)(struct store *s);
};

struct store {
	const struct store_ops *ops;
};

#endif
