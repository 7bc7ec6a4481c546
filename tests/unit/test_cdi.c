/* SPDX-License-Identifier: Apache-2.0 */
/* CDI naming rules, minimum versions and spec rendering (cdi.md sections 1-3, 5). */
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
#include <json-c/json.h>

#include "agent/claims/cdi_files.h"
#include "agent/claims/cdi_names.h"
#include "agent/claims/cdi_spec.h"
#include "agent/core/edits.h"

#define UID "0a1b2c3d-0000-4000-8000-123456789abc"

static void test_vendor_and_class_rules(void **state)
{
	(void)state;
	assert_true(cdi_vendor_valid("k8s.gpu.dralet.dev"));
	assert_true(cdi_vendor_valid("vendor_1-x.y"));
	assert_false(cdi_vendor_valid(""));
	assert_false(cdi_vendor_valid("1vendor"));	/* must start with a letter */
	assert_false(cdi_vendor_valid("vendor."));	/* must end with a letter or digit */
	assert_false(cdi_vendor_valid("ven/dor"));
	assert_false(cdi_vendor_valid("ven dor"));
	assert_true(cdi_class_valid("gpu", false));
	assert_true(cdi_class_valid("sr_iov-1", false));
	assert_false(cdi_class_valid("gpu.x", false));	/* dots only from 0.6.0 */
	assert_true(cdi_class_valid("gpu.x", true));
	assert_false(cdi_class_valid("3d", false));
	assert_string_equal(cdi_class_of_family("fpga"), "fpga");
	assert_string_equal(cdi_class_of_family("3d"), "device");
	assert_string_equal(cdi_class_of_family(NULL), "device");
}

static void test_device_name_rules(void **state)
{
	char buf[128];

	(void)state;
	assert_true(cdi_device_name_valid("0"));
	assert_true(cdi_device_name_valid(UID "-gpu-0000-3b-00-0"));
	assert_true(cdi_device_name_valid("a:b.c_d-e"));
	assert_false(cdi_device_name_valid("-a"));
	assert_false(cdi_device_name_valid("a-"));
	assert_false(cdi_device_name_valid("a/b"));
	assert_false(cdi_device_name_valid("a=b"));
	assert_false(cdi_device_name_valid(""));
	assert_int_equal(cdi_device_name(UID, "gpu-0", NULL, buf, sizeof(buf)), (int)strlen(UID "-gpu-0"));
	assert_string_equal(buf, UID "-gpu-0");
	assert_int_equal(cdi_device_name(UID, "gpu-0", NULL, buf, 8), -ENAMETOOLONG);
	assert_int_equal(cdi_device_name(UID, "bad/", NULL, buf, sizeof(buf)), -EINVAL);
}

