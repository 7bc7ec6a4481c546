/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kube-apiserver HTTP client: libcurl's multi interface driven by a
 * libuv loop (c-libraries.md A.2.2). Requests are asynchronous; their
 * callbacks run on the loop thread, never from inside libcurl.
 *
 * What every request gets: the server's TLS verified with the configured CA
 * (unless the kubeconfig says insecure-skip-tls-verify), the bearer token
 * (the token file is re-read when it changes, and once more on a 401 before
 * the request is retried) or the client certificate, User-Agent
 * dralet/<version>, a connect timeout and a total timeout. All requests of
 * a client share one HTTP/2 connection to an apiserver that speaks it (the
 * watches are streams on it; docs/performance.md, "Fleet"); over HTTP/1.1
 * each request in flight has its own. Requests that
 * ask for it are retried with exponential backoff and jitter on connection
 * errors, 5xx and 429 (honouring Retry-After). Nothing here logs; the token
 * never leaves the Authorization header.
 */
#ifndef DRALET_KUBE_CLIENT_H
#define DRALET_KUBE_CLIENT_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

struct kube_config;
struct kube_client;
struct kube_request;

struct kube_response {
	long status;		/* HTTP status, 0 when none arrived */
	int error;		/* 0, or a transport failure: -ETIMEDOUT, -ECONNREFUSED,
				 * -ECONNRESET, -EPROTO (TLS), -ECANCELED (aborted by on_data),
				 * -EMSGSIZE (body over the cap), -EIO */
	const char *error_text;	/* libcurl's words for a transport failure, else "" */
	const char *body;	/* NUL-terminated (not collected for 2xx streams) */
	size_t body_len;
	const char *retry_after;	/* Retry-After header or NULL */
	unsigned attempts;	/* tries made, retries included */
};

/* Called once per request unless cancelled; @resp valid during the call.
 * The request is freed after the callback returns. */
typedef void (*kube_done_cb)(void *userdata, const struct kube_response *resp);
/* Streaming body data of a 2xx response, as it arrives. Runs inside
 * libcurl: only parse and schedule, never start or cancel requests here.
 * Return 0 to go on or a negative errno to abort (done then gets -ECANCELED). */
typedef int (*kube_data_cb)(void *userdata, const char *buf, size_t len);

struct kube_request_opts {
	const char *method;	/* "GET", "POST", "PUT", "DELETE", "PATCH" */
	const char *path;	/* "/apis/...?query", already escaped */
	const char *body;	/* JSON text or NULL (copied); a PATCH is a server-side
				 * apply: its body goes as application/apply-patch+yaml
				 * (JSON is YAML), every other as application/json */
	bool merge_patch;	/* a PATCH that is a JSON merge patch (RFC 7386):
				 * application/merge-patch+json (Events' counts) */
	uint32_t timeout_ms;	/* whole request; 0: 30 s */
	kube_data_cb on_data;	/* non-NULL: stream the body (watch) */
	unsigned retries;	/* extra tries on connection errors, 5xx, 429 */
};

struct kube_client_stats {
	uint64_t requests;	/* HTTP requests sent (every try) */
	uint64_t retries;	/* of which retries */
	uint64_t by_method[5];	/* GET POST PUT DELETE PATCH */
	uint64_t transport_errors;
	uint64_t status_2xx, status_4xx, status_5xx;
	uint64_t token_reloads;
};

/* Copies what it needs from @cfg. -EINVAL with a message when the CA or
 * client key files are unusable, -ENOMEM. */
int kube_client_new(uv_loop_t *loop, const struct kube_config *cfg, struct kube_client **ret_client,
		    char *err, size_t errlen);
/* Cancels every request (no callbacks) and closes the libuv handles; the
 * memory goes once the loop has run their close callbacks. Not from inside
 * a request callback. NULL is fine. */
void kube_client_free(struct kube_client *c);

/* Starts a request; *ret_req (may be NULL) is valid until the done callback
 * returns or kube_request_cancel. */
int kube_request_start(struct kube_client *c, const struct kube_request_opts *opts,
		       kube_done_cb done, void *userdata, struct kube_request **ret_req);
/* No callback after this. Not from inside an on_data callback. NULL is fine. */
void kube_request_cancel(struct kube_request *req);

/* The node name and UID in the client's bearer token, when it is a
 * ServiceAccount token bound to a pod (agent/kube/sa_token.h): 0 with both
 * malloc'd, -ENOENT (no token, or one without them), -ENOMEM. The token
 * itself stays inside. */
int kube_client_bound_node(struct kube_client *c, char **ret_name, char **ret_uid);

void kube_client_get_stats(const struct kube_client *c, struct kube_client_stats *ret_stats);

/* Requests by verb and answer, every try (retries included) counted when it
 * ends: the verb is the HTTP method, or WATCH for a streamed GET; the code
 * is the HTTP status, 0 when none arrived (a transport failure). Loop thread
 * only (read them there too: no locks). */
enum kube_verb { KUBE_VERB_GET, KUBE_VERB_POST, KUBE_VERB_PUT, KUBE_VERB_DELETE, KUBE_VERB_PATCH,
		 KUBE_VERB_WATCH, KUBE_N_VERBS };
#define KUBE_MAX_STATUS 600
struct kube_request_counts {
	uint64_t by_verb_status[KUBE_N_VERBS][KUBE_MAX_STATUS];
};
const char *kube_verb_name(enum kube_verb v);
const struct kube_request_counts *kube_client_request_counts(const struct kube_client *c);
/* Percent-escapes everything but [A-Za-z0-9._~-] for a path segment or query
 * value ("spec.nodeName=a,b" -> "spec.nodeName%3Da%2Cb"). malloc'd; NULL on ENOMEM. */
char *kube_escape(const char *s);

#endif
