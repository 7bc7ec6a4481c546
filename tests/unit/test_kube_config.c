/* SPDX-License-Identifier: Apache-2.0 */
/* Kubeconfig parsing, in-cluster config, base64, service account token claims,
 * Status bodies, escaping. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/kube/client.h"
#include "agent/kube/config.h"
#include "agent/kube/sa_token.h"
#include "agent/kube/status.h"
#include "agent/lib/yaml_load.h"

static struct json_object *yaml(const char *text)
{
	struct json_object *o = NULL;
	char err[256];
	assert_int_equal(yaml_load_buffer(text, strlen(text), &o, err, sizeof(err)), 0);
	return o;
}

static const char KUBECONFIG[] =
	"apiVersion: v1\n"
	"kind: Config\n"
	"current-context: prod\n"
	"contexts:\n"
	"- name: prod\n"
	"  context: {cluster: big, user: agent}\n"
	"- name: lab\n"
	"  context: {cluster: small, user: certuser}\n"
	"clusters:\n"
	"- name: big\n"
	"  cluster:\n"
	"    server: https://10.0.0.1:6443/\n"
	"    certificate-authority: pki/ca.crt\n"
	"- name: small\n"
	"  cluster:\n"
	"    server: https://[fd00::1]:443\n"
	"    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==\n"
	"    insecure-skip-tls-verify: true\n"
	"users:\n"
	"- name: agent\n"
	"  user: {token: s3cr3t-t0ken, tokenFile: /var/run/tok}\n"
	"- name: certuser\n"
	"  user:\n"
	"    client-certificate-data: Y2VydA==\n"
	"    client-key: /etc/key.pem\n";

static void test_current_context(void **state)
{
	(void)state;
	struct json_object *doc = yaml(KUBECONFIG);
	struct kube_config *c = NULL;
	char err[256] = "";
	assert_int_equal(kube_config_parse(doc, "/home/u/.kube", NULL, &c, err, sizeof(err)), 0);
	assert_string_equal(c->server, "https://10.0.0.1:6443");
	assert_string_equal(c->ca_file, "/home/u/.kube/pki/ca.crt");
	assert_null(c->ca_data);
	assert_false(c->insecure);
	assert_string_equal(c->token, "s3cr3t-t0ken");
	assert_string_equal(c->token_file, "/var/run/tok");
	assert_null(c->cert_file);
	kube_config_free(c);
	json_object_put(doc);
}

static void test_named_context_with_data(void **state)
{
	(void)state;
	struct json_object *doc = yaml(KUBECONFIG);
	struct kube_config *c = NULL;
	char err[256] = "";
	assert_int_equal(kube_config_parse(doc, "/x", "lab", &c, err, sizeof(err)), 0);
	assert_string_equal(c->server, "https://[fd00::1]:443");
	assert_true(c->insecure);
	assert_int_equal(c->ca_data_len, strlen("-----BEGIN CERTIFICATE-----\n"));
	assert_memory_equal(c->ca_data, "-----BEGIN CERTIFICATE-----\n", c->ca_data_len);
	assert_int_equal(c->cert_data_len, 4);
	assert_string_equal(c->cert_data, "cert");
	assert_string_equal(c->key_file, "/etc/key.pem");
	assert_null(c->token);
	kube_config_free(c);
	json_object_put(doc);
}

static void expect_error(const char *text, const char *context, const char *words)
{
	struct json_object *doc = yaml(text);
	struct kube_config *c = (struct kube_config *)0x1;
	char err[512] = "";
	assert_true(kube_config_parse(doc, "/x", context, &c, err, sizeof(err)) < 0);
	assert_ptr_equal(c, (struct kube_config *)0x1);	/* untouched */
	if (!strstr(err, words))
		fail_msg("error '%s' lacks '%s'", err, words);
	/* the error never carries a credential */
	assert_null(strstr(err, "s3cr3t"));
	json_object_put(doc);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error(KUBECONFIG, "nope", "context 'nope' not found");
	expect_error("clusters: []\n", NULL, "no current-context");
	expect_error("current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n"
		     "clusters: [{name: c, cluster: {server: 'http://1.2.3.4'}}]\n"
		     "users: [{name: u, user: {token: s3cr3t}}]\n", NULL, "https://");
	expect_error("current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n"
		     "clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
		     "users: [{name: u, user: {exec: {command: aws}}}]\n", NULL, "not supported");
	expect_error("current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n"
		     "clusters: [{name: c, cluster: {server: 'https://h', "
		     "certificate-authority-data: '%%%'}}]\n"
		     "users: [{name: u, user: {token: s3cr3t}}]\n", NULL, "base64");
	expect_error("current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n"
		     "clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
		     "users: [{name: u, user: {client-certificate: /c}}]\n", NULL, "needs its key");
	expect_error("current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n"
		     "clusters: [{name: c, cluster: {server: 'https://h', "
		     "insecure-skip-tls-verify: 'yes please'}}]\n"
		     "users: [{name: u, user: {token: s3cr3t}}]\n", NULL, "insecure-skip-tls-verify");
	expect_error("current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n"
		     "clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
		     "users: []\n", NULL, "user 'u' not found");
}

