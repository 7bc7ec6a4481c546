/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet endpoint (registration + health services, socket naming) and
 * `dralet ctl` against it, with a tiny fake NodePrepareResources server.
 * The loop runs on the main thread; clients and ctl on a second thread.
 */
#include <errno.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <uv.h>

#include "agent/cli/commands.h"
#include "agent/kubelet/grpc_client.h"
#include "agent/kubelet/registration.h"
#include "proto/kubelet_pb.h"

#define DRIVER "gpu.example.com"

struct fixture {
	uv_loop_t loop;
	char dir[64];
	char reg_dir[128], plugins_dir[128];
	struct kubelet_endpoint *ep;
	bool closed;
	unsigned notified;
	bool last_registered;
	char last_error[128];
};

/* ---- the client thread ---- */

struct bg {
	uv_async_t async;
	uv_thread_t thread;
	void (*fn)(struct fixture *f, void *arg);
	struct fixture *f;
	void *arg;
};

static void bg_main(void *p)
{
	struct bg *b = p;

	b->fn(b->f, b->arg);
	uv_async_send(&b->async);
}

static void bg_done(uv_async_t *a)
{
	uv_stop(a->loop);
}

static void run_client(struct fixture *f, void (*fn)(struct fixture *, void *), void *arg)
{
	struct bg b = { .fn = fn, .f = f, .arg = arg };

	assert_int_equal(uv_async_init(&f->loop, &b.async, bg_done), 0);
	assert_int_equal(uv_thread_create(&b.thread, bg_main, &b), 0);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	uv_thread_join(&b.thread);
	uv_close((uv_handle_t *)&b.async, NULL);
	uv_run(&f->loop, UV_RUN_NOWAIT);
}

/* ---- a fake DRA driver: one device per claim ---- */

static void fake_prepare(struct grpc_call *call, const uint8_t *req, size_t len, void *ud)
{
	dra_v1_prepare_request *pr = (dra_v1_prepare_request *)protobuf_c_message_unpack(
		&dra_v1_prepare_request_descriptor, NULL, len, req);
	dra_v1_prepare_response resp = DRA_V1_PREPARE_RESPONSE_INIT;
	dra_v1_prepare_entry entries[8], *ep[8];
	dra_v1_prepare_result results[8];
	dra_v1_device dev = DRA_V1_DEVICE_INIT, *devp = &dev;
	char *cdi = (char *)"example.com/gpu=gpu-0", *reqname = (char *)"gpu";
	uint8_t buf[4096];

	(void)ud;
	assert_non_null(pr);
	assert_true(pr->n_claims <= 8);
	dev.pool_name = (char *)"node-1";
	dev.device_name = (char *)"gpu-0";
	dev.n_cdi_device_ids = 1;
	dev.cdi_device_ids = &cdi;
	dev.n_request_names = 1;
	dev.request_names = &reqname;
	dev._share_id_case = DRA_V1_DEVICE_SHARE_ID_SET;
	dev.share_id = (char *)"share-1";
	for (size_t i = 0; i < pr->n_claims; i++) {
		dra_v1_prepare_entry e = DRA_V1_PREPARE_ENTRY_INIT;
		dra_v1_prepare_result r = DRA_V1_PREPARE_RESULT_INIT;

		entries[i] = e;
		results[i] = r;
		entries[i].key = pr->claims[i]->uid;
		entries[i].value = &results[i];
		if (!strcmp(pr->claims[i]->name, "fail")) {
			results[i].error = (char *)"no such device";
		} else {
			results[i].n_devices = 1;
			results[i].devices = &devp;
		}
		ep[i] = &entries[i];
	}
	resp.n_claims = pr->n_claims;
	resp.claims = ep;
	assert_true(protobuf_c_message_get_packed_size(&resp.base) <= sizeof(buf));
	len = protobuf_c_message_pack(&resp.base, buf);
	grpc_call_reply(call, GRPC_STATUS_OK, buf, len, NULL);
	protobuf_c_message_free_unpacked(&pr->base, NULL);
}

