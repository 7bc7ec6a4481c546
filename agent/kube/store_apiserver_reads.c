/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the apiserver store reads besides its slices: the Node's UID (the
 * owner of new slices: from the pod's service account token, else read from
 * the apiserver, retried with a backoff) and ResourceClaims
 * (resource.k8s.io/v1, or v1beta2 where v1 is not served).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/kube/status.h"
#include "agent/kube/store_apiserver_internal.h"
#include "agent/lib/json_get.h"
#include "agent/lib/log.h"

struct claim_ctx {
	struct store_api *s;
	struct claim_ctx *next, *prev;
	store_claim_cb cb;
	void *userdata;
	char *ns, *name;
	bool beta;
	struct kube_request *req;
};

/* ---- node ---- */

static void on_node_timer(uv_timer_t *t)
{
	node_fetch(t->data);
}

static void node_done(void *ud, const struct kube_response *resp)
{
	struct store_api *s = ud;
	s->node_req = NULL;
	if (resp->status == 200) {
		struct json_object *node = kube_json_parse(resp->body, resp->body_len);
		const char *uid = json_get_str_at(node, JSON_PATH("metadata", "uid"));
		if (uid) {
			api_set_str(&s->node_uid, uid);
			json_object_put(node);
			log_info("apiserver: node %s has uid %s", s->node_name, s->node_uid);
			for (size_t i = 0; i < s->n_drivers; i++)
				if (s->drivers[i]->desired)
					drv_want_sync(s->drivers[i], true);
			return;
		}
		json_object_put(node);
	}
	struct err_msg why;
	if (resp->status == 200)
		err_msg_set(&why, 0, "answer without metadata.uid");
	else
		api_describe_failure(resp, &why);
	s->stats.failures++;
	uint32_t delay = api_retry_delay(s, &s->node_backoff, resp);
	log_warn("apiserver: cannot read node %s (needed for the slices' owner reference): %s; "
		 "retrying in %u ms", s->node_name, why.text, delay);
	uv_timer_start(&s->node_timer, on_node_timer, delay, 0);
}

int node_uid_from_token(struct store_api *s)
{
	char *name = NULL, *uid = NULL;
	int r = kube_client_bound_node(s->client, &name, &uid);
	if (r == 0 && strcmp(name, s->node_name) != 0)
		r = -ENOENT;	/* another node's pod: ask the apiserver */
	if (r == 0) {
		s->node_uid = uid;
		uid = NULL;
		log_info("apiserver: node %s has uid %s (from the service account token)",
			 s->node_name, s->node_uid);
	}
	free(name);
	free(uid);
	return r;
}

void node_fetch(struct store_api *s)
{
	if (s->node_req || s->node_uid || s->destroying ||
	    uv_is_active((uv_handle_t *)&s->node_timer))
		return;
	char *name = kube_escape(s->node_name), *path = NULL;
	if (!name || asprintf(&path, "/api/v1/nodes/%s", name) < 0) {
		free(name);
		uv_timer_start(&s->node_timer, on_node_timer, 1000, 0);
		return;
	}
	free(name);
	if (api_start(s, "GET", path, NULL, REQUEST_TIMEOUT_MS, 2, NULL, node_done, s, &s->node_req) < 0)
		uv_timer_start(&s->node_timer, on_node_timer, 1000, 0);
	free(path);
}

/* ---- claims ---- */

static void claim_free(struct claim_ctx *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		c->s->claims = c->next;
	if (c->next)
		c->next->prev = c->prev;
	free(c->ns);
	free(c->name);
	free(c);
}

static int claim_start(struct claim_ctx *c);

static void claim_done(void *ud, const struct kube_response *resp)
{
	struct claim_ctx *c = ud;
	struct store_api *s = c->s;
	c->req = NULL;
	if (resp->status == 404 && !c->beta &&
	    !kube_status_is_object_not_found(resp->body, resp->body_len, c->name)) {
		/* resource.k8s.io/v1 is not served (a 1.33 cluster): v1beta2 has the same shape. */
		c->beta = true;
		if (claim_start(c) == 0)
			return;
	}
	if (resp->status == 200) {
		struct json_object *claim = kube_json_parse(resp->body, resp->body_len);
		if (claim) {
			if (c->beta) {
				if (!s->claims_beta)
					log_info("apiserver: resource.k8s.io/v1 is not served; reading "
						 "ResourceClaims as v1beta2");
				s->claims_beta = true;
				json_object_object_add(claim, "apiVersion",
						       json_object_new_string("resource.k8s.io/v1"));
			}
			c->cb(c->userdata, 0, claim, "");
			json_object_put(claim);
			claim_free(c);
			return;
		}
		c->cb(c->userdata, -EBADMSG, NULL, "the answer is not a JSON object");
		claim_free(c);
		return;
	}
	struct err_msg why, msg;
	api_describe_failure(resp, &why);
	err_msg_set(&msg, 0, "get resourceclaims %s/%s: %s", c->ns, c->name, why.text);
	/* -ENOENT only for a definite answer about the object (the stale-claim
	 * check unprepares on it); a 404 of a path not served is no such answer */
	int err = resp->status == 404 && kube_status_is_object_not_found(resp->body,
									  resp->body_len, c->name)
		  ? -ENOENT
		  : resp->status == 401 || resp->status == 403 ? -EACCES
		  : resp->status == 0 ? (resp->error ? resp->error : -EIO)
		  : -EIO;
	c->cb(c->userdata, err, NULL, msg.text);
	claim_free(c);
}

static int claim_start(struct claim_ctx *c)
{
	char *ns = kube_escape(c->ns), *name = kube_escape(c->name), *path = NULL;
	int r = -ENOMEM;
	if (ns && name &&
	    asprintf(&path, "/apis/resource.k8s.io/%s/namespaces/%s/resourceclaims/%s",
		     c->beta ? "v1beta2" : "v1", ns, name) >= 0) {
		r = api_start(c->s, "GET", path, NULL, REQUEST_TIMEOUT_MS, 2, NULL, claim_done, c, &c->req);
		free(path);
	}
	free(ns);
	free(name);
	return r;
}

void api_get_claim(struct store *st, const char *ns, const char *name, store_claim_cb cb,
		   void *userdata)
{
	struct store_api *s = to_api(st);
	struct claim_ctx *c = calloc(1, sizeof(*c));
	if (!c || !(c->ns = strdup(ns ? ns : "")) || !(c->name = strdup(name ? name : ""))) {
		if (c) {
			free(c->ns);
			free(c);
		}
		cb(userdata, -ENOMEM, NULL, "out of memory");
		return;
	}
	c->s = s;
	c->cb = cb;
	c->userdata = userdata;
	c->beta = s->claims_beta;
	c->next = s->claims;
	if (s->claims)
		s->claims->prev = c;
	s->claims = c;
	int r = claim_start(c);
	if (r < 0) {
		claim_free(c);
		cb(userdata, r, NULL, "cannot start the request");
	}
}

void claim_reads_free(struct store_api *s)
{
	while (s->claims)
		claim_free(s->claims);
}