static void test_base64(void **state)
{
	(void)state;
	char *out;
	size_t len;
	assert_int_equal(kube_base64_decode("aGVsbG8gd29ybGQ=", &out, &len), 0);
	assert_int_equal(len, 11);
	assert_string_equal(out, "hello world");
	free(out);
	assert_int_equal(kube_base64_decode("aGVs\nbG8", &out, &len), 0);	/* no padding, newline */
	assert_string_equal(out, "hello");
	free(out);
	assert_int_equal(kube_base64_decode("", &out, &len), 0);
	assert_int_equal(len, 0);
	free(out);
	assert_int_equal(kube_base64_decode("a", &out, &len), -EINVAL);
	assert_int_equal(kube_base64_decode("ab=c", &out, &len), -EINVAL);
	assert_int_equal(kube_base64_decode("a*bc", &out, &len), -EINVAL);
}

/* A pod's projected token (its payload base64url with '-' and '_', no padding). */
#define JWT_HEADER "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsifQ."
static const char BOUND_JWT[] = JWT_HEADER
	"eyJhdWQiOlsiaHR0cHM6Ly9rdWJlcm5ldGVzLmRlZmF1bHQuc3ZjIl0sImt1YmVybmV0ZXMuaW8iOnsibmFt"
	"ZXNwYWNlIjoiZHJhbGV0Iiwibm9kZSI6eyJuYW1lIjoiZ3B1LW5vZGUtNyIsInVpZCI6IjVmMGMyYzdlLTli"
	"MWQtNGMzYS1iZjhlLTBhMWIyYzNkNGU1ZiJ9LCJwb2QiOnsibmFtZSI6ImRyYWxldC0_Pj8iLCJ1aWQiOiJ1"
	"In19LCJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6ZHJhbGV0OmRyYWxldH5-Pz8ifQ.c2ln";

static void test_sa_token_bound_node(void **state)
{
	(void)state;
	char *name = NULL, *uid = NULL;
	assert_int_equal(sa_token_bound_node(BOUND_JWT, &name, &uid), 0);
	assert_string_equal(name, "gpu-node-7");
	assert_string_equal(uid, "5f0c2c7e-9b1d-4c3a-bf8e-0a1b2c3d4e5f");
	free(name);
	free(uid);
	static const char *const unbound[] = {
		/* a pod token without node claims (an apiserver before 1.30) */
		JWT_HEADER "eyJrdWJlcm5ldGVzLmlvIjp7Im5hbWVzcGFjZSI6ImRyYWxldCIsInBvZCI6eyJuYW1lIjoi"
			   "cCIsInVpZCI6InUifX19.c2ln",
		/* a node name without a uid */
		JWT_HEADER "eyJrdWJlcm5ldGVzLmlvIjp7Im5vZGUiOnsibmFtZSI6Im4ifX19.c2ln",
		"s3cr3t-t0ken",		/* a static token */
		"a.b",			/* one dot */
		"a..c",			/* an empty payload */
		JWT_HEADER "e30*.c2ln",	/* not base64 */
		JWT_HEADER "bm90IGpzb24.c2ln",	/* "not json" */
		JWT_HEADER "WzFd.c2ln",	/* [1] */
	};
	for (size_t i = 0; i < sizeof(unbound) / sizeof(unbound[0]); i++) {
		name = uid = NULL;
		assert_int_equal(sa_token_bound_node(unbound[i], &name, &uid), -ENOENT);
		assert_null(name);
		assert_null(uid);
	}
}

