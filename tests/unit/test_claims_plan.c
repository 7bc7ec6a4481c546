/* SPDX-License-Identifier: Apache-2.0 */
/* Claim -> prepare plan: config selection and claim validation (pure cores). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "agent/claims/claim_plan.h"
#include "agent/claims/config_select.h"
#include "agent/core/registry.h"

#define DRV "gpu.dralet.dev"
#define UID "0a1b2c3d-0000-4000-8000-123456789abc"

static struct json_object *parse(const char *text)
{
	struct json_object *o = json_tokener_parse(text);
	assert_non_null(o);
	return o;
}

static char *select_text(const char *configs_json, const char *driver, const char *request,
			 int *ret_applied)
{
	struct json_object *configs = configs_json ? parse(configs_json) : NULL, *params = NULL;
	char err[256] = "";
	char *out = NULL;
	int r = config_select(configs, driver, request, &params, NULL, err, sizeof(err));

	*ret_applied = r;
	if (params) {
		out = strdup(json_object_to_json_string_ext(params, JSON_C_TO_STRING_PLAIN));
		json_object_put(params);
	}
	json_object_put(configs);
	return out;
}

static void test_select_class_before_claim(void **state)
{
	/* the claim config comes first in the list but must still win over the class */
	const char *configs = "["
		"{\"source\":\"FromClaim\",\"requests\":[\"gpu\"],\"opaque\":{\"driver\":\"" DRV "\","
		"  \"parameters\":{\"sharing\":\"claim\"}}},"
		"{\"source\":\"FromClass\",\"opaque\":{\"driver\":\"" DRV "\","
		"  \"parameters\":{\"sharing\":\"class\",\"kind\":\"GpuConfig\"}}}]";
	int applied;
	char *t = select_text(configs, DRV, "gpu", &applied);

	(void)state;
	assert_int_equal(applied, 2);
	assert_string_equal(t, "{\"sharing\":\"claim\",\"kind\":\"GpuConfig\"}");
	free(t);
}

static void test_select_later_wins(void **state)
{
	const char *configs = "["
		"{\"source\":\"FromClaim\",\"opaque\":{\"driver\":\"" DRV "\",\"parameters\":{\"a\":1,\"b\":1}}},"
		"{\"source\":\"FromClaim\",\"opaque\":{\"driver\":\"" DRV "\",\"parameters\":{\"b\":2}}},"
		"{\"source\":\"FromClass\",\"opaque\":{\"driver\":\"" DRV "\",\"parameters\":{\"a\":0,\"c\":0}}},"
		"{\"source\":\"FromClass\",\"opaque\":{\"driver\":\"" DRV "\",\"parameters\":{\"c\":9}}}]";
	int applied;
	char *t = select_text(configs, DRV, "gpu", &applied);

	(void)state;
	assert_int_equal(applied, 4);
	assert_string_equal(t, "{\"a\":1,\"c\":9,\"b\":2}");
	free(t);
}

static void test_select_subrequest_matching(void **state)
{
	const char *configs = "["
		"{\"source\":\"FromClaim\",\"requests\":[\"gpu\"],\"opaque\":{\"driver\":\"" DRV "\",\"parameters\":{\"base\":true}}},"
		"{\"source\":\"FromClaim\",\"requests\":[\"gpu/big\"],\"opaque\":{\"driver\":\"" DRV "\",\"parameters\":{\"big\":true}}},"
		"{\"source\":\"FromClaim\",\"requests\":[\"gpu/small\"],\"opaque\":{\"driver\":\"" DRV "\",\"parameters\":{\"small\":true}}},"
		"{\"source\":\"FromClaim\",\"requests\":[\"other\"],\"opaque\":{\"driver\":\"" DRV "\",\"parameters\":{\"other\":true}}},"
		"{\"source\":\"FromClaim\",\"requests\":[],\"opaque\":{\"driver\":\"" DRV "\",\"parameters\":{\"all\":true}}}]";
	int applied;
	char *t;

	(void)state;
	t = select_text(configs, DRV, "gpu/big", &applied);
	assert_int_equal(applied, 3);
	assert_string_equal(t, "{\"base\":true,\"big\":true,\"all\":true}");
	free(t);
	t = select_text(configs, DRV, "gpu", &applied);
	assert_int_equal(applied, 2);
	assert_string_equal(t, "{\"base\":true,\"all\":true}");
	free(t);
	/* "gpu" must not match request "gpus" by prefix */
	t = select_text(configs, DRV, "gpus", &applied);
	assert_int_equal(applied, 1);
	assert_string_equal(t, "{\"all\":true}");
	free(t);
}

