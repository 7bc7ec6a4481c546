/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dralet ctl: talk to a running dralet (or any kubelet plugin) the way the
 * kubelet does, over its unix sockets.
 *
 *   dralet ctl info   --socket REG_SOCKET          GetInfo
 *   dralet ctl health --socket SOCKET [--service S] grpc.health.v1 Check
 *   dralet ctl watch-health --socket DRA_SOCKET [--count N]  NodeWatchResources
 *   dralet ctl prepare|unprepare --socket DRA_SOCKET
 *         (--claim FILE | --uid U --namespace N --name M) [--api v1|v1beta1]
 *
 * Results are JSON on stdout; errors go to stderr with exit status 1
 * (2 for usage errors).
 */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/cli/commands.h"
#include "agent/kubelet/grpc_client.h"
#include "agent/lib/json_get.h"
#include "agent/lib/yaml_load.h"
#include "proto/kubelet_pb.h"

#include "agent/cli/ctl.h"


static void ctl_usage(FILE *out)
{
	fprintf(out,
		"usage: dralet ctl <info|health|watch-health|prepare|unprepare|bench> --socket PATH\n"
		"                  [options]\n"
		"\n"
		"  info       GetInfo on a registration socket (<driver>-reg.sock)\n"
		"  health     grpc.health.v1 Check on either socket [--service NAME]\n"
		"  watch-health  NodeWatchResources on a DRA socket: the devices' health, one\n"
		"             JSON line per message [--count N: stop after N (default 1),\n"
		"             0: until the stream ends or --timeout passes]\n"
		"  prepare    NodePrepareResources on a DRA socket (dra.sock)\n"
		"  unprepare  NodeUnprepareResources on a DRA socket\n"
		"  bench      prepare+unprepare latency and throughput, one claim per call\n"
		"             (--claim LIST, --concurrency N, --rounds R; --null: empty calls)\n"
		"\n"
		"options:\n"
		"  --socket PATH       the unix socket to call (required)\n"
		"  --timeout DURATION  call deadline, e.g. 500ms, 10s, 1m (default 10s)\n"
		"  --claim FILE        ResourceClaim(s) as JSON or YAML: one object, a List\n"
		"                      with items, or an array\n"
		"  --uid U --namespace N --name M   one claim given on the command line\n"
		"  --api v1|v1beta1    DRA API version to call (default v1)\n"
		"\n"
		"Results are JSON on stdout; the exit status is 0 only when the call\n"
		"and every claim succeeded.\n");
}

static int parse_duration_ms(const char *s, int *ret_ms)
{
	char *end;
	long long v;
	long long mult = 1000;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || v < 0)
		return -EINVAL;
	if (!strcmp(end, "ms"))
		mult = 1;
	else if (!strcmp(end, "s") || !*end)
		mult = 1000;
	else if (!strcmp(end, "m"))
		mult = 60000;
	else
		return -EINVAL;
	if (v > 24LL * 3600 * 1000 / mult)
		return -ERANGE;
	*ret_ms = (int)(v * mult);
	return 0;
}

static void print_json(struct json_object *obj)
{
	printf("%s\n", json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY |
							       JSON_C_TO_STRING_SPACED |
							       JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(stdout);
}

static struct json_object *string_array(char **items, size_t n)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_string(items[i]));
	return a;
}

/* Runs a unary call; prints the error and returns 1 unless it is OK. */
static int ctl_call(const struct ctl_opts *o, const char *method, const ProtobufCMessage *req,
		    struct grpc_client_result *res)
{
	struct grpc_client *client;
	size_t len = protobuf_c_message_get_packed_size(req);
	uint8_t *buf = malloc(len ? len : 1);
	int r;

	if (!buf) {
		fprintf(stderr, "dralet ctl: out of memory\n");
		return 1;
	}
	protobuf_c_message_pack(req, buf);
	r = grpc_client_connect(o->socket, o->timeout_ms, &client);
	if (r < 0) {
		fprintf(stderr, "dralet ctl: cannot connect to %s: %s\n", o->socket, strerror(-r));
		free(buf);
		return 1;
	}
	r = grpc_client_call(client, method, buf, len, o->timeout_ms, res);
	grpc_client_free(client);
	free(buf);
	if (r < 0) {
		fprintf(stderr, "dralet ctl: %s on %s: %s\n", method, o->socket, strerror(-r));
		return 1;
	}
	if (res->status != GRPC_STATUS_OK) {
		fprintf(stderr, "dralet ctl: %s: %s: %s\n", method, grpc_status_name(res->status),
			res->message ? res->message : "");
		grpc_client_result_clear(res);
		return 1;
	}
	return 0;
}

