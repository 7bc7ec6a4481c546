/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/kubelet/dra_service.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/claims/engine.h"
#include "agent/kubelet/grpc_server.h"
#include "agent/lib/log.h"
#include "proto/kubelet_pb.h"

/* The request shapes of prepare and unprepare are the same message. */
typedef dra_v1_prepare_request claims_request;

static void reply_bytes(struct grpc_call *call, const ProtobufCMessage *msg)
{
	size_t len = protobuf_c_message_get_packed_size(msg);
	uint8_t *buf = malloc(len ? len : 1);

	if (!buf) {
		grpc_call_reply(call, GRPC_STATUS_RESOURCE_EXHAUSTED, NULL, 0, "out of memory");
		return;
	}
	protobuf_c_message_pack(msg, buf);
	grpc_call_reply(call, GRPC_STATUS_OK, buf, len, NULL);
	free(buf);
}

static void on_prepared(void *userdata, const struct claims_result *res, size_t n)
{
	struct grpc_call *call = userdata;
	dra_v1_prepare_response resp = DRA_V1_PREPARE_RESPONSE_INIT;
	dra_v1_prepare_entry *entries = calloc(n + 1, sizeof(*entries));
	dra_v1_prepare_entry **entry_ptrs = calloc(n + 1, sizeof(*entry_ptrs));
	dra_v1_prepare_result *values = calloc(n + 1, sizeof(*values));
	size_t total = 0;
	dra_v1_device *devs, **dev_ptrs;

	for (size_t i = 0; i < n; i++)
		total += res[i].n_devices;
	devs = calloc(total + 1, sizeof(*devs));
	dev_ptrs = calloc(total + 1, sizeof(*dev_ptrs));
	if (!entries || !entry_ptrs || !values || !devs || !dev_ptrs) {
		grpc_call_reply(call, GRPC_STATUS_RESOURCE_EXHAUSTED, NULL, 0, "out of memory");
		goto out;
	}
	total = 0;
	for (size_t i = 0; i < n; i++) {
		dra_v1_prepare_entry init_entry = DRA_V1_PREPARE_ENTRY_INIT;
		dra_v1_prepare_result init_value = DRA_V1_PREPARE_RESULT_INIT;

		entries[i] = init_entry;
		values[i] = init_value;
		entries[i].key = (char *)res[i].uid;
		entries[i].value = &values[i];
		entry_ptrs[i] = &entries[i];
		if (res[i].error) {
			values[i].error = (char *)res[i].error;
			continue;
		}
		values[i].devices = &dev_ptrs[total];
		values[i].n_devices = res[i].n_devices;
		for (size_t j = 0; j < res[i].n_devices; j++) {
			const struct claims_device_result *d = &res[i].devices[j];
			dra_v1_device init_dev = DRA_V1_DEVICE_INIT;

			devs[total] = init_dev;
			devs[total].pool_name = (char *)d->pool;
			devs[total].device_name = (char *)d->device;
			if (d->share_id) {
				devs[total]._share_id_case = DRA_V1_DEVICE_SHARE_ID_SET;
				devs[total].share_id = (char *)d->share_id;
			}
			devs[total].request_names = (char **)d->request_names;
			devs[total].n_request_names = d->n_request_names;
			devs[total].cdi_device_ids = (char **)d->cdi_ids;
			devs[total].n_cdi_device_ids = d->n_cdi_ids;
			dev_ptrs[total] = &devs[total];
			total++;
		}
	}
	resp.claims = entry_ptrs;
	resp.n_claims = n;
	reply_bytes(call, &resp.base);
out:
	free(entries);
	free(entry_ptrs);
	free(values);
	free(devs);
	free(dev_ptrs);
}