static void test_in_cluster(void **state)
{
	(void)state;
	char dir[] = "/tmp/dralet-sa-XXXXXX";
	assert_non_null(mkdtemp(dir));
	struct kube_config *c = NULL;
	char err[512] = "", path[600];
	unsetenv("KUBERNETES_SERVICE_HOST");
	assert_int_equal(kube_config_in_cluster(dir, &c, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "--kubeconfig"));
	setenv("KUBERNETES_SERVICE_HOST", "fd00::10", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	assert_true(kube_config_in_cluster(dir, &c, err, sizeof(err)) < 0);	/* files missing */
	snprintf(path, sizeof(path), "%s/token", dir);
	FILE *f = fopen(path, "w");
	fputs("tok\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/ca.crt", dir);
	f = fopen(path, "w");
	fclose(f);
	assert_int_equal(kube_config_in_cluster(dir, &c, err, sizeof(err)), 0);
	assert_string_equal(c->server, "https://[fd00::10]:443");
	snprintf(path, sizeof(path), "%s/token", dir);
	assert_string_equal(c->token_file, path);
	assert_null(c->token);	/* read by the client, fresh each time it changes */
	assert_false(c->insecure);
	kube_config_free(c);
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	assert_int_equal(kube_config_in_cluster(dir, &c, err, sizeof(err)), 0);
	assert_string_equal(c->server, "https://10.96.0.1:443");
	kube_config_free(c);
	unlink(path);
	snprintf(path, sizeof(path), "%s/ca.crt", dir);
	unlink(path);
	rmdir(dir);
}

static void test_status(void **state)
{
	(void)state;
	char buf[512];
	const char *invalid =
		"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"x is "
		"invalid\",\"reason\":\"Invalid\",\"code\":422,\"details\":{\"causes\":[{\"reason\":"
		"\"FieldValueInvalid\",\"message\":\"Invalid value: \\\"A\\\"\",\"field\":"
		"\"spec.devices[0].name\"},{\"message\":\"Too many\",\"field\":\"spec.devices\"}]}}";
	kube_status_describe(invalid, strlen(invalid), buf, sizeof(buf));
	assert_string_equal(buf, "Invalid: x is invalid [causes: spec.devices[0].name: Invalid value: "
				 "\"A\"; spec.devices: Too many]");
	kube_status_describe("404 page not found\n", 19, buf, sizeof(buf));
	assert_string_equal(buf, "404 page not found ");
	kube_status_describe("", 0, buf, sizeof(buf));
	assert_string_equal(buf, "(empty body)");
	kube_status_describe(invalid, strlen(invalid), buf, 10);
	assert_int_equal(strlen(buf), 9);
	const char *nf = "{\"kind\":\"Status\",\"reason\":\"NotFound\",\"details\":{\"name\":\"c1\","
			 "\"kind\":\"resourceclaims\"},\"code\":404}";
	assert_true(kube_status_is_object_not_found(nf, strlen(nf), "c1"));
	assert_false(kube_status_is_object_not_found(nf, strlen(nf), "c2"));
	assert_false(kube_status_is_object_not_found("404 page not found", 18, "c1"));
}

static void test_escape(void **state)
{
	(void)state;
	char *e = kube_escape("spec.driver=gpu.dralet.dev,spec.nodeName=node-1");
	assert_string_equal(e, "spec.driver%3Dgpu.dralet.dev%2Cspec.nodeName%3Dnode-1");
	free(e);
	e = kube_escape("a b/c?&%");
	assert_string_equal(e, "a%20b%2Fc%3F%26%25");
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_current_context),
		cmocka_unit_test(test_named_context_with_data),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_base64),
		cmocka_unit_test(test_sa_token_bound_node),
		cmocka_unit_test(test_in_cluster),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_escape),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
