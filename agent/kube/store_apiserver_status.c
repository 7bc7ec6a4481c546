/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The apiserver store's claim device status (store.h set_claim_status;
 * KEP-4817): one server-side apply of the claim's status subresource per
 * call, under the field manager named after the driver, so each driver owns
 * exactly its own status.devices entries (a list keyed by driver, pool,
 * device and shareID) and an apply without them removes them:
 *
 *   PATCH /apis/resource.k8s.io/v1/namespaces/<ns>/resourceclaims/<name>/status
 *         ?fieldManager=<driver>&force=true
 *   {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
 *    "metadata": {"namespace": ..., "name": ...}, "status": {"devices": [...]}}
 *
 * Writes for one (claim, driver) go one at a time, in call order, the newest
 * replacing one that waits; the client retries connection errors, 5xx and
 * 429. A claim that is gone (404) needs no status; 403 means the RBAC lacks
 * resourceclaims/status (docs/operations.md) and is logged with what to
 * grant. Nothing here blocks a kubelet call: the claims engine answers first.
 *
 * The removal after an unprepare (an empty list) is not sent: it only drops
 * a write still waiting. The apiserver itself removes the status entries of
 * devices that leave the allocation (dropDeallocatedStatusDevices in
 * k8s.io/kubernetes pkg/registry/resource/resourceclaim/strategy.go, v1.34.4
 * and v1.37.2), and the resourceclaim controller clears the allocation once
 * the last pod using the claim is gone, which is when the kubelet unprepares.
 * An apply per unprepare doubled the requests of every pod's claim.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/kube/status.h"
#include "agent/kube/store_apiserver_internal.h"
#include "agent/lib/log.h"
#include "agent/lib/err_msg.h"

#define STATUS_RETRIES 6

struct status_write {
	struct status_write *next;
	struct store_api *s;
	char *ns, *name, *driver;
	char *body;		/* in flight */
	char *next_body;	/* newer, sent once the one in flight is done */
	struct kube_request *req;
};

static void write_free(struct status_write *w)
{
	struct status_write **p;

	for (p = &w->s->status_writes; *p && *p != w; p = &(*p)->next)
		;
	if (*p)
		*p = w->next;
	free(w->ns);
	free(w->name);
	free(w->driver);
	free(w->body);
	free(w->next_body);
	free(w);
}

static int write_start(struct status_write *w);

static void write_done(void *ud, const struct kube_response *resp)
{
	struct status_write *w = ud;
	struct err_msg why;

	w->req = NULL;
	if (resp->status == 200 || resp->status == 201) {
		log_debug("apiserver: wrote the device status of claim %s/%s (driver %s)", w->ns,
			  w->name, w->driver);
	} else if (resp->status == 404) {
		log_debug("apiserver: claim %s/%s is gone; no device status to write", w->ns,
			  w->name);
	} else {
		api_describe_failure(resp, &why);
		log_error("apiserver: cannot write the device status of claim %s/%s (driver %s): %s%s",
			  w->ns, w->name, w->driver, why.text,
			  resp->status == 403
				  ? " (grant patch on resourceclaims/status, and on Kubernetes 1.36+ "
				    "associated-node:patch on resourceclaims/driver for this driver "
				    "name: deploy/rbac.yaml)"
				  : "");
	}
	free(w->body);
	w->body = w->next_body;
	w->next_body = NULL;
	if (!w->body || write_start(w) < 0)
		write_free(w);
}

static int write_start(struct status_write *w)
{
	char *ns = kube_escape(w->ns), *name = kube_escape(w->name);
	char *manager = kube_escape(w->driver), *path = NULL;
	int r = -ENOMEM;

	if (ns && name && manager &&
	    asprintf(&path, "/apis/resource.k8s.io/%s/namespaces/%s/resourceclaims/%s/status"
			    "?fieldManager=%s&force=true",
		     w->s->claims_beta ? "v1beta2" : "v1", ns, name, manager) >= 0) {
		r = api_start(w->s, "PATCH", path, w->body, REQUEST_TIMEOUT_MS, STATUS_RETRIES, NULL,
			      write_done, w, &w->req);
		if (r < 0)
			log_error("apiserver: cannot start the device status write of claim %s/%s: %s",
				  w->ns, w->name, strerror(-r));
	}
	free(path);
	free(ns);
	free(name);
	free(manager);
	return r;
}

/* The apply object: only the fields this driver owns. */
static char *apply_body(const struct store_api *s, const char *ns, const char *name,
			struct json_object *devices)
{
	struct json_object *o = json_object_new_object(), *meta = json_object_new_object();
	struct json_object *status = json_object_new_object();
	char *text = NULL;

	if (o && meta && status) {
		json_object_object_add(o, "apiVersion",
				       json_object_new_string(s->claims_beta ? "resource.k8s.io/v1beta2"
									     : "resource.k8s.io/v1"));
		json_object_object_add(o, "kind", json_object_new_string("ResourceClaim"));
		json_object_object_add(meta, "namespace", json_object_new_string(ns));
		json_object_object_add(meta, "name", json_object_new_string(name));
		json_object_object_add(o, "metadata", json_object_get(meta));
		json_object_object_add(status, "devices", json_object_get(devices));
		json_object_object_add(o, "status", json_object_get(status));
		/* YAML has no "\/" escape: the apiserver's YAML decoder refuses it */
		text = strdup(json_object_to_json_string_ext(
			o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	}
	json_object_put(status);
	json_object_put(meta);
	json_object_put(o);
	return text;
}

void api_set_claim_status(struct store *st, const char *ns, const char *name, const char *driver,
			  struct json_object *devices)
{
	struct store_api *s = to_api(st);
	char *body;
	struct status_write *w;

	if (!ns || !*ns || !name || !*name || !driver || !json_object_is_type(devices, json_type_array))
		return;
	if (json_object_array_length(devices) == 0) {	/* the apiserver removes them */
		for (w = s->status_writes; w; w = w->next)
			if (!strcmp(w->ns, ns) && !strcmp(w->name, name) &&
			    !strcmp(w->driver, driver)) {
				free(w->next_body);
				w->next_body = NULL;
			}
		return;
	}
	if (!(body = apply_body(s, ns, name, devices))) {
		log_error("apiserver: cannot write the device status of claim %s/%s: out of memory",
			  ns, name);
		return;
	}
	for (w = s->status_writes; w; w = w->next)
		if (!strcmp(w->ns, ns) && !strcmp(w->name, name) && !strcmp(w->driver, driver)) {
			free(w->next_body);	/* the newest wins */
			w->next_body = body;
			return;
		}
	if (!(w = calloc(1, sizeof(*w))) || !(w->ns = strdup(ns)) || !(w->name = strdup(name)) ||
	    !(w->driver = strdup(driver))) {
		if (w) {
			free(w->ns);
			free(w->name);
			free(w);
		}
		free(body);
		log_error("apiserver: cannot write the device status of claim %s/%s: out of memory",
			  ns, name);
		return;
	}
	w->s = s;
	w->body = body;
	w->next = s->status_writes;
	s->status_writes = w;
	if (write_start(w) < 0)
		write_free(w);
}

void status_writes_free(struct store_api *s)
{
	while (s->status_writes)
		write_free(s->status_writes);
}
