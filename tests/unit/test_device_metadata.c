/* SPDX-License-Identifier: Apache-2.0 */
/* Device metadata files (KEP-5304): paths, names refused as path components,
 * and removing the files of claims nobody knows. The content and the mounts are
 * tested through the engine (test_claims_engine.c, test_device_metadata). */
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
	assert_int_equal(device_metadata_write(dir, &kept, "r1", "{}\n"), 0);
	assert_int_equal(device_metadata_write(dir, &kept, "r2/sub", "{}\n"), 0);
	assert_int_equal(device_metadata_write(dir, &gone, "r1", "{}\n"), 0);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_refused_names),
		cmocka_unit_test(test_write_and_remove),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