static void on_unprepared(void *userdata, const struct claims_result *res, size_t n)
{
	struct grpc_call *call = userdata;
	dra_v1_unprepare_response resp = DRA_V1_UNPREPARE_RESPONSE_INIT;
	dra_v1_unprepare_entry *entries = calloc(n + 1, sizeof(*entries));
	dra_v1_unprepare_entry **entry_ptrs = calloc(n + 1, sizeof(*entry_ptrs));
	dra_v1_unprepare_result *values = calloc(n + 1, sizeof(*values));

	if (!entries || !entry_ptrs || !values) {
		grpc_call_reply(call, GRPC_STATUS_RESOURCE_EXHAUSTED, NULL, 0, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		dra_v1_unprepare_entry init_entry = DRA_V1_UNPREPARE_ENTRY_INIT;
		dra_v1_unprepare_result init_value = DRA_V1_UNPREPARE_RESULT_INIT;

		entries[i] = init_entry;
		values[i] = init_value;
		entries[i].key = (char *)res[i].uid;
		entries[i].value = &values[i];
		if (res[i].error)
			values[i].error = (char *)res[i].error;
		entry_ptrs[i] = &entries[i];
	}
	resp.claims = entry_ptrs;
	resp.n_claims = n;
	reply_bytes(call, &resp.base);
out:
	free(entries);
	free(entry_ptrs);
	free(values);
}

static void handle(struct grpc_call *call, const uint8_t *request, size_t len,
		   struct claims_engine *e, bool unprepare)
{
	const ProtobufCMessageDescriptor *desc = unprepare ? &dra_v1_unprepare_request_descriptor
							   : &dra_v1_prepare_request_descriptor;
	claims_request *req;
	struct claims_ref *refs;
	int r;

	req = (claims_request *)protobuf_c_message_unpack(desc, NULL, len,
							  request ? request : (const uint8_t *)"");
	if (!req) {
		grpc_call_reply(call, GRPC_STATUS_INVALID_ARGUMENT, NULL, 0,
				"the request is not a valid Node(Un)PrepareResourcesRequest");
		return;
	}
	refs = calloc(req->n_claims + 1, sizeof(*refs));
	if (!refs) {
		protobuf_c_message_free_unpacked(&req->base, NULL);
		grpc_call_reply(call, GRPC_STATUS_RESOURCE_EXHAUSTED, NULL, 0, "out of memory");
		return;
	}
	for (size_t i = 0; i < req->n_claims; i++) {
		refs[i].namespace_ = req->claims[i]->namespace_;
		refs[i].name = req->claims[i]->name;
		refs[i].uid = req->claims[i]->uid;
	}
	/* the engine copies the refs; its callback may run before this returns */
	r = unprepare ? claims_unprepare(e, refs, req->n_claims, on_unprepared, call)
		      : claims_prepare(e, refs, req->n_claims, on_prepared, call);
	free(refs);
	protobuf_c_message_free_unpacked(&req->base, NULL);
	if (r < 0)
		grpc_call_reply(call, GRPC_STATUS_RESOURCE_EXHAUSTED, NULL, 0, "out of memory");
}

static void on_prepare(struct grpc_call *call, const uint8_t *request, size_t len, void *userdata)
{
	handle(call, request, len, userdata, false);
}

static void on_unprepare(struct grpc_call *call, const uint8_t *request, size_t len,
			 void *userdata)
{
	handle(call, request, len, userdata, true);
}

int dra_service_register(struct grpc_server *srv, struct claims_engine *engine)
{
	static const struct {
		const char *path;
		bool unprepare;
	} methods[] = {
		{ KUBELET_PATH_V1_PREPARE, false },
		{ KUBELET_PATH_V1_UNPREPARE, true },
		{ KUBELET_PATH_V1BETA1_PREPARE, false },
		{ KUBELET_PATH_V1BETA1_UNPREPARE, true },
	};

	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		int r = grpc_server_add_method(srv, methods[i].path, GRPC_UNARY,
					       methods[i].unprepare ? on_unprepare : on_prepare,
					       engine);
		if (r < 0)
			return r;
	}
	return 0;
}
