/* SPDX-License-Identifier: Apache-2.0 */
/* The slice builder: sorting, splitting, limits, dropped attributes, options. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/slices/build.h"

struct warnings {
	int n;
	char last[512];
	char all[8192];
};

static void on_warn(void *userdata, const char *backend, const char *device, const char *what,
		    const char *problem)
{
	struct warnings *w = userdata;
	snprintf(w->last, sizeof(w->last), "%s|%s|%s|%s", backend, device, what ? what : "-", problem);
	size_t len = strlen(w->all);
	snprintf(w->all + len, sizeof(w->all) - len, "%s\n", w->last);
	w->n++;
}

/* build() with its records' texts parsed into one json array. */
static int build(const char *driver, const char *node, const char *uid,
		 const struct slice_device_in *devs, size_t n, const struct slice_options *opts,
		 slice_warn_fn warn, void *userdata, struct json_object **ret)
{
	struct slice_list *list = NULL;
	int r = slice_build(driver, node, uid, devs, n, opts, warn, userdata, &list);
	if (r == 0) {
		for (size_t i = 0; i < list->n; i++) {
			assert_int_equal(list->items[i]->kind, SLICE_RECORD_DESIRED);
			assert_int_equal(strlen(list->items[i]->text), list->items[i]->text_len);
		}
		assert_int_equal(slice_list_to_json(list, ret), 0);
		slice_list_unref(list);
	}
	return r;
}

static struct json_object *path(struct json_object *o, const char *p)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", p);
	for (char *tok = strtok(buf, "."); tok && o; tok = strtok(NULL, ".")) {
		if (tok[0] >= '0' && tok[0] <= '9')
			o = json_object_array_get_idx(o, (size_t)atoi(tok));
		else if (!json_object_object_get_ex(o, tok, &o))
			o = NULL;
	}
	return o;
}

static const char *pstr(struct json_object *o, const char *p)
{
	o = path(o, p);
	return o ? json_object_get_string(o) : NULL;
}

static long long pint(struct json_object *o, const char *p)
{
	o = path(o, p);
	return o ? json_object_get_int64(o) : -1;
}

/* n devices named gpu-<i> (zero-padded, in reverse order) with two attributes. */
static struct slice_device_in *make_devices(size_t n, char (**names)[32])
{
	static const struct dralet_attr attrs[] = {
		{ .name = "model", .type = DRALET_ATTR_STRING, .string_value = "H100" },
		{ .name = "resource.kubernetes.io/pcieRoot", .type = DRALET_ATTR_STRING,
		  .string_value = "pci0000:00" },
	};
	static const struct dralet_capacity caps[] = { { "memory", "80Gi" } };
	struct slice_device_in *d = calloc(n, sizeof(*d));
	*names = calloc(n, sizeof(**names));
	for (size_t i = 0; i < n; i++) {
		snprintf((*names)[i], sizeof((*names)[i]), "gpu-%04zu", n - 1 - i);
		d[i] = (struct slice_device_in){ .name = (*names)[i], .backend = "test",
						 .attrs = attrs, .n_attrs = 2, .caps = caps, .n_caps = 1 };
	}
	return d;
}

static void test_split_and_sort(void **state)
{
	(void)state;
	char(*names)[32];
	struct slice_device_in *devs = make_devices(300, &names);
	struct json_object *slices = NULL;
	struct warnings w = { 0 };
	assert_int_equal(build("gpu.dralet.dev", "node-1", "uid-1", devs, 300, NULL, on_warn, &w,
				     &slices), 0);
	assert_int_equal(w.n, 0);
	assert_int_equal(json_object_array_length(slices), 3);
	size_t expect[] = { 128, 128, 44 }, seen = 0;
	for (size_t s = 0; s < 3; s++) {
		struct json_object *sl = json_object_array_get_idx(slices, s);
		assert_string_equal(pstr(sl, "apiVersion"), "resource.k8s.io/v1");
		assert_string_equal(pstr(sl, "kind"), "ResourceSlice");
		assert_string_equal(pstr(sl, "metadata.generateName"), "node-1-gpu.dralet.dev-");
		assert_null(path(sl, "metadata.name"));
		assert_string_equal(pstr(sl, "metadata.ownerReferences.0.kind"), "Node");
		assert_string_equal(pstr(sl, "metadata.ownerReferences.0.name"), "node-1");
		assert_string_equal(pstr(sl, "metadata.ownerReferences.0.uid"), "uid-1");
		assert_true(json_object_get_boolean(path(sl, "metadata.ownerReferences.0.controller")));
		assert_string_equal(pstr(sl, "spec.driver"), "gpu.dralet.dev");
		assert_string_equal(pstr(sl, "spec.nodeName"), "node-1");
		assert_string_equal(pstr(sl, "spec.pool.name"), "node-1");
		assert_int_equal(pint(sl, "spec.pool.resourceSliceCount"), 3);
		assert_int_equal(pint(sl, "spec.pool.generation"), 0);
		struct json_object *devices = path(sl, "spec.devices");
		assert_int_equal(json_object_array_length(devices), expect[s]);
		for (size_t i = 0; i < expect[s]; i++, seen++) {
			char want[32];
			snprintf(want, sizeof(want), "gpu-%04zu", seen);
			assert_string_equal(pstr(json_object_array_get_idx(devices, i), "name"), want);
		}
	}
	struct json_object *d0 = path(slices, "0.spec.devices.0");
	assert_string_equal(pstr(d0, "attributes.model.string"), "H100");
	assert_string_equal(pstr(d0, "capacity.memory.value"), "80Gi");
	json_object_put(slices);
	free(devs);
	free(names);
}