static int ctl_info(const struct ctl_opts *o)
{
	reg_info_request req = PLUGINREGISTRATION__INFO_REQUEST__INIT;
	struct grpc_client_result res;
	reg_plugin_info *info;
	struct json_object *out;

	if (ctl_call(o, KUBELET_PATH_GET_INFO, &req.base, &res))
		return 1;
	info = pluginregistration__plugin_info__unpack(NULL, res.response_len, res.response);
	grpc_client_result_clear(&res);
	if (!info) {
		fprintf(stderr, "dralet ctl: GetInfo: cannot parse PluginInfo\n");
		return 1;
	}
	out = json_object_new_object();
	json_object_object_add(out, "type", json_object_new_string(info->type));
	json_object_object_add(out, "name", json_object_new_string(info->name));
	json_object_object_add(out, "endpoint", json_object_new_string(info->endpoint));
	json_object_object_add(out, "supportedVersions",
			       string_array(info->supported_versions, info->n_supported_versions));
	print_json(out);
	json_object_put(out);
	pluginregistration__plugin_info__free_unpacked(info, NULL);
	return 0;
}

static int ctl_health(const struct ctl_opts *o)
{
	grpc_health_request req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
	struct grpc_client_result res;
	grpc_health_response *hr;
	struct json_object *out;
	const ProtobufCEnumValue *v;
	char *note = NULL;
	int serving;

	req.service = (char *)(o->service ? o->service : "");
	if (ctl_call(o, KUBELET_PATH_HEALTH_CHECK, &req.base, &res))
		return 1;
	hr = grpc__health__v1__health_check_response__unpack(NULL, res.response_len,
							      res.response);
	if (res.message && *res.message)	/* the agent's health note (docs/health.md) */
		note = strdup(res.message);
	grpc_client_result_clear(&res);
	if (!hr) {
		free(note);
		fprintf(stderr, "dralet ctl: Check: cannot parse HealthCheckResponse\n");
		return 1;
	}
	v = protobuf_c_enum_descriptor_get_value(
		&grpc__health__v1__health_check_response__serving_status__descriptor, hr->status);
	out = json_object_new_object();
	json_object_object_add(out, "status", json_object_new_string(v ? v->name : "UNKNOWN"));
	if (note)
		json_object_object_add(out, "degraded", json_object_new_string(note));
	free(note);
	print_json(out);
	json_object_put(out);
	serving = hr->status == GRPC_HEALTH_SERVING;
	grpc__health__v1__health_check_response__free_unpacked(hr, NULL);
	return serving ? 0 : 1;
}

/* ---- claims ---- */

int ctl_load_claims(struct json_object *root, struct ctl_claim *claims, size_t *ret_n)
{
	struct json_object *items = NULL;
	size_t n = 0;

	if (json_object_is_type(root, json_type_array))
		items = root;
	else if (json_object_is_type(root, json_type_object) &&
		 !json_object_object_get_ex(root, "items", &items))
		items = NULL;
	if (items && !json_object_is_type(items, json_type_array))
		return -EINVAL;
	size_t count = items ? json_object_array_length(items) : 1;

	if (count > MAX_CLAIMS)
		return -E2BIG;
	for (size_t i = 0; i < count; i++) {
		struct json_object *c = items ? json_object_array_get_idx(items, i) : root;

		claims[n].namespace_ = json_get_str_at(c, JSON_PATH("metadata", "namespace"));
		claims[n].name = json_get_str_at(c, JSON_PATH("metadata", "name"));
		claims[n].uid = json_get_str_at(c, JSON_PATH("metadata", "uid"));
		if (!claims[n].namespace_ || !claims[n].name || !claims[n].uid)
			return -EINVAL;
		n++;
	}
	*ret_n = n;
	return 0;
}

static struct json_object *device_json(const dra_v1_device *d)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "requestNames",
			       string_array(d->request_names, d->n_request_names));
	json_object_object_add(o, "poolName", json_object_new_string(d->pool_name));
	json_object_object_add(o, "deviceName", json_object_new_string(d->device_name));
	json_object_object_add(o, "cdiDeviceIds",
			       string_array(d->cdi_device_ids, d->n_cdi_device_ids));
	if (d->_share_id_case == DRA_V1_DEVICE_SHARE_ID_SET)
		json_object_object_add(o, "shareId", json_object_new_string(d->share_id));
	return o;
}

/* The v1 and v1beta1 messages are wire-identical, so one set of C types
 * decodes both. */
