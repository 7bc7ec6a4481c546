/* SPDX-License-Identifier: Apache-2.0 */
/* Shared devices (include/dralet/sharing.h): quantity values, request policy
 * rules and their canonical form, the slice JSON with and without the
 * DRAConsumableCapacity gate, and a server that drops the fields. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <dralet/sharing.h>

#include "agent/core/k8s_names.h"
#include "agent/slices/build.h"
#include "agent/slices/gates.h"
#include "agent/slices/record.h"
#include "harness.h"

static void test_quantity_value(void **state)
{
	static const struct {
		const char *q;
		int64_t v;
	} ok[] = { { "0", 0 }, { "1", 1 }, { "1Gi", 1073741824 }, { "80Gi", 85899345920 },
		   { "1.5Gi", 1610612736 }, { "1500m", 2 }, { "1k", 1000 }, { "2M", 2000000 },
		   { "1e3", 1000 }, { "100n", 1 }, { "0.5", 1 }, { "7Ei", 8070450532247928832 }, { "8Ei", -1 } };
	int64_t v;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		if (ok[i].v < 0) {
			assert_int_equal(k8s_quantity_value(ok[i].q, &v), -ERANGE);
			continue;
		}
		assert_int_equal(k8s_quantity_value(ok[i].q, &v), 0);
		assert_true(v == ok[i].v);
	}
	assert_int_equal(k8s_quantity_value("1 Gi", &v), -EINVAL);
	assert_int_equal(k8s_quantity_value("", &v), -EINVAL);
	assert_int_equal(k8s_quantity_value("-2", &v), 0);
	assert_true(v == -2);
}

static struct dralet_device *shared_gpu(struct harness *h)
{
	static struct dralet_pci_func f = { .address = "0000:3b:00.0", .vendor_id = 0x10de,
					    .device_id = 0x2330, .vf_index = -1 };
	struct dralet_device *d;

	assert_int_equal(harness_init(h, &harness_plain_backend, NULL, NULL), 0);
	h->ctx.sink = &h->sink;
	assert_int_equal(dralet_device_new(&h->ctx, &f, "gpu", NULL, &d), 0);
	assert_int_equal(dralet_device_set_capacity(d, "memory", "80Gi"), 0);
	assert_int_equal(dralet_device_set_capacity(d, "shares", "100"), 0);
	return d;
}

static void test_policy_rules(void **state)
{
	struct harness h;
	struct dralet_device *d = shared_gpu(&h);
	const char *asc[] = { "10", "25", "50", "100" }, *desc[] = { "50", "25" },
		   *eleven[] = { "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11" },
		   *big[] = { "10", "200" };
	struct dralet_capacity_policy values = { .default_value = "25", .valid_values = asc,
						 .n_valid_values = 4 };
	struct dralet_capacity_policy range = { .default_value = "8Gi", .range_min = "1Gi",
						.range_max = "80Gi", .range_step = "1Gi" };
	struct dralet_capacity_policy p;
	const struct dralet_capacity_policy *got;
	unsigned warnings;

	(void)state;
	/* a policy needs a shared device, and an existing capacity */
	assert_false(dralet_device_allows_multiple(d));
	assert_int_equal(dralet_device_set_capacity_policy(d, "shares", &values), -EPERM);
	assert_int_equal(dralet_device_allow_multiple(d), 0);
	assert_true(dralet_device_allows_multiple(d));
	assert_int_equal(dralet_device_set_capacity_policy(d, "cores", &values), -ENOENT);

	assert_int_equal(dralet_device_set_capacity_policy(d, "shares", &values), 0);
	assert_int_equal(dralet_device_set_capacity_policy(d, "memory", &range), 0);
	got = dralet_device_capacity_policy(d, "shares");
	assert_non_null(got);
	assert_int_equal(got->n_valid_values, 4);
	assert_string_equal(got->valid_values[3], "100");
	assert_string_equal(got->default_value, "25");
	got = dralet_device_capacity_policy(d, "memory");
	assert_string_equal(got->range_step, "1Gi");
	assert_null(dralet_device_capacity_policy(d, "cores"));

	warnings = h.ctx.warnings;
	/* validValues: ascending, at most 10, the default among them, within the capacity */
	p = (struct dralet_capacity_policy){ .default_value = "25", .valid_values = desc,
					     .n_valid_values = 2 };
	assert_int_equal(dralet_device_set_capacity_policy(d, "shares", &p), -EINVAL);
	p = (struct dralet_capacity_policy){ .default_value = "1", .valid_values = eleven,
					     .n_valid_values = 11 };
	assert_int_equal(dralet_device_set_capacity_policy(d, "shares", &p), -EINVAL);
	p.n_valid_values = 10;
	assert_int_equal(dralet_device_set_capacity_policy(d, "shares", &p), 0);
	p = (struct dralet_capacity_policy){ .default_value = "30", .valid_values = asc,
					     .n_valid_values = 4 };
	assert_int_equal(dralet_device_set_capacity_policy(d, "shares", &p), -EINVAL);
	p = (struct dralet_capacity_policy){ .default_value = "10", .valid_values = big,
					     .n_valid_values = 2 };
	assert_int_equal(dralet_device_set_capacity_policy(d, "shares", &p), -EINVAL);
	p = (struct dralet_capacity_policy){ .valid_values = asc, .n_valid_values = 4 };
	assert_int_equal(dralet_device_set_capacity_policy(d, "shares", &p), -EINVAL);
	/* one of validValues and validRange */
	p = values;
	p.range_min = "10";
	assert_int_equal(dralet_device_set_capacity_policy(d, "shares", &p), -EINVAL);
	/* validRange: min <= max <= value, step > 0, default inside and a multiple of step */
	p = range;
	p.range_min = "81Gi";
	assert_int_equal(dralet_device_set_capacity_policy(d, "memory", &p), -EINVAL);
	p = range;
	p.range_max = "96Gi";
	assert_int_equal(dralet_device_set_capacity_policy(d, "memory", &p), -EINVAL);
	p = range;
	p.range_min = "16Gi";
	assert_int_equal(dralet_device_set_capacity_policy(d, "memory", &p), -EINVAL);
	p = range;
	p.range_step = "0";
	assert_int_equal(dralet_device_set_capacity_policy(d, "memory", &p), -EINVAL);
	p = range;
	p.default_value = "1536Mi";
	assert_int_equal(dralet_device_set_capacity_policy(d, "memory", &p), -EINVAL);
	p = range;
	p.range_max = "79.5Gi";
	assert_int_equal(dralet_device_set_capacity_policy(d, "memory", &p), -EINVAL);
	p = range;
	p.default_value = "81Gi";
	p.range_max = NULL;
	assert_int_equal(dralet_device_set_capacity_policy(d, "memory", &p), -EINVAL);
	p = (struct dralet_capacity_policy){ .default_value = "1Gi", .range_max = "2Gi" };
	assert_int_equal(dralet_device_set_capacity_policy(d, "memory", &p), -EINVAL);
	assert_int_equal(h.ctx.warnings, warnings + 14);
	/* a refused policy left the stored one alone */
	assert_string_equal(dralet_device_capacity_policy(d, "memory")->default_value, "8Gi");

	/* quantities are stored canonical, as the server returns them */
	p = (struct dralet_capacity_policy){ .default_value = "1024Mi", .range_min = "1024Mi",
					     .range_step = "1024Mi" };
	assert_int_equal(dralet_device_set_capacity_policy(d, "memory", &p), 0);
	got = dralet_device_capacity_policy(d, "memory");
	assert_string_equal(got->default_value, "1Gi");
	assert_string_equal(got->range_min, "1Gi");
	assert_null(got->range_max);
	/* a default alone is a policy too */
	p = (struct dralet_capacity_policy){ .default_value = "1000" };
	assert_int_equal(dralet_device_set_capacity(d, "bandwidth", "10k"), 0);
	assert_int_equal(dralet_device_set_capacity_policy(d, "bandwidth", &p), 0);
	assert_string_equal(dralet_device_capacity_policy(d, "bandwidth")->default_value, "1k");
	harness_fini(&h);
}

