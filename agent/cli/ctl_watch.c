/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dralet ctl watch-health: v1alpha1.DRAResourceHealth/NodeWatchResources on
 * a DRA socket, as a kubelet with ResourceHealthStatus opens it. Prints each
 * message as one JSON object per line.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "agent/cli/ctl.h"
#include "agent/kubelet/grpc_client.h"
#include "proto/kubelet_pb.h"

struct watch {
	int wanted;		/* messages to print; 0: until the stream ends */
	int printed;
	bool unreadable;
};

static const char *health_status_name(int status)
{
	const ProtobufCEnumValue *v =
		protobuf_c_enum_descriptor_get_value(&v1alpha1__health_status__descriptor, status);
	return v ? v->name : "UNKNOWN";
}

static int print_message(void *userdata, const uint8_t *msg, size_t len)
{
	struct watch *w = userdata;
	health_watch_response *resp = v1alpha1__node_watch_resources_response__unpack(NULL, len,
										       msg);
	struct json_object *out, *devices;

	if (!resp) {
		w->unreadable = true;
		return -EBADMSG;
	}
	out = json_object_new_object();
	devices = json_object_new_array();
	for (size_t i = 0; i < resp->n_devices; i++) {
		const health_device *d = resp->devices[i];
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "pool", json_object_new_string(
			d->device && d->device->pool_name ? d->device->pool_name : ""));
		json_object_object_add(o, "device", json_object_new_string(
			d->device && d->device->device_name ? d->device->device_name : ""));
		json_object_object_add(o, "health", json_object_new_string(
			health_status_name(d->health)));
		json_object_object_add(o, "lastUpdatedTime", json_object_new_int64(
			d->last_updated_time));
		if (d->health_check_timeout_seconds)
			json_object_object_add(o, "healthCheckTimeoutSeconds",
					       json_object_new_int64(d->health_check_timeout_seconds));
		if (d->message && *d->message)
			json_object_object_add(o, "message", json_object_new_string(d->message));
		json_object_array_add(devices, o);
	}
	json_object_object_add(out, "devices", devices);
	printf("%s\n", json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN |
							   JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(stdout);
	json_object_put(out);
	v1alpha1__node_watch_resources_response__free_unpacked(resp, NULL);
	w->printed++;
	return w->wanted && w->printed >= w->wanted ? -ECANCELED : 0;	/* enough: hang up */
}

int ctl_watch_health(const struct ctl_opts *o)
{
	health_watch_request req = V1ALPHA1__NODE_WATCH_RESOURCES_REQUEST__INIT;
	struct watch w = { .wanted = o->count };
	struct grpc_client_call_opts call = {
		.path = KUBELET_PATH_WATCH_HEALTH,
		/* an open-ended watch has a deadline only when one was asked for */
		.timeout_ms = o->count || o->timeout_given ? o->timeout_ms : 0,
		.on_message = print_message,
		.userdata = &w,
	};
	uint8_t buf[16];	/* the request is empty */
	struct grpc_client_result res;
	struct grpc_client *client;
	int r;

	call.request = buf;
	call.request_len = protobuf_c_message_pack(&req.base, buf);
	r = grpc_client_connect(o->socket, o->timeout_ms, &client);
	if (r < 0) {
		fprintf(stderr, "dralet ctl: cannot connect to %s: %s\n", o->socket, strerror(-r));
		return 1;
	}
	r = grpc_client_invoke(client, &call, &res);
	grpc_client_free(client);
	if (r == -ECANCELED && w.wanted && w.printed >= w.wanted)
		return 0;
	if (r < 0) {
		fprintf(stderr, "dralet ctl: NodeWatchResources on %s: %s\n", o->socket,
			w.unreadable ? "cannot parse NodeWatchResourcesResponse" : strerror(-r));
		return 1;
	}
	r = res.status == GRPC_STATUS_OK ||
	    (res.status == GRPC_STATUS_DEADLINE_EXCEEDED && !w.wanted && w.printed);
	if (!r)
		fprintf(stderr, "dralet ctl: NodeWatchResources: %s: %s\n",
			grpc_status_name(res.status), res.message ? res.message : "");
	grpc_client_result_clear(&res);
	return r ? 0 : 1;
}