static int print_prepare(const struct grpc_client_result *res, size_t n_requested)
{
	dra_v1_prepare_response *resp = (dra_v1_prepare_response *)protobuf_c_message_unpack(
		&dra_v1_prepare_response_descriptor, NULL, res->response_len, res->response);
	struct json_object *out, *claims;
	int failed = 0;

	if (!resp) {
		fprintf(stderr, "dralet ctl: cannot parse NodePrepareResourcesResponse\n");
		return 1;
	}
	out = json_object_new_object();
	claims = json_object_new_object();
	for (size_t i = 0; i < resp->n_claims; i++) {
		const dra_v1_prepare_entry *e = resp->claims[i];
		struct json_object *c = json_object_new_object();
		struct json_object *devs = json_object_new_array();

		if (e->value) {
			for (size_t j = 0; j < e->value->n_devices; j++)
				json_object_array_add(devs, device_json(e->value->devices[j]));
		}
		json_object_object_add(c, "devices", devs);
		json_object_object_add(c, "error",
				       json_object_new_string(e->value ? e->value->error : ""));
		if (e->value && e->value->error[0]) {
			fprintf(stderr, "dralet ctl: claim %s: %s\n", e->key, e->value->error);
			failed = 1;
		}
		json_object_object_add(claims, e->key, c);
	}
	json_object_object_add(out, "claims", claims);
	print_json(out);
	json_object_put(out);
	if (resp->n_claims != n_requested) {
		fprintf(stderr, "dralet ctl: %zu claims requested, %zu in the response\n",
			n_requested, resp->n_claims);
		failed = 1;
	}
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	return failed;
}

static int print_unprepare(const struct grpc_client_result *res, size_t n_requested)
{
	dra_v1_unprepare_response *resp = (dra_v1_unprepare_response *)protobuf_c_message_unpack(
		&dra_v1_unprepare_response_descriptor, NULL, res->response_len, res->response);
	struct json_object *out, *claims;
	int failed = 0;

	if (!resp) {
		fprintf(stderr, "dralet ctl: cannot parse NodeUnprepareResourcesResponse\n");
		return 1;
	}
	out = json_object_new_object();
	claims = json_object_new_object();
	for (size_t i = 0; i < resp->n_claims; i++) {
		const dra_v1_unprepare_entry *e = resp->claims[i];
		struct json_object *c = json_object_new_object();
		const char *err = e->value ? e->value->error : "";

		json_object_object_add(c, "error", json_object_new_string(err));
		if (err[0]) {
			fprintf(stderr, "dralet ctl: claim %s: %s\n", e->key, err);
			failed = 1;
		}
		json_object_object_add(claims, e->key, c);
	}
	json_object_object_add(out, "claims", claims);
	print_json(out);
	json_object_put(out);
	if (resp->n_claims != n_requested) {
		fprintf(stderr, "dralet ctl: %zu claims requested, %zu in the response\n",
			n_requested, resp->n_claims);
		failed = 1;
	}
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	return failed;
}

static int ctl_prepare(const struct ctl_opts *o, bool prepare)
{
	struct ctl_claim *claims = calloc(MAX_CLAIMS, sizeof(*claims));
	dra_v1_claim *pb = NULL, **pbp = NULL;
	struct json_object *root = NULL;
	struct grpc_client_result res;
	bool beta = o->api && !strcmp(o->api, "v1beta1");
	const char *method;
	size_t n = 0;
	int rc = 1, r;

	if (!claims)
		goto out;
	if (o->claim_file) {
		char err[256];

		r = yaml_load_file(o->claim_file, &root, err, sizeof(err));
		if (r < 0) {
			fprintf(stderr, "dralet ctl: %s: %s\n", o->claim_file,
				r == -EINVAL ? err : strerror(-r));
			goto out;
		}
		r = ctl_load_claims(root, claims, &n);
		if (r < 0) {
			fprintf(stderr, "dralet ctl: %s: %s\n", o->claim_file,
				r == -E2BIG ? "too many claims"
					    : "every claim needs metadata.namespace, name and uid");
			goto out;
		}
	} else {
		claims[0] = o->flag_claim;
		n = 1;
	}
	pb = calloc(n ? n : 1, sizeof(*pb));
	pbp = calloc(n ? n : 1, sizeof(*pbp));
	if (!pb || !pbp)
		goto out;
	for (size_t i = 0; i < n; i++) {
		dra_v1_claim init = DRA_V1_CLAIM_INIT;

		pb[i] = init;
		pb[i].namespace_ = (char *)claims[i].namespace_;
		pb[i].uid = (char *)claims[i].uid;
		pb[i].name = (char *)claims[i].name;
		pbp[i] = &pb[i];
	}
	/* Prepare and unprepare requests have the same shape: repeated Claim = 1. */
	dra_v1_prepare_request preq = DRA_V1_PREPARE_REQUEST_INIT;
	dra_v1_unprepare_request ureq = DRA_V1_UNPREPARE_REQUEST_INIT;

	preq.n_claims = ureq.n_claims = n;
	preq.claims = ureq.claims = pbp;
	if (prepare)
		method = beta ? KUBELET_PATH_V1BETA1_PREPARE : KUBELET_PATH_V1_PREPARE;
	else
		method = beta ? KUBELET_PATH_V1BETA1_UNPREPARE : KUBELET_PATH_V1_UNPREPARE;
	if (ctl_call(o, method, prepare ? &preq.base : &ureq.base, &res))
		goto out;
	rc = prepare ? print_prepare(&res, n) : print_unprepare(&res, n);
	grpc_client_result_clear(&res);
out:
	if (root)
		json_object_put(root);
	free(pb);
	free(pbp);
	free(claims);
	return rc;
}

