/* SPDX-License-Identifier: Apache-2.0 */
/* In-cluster and kubeconfig settings for the apiserver client. */
#include <errno.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/kube/config.h"
#include "agent/lib/err_msg.h"
#include "agent/lib/json_get.h"
#include "agent/lib/yaml_load.h"

void kube_config_free(struct kube_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->server);
	free(cfg->ca_file);
	free(cfg->ca_data);
	if (cfg->token) {
		explicit_bzero(cfg->token, strlen(cfg->token));
		free(cfg->token);
	}
	free(cfg->token_file);
	free(cfg->cert_file);
	free(cfg->key_file);
	free(cfg->cert_data);
	if (cfg->key_data) {
		explicit_bzero(cfg->key_data, cfg->key_data_len);
		free(cfg->key_data);
	}
	free(cfg->source);
	free(cfg);
}

static int b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int kube_base64_decode(const char *in, char **ret_buf, size_t *ret_len)
{
	size_t n = strlen(in);
	char *out = malloc(n / 4 * 3 + 4);
	if (!out)
		return -ENOMEM;
	uint32_t acc = 0;
	int bits = 0;
	size_t len = 0;
	bool pad = false;
	for (size_t i = 0; i < n; i++) {
		char c = in[i];
		if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
			continue;
		if (c == '=') {
			pad = true;
			continue;
		}
		int v = b64_value(c);
		if (v < 0 || pad) {
			free(out);
			return -EINVAL;
		}
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[len++] = (char)((acc >> bits) & 0xff);
		}
	}
	if (bits >= 6) {	/* a lone sextet cannot end valid base64 */
		free(out);
		return -EINVAL;
	}
	out[len] = '\0';
	*ret_buf = out;
	*ret_len = len;
	return 0;
}

int kube_config_in_cluster(const char *sa_dir, struct kube_config **ret_cfg, char *err,
			   size_t errlen)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	if (!host || !*host || !port || !*port)
		return err_printf(err, errlen, -ENOENT,
			    "not running in a cluster (KUBERNETES_SERVICE_HOST/PORT unset); "
			    "use --kubeconfig FILE or --store DIR");
	if (!sa_dir)
		sa_dir = KUBE_SERVICE_ACCOUNT_DIR;
	struct kube_config *cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		return -ENOMEM;
	bool v6 = strchr(host, ':') != NULL;
	if (asprintf(&cfg->server, "https://%s%s%s:%s", v6 ? "[" : "", host, v6 ? "]" : "", port) < 0 ||
	    asprintf(&cfg->token_file, "%s/token", sa_dir) < 0 ||
	    asprintf(&cfg->ca_file, "%s/ca.crt", sa_dir) < 0 ||
	    !(cfg->source = strdup("in-cluster"))) {
		kube_config_free(cfg);
		return -ENOMEM;
	}
	struct stat st;
	if (stat(cfg->token_file, &st) < 0 || stat(cfg->ca_file, &st) < 0) {
		int e = errno;
		int r = err_printf(err, errlen, -e, "in-cluster service account files missing in %s: %s",
			     sa_dir, strerror(e));
		kube_config_free(cfg);
		return r;
	}
	*ret_cfg = cfg;
	return 0;
}

/* ---- kubeconfig ---- */

/* The entry of list @list (contexts/clusters/users) whose name is @name. */
static struct json_object *named(struct json_object *doc, const char *list, const char *name,
				 const char *inner)
{
	struct json_object *arr = json_get_array(doc, list);
	if (!arr)
		return NULL;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		const char *n = json_get_str(e, "name");
		if (n && !strcmp(n, name))
			return json_get(e, inner);
	}
	return NULL;
}

/* A string field; -EINVAL if present with another type. */
static int str_field(struct json_object *o, const char *key, const char **ret)
{
	struct json_object *v = json_get(o, key);
	*ret = NULL;
	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return -EINVAL;
	*ret = json_object_get_string(v);
	if (!**ret)
		*ret = NULL;
	return 0;
}

static char *resolve(const char *base_dir, const char *path)
{
	char *out = NULL;
	if (path[0] == '/' || !base_dir)
		return strdup(path);
	if (asprintf(&out, "%s/%s", base_dir, path) < 0)
		return NULL;
	return out;
}

int kube_config_parse(struct json_object *doc, const char *base_dir, const char *context,
		      struct kube_config **ret_cfg, char *err, size_t errlen)
{
	const char *ctx_name = context, *cluster_name = NULL, *user_name = NULL;
	if (!doc || !json_object_is_type(doc, json_type_object))
		return err_printf(err, errlen, -EINVAL, "kubeconfig is not a mapping");
	if (!ctx_name && str_field(doc, "current-context", &ctx_name) < 0)
		return err_printf(err, errlen, -EINVAL, "current-context is not a string");
	if (!ctx_name)
		return err_printf(err, errlen, -EINVAL, "no current-context and no context given");
	struct json_object *ctx = named(doc, "contexts", ctx_name, "context");
	if (!ctx)
		return err_printf(err, errlen, -EINVAL, "context '%s' not found", ctx_name);
	if (str_field(ctx, "cluster", &cluster_name) < 0 || !cluster_name)
		return err_printf(err, errlen, -EINVAL, "context '%s' names no cluster", ctx_name);
	if (str_field(ctx, "user", &user_name) < 0)
		return err_printf(err, errlen, -EINVAL, "context '%s': user is not a string", ctx_name);
	struct json_object *cluster = named(doc, "clusters", cluster_name, "cluster");
	if (!cluster)
		return err_printf(err, errlen, -EINVAL, "cluster '%s' not found", cluster_name);
	struct json_object *user = user_name ? named(doc, "users", user_name, "user") : NULL;
	if (user_name && !user)
		return err_printf(err, errlen, -EINVAL, "user '%s' not found", user_name);