static void fake_unprepare(struct grpc_call *call, const uint8_t *req, size_t len, void *ud)
{
	dra_v1_unprepare_request *ur = (dra_v1_unprepare_request *)protobuf_c_message_unpack(
		&dra_v1_unprepare_request_descriptor, NULL, len, req);
	dra_v1_unprepare_response resp = DRA_V1_UNPREPARE_RESPONSE_INIT;
	dra_v1_unprepare_entry entries[8], *ep[8];
	dra_v1_unprepare_result results[8];
	uint8_t buf[4096];

	(void)ud;
	assert_non_null(ur);
	for (size_t i = 0; i < ur->n_claims && i < 8; i++) {
		dra_v1_unprepare_entry e = DRA_V1_UNPREPARE_ENTRY_INIT;
		dra_v1_unprepare_result r = DRA_V1_UNPREPARE_RESULT_INIT;

		entries[i] = e;
		results[i] = r;
		entries[i].key = ur->claims[i]->uid;
		entries[i].value = &results[i];
		ep[i] = &entries[i];
	}
	resp.n_claims = ur->n_claims;
	resp.claims = ep;
	len = protobuf_c_message_pack(&resp.base, buf);
	grpc_call_reply(call, GRPC_STATUS_OK, buf, len, NULL);
	protobuf_c_message_free_unpacked(&ur->base, NULL);
}

static void on_registration(void *userdata, const char *driver, bool registered,
			    const char *error)
{
	struct fixture *f = userdata;

	assert_string_equal(driver, DRIVER);
	f->notified++;
	f->last_registered = registered;
	snprintf(f->last_error, sizeof(f->last_error), "%s", error ? error : "");
}

