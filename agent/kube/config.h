/* SPDX-License-Identifier: Apache-2.0 */
/*
 * How to reach the kube-apiserver: in-cluster (KUBERNETES_SERVICE_HOST/PORT,
 * the service-account token file and CA) or a kubeconfig file (server, CA
 * file or data, token or token file, client certificate and key;
 * insecure-skip-tls-verify only when the file says so). TLS is verified in
 * every other case. Exec and auth-provider plugins are not supported.
 *
 * The token is a secret: it lives in this struct and in the Authorization
 * header, never in a message, error text or log line.
 */
#ifndef DRALET_KUBE_CONFIG_H
#define DRALET_KUBE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#define KUBE_SERVICE_ACCOUNT_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

struct kube_config {
	char *server;		/* "https://host:port", no trailing '/' */
	char *ca_file;		/* PEM file, or NULL */
	char *ca_data;		/* PEM bytes, or NULL */
	size_t ca_data_len;
	bool insecure;		/* insecure-skip-tls-verify: true in the kubeconfig */
	char *token;		/* static bearer token, or NULL */
	char *token_file;	/* re-read when it changes and on 401, or NULL */
	char *cert_file, *key_file;	/* client certificate, or NULL */
	char *cert_data, *key_data;	/* PEM bytes, or NULL */
	size_t cert_data_len, key_data_len;
	char *source;		/* "in-cluster" or the kubeconfig path, for messages */
};

/*
 * In-cluster config: server from KUBERNETES_SERVICE_HOST/PORT (IPv6 hosts in
 * brackets), token file and CA from @sa_dir (NULL: the standard directory).
 * -ENOENT (with a message) when not running in a cluster.
 */
int kube_config_in_cluster(const char *sa_dir, struct kube_config **ret_cfg, char *err,
			   size_t errlen);

/* Reads and parses a kubeconfig file (YAML or JSON). @context NULL: the
 * file's current-context. Relative paths are relative to the file's folder. */
int kube_config_from_kubeconfig(const char *path, const char *context,
				struct kube_config **ret_cfg, char *err, size_t errlen);

/* The pure part: a parsed kubeconfig document; @base_dir resolves relative
 * paths. -EINVAL with a message (never containing a credential). */
int kube_config_parse(struct json_object *doc, const char *base_dir, const char *context,
		      struct kube_config **ret_cfg, char *err, size_t errlen);

void kube_config_free(struct kube_config *cfg);

/* Standard base64 (padding optional, whitespace ignored). On success
 * *ret_buf (malloc'd, NUL-terminated) holds *ret_len bytes. */
int kube_base64_decode(const char *in, char **ret_buf, size_t *ret_len);

#endif