static void test_exactly_128_and_empty(void **state)
{
	(void)state;
	char(*names)[32];
	struct slice_device_in *devs = make_devices(128, &names);
	struct json_object *slices = NULL;
	assert_int_equal(build("gpu.dralet.dev", "n", NULL, devs, 128, NULL, NULL, NULL, &slices), 0);
	assert_int_equal(json_object_array_length(slices), 1);
	assert_null(path(slices, "0.metadata.ownerReferences"));
	json_object_put(slices);
	assert_int_equal(build("gpu.dralet.dev", "n", NULL, devs, 129 - 1, NULL, NULL, NULL, &slices), 0);
	json_object_put(slices);
	assert_int_equal(build("gpu.dralet.dev", "n", NULL, NULL, 0, NULL, NULL, NULL, &slices), 0);
	assert_int_equal(json_object_array_length(slices), 0);
	json_object_put(slices);
	free(devs);
	free(names);
}

static void test_bad_names_fail_the_build(void **state)
{
	(void)state;
	struct json_object *slices = (struct json_object *)0x1;
	assert_int_equal(build("Not_A_Driver", "n", NULL, NULL, 0, NULL, NULL, NULL, &slices), -EINVAL);
	assert_int_equal(build("gpu.dralet.dev", "Node_1", NULL, NULL, 0, NULL, NULL, NULL, &slices), -EINVAL);
	assert_int_equal(build("gpu.dralet.dev", "", NULL, NULL, 0, NULL, NULL, NULL, &slices), -EINVAL);
	assert_ptr_equal(slices, (struct json_object *)0x1);
}

