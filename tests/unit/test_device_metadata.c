/* SPDX-License-Identifier: Apache-2.0 */
/* Device metadata files (KEP-5304): paths, names refused as path components,
 * and removing the files of claims nobody knows. The content and the mounts are
 * tested through the engine (test_claims_engine.c, test_device_metadata); here
 * also the claim device status entries (KEP-4817) with their networkData. */
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

#include "agent/claims/device_metadata.h"
#include "agent/claims/device_status.h"
#include "harness.h"
#include "agent/lib/atomic_file.h"

#define DRV "net.dralet.dev"

static void test_paths(void **state)
{
	struct device_metadata_claim c = { DRV, "team-a", "nic", "uid-1", NULL };
	char buf[4096];

	(void)state;
	assert_int_equal(device_metadata_host_path("/var/lib/kubelet/plugins/" DRV, &c, "vf/fast",
						   buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/var/lib/kubelet/plugins/" DRV
			    "/dra-device-metadata/team-a_nic/vf/metadata.json");
	assert_int_equal(device_metadata_container_path(&c, "vf/fast", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/var/run/kubernetes.io/dra-device-attributes/resourceclaims/"
			    "nic/vf/" DRV "-metadata.json");
	c.pod_claim_name = "my-nic";
	assert_int_equal(device_metadata_container_path(&c, "vf", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/var/run/kubernetes.io/dra-device-attributes/"
			    "resourceclaimtemplates/my-nic/vf/" DRV "-metadata.json");
	/* the host side always uses the claim's own name */
	assert_int_equal(device_metadata_host_path("/s", &c, "vf", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/s/dra-device-metadata/team-a_nic/vf/metadata.json");
	assert_int_equal(device_metadata_host_path("/s", &c, "vf", buf, 20), -ENAMETOOLONG);
}

static void test_refused_names(void **state)
{
	struct device_metadata_claim c = { DRV, "ns", "claim", "uid", NULL };
	char buf[4096];

	(void)state;
	assert_int_equal(device_metadata_host_path("relative", &c, "r", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(device_metadata_host_path("/s", &c, "", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(device_metadata_host_path("/s", &c, "..", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(device_metadata_host_path("/s", &c, "/x", buf, sizeof(buf)), -EINVAL);
	c.name = "..";
	assert_int_equal(device_metadata_host_path("/s", &c, "r", buf, sizeof(buf)), -EINVAL);
	c.name = "a/b";
	assert_int_equal(device_metadata_host_path("/s", &c, "r", buf, sizeof(buf)), -EINVAL);
	c.name = "claim";
	c.pod_claim_name = "../etc";
	assert_int_equal(device_metadata_container_path(&c, "r", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(device_metadata_remove("/s", "", "claim"), -EINVAL);
}

static int keep_ns_kept(void *userdata, const char *ns_name)
{
	(void)userdata;
	return !strcmp(ns_name, "ns_kept");
}

static void test_write_and_remove(void **state)
{
	char dir[] = "/tmp/dralet-test-metadata.XXXXXX", path[4096];
	struct device_metadata_claim kept = { DRV, "ns", "kept", "u1", NULL };
	struct device_metadata_claim gone = { DRV, "ns", "gone", "u2", NULL };
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(device_metadata_write(dir, &kept, "r1", "{}\n", ATOMIC_FILE_SYNC_NONE), 0);
	assert_int_equal(device_metadata_write(dir, &kept, "r2/sub", "{}\n", ATOMIC_FILE_SYNC_NONE), 0);
	assert_int_equal(device_metadata_write(dir, &gone, "r1", "{}\n", ATOMIC_FILE_SYNC_NONE), 0);
	assert_int_equal(device_metadata_remove_others(dir, keep_ns_kept, NULL), 1);
	snprintf(path, sizeof(path), "%s/dra-device-metadata/ns_gone", dir);
	assert_int_equal(stat(path, &st), -1);
	snprintf(path, sizeof(path), "%s/dra-device-metadata/ns_kept/r2/metadata.json", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(device_metadata_remove(dir, "ns", "kept"), 0);
	assert_int_equal(device_metadata_remove(dir, "ns", "kept"), 0);	/* none: fine */
	snprintf(path, sizeof(path), "%s/dra-device-metadata", dir);
	assert_int_equal(rmdir(path), 0);	/* nothing left below it */
	assert_int_equal(device_metadata_remove_others(dir, keep_ns_kept, NULL), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* Removal by request names: every file and directory of the named requests, then
 * the claim's directory; what is not named (another request, a crash's temporary
 * file) is removed too, by listing. */
static void test_remove_requests(void **state)
{
	char dir[] = "/tmp/dralet-test-metadata.XXXXXX", path[4096];
	struct device_metadata_claim c = { DRV, "ns", "c", "u1", NULL };
	const char *both[] = { "r1", "r2/sub", "r2/other" }, *one[] = { "r1" };
	struct stat st;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(device_metadata_write(dir, &c, "r1", "{}\n", ATOMIC_FILE_SYNC_DIR), 0);
	assert_int_equal(device_metadata_write(dir, &c, "r2/sub", "{}\n", ATOMIC_FILE_SYNC_FILE), 0);
	assert_int_equal(device_metadata_remove_requests(dir, "ns", "c", both, 3), 0);
	snprintf(path, sizeof(path), "%s/dra-device-metadata/ns_c", dir);
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(device_metadata_remove_requests(dir, "ns", "c", both, 3), 0); /* none */

	assert_int_equal(device_metadata_write(dir, &c, "r1", "{}\n", ATOMIC_FILE_SYNC_NONE), 0);
	assert_int_equal(device_metadata_write(dir, &c, "r2", "{}\n", ATOMIC_FILE_SYNC_NONE), 0);
	snprintf(path, sizeof(path), "%s/dra-device-metadata/ns_c/r1/.metadata.json.AbC123", dir);
	assert_non_null(f = fopen(path, "w"));
	fclose(f);
	assert_int_equal(device_metadata_remove_requests(dir, "ns", "c", one, 1), 0);
	snprintf(path, sizeof(path), "%s/dra-device-metadata/ns_c", dir);
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(device_metadata_remove_requests(dir, "", "c", one, 1), -EINVAL);
	snprintf(path, sizeof(path), "%s/dra-device-metadata", dir);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

static const char *field(struct json_object *o, const char *a, const char *b)
{
	struct json_object *v = NULL;

	if (!json_object_object_get_ex(o, a, &v) || (b && !json_object_object_get_ex(v, b, &v)))
		return NULL;
	return json_object_get_string(v);
}

/* One entry per device; a NIC's entry carries its interface and MAC, a device
 * without either has no networkData. */
static void test_status_entries(void **state)
{
	struct dralet_pci_func f = { .address = "0000:17:00.1", .vf_index = -1 };
	struct dralet_device *nic, *gpu;
	struct harness h;

	(void)state;
	assert_int_equal(harness_init(&h, &harness_plain_backend, NULL, NULL), 0);
	h.ctx.sink = &h.sink;
	assert_int_equal(dralet_device_new(&h.ctx, &f, "vf", NULL, &nic), 0);
	assert_int_equal(dralet_device_set_string(nic, "ifName", "ens1f0v1"), 0);
	assert_int_equal(dralet_device_set_string(nic, "mac", "02:00:00:00:01:01"), 0);
	assert_int_equal(dralet_device_new(&h.ctx, &f, "gpu", NULL, &gpu), 0);
	/* the GPU is a share of a shared device: its entry names the share */
	const struct device_metadata_device devs[] = {
		{ "node-1", nic, NULL },
		{ "node-1", gpu, "5a5a5a5a-0000-4000-8000-00000000000a" },
	};
	struct json_object *list = device_status_entries(DRV, "node-1", devs, 2, 1796305200);

	assert_non_null(list);
	assert_int_equal(json_object_array_length(list), 2);
	struct json_object *e0 = json_object_array_get_idx(list, 0);
	struct json_object *e1 = json_object_array_get_idx(list, 1);
	assert_string_equal(field(e0, "driver", NULL), DRV);
	assert_string_equal(field(e0, "pool", NULL), "node-1");
	assert_string_equal(field(e0, "device", NULL), "vf-0000-17-00-1");
	assert_string_equal(field(e0, "networkData", "interfaceName"), "ens1f0v1");
	assert_string_equal(field(e0, "networkData", "hardwareAddress"), "02:00:00:00:01:01");
	struct json_object *conds = NULL, *c;
	assert_true(json_object_object_get_ex(e0, "conditions", &conds));
	assert_int_equal(json_object_array_length(conds), 1);
	c = json_object_array_get_idx(conds, 0);
	assert_string_equal(field(c, "type", NULL), "Ready");
	assert_string_equal(field(c, "status", NULL), "True");
	assert_string_equal(field(c, "reason", NULL), "Prepared");
	assert_string_equal(field(c, "message", NULL), "prepared on node node-1");
	assert_string_equal(field(c, "lastTransitionTime", NULL), "2026-12-03T13:40:00Z");
	assert_null(field(e1, "networkData", NULL));
	assert_null(field(e0, "shareID", NULL));
	assert_string_equal(field(e1, "shareID", NULL), "5a5a5a5a-0000-4000-8000-00000000000a");
	json_object_put(list);
	harness_fini(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_refused_names),
		cmocka_unit_test(test_write_and_remove),
		cmocka_unit_test(test_remove_requests),
		cmocka_unit_test(test_status_entries),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