static void test_select_other_drivers_ignored(void **state)
{
	/* the other driver's config is even malformed: never looked at */
	const char *configs = "["
		"{\"source\":\"FromClaim\",\"opaque\":{\"driver\":\"net.dralet.dev\",\"parameters\":[1,2]}},"
		"{\"source\":\"Weird\",\"opaque\":{\"driver\":\"net.dralet.dev\",\"parameters\":{}}},"
		"{\"source\":\"FromClaim\"}]";
	int applied;
	char *t = select_text(configs, DRV, "gpu", &applied);

	(void)state;
	assert_int_equal(applied, 0);
	assert_null(t);
	t = select_text(NULL, DRV, "gpu", &applied);
	assert_int_equal(applied, 0);
	assert_null(t);
}

static void test_select_malformed(void **state)
{
	int applied;
	char *t;

	(void)state;
	t = select_text("[{\"source\":\"FromClaim\",\"opaque\":{\"driver\":\"" DRV "\",\"parameters\":\"x\"}}]",
			DRV, "gpu", &applied);
	assert_int_equal(applied, -EINVAL);
	assert_null(t);
	t = select_text("[{\"source\":\"FromSomewhere\",\"opaque\":{\"driver\":\"" DRV "\",\"parameters\":{}}}]",
			DRV, "gpu", &applied);
	assert_int_equal(applied, -EINVAL);
	t = select_text("[{\"requests\":[1],\"opaque\":{\"driver\":\"" DRV "\",\"parameters\":{}}}]",
			DRV, "gpu", &applied);
	assert_int_equal(applied, -EINVAL);
	t = select_text("{}", DRV, "gpu", &applied);
	assert_int_equal(applied, -EINVAL);
}

static void test_select_claim_keys(void **state)
{
	/* the class sets vlan and mtu and lets claims pick mac; the claim sets all three */
	struct json_object *configs = parse("["
		"{\"source\":\"FromClaim\",\"opaque\":{\"driver\":\"" DRV "\",\"parameters\":"
		"  {\"vlan\":2,\"mac\":\"m\",\"mtu\":1}}},"
		"{\"source\":\"FromClass\",\"opaque\":{\"driver\":\"" DRV "\",\"parameters\":"
		"  {\"vlan\":1,\"claimSettable\":[\"mac\"]}}}]");
	struct json_object *params = NULL, *keys = NULL;
	char err[256] = "";

	(void)state;
	assert_int_equal(config_select(configs, DRV, "gpu", &params, &keys, err, sizeof(err)), 2);
	assert_string_equal(json_object_to_json_string_ext(params, JSON_C_TO_STRING_PLAIN),
			    "{\"vlan\":2,\"mac\":\"m\",\"mtu\":1}");	/* no claimSettable */
	assert_string_equal(json_object_to_json_string_ext(keys, JSON_C_TO_STRING_PLAIN),
			    "[\"vlan\",\"mtu\"]");
	json_object_put(params);
	json_object_put(keys);
	json_object_put(configs);

	/* class configs only: no claim keys */
	configs = parse("[{\"source\":\"FromClass\",\"opaque\":{\"driver\":\"" DRV "\","
			"\"parameters\":{\"vlan\":1}}}]");
	assert_int_equal(config_select(configs, DRV, "gpu", &params, &keys, err, sizeof(err)), 1);
	assert_null(keys);
	json_object_put(params);
	json_object_put(configs);

	/* claimSettable from a claim, or not a list of names: malformed */
	configs = parse("[{\"source\":\"FromClaim\",\"opaque\":{\"driver\":\"" DRV "\","
			"\"parameters\":{\"claimSettable\":[\"vlan\"]}}}]");
	assert_int_equal(config_select(configs, DRV, "gpu", &params, &keys, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "config[0] (FromClaim): claimSettable is for DeviceClass"));
	json_object_put(configs);
	configs = parse("[{\"source\":\"FromClass\",\"opaque\":{\"driver\":\"" DRV "\","
			"\"parameters\":{\"claimSettable\":\"vlan\"}}}]");
	assert_int_equal(config_select(configs, DRV, "gpu", &params, &keys, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "claimSettable must be a list"));
	json_object_put(configs);
}