int cmd_ctl(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 't' },
		{ "service", required_argument, NULL, 'S' },
		{ "claim", required_argument, NULL, 'c' },
		{ "uid", required_argument, NULL, 'u' },
		{ "namespace", required_argument, NULL, 'n' },
		{ "name", required_argument, NULL, 'N' },
		{ "api", required_argument, NULL, 'a' },
		{ "concurrency", required_argument, NULL, 'C' },
		{ "rounds", required_argument, NULL, 'R' },
		{ "null", no_argument, NULL, '0' },
		{ "count", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctl_opts o = { .timeout_ms = 10000, .count = 1 };
	const char *sub;
	int c;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		ctl_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	sub = argv[1];
	optind = 0;	/* full getopt reset: cmd_ctl may run more than once */
	while ((c = getopt_long(argc - 1, argv + 1, "h", long_opts, NULL)) != -1) {
		switch (c) {
		case 's': o.socket = optarg; break;
		case 'S': o.service = optarg; break;
		case 'c': o.claim_file = optarg; break;
		case 'u': o.flag_claim.uid = optarg; break;
		case 'n': o.flag_claim.namespace_ = optarg; break;
		case 'N': o.flag_claim.name = optarg; break;
		case 'a': o.api = optarg; break;
		case 'C': o.concurrency = atoi(optarg); break;
		case 'R': o.rounds = atoi(optarg); break;
		case '0': o.null_calls = true; break;
		case 'k':
			o.count = atoi(optarg);
			if (o.count < 0 || strspn(optarg, "0123456789") != strlen(optarg)) {
				fprintf(stderr, "dralet ctl: bad --count '%s'\n", optarg);
				return 2;
			}
			break;
		case 't':
			if (parse_duration_ms(optarg, &o.timeout_ms) < 0 || o.timeout_ms == 0) {
				fprintf(stderr, "dralet ctl: bad --timeout '%s'\n", optarg);
				return 2;
			}
			o.timeout_given = true;
			break;
		case 'h': ctl_usage(stdout); return 0;
		default: ctl_usage(stderr); return 2;
		}
	}
	if (optind + 1 < argc) {
		fprintf(stderr, "dralet ctl: unexpected argument '%s'\n", argv[optind + 1]);
		return 2;
	}
	if (!o.socket) {
		fprintf(stderr, "dralet ctl: --socket is required\n");
		return 2;
	}
	if (o.api && strcmp(o.api, "v1") && strcmp(o.api, "v1beta1")) {
		fprintf(stderr, "dralet ctl: --api must be v1 or v1beta1\n");
		return 2;
	}
	if (!strcmp(sub, "info"))
		return ctl_info(&o);
	if (!strcmp(sub, "health"))
		return ctl_health(&o);
	if (!strcmp(sub, "bench"))
		return ctl_bench(&o);
	if (!strcmp(sub, "watch-health"))
		return ctl_watch_health(&o);
	if (!strcmp(sub, "prepare") || !strcmp(sub, "unprepare")) {
		bool flags = o.flag_claim.uid || o.flag_claim.namespace_ || o.flag_claim.name;

		if (o.claim_file && flags) {
			fprintf(stderr, "dralet ctl: use either --claim or --uid/--namespace/--name\n");
			return 2;
		}
		if (!o.claim_file && !(o.flag_claim.uid && o.flag_claim.namespace_ &&
				       o.flag_claim.name)) {
			fprintf(stderr, "dralet ctl: %s needs --claim FILE or all of --uid, "
					"--namespace and --name\n", sub);
			return 2;
		}
		return ctl_prepare(&o, !strcmp(sub, "prepare"));
	}
	fprintf(stderr, "dralet ctl: unknown subcommand '%s'\n\n", sub);
	ctl_usage(stderr);
	return 2;
}