	const char *server, *ca, *ca_data, *token, *token_file, *cert, *cert_data, *key, *key_data;
	if (str_field(cluster, "server", &server) < 0 || !server)
		return err_printf(err, errlen, -EINVAL, "cluster '%s' has no server", cluster_name);
	if (strncmp(server, "https://", 8))
		return err_printf(err, errlen, -EINVAL, "cluster '%s': server must be an https:// URL",
			    cluster_name);
	if (str_field(cluster, "certificate-authority", &ca) < 0 ||
	    str_field(cluster, "certificate-authority-data", &ca_data) < 0)
		return err_printf(err, errlen, -EINVAL, "cluster '%s': certificate authority is not a string",
			    cluster_name);
	struct json_object *insecure = json_get(cluster, "insecure-skip-tls-verify");
	if (insecure && !json_object_is_type(insecure, json_type_boolean))
		return err_printf(err, errlen, -EINVAL,
			    "cluster '%s': insecure-skip-tls-verify must be true or false", cluster_name);
	if (json_get(user, "exec") || json_get(user, "auth-provider"))
		return err_printf(err, errlen, -ENOTSUP,
			    "user '%s': exec and auth-provider credential plugins are not supported; "
			    "use a token, tokenFile or client certificate", user_name);
	if (json_get(user, "username") || json_get(user, "password"))
		return err_printf(err, errlen, -ENOTSUP, "user '%s': basic authentication is not supported",
			    user_name);
	if (str_field(user, "token", &token) < 0 || str_field(user, "tokenFile", &token_file) < 0 ||
	    str_field(user, "client-certificate", &cert) < 0 ||
	    str_field(user, "client-certificate-data", &cert_data) < 0 ||
	    str_field(user, "client-key", &key) < 0 || str_field(user, "client-key-data", &key_data) < 0)
		return err_printf(err, errlen, -EINVAL, "user '%s': a credential field is not a string",
			    user_name);
	if (!!(cert || cert_data) != !!(key || key_data))
		return err_printf(err, errlen, -EINVAL,
			    "user '%s': a client certificate needs its key and the other way round",
			    user_name);

	struct kube_config *cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		return -ENOMEM;
	int r = -ENOMEM;
	size_t slen = strlen(server);
	while (slen > 8 && server[slen - 1] == '/')
		slen--;
	if (!(cfg->server = strndup(server, slen)))
		goto out;
	cfg->insecure = insecure && json_object_get_boolean(insecure);
	if (ca && !(cfg->ca_file = resolve(base_dir, ca)))
		goto out;
	if (cert && !(cfg->cert_file = resolve(base_dir, cert)))
		goto out;
	if (key && !(cfg->key_file = resolve(base_dir, key)))
		goto out;
	if (token_file && !(cfg->token_file = resolve(base_dir, token_file)))
		goto out;
	if (token && !(cfg->token = strdup(token)))
		goto out;
	struct {
		const char *in, *what;
		char **out;
		size_t *len;
	} blobs[] = {
		{ ca_data, "certificate-authority-data", &cfg->ca_data, &cfg->ca_data_len },
		{ cert_data, "client-certificate-data", &cfg->cert_data, &cfg->cert_data_len },
		{ key_data, "client-key-data", &cfg->key_data, &cfg->key_data_len },
	};
	for (size_t i = 0; i < sizeof(blobs) / sizeof(blobs[0]); i++) {
		if (!blobs[i].in)
			continue;
		r = kube_base64_decode(blobs[i].in, blobs[i].out, blobs[i].len);
		if (r == -EINVAL)
			r = err_printf(err, errlen, r, "%s is not valid base64", blobs[i].what);
		if (r < 0)
			goto out;
	}
	*ret_cfg = cfg;
	return 0;
out:
	kube_config_free(cfg);
	return r;
}

int kube_config_from_kubeconfig(const char *path, const char *context,
				struct kube_config **ret_cfg, char *err, size_t errlen)
{
	struct json_object *doc = NULL;
	char perr[256];
	int r = yaml_load_file(path, &doc, perr, sizeof(perr));
	if (r == -EINVAL)
		return err_printf(err, errlen, r, "%s: %s", path, perr);
	if (r < 0)
		return err_printf(err, errlen, r, "%s: %s", path, strerror(-r));
	char *copy = strdup(path);
	if (!copy) {
		json_object_put(doc);
		return -ENOMEM;
	}
	struct kube_config *cfg = NULL;
	char perr2[512];
	r = kube_config_parse(doc, dirname(copy), context, &cfg, perr2, sizeof(perr2));
	json_object_put(doc);
	free(copy);
	if (r < 0)
		return err_printf(err, errlen, r, "%s: %s", path, perr2);
	if (!(cfg->source = strdup(path))) {
		kube_config_free(cfg);
		return -ENOMEM;
	}
	*ret_cfg = cfg;
	return 0;
}