static void test_refused_key(void **state)
{
	static const struct dralet_config_key admin[] = { { "vlan", "w" }, { "trust", "t" },
							  { NULL, NULL } };
	char *claim_keys[] = { "mtu", "trust" };

	(void)state;
	assert_ptr_equal(config_refused_key(admin, claim_keys, 2, false), &admin[1]);
	assert_null(config_refused_key(admin, claim_keys, 2, true));	/* adminAccess */
	assert_null(config_refused_key(admin, claim_keys, 1, false));
	assert_null(config_refused_key(NULL, claim_keys, 2, false));
}

/* The in-tree backends keep the settings that reach beyond their device for the admin. */
static bool declares(const struct dralet_backend *b, const char *key)
{
	for (const struct dralet_config_key *k = b->admin_config_keys; k && k->name; k++)
		if (!strcmp(k->name, key))
			return k->why && *k->why;
	return false;
}

static void test_in_tree_admin_keys(void **state)
{
	static const char *const vf_backends[] = { "sriov", "nic-vf", "rdma" };
	static const char *const vf_keys[] = { "vlan", "trust", "spoofChk", "mac", "qos" };
	static const char *const fpga_backends[] = { "xrt", "dfl", "fpga-region" };
	struct registry *reg;

	(void)state;
	assert_int_equal(registry_new(NULL, NULL, NULL, &reg), 0);
	for (size_t i = 0; i < 3; i++) {
		const struct dralet_backend *b = registry_find(reg, vf_backends[i]);
		assert_non_null(b);
		for (size_t j = 0; j < 5; j++)
			assert_true(declares(b, vf_keys[j]));
		assert_false(declares(b, "driver"));
		b = registry_find(reg, fpga_backends[i]);
		assert_non_null(b);
		assert_true(declares(b, "managementAccess"));
		assert_false(declares(b, "requireShell"));
	}
	registry_free(reg);
}