static void test_invalid_values_are_dropped(void **state)
{
	(void)state;
	char longstr[80];
	memset(longstr, 'x', 65);
	longstr[65] = '\0';
	struct dralet_attr attrs[] = {
		{ .name = "good", .type = DRALET_ATTR_INT, .int_value = 7 },
		{ .name = "bad name", .type = DRALET_ATTR_INT },
		{ .name = "a/b/c", .type = DRALET_ATTR_BOOL },
		{ .name = "Bad_Domain.x/id", .type = DRALET_ATTR_BOOL },
		{ .name = "waytoolongidentifier_abcdefghijklmnop", .type = DRALET_ATTR_BOOL },
		{ .name = "long", .type = DRALET_ATTR_STRING, .string_value = longstr },
		{ .name = "nostring", .type = DRALET_ATTR_STRING, .string_value = NULL },
		{ .name = "ver", .type = DRALET_ATTR_VERSION, .string_value = "535.104.05" },
		{ .name = "okver", .type = DRALET_ATTR_VERSION, .string_value = "1.2.3-rc.1+b5" },
		{ .name = "good", .type = DRALET_ATTR_INT, .int_value = 8 },
		{ .name = "gpu.dralet.dev/flag", .type = DRALET_ATTR_BOOL, .bool_value = true },
	};
	struct dralet_capacity caps[] = { { "memory", "80Gi" }, { "bogus", "eighty" }, { "x-y", "1" } };
	struct slice_device_in devs[] = {
		{ .name = "fpga-0", .backend = "xilinx", .attrs = attrs,
		  .n_attrs = sizeof(attrs) / sizeof(attrs[0]), .caps = caps, .n_caps = 3 },
		{ .name = "FPGA_1", .backend = "xilinx" },
		{ .name = NULL, .backend = "xilinx" },
		{ .name = "fpga-0", .backend = "other" },
		{ .name = "fpga-2" },
	};
	struct json_object *slices = NULL;
	struct warnings w = { 0 };
	assert_int_equal(build("fpga.dralet.dev", "node-1", NULL, devs, 5, NULL, on_warn, &w,
				     &slices), 0);
	/* each problem once, naming backend, device and attribute */
	const char *expect[] = {
		"xilinx|fpga-0|bogus|capacity value is not a Kubernetes quantity",
		"xilinx|fpga-0|x-y|invalid capacity name",
		"xilinx|fpga-0|bad name|invalid attribute name",
		"xilinx|fpga-0|a/b/c|invalid attribute name",
		"xilinx|fpga-0|Bad_Domain.x/id|invalid attribute name",
		"xilinx|fpga-0|waytoolongidentifier_abcdefghijklmnop|invalid attribute name",
		"xilinx|fpga-0|long|string value longer than 64 characters",
		"xilinx|fpga-0|nostring|string attribute without a value",
		"xilinx|fpga-0|ver|version is not semantic versioning",
		"xilinx|fpga-0|good|duplicate attribute name",
		"xilinx|FPGA_1|-|invalid device name",
		"xilinx|(unnamed)|-|invalid device name",
		"other|fpga-0|-|duplicate device name",
	};
	for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++)
		if (!strstr(w.all, expect[i]))
			fail_msg("missing warning '%s' in:\n%s", expect[i], w.all);
	assert_int_equal(w.n, (int)(sizeof(expect) / sizeof(expect[0])));
	assert_int_equal(json_object_array_length(slices), 1);
	struct json_object *devices = path(slices, "0.spec.devices");
	assert_int_equal(json_object_array_length(devices), 2);	/* fpga-0, fpga-2 */
	struct json_object *d = json_object_array_get_idx(devices, 0);
	assert_string_equal(pstr(d, "name"), "fpga-0");
	assert_int_equal(json_object_object_length(path(d, "attributes")), 3);
	assert_int_equal(pint(d, "attributes.good.int"), 7);
	assert_string_equal(pstr(d, "attributes.okver.version"), "1.2.3-rc.1+b5");
	assert_int_equal(json_object_object_length(path(d, "capacity")), 1);
	assert_string_equal(pstr(json_object_array_get_idx(devices, 1), "name"), "fpga-2");
	assert_null(path(json_object_array_get_idx(devices, 1), "attributes"));
	/* attribute keys come out sorted, like the apiserver returns maps */
	const char *prev = "";
	json_object_object_foreach(path(d, "attributes"), key, val) {
		(void)val;
		assert_true(strcmp(prev, key) < 0);
		prev = key;
	}
	json_object_put(slices);
}

static void test_32_attributes_and_capacities(void **state)
{
	(void)state;
	struct dralet_attr attrs[40];
	char names[40][16];
	for (int i = 0; i < 40; i++) {
		snprintf(names[i], sizeof(names[i]), "a%02d", i);
		attrs[i] = (struct dralet_attr){ .name = names[i], .type = DRALET_ATTR_INT, .int_value = i };
	}
	struct dralet_capacity caps[] = { { "memory", "1Gi" }, { "cores", "96" } };
	struct slice_device_in dev = { .name = "gpu-0", .backend = "b", .attrs = attrs, .n_attrs = 40,
				       .caps = caps, .n_caps = 2 };
	struct json_object *slices = NULL;
	struct warnings w = { 0 };
	assert_int_equal(build("gpu.dralet.dev", "n", NULL, &dev, 1, NULL, on_warn, &w, &slices), 0);
	struct json_object *d = path(slices, "0.spec.devices.0");
	assert_int_equal(json_object_object_length(path(d, "capacity")), 2);	/* capacities kept */
	assert_int_equal(json_object_object_length(path(d, "attributes")), 30);
	assert_int_equal(w.n, 10);
	assert_non_null(strstr(w.last, "b|gpu-0|a39|more than 32 attributes and capacities"));
	assert_non_null(path(d, "attributes.a29"));
	assert_null(path(d, "attributes.a30"));
	json_object_put(slices);
}