static int open_endpoint(struct fixture *f, const char *pod_uid, bool health)
{
	struct kubelet_endpoint_config cfg = {
		.driver = DRIVER,
		.registry_dir = f->reg_dir,
		.plugins_dir = f->plugins_dir,
		.pod_uid = pod_uid,
		.health_service = health,
		.on_registration = on_registration,
		.userdata = f,
	};
	int r = kubelet_endpoint_open(&f->loop, &cfg, &f->ep);
	struct grpc_server *dra;

	if (r < 0)
		return r;
	dra = kubelet_endpoint_dra_server(f->ep);
	grpc_server_add_method(dra, KUBELET_PATH_V1_PREPARE, GRPC_UNARY, fake_prepare, f);
	grpc_server_add_method(dra, KUBELET_PATH_V1_UNPREPARE, GRPC_UNARY, fake_unprepare, f);
	grpc_server_add_method(dra, KUBELET_PATH_V1BETA1_PREPARE, GRPC_UNARY, fake_prepare, f);
	return 0;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_int_equal(uv_loop_init(&f->loop), 0);
	strcpy(f->dir, "/tmp/dralet-kubelet-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->reg_dir, sizeof(f->reg_dir), "%s/plugins_registry", f->dir);
	snprintf(f->plugins_dir, sizeof(f->plugins_dir), "%s/plugins", f->dir);
	*state = f;
	return 0;
}

static void endpoint_closed(void *ud)
{
	struct fixture *f = ud;

	f->closed = true;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	if (f->ep)
		kubelet_endpoint_close(f->ep, endpoint_closed, f);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&f->loop), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* ---- raw calls from the client thread ---- */

struct call_job {
	const char *socket;
	const char *path;
	uint8_t req[256];
	size_t req_len;
	int err, status;
	char message[256];
	uint8_t resp[1024];
	size_t resp_len;
};

static void do_call(struct fixture *f, void *arg)
{
	struct call_job *j = arg;
	struct grpc_client *c;
	struct grpc_client_result res;

	(void)f;
	/* deadlines: safety nets, not goals (the kubelet's GetInfo has 1 s;
	 * timings: make bench) */
	j->err = grpc_client_connect(j->socket, 30000, &c);
	if (j->err < 0)
		return;
	j->err = grpc_client_call(c, j->path, j->req, j->req_len, 30000, &res);
	if (j->err == 0) {
		j->status = res.status;
		snprintf(j->message, sizeof(j->message), "%s", res.message ? res.message : "");
		if (res.response && res.response_len <= sizeof(j->resp)) {
			memcpy(j->resp, res.response, res.response_len);
			j->resp_len = res.response_len;
		}
		grpc_client_result_clear(&res);
	}
	grpc_client_free(c);
}

static reg_plugin_info *get_info(struct fixture *f)
{
	struct call_job j = {
		.socket = kubelet_endpoint_registration_socket(f->ep),
		.path = KUBELET_PATH_GET_INFO,
	};

	run_client(f, do_call, &j);
	assert_int_equal(j.err, 0);
	assert_int_equal(j.status, GRPC_STATUS_OK);
	return pluginregistration__plugin_info__unpack(NULL, j.resp_len, j.resp);
}

/* ---- tests ---- */

static void test_socket_paths(void **state)
{
	char buf[256];

	(void)state;
	assert_int_equal(kubelet_registration_socket_path(NULL, DRIVER, NULL, buf, sizeof(buf)),
			 0);
	assert_string_equal(buf, "/var/lib/kubelet/plugins_registry/gpu.example.com-reg.sock");
	assert_int_equal(kubelet_dra_socket_path(NULL, DRIVER, "", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/var/lib/kubelet/plugins/gpu.example.com/dra.sock");
	kubelet_registration_socket_path("/r", DRIVER, "1234-ab", buf, sizeof(buf));
	assert_string_equal(buf, "/r/gpu.example.com-1234-ab-reg.sock");
	kubelet_dra_socket_path("/p", DRIVER, "1234-ab", buf, sizeof(buf));
	assert_string_equal(buf, "/p/gpu.example.com/dra-1234-ab.sock");
	assert_int_equal(kubelet_dra_socket_path("/p", DRIVER, NULL, buf, 10), -ENAMETOOLONG);
}

static void test_bad_names(void **state)
{
	struct fixture *f = *state;
	static const char *const bad[] = {
		"", ".hidden", "a/b", "UPPER.example.com", "x-", "a b",
		"a-very-long-driver-name-that-is-longer-than-sixty-three-chars.example.com",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct kubelet_endpoint_config cfg = {
			.driver = bad[i], .registry_dir = f->reg_dir, .plugins_dir = f->plugins_dir,
		};

		assert_int_equal(kubelet_endpoint_open(&f->loop, &cfg, &f->ep), -EINVAL);
	}
	struct kubelet_endpoint_config cfg = {
		.driver = DRIVER, .registry_dir = f->reg_dir, .plugins_dir = f->plugins_dir,
		.pod_uid = "../x",
	};
	assert_int_equal(kubelet_endpoint_open(&f->loop, &cfg, &f->ep), -EINVAL);
	f->ep = NULL;
}

static void test_get_info(void **state)
{
	struct fixture *f = *state;
	reg_plugin_info *info;
	char want[256];
	struct stat st;

	assert_int_equal(open_endpoint(f, NULL, false), 0);
	snprintf(want, sizeof(want), "%s/" DRIVER "/dra.sock", f->plugins_dir);
	assert_string_equal(kubelet_endpoint_dra_socket(f->ep), want);
	assert_int_equal(stat(want, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	snprintf(want, sizeof(want), "%s/" DRIVER "-reg.sock", f->reg_dir);
	assert_string_equal(kubelet_endpoint_registration_socket(f->ep), want);
	assert_string_equal(kubelet_endpoint_driver(f->ep), DRIVER);

	info = get_info(f);
	assert_non_null(info);
	assert_string_equal(info->type, "DRAPlugin");
	assert_string_equal(info->name, DRIVER);
	assert_string_equal(info->endpoint, kubelet_endpoint_dra_socket(f->ep));
	assert_int_equal(info->n_supported_versions, 2);
	assert_string_equal(info->supported_versions[0], "v1.DRAPlugin");
	assert_string_equal(info->supported_versions[1], "v1beta1.DRAPlugin");
	pluginregistration__plugin_info__free_unpacked(info, NULL);
}

static void test_get_info_health_and_rolling_update(void **state)
{
	struct fixture *f = *state;
	reg_plugin_info *info;
	char want[256];

	/* relative directories become absolute paths in PluginInfo */
	assert_int_equal(chdir(f->dir), 0);
	snprintf(f->reg_dir, sizeof(f->reg_dir), "reg");
	snprintf(f->plugins_dir, sizeof(f->plugins_dir), "plugins");
	assert_int_equal(open_endpoint(f, "7f0c-11", true), 0);
	assert_int_equal(chdir("/"), 0);
	snprintf(want, sizeof(want), "%s/plugins/" DRIVER "/dra-7f0c-11.sock", f->dir);
	assert_string_equal(kubelet_endpoint_dra_socket(f->ep), want);
	snprintf(want, sizeof(want), "%s/reg/" DRIVER "-7f0c-11-reg.sock", f->dir);
	assert_string_equal(kubelet_endpoint_registration_socket(f->ep), want);
	info = get_info(f);
	assert_non_null(info);
	assert_int_equal(info->n_supported_versions, 4);
	assert_string_equal(info->supported_versions[2], "v1.DRAResourceHealth");
	assert_string_equal(info->supported_versions[3], "v1alpha1.DRAResourceHealth");
	assert_string_equal(info->endpoint, kubelet_endpoint_dra_socket(f->ep));
	pluginregistration__plugin_info__free_unpacked(info, NULL);
}

static void test_notify(void **state)
{
	struct fixture *f = *state;
	struct call_job j = { .path = KUBELET_PATH_NOTIFY_REGISTRATION };
	reg_status st = REG_STATUS_INIT;

	assert_int_equal(open_endpoint(f, NULL, false), 0);
	j.socket = kubelet_endpoint_registration_socket(f->ep);
	st.plugin_registered = true;
	j.req_len = protobuf_c_message_pack(&st.base, j.req);
	run_client(f, do_call, &j);
	assert_int_equal(j.err, 0);
	assert_int_equal(j.status, GRPC_STATUS_OK);
	assert_int_equal(f->notified, 1);
	assert_true(f->last_registered);
	assert_true(kubelet_endpoint_registered(f->ep));

	st.plugin_registered = false;
	st.error = (char *)"endpoint already registered";
	j.req_len = protobuf_c_message_pack(&st.base, j.req);
	run_client(f, do_call, &j);
	assert_int_equal(j.err, 0);
	assert_int_equal(j.status, GRPC_STATUS_UNKNOWN);
	assert_string_equal(j.message, "failed registration process: endpoint already registered");
	assert_int_equal(f->notified, 2);
	assert_false(kubelet_endpoint_registered(f->ep));
	assert_string_equal(f->last_error, "endpoint already registered");

	/* garbage instead of a RegistrationStatus */
	memset(j.req, 0xff, 8);
	j.req_len = 8;
	run_client(f, do_call, &j);
	assert_int_equal(j.status, GRPC_STATUS_INTERNAL);
	assert_int_equal(f->notified, 2);
}

static void test_health_check(void **state)
{
	struct fixture *f = *state;
	struct call_job j = { .path = KUBELET_PATH_HEALTH_CHECK };
	grpc_health_request hr = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
	grpc_health_response *resp;
	const char *sockets[2];

	assert_int_equal(open_endpoint(f, NULL, false), 0);
	sockets[0] = kubelet_endpoint_registration_socket(f->ep);
	sockets[1] = kubelet_endpoint_dra_socket(f->ep);
	for (int i = 0; i < 2; i++) {
		j.socket = sockets[i];
		hr.service = (char *)"";
		j.req_len = protobuf_c_message_pack(&hr.base, j.req);
		run_client(f, do_call, &j);
		assert_int_equal(j.status, GRPC_STATUS_OK);
		resp = grpc__health__v1__health_check_response__unpack(NULL, j.resp_len, j.resp);
		assert_non_null(resp);
		assert_int_equal(resp->status, GRPC_HEALTH_SERVING);
		grpc__health__v1__health_check_response__free_unpacked(resp, NULL);

		hr.service = (char *)"no.such.Service";
		j.req_len = protobuf_c_message_pack(&hr.base, j.req);
		run_client(f, do_call, &j);
		assert_int_equal(j.status, GRPC_STATUS_NOT_FOUND);
	}
	/* a service the DRA socket serves */
	j.socket = sockets[1];
	hr.service = (char *)"k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin";
	j.req_len = protobuf_c_message_pack(&hr.base, j.req);
	run_client(f, do_call, &j);
	assert_int_equal(j.status, GRPC_STATUS_OK);
	/* ...which the registration socket does not */
	j.socket = sockets[0];
	run_client(f, do_call, &j);
	assert_int_equal(j.status, GRPC_STATUS_NOT_FOUND);
}

static void test_close_removes_sockets(void **state)
{
	struct fixture *f = *state;
	char reg[256], dra[256];

	assert_int_equal(open_endpoint(f, NULL, false), 0);
	snprintf(reg, sizeof(reg), "%s", kubelet_endpoint_registration_socket(f->ep));
	snprintf(dra, sizeof(dra), "%s", kubelet_endpoint_dra_socket(f->ep));
	assert_int_equal(access(reg, F_OK), 0);
	kubelet_endpoint_close(f->ep, endpoint_closed, f);
	f->ep = NULL;
	/* the DRA socket goes at once (no new connections); the registration
	 * only once the DRA server has closed: the kubelet closes its connection
	 * when it deregisters, which would fail calls still open */
	assert_int_equal(access(dra, F_OK), -1);
	assert_int_equal(access(reg, F_OK), 0);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_true(f->closed);
	assert_int_equal(access(reg, F_OK), -1);
}

/* ---- dralet ctl ---- */

struct ctl_job {
	char *argv[16];
	int argc;
	int rc;
	char out[8192];
};

static void do_ctl(struct fixture *f, void *arg)
{
	struct ctl_job *j = arg;
	FILE *tmp = tmpfile();
	int saved;
	size_t n;

	(void)f;
	fflush(stdout);
	saved = dup(1);
	dup2(fileno(tmp), 1);
	j->rc = cmd_ctl(j->argc, j->argv);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	rewind(tmp);
	n = fread(j->out, 1, sizeof(j->out) - 1, tmp);
	j->out[n] = '\0';
	fclose(tmp);
}

static struct json_object *ctl(struct fixture *f, int *rc, ...)
{
	struct ctl_job j = { .argv = { (char *)"ctl" }, .argc = 1 };
	const char *a;
	va_list ap;

	va_start(ap, rc);
	while ((a = va_arg(ap, const char *)))
		j.argv[j.argc++] = (char *)a;
	va_end(ap);
	run_client(f, do_ctl, &j);
	*rc = j.rc;
	return j.out[0] ? json_tokener_parse(j.out) : NULL;
}

static const char *jstr(struct json_object *o, const char *path)
{
	char buf[256], *save, *tok;
	struct json_object *cur = o;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok; tok = strtok_r(NULL, ".", &save)) {
		if (json_object_is_type(cur, json_type_array))
			cur = json_object_array_get_idx(cur, (size_t)atoi(tok));
		else if (!json_object_object_get_ex(cur, tok, &cur))
			return NULL;
	}
	return json_object_get_string(cur);
}

static void test_ctl_info_and_health(void **state)
{
	struct fixture *f = *state;
	struct json_object *o;
	int rc;

	assert_int_equal(open_endpoint(f, NULL, true), 0);
	o = ctl(f, &rc, "info", "--socket", kubelet_endpoint_registration_socket(f->ep), NULL);
	assert_int_equal(rc, 0);
	assert_non_null(o);
	assert_string_equal(jstr(o, "type"), "DRAPlugin");
	assert_string_equal(jstr(o, "name"), DRIVER);
	assert_string_equal(jstr(o, "endpoint"), kubelet_endpoint_dra_socket(f->ep));
	assert_string_equal(jstr(o, "supportedVersions.2"), "v1.DRAResourceHealth");
	assert_string_equal(jstr(o, "supportedVersions.3"), "v1alpha1.DRAResourceHealth");
	json_object_put(o);

	o = ctl(f, &rc, "health", "--socket", kubelet_endpoint_dra_socket(f->ep), "--timeout",
		"500ms", NULL);
	assert_int_equal(rc, 0);
	assert_string_equal(jstr(o, "status"), "SERVING");
	json_object_put(o);

	/* GetInfo on the DRA socket: UNIMPLEMENTED, exit 1, nothing on stdout */
	o = ctl(f, &rc, "info", "--socket", kubelet_endpoint_dra_socket(f->ep), NULL);
	assert_int_equal(rc, 1);
	assert_null(o);
	o = ctl(f, &rc, "info", "--socket", "/nonexistent/x.sock", NULL);
	assert_int_equal(rc, 1);
	assert_null(o);
	/* usage errors */
	o = ctl(f, &rc, "info", NULL);
	assert_int_equal(rc, 2);
	o = ctl(f, &rc, "prepare", "--socket", "x", "--uid", "u", NULL);
	assert_int_equal(rc, 2);
	o = ctl(f, &rc, "bogus", "--socket", "x", NULL);
	assert_int_equal(rc, 2);
	o = ctl(f, &rc, "info", "--socket", "x", "--timeout", "soon", NULL);
	assert_int_equal(rc, 2);
}

static void test_ctl_prepare_unprepare(void **state)
{
	struct fixture *f = *state;
	struct json_object *o;
	char file[128];
	FILE *fp;
	int rc;

	assert_int_equal(open_endpoint(f, NULL, false), 0);
	o = ctl(f, &rc, "prepare", "--socket", kubelet_endpoint_dra_socket(f->ep), "--uid",
		"uid-1", "--namespace", "default", "--name", "claim-1", NULL);
	assert_int_equal(rc, 0);
	assert_non_null(o);
	assert_string_equal(jstr(o, "claims.uid-1.devices.0.poolName"), "node-1");
	assert_string_equal(jstr(o, "claims.uid-1.devices.0.deviceName"), "gpu-0");
	assert_string_equal(jstr(o, "claims.uid-1.devices.0.cdiDeviceIds.0"),
			    "example.com/gpu=gpu-0");
	assert_string_equal(jstr(o, "claims.uid-1.devices.0.requestNames.0"), "gpu");
	assert_string_equal(jstr(o, "claims.uid-1.devices.0.shareId"), "share-1");
	assert_string_equal(jstr(o, "claims.uid-1.error"), "");
	json_object_put(o);

	/* a YAML List of claims, one of which fails */
	snprintf(file, sizeof(file), "%s/claims.yaml", f->dir);
	fp = fopen(file, "w");
	fprintf(fp, "kind: List\nitems:\n"
		    "- metadata: {namespace: ns, name: ok, uid: uid-ok}\n"
		    "- metadata: {namespace: ns, name: fail, uid: uid-fail}\n");
	fclose(fp);
	o = ctl(f, &rc, "prepare", "--socket", kubelet_endpoint_dra_socket(f->ep), "--claim",
		file, "--api", "v1beta1", NULL);
	assert_int_equal(rc, 1);
	assert_string_equal(jstr(o, "claims.uid-ok.devices.0.deviceName"), "gpu-0");
	assert_string_equal(jstr(o, "claims.uid-fail.error"), "no such device");
	json_object_put(o);

	o = ctl(f, &rc, "unprepare", "--socket", kubelet_endpoint_dra_socket(f->ep), "--claim",
		file, NULL);
	assert_int_equal(rc, 0);
	assert_string_equal(jstr(o, "claims.uid-ok.error"), "");
	assert_string_equal(jstr(o, "claims.uid-fail.error"), "");
	json_object_put(o);

	/* v1beta1 unprepare is not served by this fake driver */
	o = ctl(f, &rc, "unprepare", "--socket", kubelet_endpoint_dra_socket(f->ep), "--claim",
		file, "--api", "v1beta1", NULL);
	assert_int_equal(rc, 1);
	assert_null(o);

	/* a claim file without uids */
	fp = fopen(file, "w");
	fprintf(fp, "{\"metadata\": {\"name\": \"x\", \"namespace\": \"y\"}}\n");
	fclose(fp);
	o = ctl(f, &rc, "prepare", "--socket", kubelet_endpoint_dra_socket(f->ep), "--claim",
		file, NULL);
	assert_int_equal(rc, 1);
	assert_null(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_socket_paths),
		cmocka_unit_test_setup_teardown(test_bad_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_get_info, setup, teardown),
		cmocka_unit_test_setup_teardown(test_get_info_health_and_rolling_update, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_notify, setup, teardown),
		cmocka_unit_test_setup_teardown(test_health_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_removes_sockets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ctl_info_and_health, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ctl_prepare_unprepare, setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("grpc_kubelet", tests, NULL, NULL);
}