static void test_base_request(void **state)
{
	char buf[16];

	(void)state;
	assert_int_equal(config_base_request("gpu/big", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "gpu");
	assert_int_equal(config_base_request("gpu", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "gpu");
	assert_int_equal(config_base_request("averyveryverylongname", buf, sizeof(buf)), -ENAMETOOLONG);
}

/* ---- claim validation ---- */

static const char *claim_json =
	"{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
	" \"metadata\":{\"name\":\"c\",\"namespace\":\"ns\",\"uid\":\"" UID "\"},"
	" \"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"x\"}}]}},"
	" \"status\":{\"allocation\":{\"devices\":{"
	"   \"results\":["
	"     {\"request\":\"gpu/big\",\"driver\":\"" DRV "\",\"pool\":\"node\",\"device\":\"gpu-0\"},"
	"     {\"request\":\"nic\",\"driver\":\"net.dralet.dev\",\"pool\":\"node\",\"device\":\"nic-0\"},"
	"     {\"request\":\"mon\",\"driver\":\"" DRV "\",\"pool\":\"node\",\"device\":\"gpu-1\",\"adminAccess\":true},"
	"     {\"request\":\"gpu2\",\"driver\":\"" DRV "\",\"pool\":\"node\",\"device\":\"gpu-0\"}],"
	"   \"config\":[{\"source\":\"FromClaim\",\"opaque\":{\"driver\":\"" DRV "\",\"parameters\":{\"k\":1}}}]"
	" }}}}";

static int build(const char *json, const char *uid, struct claim_plan **ret, char *err, size_t errlen)
{
	struct json_object *o = parse(json);
	int r = claim_plan_build(o, "ns", "c", uid, DRV, ret, err, errlen);

	json_object_put(o);
	return r;
}

static void test_plan_groups_devices(void **state)
{
	struct claim_plan *p = NULL;
	char err[256] = "";

	(void)state;
	assert_int_equal(build(claim_json, UID, &p, err, sizeof(err)), 0);
	assert_int_equal(p->n_devices, 2);
	assert_string_equal(p->devices[0].device, "gpu-0");
	assert_int_equal(p->devices[0].n_requests, 2);
	assert_string_equal(p->devices[0].requests[0], "gpu/big");
	assert_string_equal(p->devices[0].requests[1], "gpu2");
	assert_false(p->devices[0].admin_access);
	assert_string_equal(p->devices[0].config, "{\"k\":1}");
	assert_string_equal(p->devices[1].device, "gpu-1");
	assert_true(p->devices[1].admin_access);
	assert_string_equal(p->uid, UID);
	claim_plan_free(p);
}

static void test_plan_replaced_uid(void **state)
{
	struct claim_plan *p = NULL;
	char err[256] = "";

	(void)state;
	assert_int_equal(build(claim_json, "ffffffff-0000-4000-8000-000000000000", &p, err,
			       sizeof(err)), -ESTALE);
	assert_null(p);
	assert_non_null(strstr(err, "got replaced"));
	assert_non_null(strstr(err, UID));
}

static void test_plan_not_allocated(void **state)
{
	struct claim_plan *p = NULL;
	char err[256] = "";

	(void)state;
	assert_int_equal(build("{\"metadata\":{\"uid\":\"" UID "\"},\"status\":{}}", UID, &p, err,
			       sizeof(err)), -ENODATA);
	assert_non_null(strstr(err, "not allocated"));
	assert_int_equal(build("{\"metadata\":{\"uid\":\"" UID "\"}}", UID, &p, err, sizeof(err)),
			 -ENODATA);
	assert_int_equal(build("{\"metadata\":{\"uid\":\"" UID "\"},\"status\":{\"allocation\":null}}",
			       UID, &p, err, sizeof(err)), -ENODATA);
}

static void test_plan_malformed(void **state)
{
	struct claim_plan *p = NULL;
	char err[256] = "";

	(void)state;
	assert_int_equal(build("{\"metadata\":{\"uid\":\"" UID "\"},\"status\":{\"allocation\":"
			       "{\"devices\":{\"results\":[{\"driver\":\"" DRV "\",\"request\":\"r\"}]}}}}",
			       UID, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "results[0]"));
	assert_int_equal(build("{\"metadata\":{\"uid\":\"" UID "\"},\"status\":{\"allocation\":"
			       "{\"devices\":{\"results\":[{\"request\":\"r\",\"pool\":\"p\",\"device\":\"d\"}]}}}}",
			       UID, &p, err, sizeof(err)), -EINVAL);
	assert_int_equal(build("{\"metadata\":{\"uid\":\"" UID "\"},\"status\":{\"allocation\":"
			       "{\"devices\":{\"results\":{}}}}}", UID, &p, err, sizeof(err)), -EINVAL);
	/* a bad config for our driver names the problem */
	assert_int_equal(build("{\"metadata\":{\"uid\":\"" UID "\"},\"status\":{\"allocation\":"
			       "{\"devices\":{\"results\":[{\"request\":\"r\",\"driver\":\"" DRV "\",\"pool\":\"p\",\"device\":\"d\"}],"
			       "\"config\":[{\"opaque\":{\"driver\":\"" DRV "\",\"parameters\":5}}]}}}}",
			       UID, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "parameters"));
}

static void test_plan_conflicting_configs_for_one_device(void **state)
{
	struct claim_plan *p = NULL;
	char err[256] = "";

	(void)state;
	assert_int_equal(build("{\"metadata\":{\"uid\":\"" UID "\"},\"status\":{\"allocation\":"
			       "{\"devices\":{\"results\":["
			       "{\"request\":\"a\",\"driver\":\"" DRV "\",\"pool\":\"p\",\"device\":\"d\"},"
			       "{\"request\":\"b\",\"driver\":\"" DRV "\",\"pool\":\"p\",\"device\":\"d\"}],"
			       "\"config\":[{\"requests\":[\"a\"],\"opaque\":{\"driver\":\"" DRV "\",\"parameters\":{}}}]}}}}",
			       UID, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "different configs"));
}

static void test_plan_no_devices_for_driver(void **state)
{
	struct claim_plan *p = NULL;
	char err[256] = "";

	(void)state;
	assert_int_equal(build("{\"metadata\":{\"uid\":\"" UID "\"},\"status\":{\"allocation\":"
			       "{\"devices\":{\"results\":[{\"request\":\"r\",\"driver\":\"x.example.com\","
			       "\"pool\":\"p\",\"device\":\"d\"}]}}}}", UID, &p, err, sizeof(err)), 0);
	assert_int_equal(p->n_devices, 0);
	claim_plan_free(p);
}

static void test_plan_shares(void **state)
{
	/* two shares of one device are two entries; an exclusive result of
	 * another device is merged by device as before */
	struct json_object *claim = parse(
		"{\"metadata\":{\"uid\":\"" UID "\"},\"status\":{\"allocation\":{\"devices\":{"
		"\"results\":["
		"{\"request\":\"a\",\"driver\":\"" DRV "\",\"pool\":\"p\",\"device\":\"gpu-0\","
		" \"shareID\":\"5a5a-1\",\"consumedCapacity\":{\"memory\":\"8Gi\",\"shares\":\"1\"}},"
		"{\"request\":\"b\",\"driver\":\"" DRV "\",\"pool\":\"p\",\"device\":\"gpu-0\","
		" \"shareID\":\"5b5b-2\",\"consumedCapacity\":{\"memory\":\"16Gi\"}},"
		"{\"request\":\"c\",\"driver\":\"" DRV "\",\"pool\":\"p\",\"device\":\"gpu-1\"},"
		"{\"request\":\"d\",\"driver\":\"" DRV "\",\"pool\":\"p\",\"device\":\"gpu-1\"}"
		"]}}}}");
	struct claim_plan *plan = NULL;
	char err[256] = "";

	(void)state;
	assert_int_equal(claim_plan_build(claim, "ns", "c", UID, DRV, &plan, err, sizeof(err)), 0);
	assert_int_equal(plan->n_devices, 3);
	assert_string_equal(plan->devices[0].share_id, "5a5a-1");
	assert_int_equal(plan->devices[0].n_consumed, 2);
	assert_string_equal(plan->devices[0].consumed[0].name, "memory");
	assert_string_equal(plan->devices[0].consumed[0].quantity, "8Gi");
	assert_string_equal(plan->devices[1].share_id, "5b5b-2");
	assert_string_equal(plan->devices[1].requests[0], "b");
	assert_null(plan->devices[2].share_id);
	assert_int_equal(plan->devices[2].n_requests, 2);
	claim_plan_free(plan);
	json_object_put(claim);

	/* one share allocated twice, a bad shareID, a consumed amount that is no quantity */
	static const char *const bad[] = {
		"{\"request\":\"a\",\"driver\":\"" DRV "\",\"pool\":\"p\",\"device\":\"g\","
		"\"shareID\":\"s1\"},{\"request\":\"b\",\"driver\":\"" DRV "\",\"pool\":\"p\","
		"\"device\":\"g\",\"shareID\":\"s1\"}",
		"{\"request\":\"a\",\"driver\":\"" DRV "\",\"pool\":\"p\",\"device\":\"g\","
		"\"shareID\":\"../x\"}",
		"{\"request\":\"a\",\"driver\":\"" DRV "\",\"pool\":\"p\",\"device\":\"g\","
		"\"shareID\":\"s1\",\"consumedCapacity\":{\"memory\":\"lots\"}}",
	};
	static const char *const why[] = { "is allocated twice", "shareID is not",
					    "is not a quantity" };
	for (size_t i = 0; i < 3; i++) {
		char text[1024];
		snprintf(text, sizeof(text), "{\"metadata\":{\"uid\":\"" UID "\"},\"status\":"
			 "{\"allocation\":{\"devices\":{\"results\":[%s]}}}}", bad[i]);
		claim = parse(text);
		plan = NULL;
		assert_int_equal(claim_plan_build(claim, "ns", "c", UID, DRV, &plan, err,
						  sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, why[i]));
		json_object_put(claim);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_select_class_before_claim),
		cmocka_unit_test(test_select_later_wins),
		cmocka_unit_test(test_select_subrequest_matching),
		cmocka_unit_test(test_select_other_drivers_ignored),
		cmocka_unit_test(test_select_malformed),
		cmocka_unit_test(test_select_claim_keys),
		cmocka_unit_test(test_refused_key),
		cmocka_unit_test(test_in_tree_admin_keys),
		cmocka_unit_test(test_base_request),
		cmocka_unit_test(test_plan_groups_devices),
		cmocka_unit_test(test_plan_replaced_uid),
		cmocka_unit_test(test_plan_not_allocated),
		cmocka_unit_test(test_plan_malformed),
		cmocka_unit_test(test_plan_conflicting_configs_for_one_device),
		cmocka_unit_test(test_plan_no_devices_for_driver),
		cmocka_unit_test(test_plan_shares),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