static void test_qualified_and_file_names(void **state)
{
	char buf[256], v[64], c[64], n[128];

	(void)state;
	assert_true(cdi_vendor_of_driver("gpu.dralet.dev", v, sizeof(v)) > 0);
	assert_string_equal(v, "k8s.gpu.dralet.dev");
	assert_true(cdi_qualified_name(v, "gpu", UID "-gpu-0", buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "k8s.gpu.dralet.dev/gpu=" UID "-gpu-0");
	assert_int_equal(cdi_parse_qualified_name(buf, v, sizeof(v), c, sizeof(c), n, sizeof(n)), 0);
	assert_string_equal(v, "k8s.gpu.dralet.dev");
	assert_string_equal(c, "gpu");
	assert_string_equal(n, UID "-gpu-0");
	assert_int_equal(cdi_parse_qualified_name("k8s.x/gpu", v, sizeof(v), c, sizeof(c), n,
						  sizeof(n)), -EINVAL);
	assert_int_equal(cdi_parse_qualified_name("k8s.x/gpu=-bad", v, sizeof(v), c, sizeof(c), n,
						  sizeof(n)), -EINVAL);
	assert_int_equal(cdi_qualified_name("k8s.x", "gpu", "bad name", buf, sizeof(buf)), -EINVAL);

	assert_true(cdi_spec_file_name("k8s.gpu.dralet.dev", "gpu", UID, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "k8s.gpu.dralet.dev-gpu_" UID ".json");
	assert_int_equal(cdi_parse_spec_file_name("k8s.gpu.dralet.dev", buf, c, sizeof(c), n,
						  sizeof(n)), 0);
	assert_string_equal(c, "gpu");
	assert_string_equal(n, UID);
	/* not ours: another vendor, not json, no uid */
	assert_int_equal(cdi_parse_spec_file_name("k8s.net.dralet.dev", buf, c, sizeof(c), n,
						  sizeof(n)), -EINVAL);
	assert_int_equal(cdi_parse_spec_file_name("k8s.gpu.dralet.dev",
						  "k8s.gpu.dralet.dev-gpu_" UID ".yaml", c,
						  sizeof(c), n, sizeof(n)), -EINVAL);
	assert_int_equal(cdi_parse_spec_file_name("k8s.gpu.dralet.dev",
						  "k8s.gpu.dralet.dev-gpu_.json", c, sizeof(c), n,
						  sizeof(n)), -EINVAL);
	assert_int_equal(cdi_spec_file_name("k8s.x", "gpu", "a/b", buf, sizeof(buf)), -EINVAL);
}

static void make_edits(struct dralet_edits *e)
{
	struct dralet_devnode node = { .path = "/dev/nvidia0", .major = 195, .minor = 0 };
	struct dralet_devnode ctl = { .path = "/dev/nvidiactl", .major = 195, .minor = 255 };
	struct dralet_devnode unknown = { .path = "/dev/weird" };

	memset(e, 0, sizeof(*e));
	assert_int_equal(dralet_edits_add_env(e, "NVIDIA_VISIBLE_DEVICES", "GPU-1"), 0);
	assert_int_equal(dralet_edits_add_node(e, &node, "rw"), 0);
	assert_int_equal(dralet_edits_add_node(e, &ctl, NULL), 0);
	assert_int_equal(dralet_edits_add_node(e, &unknown, NULL), 0);
	assert_int_equal(dralet_edits_add_mount(e, "/usr/lib/x/libcuda.so", "/usr/lib/libcuda.so",
						NULL), 0);
}

static void test_render(void **state)
{
	struct dralet_edits e;
	struct cdi_spec_device dev = { UID "-gpu-0", &e };
	struct json_object *spec = NULL;
	char err[256] = "";
	char *text;

	(void)state;
	make_edits(&e);
	assert_int_equal(cdi_spec_render("k8s.gpu.dralet.dev", "gpu", &dev, 1, &spec, err,
					 sizeof(err)), 0);
	text = cdi_spec_text(spec);
	/* the device name starts with a digit: 0.5.0 is the minimum */
	assert_non_null(strstr(text, "\"cdiVersion\": \"0.5.0\""));
	assert_non_null(strstr(text, "\"kind\": \"k8s.gpu.dralet.dev/gpu\""));
	assert_non_null(strstr(text, "\"NVIDIA_VISIBLE_DEVICES=GPU-1\""));
	assert_non_null(strstr(text, "\"major\": 195"));
	assert_non_null(strstr(text, "\"minor\": 255"));
	assert_non_null(strstr(text, "\"permissions\": \"rw\""));
	{
		struct json_object *d = json_object_array_get_idx(
			json_object_object_get(spec, "devices"), 0);
		struct json_object *m = json_object_array_get_idx(json_object_object_get(
			json_object_object_get(d, "containerEdits"), "mounts"), 0);
		assert_string_equal(json_object_to_json_string_ext(json_object_object_get(m, "options"),
								   JSON_C_TO_STRING_PLAIN),
				    "[\"ro\",\"nosuid\",\"nodev\",\"bind\"]");
	}
	assert_null(strstr(text, "hostPath\": \"/dev"));	/* no hostPath: that would need 0.5.0 too */
	assert_int_equal(text[strlen(text) - 1], '\n');
	/* a node with unknown numbers has neither type nor numbers */
	{
		struct json_object *d = json_object_array_get_idx(
			json_object_object_get(spec, "devices"), 0);
		struct json_object *nodes = json_object_object_get(
			json_object_object_get(d, "containerEdits"), "deviceNodes");
		struct json_object *w = json_object_array_get_idx(nodes, 2);
		assert_null(json_object_object_get(w, "type"));
		assert_null(json_object_object_get(w, "major"));
	}
	free(text);
	json_object_put(spec);

	/* a letter-first device name needs only 0.3.0 */
	dev.name = "gpu-0";
	assert_int_equal(cdi_spec_render("k8s.gpu.dralet.dev", "gpu", &dev, 1, &spec, err,
					 sizeof(err)), 0);
	assert_string_equal(json_object_get_string(json_object_object_get(spec, "cdiVersion")),
			    "0.3.0");
	json_object_put(spec);
	/* a dotted class needs 0.6.0 */
	assert_int_equal(cdi_spec_render("k8s.gpu.dralet.dev", "gpu.mig", &dev, 1, &spec, err,
					 sizeof(err)), 0);
	assert_string_equal(json_object_get_string(json_object_object_get(spec, "cdiVersion")),
			    "0.6.0");
	json_object_put(spec);
	edits_clear(&e);
}

static void test_render_rejects(void **state)
{
	struct dralet_edits e, empty = { 0 };
	struct cdi_spec_device devs[2] = { { "a", &e }, { "a", &e } };
	struct json_object *spec = NULL;
	char err[256] = "";

	(void)state;
	make_edits(&e);
	assert_int_equal(cdi_spec_render("k8s.x", "gpu", devs, 2, &spec, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "used twice"));
	devs[1].name = "b";
	devs[1].edits = &empty;
	assert_int_equal(cdi_spec_render("k8s.x", "gpu", devs, 2, &spec, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no container edits"));
	devs[1].edits = &e;
	devs[1].name = "b=";
	assert_int_equal(cdi_spec_render("k8s.x", "gpu", devs, 2, &spec, err, sizeof(err)), -EINVAL);
	assert_int_equal(cdi_spec_render("1k8s", "gpu", devs, 1, &spec, err, sizeof(err)), -EINVAL);
	assert_int_equal(cdi_spec_render("k8s.x", "gpu", devs, 0, &spec, err, sizeof(err)), -EINVAL);
	assert_null(spec);
	edits_clear(&e);
}

static const char *min_version(const char *json)
{
	static char out[16];
	struct json_object *o = json_tokener_parse(json);

	assert_non_null(o);
	snprintf(out, sizeof(out), "%s", cdi_spec_min_version(o));
	json_object_put(o);
	return out;
}

static void test_min_version_rules(void **state)
{
	(void)state;
	assert_string_equal(min_version("{\"kind\":\"a/b\",\"devices\":[{\"name\":\"x\","
					"\"containerEdits\":{\"env\":[\"A=1\"]}}]}"), "0.3.0");
	assert_string_equal(min_version("{\"kind\":\"a/b\",\"devices\":[{\"name\":\"x\","
					"\"containerEdits\":{\"mounts\":[{\"hostPath\":\"/a\","
					"\"containerPath\":\"/b\",\"type\":\"bind\"}]}}]}"), "0.4.0");
	assert_string_equal(min_version("{\"kind\":\"a/b\",\"devices\":[{\"name\":\"x\","
					"\"containerEdits\":{\"deviceNodes\":[{\"path\":\"/dev/a\","
					"\"hostPath\":\"/dev/b\"}]}}]}"), "0.5.0");
	assert_string_equal(min_version("{\"kind\":\"a/b\",\"devices\":[{\"name\":\"0x\","
					"\"containerEdits\":{\"env\":[\"A=1\"]}}]}"), "0.5.0");
	assert_string_equal(min_version("{\"kind\":\"a/b\",\"annotations\":{\"a\":\"b\"},"
					"\"devices\":[]}"), "0.6.0");
	assert_string_equal(min_version("{\"kind\":\"a/b\",\"devices\":[{\"name\":\"x\","
					"\"annotations\":{\"a\":\"b\"}}]}"), "0.6.0");
	assert_string_equal(min_version("{\"kind\":\"a/b.c\",\"devices\":[]}"), "0.6.0");
	assert_string_equal(min_version("{\"kind\":\"a/b\",\"containerEdits\":{"
					"\"additionalGids\":[5]},\"devices\":[]}"), "0.7.0");
	assert_string_equal(min_version("{\"kind\":\"a/b\",\"containerEdits\":{"
					"\"intelRdt\":{\"closID\":\"x\"}},\"devices\":[]}"), "0.7.0");
	assert_string_equal(min_version("{\"kind\":\"a/b\",\"containerEdits\":{"
					"\"intelRdt\":{\"schemata\":[\"x\"]}},\"devices\":[]}"), "1.1.0");
	assert_string_equal(min_version("{\"kind\":\"a/b\",\"devices\":[{\"name\":\"x\","
					"\"containerEdits\":{\"netDevices\":[{\"hostInterfaceName\":\"a\","
					"\"name\":\"b\"}]}}]}"), "1.1.0");
}

static void test_files(void **state)
{
	char dir[] = "/tmp/dralet-cdi-XXXXXX", path[512], **names = NULL;
	struct dralet_edits e;
	struct cdi_spec_device dev = { UID "-gpu-0", &e };
	struct json_object *spec;
	char err[256];
	size_t n = 0;
	struct stat st;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	make_edits(&e);
	assert_int_equal(cdi_spec_render("k8s.gpu.dralet.dev", "gpu", &dev, 1, &spec, err,
					 sizeof(err)), 0);
	assert_int_equal(cdi_files_write(dir, "k8s.gpu.dralet.dev-gpu_" UID ".json", spec), 0);
	snprintf(path, sizeof(path), "%s/k8s.gpu.dralet.dev-gpu_" UID ".json", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_true(cdi_files_exists(dir, "k8s.gpu.dralet.dev-gpu_" UID ".json"));
	/* a file of a driver whose name extends ours, a stale temp file and a foreign file */
	snprintf(path, sizeof(path), "%s/k8s.gpu.dralet.dev-x-gpu_" UID ".json", dir);
	f = fopen(path, "w");
	fputs("{\"cdiVersion\":\"0.5.0\",\"kind\":\"k8s.gpu.dralet.dev-x/gpu\",\"devices\":[]}", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/.k8s.gpu.dralet.dev-gpu_" UID ".json.Ab12Cd", dir);
	f = fopen(path, "w");
	fclose(f);
	snprintf(path, sizeof(path), "%s/nvidia.yaml", dir);
	f = fopen(path, "w");
	fclose(f);
	assert_int_equal(cdi_files_list(dir, "k8s.gpu.dralet.dev", &names, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(names[0], "k8s.gpu.dralet.dev-gpu_" UID ".json");
	cdi_files_free_list(names, n);
	snprintf(path, sizeof(path), "%s/.k8s.gpu.dralet.dev-gpu_" UID ".json.Ab12Cd", dir);
	assert_int_not_equal(access(path, F_OK), 0);	/* the stale temp file is gone */
	assert_int_equal(cdi_files_remove(dir, "k8s.gpu.dralet.dev-gpu_" UID ".json"), 0);
	assert_int_equal(cdi_files_remove(dir, "k8s.gpu.dralet.dev-gpu_" UID ".json"), 0);
	assert_false(cdi_files_exists(dir, "k8s.gpu.dralet.dev-gpu_" UID ".json"));
	/* a missing directory lists as empty */
	assert_int_equal(cdi_files_list("/nonexistent/dralet", "k8s.x", &names, &n), 0);
	assert_int_equal(n, 0);
	json_object_put(spec);
	edits_clear(&e);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vendor_and_class_rules),
		cmocka_unit_test(test_device_name_rules),
		cmocka_unit_test(test_qualified_and_file_names),
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_render_rejects),
		cmocka_unit_test(test_min_version_rules),
		cmocka_unit_test(test_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