static struct json_object *build_one(const struct slice_device_in *dev, bool gate)
{
	struct slice_options opts = { .device_taints = true, .consumable_capacity = gate };
	struct slice_list *list = NULL;
	struct json_object *arr = NULL;

	assert_int_equal(slice_build("gpu.dralet.dev", "node-1", NULL, dev, 1, &opts, NULL, NULL,
				     &list), 0);
	assert_int_equal(slice_list_to_json(list, &arr), 0);
	slice_list_unref(list);
	return arr;
}

static struct json_object *first_device(struct json_object *arr)
{
	struct json_object *spec, *devs;
	assert_true(json_object_object_get_ex(json_object_array_get_idx(arr, 0), "spec", &spec));
	assert_true(json_object_object_get_ex(spec, "devices", &devs));
	return json_object_array_get_idx(devs, 0);
}

static void test_slice_fields_and_gate(void **state)
{
	const char *values[] = { "10", "50", "100" };
	struct dralet_capacity_policy shares = { .default_value = "10", .valid_values = values,
						 .n_valid_values = 3 };
	struct dralet_capacity_policy bad = { .default_value = "200", .valid_values = values,
					      .n_valid_values = 3 };
	const struct dralet_capacity caps[] = { { "memory", "80Gi" }, { "shares", "100" } };
	const struct dralet_capacity_policy *policies[] = { NULL, &shares };
	struct slice_device_in dev = { .name = "gpu-0", .backend = "nvidia", .caps = caps,
				       .n_caps = 2, .allow_multiple = true,
				       .cap_policies = policies };
	struct json_object *arr, *d, *c, *p, *stored;
	unsigned gates, keys;

	(void)state;
	arr = build_one(&dev, true);
	d = first_device(arr);
	assert_true(json_object_object_get_ex(d, "allowMultipleAllocations", &c));
	assert_true(json_object_get_boolean(c));
	json_object_object_get_ex(d, "capacity", &c);
	assert_false(json_object_object_get_ex(json_object_object_get(c, "memory"),
					       "requestPolicy", NULL));
	assert_true(json_object_object_get_ex(json_object_object_get(c, "shares"), "requestPolicy",
					      &p));
	assert_string_equal(json_object_to_json_string_ext(p, JSON_C_TO_STRING_PLAIN),
			    "{\"default\":\"10\",\"validValues\":[\"10\",\"50\",\"100\"]}");
	slice_gates_of(json_object_array_get_idx(arr, 0), &gates, &keys);
	assert_int_equal(gates, SLICE_GATE_CONSUMABLE_CAPACITY);

	/* a 1.34 server stores the slice without them: noticed, and stripped
	 * from what is compared next time, so the two agree (no write loop) */
	stored = json_tokener_parse(json_object_to_json_string(json_object_array_get_idx(arr, 0)));
	slice_strip_gates(stored, SLICE_GATE_CONSUMABLE_CAPACITY);
	assert_int_equal(slice_dropped_gates(json_object_array_get_idx(arr, 0), stored),
			 SLICE_GATE_CONSUMABLE_CAPACITY);
	slice_gates_of(stored, &gates, &keys);
	assert_int_equal(gates | keys, 0);
	slice_strip_gates(json_object_array_get_idx(arr, 0), SLICE_GATE_CONSUMABLE_CAPACITY);
	assert_string_equal(json_object_to_json_string(json_object_array_get_idx(arr, 0)),
			    json_object_to_json_string(stored));
	json_object_put(stored);
	json_object_put(arr);

	/* the gate off in the config: neither field */
	arr = build_one(&dev, false);
	d = first_device(arr);
	assert_false(json_object_object_get_ex(d, "allowMultipleAllocations", NULL));
	json_object_object_get_ex(d, "capacity", &c);
	assert_false(json_object_object_get_ex(json_object_object_get(c, "shares"),
					       "requestPolicy", NULL));
	json_object_put(arr);

	/* a device not shared carries no policy (the API refuses one) */
	dev.allow_multiple = false;
	arr = build_one(&dev, true);
	d = first_device(arr);
	json_object_object_get_ex(d, "capacity", &c);
	assert_false(json_object_object_get_ex(json_object_object_get(c, "shares"),
					       "requestPolicy", NULL));
	json_object_put(arr);

	/* an invalid policy from elsewhere (a devices file) is left out */
	dev.allow_multiple = true;
	policies[1] = &bad;
	arr = build_one(&dev, true);
	d = first_device(arr);
	json_object_object_get_ex(d, "capacity", &c);
	assert_false(json_object_object_get_ex(json_object_object_get(c, "shares"),
					       "requestPolicy", NULL));
	assert_true(json_object_object_get_ex(d, "allowMultipleAllocations", NULL));
	json_object_put(arr);
}

static void test_config_gate(void **state)
{
	struct slice_options o;
	struct json_object *cfg;

	(void)state;
	assert_int_equal(slice_options_from_config(NULL, &o), 0);
	assert_true(o.consumable_capacity);
	cfg = json_tokener_parse("{\"featureGates\": {\"DRAConsumableCapacity\": false}}");
	assert_int_equal(slice_options_from_config(cfg, &o), 0);
	assert_false(o.consumable_capacity);
	json_object_put(cfg);
	cfg = json_tokener_parse("{\"featureGates\": {\"DRAConsumableCapacity\": 1}}");
	assert_int_equal(slice_options_from_config(cfg, &o), -EINVAL);
	json_object_put(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantity_value),
		cmocka_unit_test(test_policy_rules),
		cmocka_unit_test(test_slice_fields_and_gate),
		cmocka_unit_test(test_config_gate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