static void test_taints_only_when_enabled(void **state)
{
	(void)state;
	char(*names)[32];
	struct slice_device_in *devs = make_devices(100, &names);
	devs[3].unhealthy = true;	/* gpu-0096 */
	struct json_object *slices = NULL;
	assert_int_equal(build("gpu.dralet.dev", "n", NULL, devs, 100, NULL, NULL, NULL, &slices), 0);
	assert_int_equal(json_object_array_length(slices), 1);
	assert_null(path(slices, "0.spec.devices.96.taints"));
	json_object_put(slices);

	struct slice_options opts = { .device_taints = true };
	assert_int_equal(build("gpu.dralet.dev", "n", NULL, devs, 100, &opts, NULL, NULL, &slices), 0);
	/* with taints, at most 64 devices per slice (the 1.35 limit) */
	assert_int_equal(json_object_array_length(slices), 2);
	assert_int_equal(json_object_array_length(path(slices, "0.spec.devices")), 64);
	struct json_object *t = path(slices, "1.spec.devices.32.taints.0");
	assert_string_equal(pstr(path(slices, "1.spec.devices.32"), "name"), "gpu-0096");
	assert_string_equal(pstr(t, "key"), SLICE_TAINT_UNHEALTHY_KEY);
	assert_string_equal(pstr(t, "effect"), "NoSchedule");
	assert_null(path(t, "timeAdded"));
	assert_null(path(slices, "1.spec.devices.31.taints"));
	json_object_put(slices);

	/* a cause the agent found keys the taint */
	devs[3].taint_key = "dralet.dev/pcie-aer";
	assert_int_equal(build("gpu.dralet.dev", "n", NULL, devs, 100, &opts, NULL, NULL, &slices), 0);
	assert_string_equal(pstr(path(slices, "1.spec.devices.32.taints.0"), "key"),
			    "dralet.dev/pcie-aer");
	json_object_put(slices);
	free(devs);
	free(names);
}

static void test_max_devices_option(void **state)
{
	(void)state;
	struct slice_options opts = { .max_devices = 10 };
	assert_int_equal(slice_max_devices(&opts, false), 10);
	assert_int_equal(slice_max_devices(NULL, false), 128);
	assert_int_equal(slice_max_devices(NULL, true), 64);
	opts.max_devices = 1000;
	assert_int_equal(slice_max_devices(&opts, false), 128);
}

static void test_options_from_config(void **state)
{
	(void)state;
	struct slice_options o = { .device_taints = false, .max_devices = 3 };
	/* taints are on unless turned off (beta in 1.36, GA in 1.37) */
	assert_int_equal(slice_options_from_config(NULL, &o), 0);
	assert_true(o.device_taints);
	struct json_object *cfg = json_tokener_parse(
		"{\"featureGates\": {\"DRADeviceTaints\": false, \"SomethingElse\": false}}");
	assert_int_equal(slice_options_from_config(cfg, &o), 0);
	assert_false(o.device_taints);
	/* partitionable devices: on by default for the newest server (beta, on
	 * since 1.36), off for an older one unless the config says so */
	assert_true(o.partitionable);
	assert_int_equal(o.server_minor, 0);
	json_object_put(cfg);
	cfg = json_tokener_parse("{\"kubernetesVersion\": \"1.34\"}");
	assert_int_equal(slice_options_from_config(cfg, &o), 0);
	assert_false(o.partitionable);
	assert_int_equal(o.server_minor, 34);
	json_object_put(cfg);
	cfg = json_tokener_parse("{\"kubernetesVersion\": \"v1.34.3\", "
				 "\"featureGates\": {\"DRAPartitionableDevices\": true}}");
	assert_int_equal(slice_options_from_config(cfg, &o), 0);
	assert_true(o.partitionable);
	assert_int_equal(o.server_minor, 34);
	slice_options_for_server(&o, 37);	/* explicit stays */
	assert_true(o.partitionable);
	json_object_put(cfg);
	cfg = json_tokener_parse("{\"featureGates\": {\"DRAPartitionableDevices\": false}}");
	assert_int_equal(slice_options_from_config(cfg, &o), 0);
	slice_options_for_server(&o, 37);
	assert_false(o.partitionable);
	json_object_put(cfg);
	cfg = json_tokener_parse("{}");
	assert_int_equal(slice_options_from_config(cfg, &o), 0);
	slice_options_for_server(&o, 35);	/* alpha, off, in 1.35 */
	assert_false(o.partitionable);
	slice_options_for_server(&o, 36);
	assert_true(o.partitionable);
	json_object_put(cfg);
	cfg = json_tokener_parse("{\"kubernetesVersion\": \"2.1\"}");
	assert_int_equal(slice_options_from_config(cfg, &o), -EINVAL);
	json_object_put(cfg);
	cfg = json_tokener_parse("{\"featureGates\": {\"DRADeviceTaints\": \"yes\"}}");
	o.device_taints = false;
	assert_int_equal(slice_options_from_config(cfg, &o), -EINVAL);
	assert_false(o.device_taints);
	json_object_put(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_and_sort),
		cmocka_unit_test(test_exactly_128_and_empty),
		cmocka_unit_test(test_bad_names_fail_the_build),
		cmocka_unit_test(test_invalid_values_are_dropped),
		cmocka_unit_test(test_32_attributes_and_capacities),
		cmocka_unit_test(test_taints_only_when_enabled),
		cmocka_unit_test(test_max_devices_option),
		cmocka_unit_test(test_options_from_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
