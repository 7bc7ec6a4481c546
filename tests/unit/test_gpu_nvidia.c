/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvidia backend discovery on board snippets: NVML facts through the fake
 * NVML library, MIG devices, procfs-only facts, NVML absent or failing,
 * excluded GPUs, garbage vendor files, ownership and health (with NVML
 * events injected through the fake's events file; the verdict itself is
 * tested in test_gpu_nvidia_events.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "board_snippet.h"
#include "test_gpu_util.h"
#include "test_tree.h"
#include "backends/gpu/gpu_backends.h"

#define RP "pci0000:00/0000:00:01.0"
#define DSP RP "/0000:01:00.0/0000:02:00.0"
#define RP2 "pci0000:00/0000:00:02.0"
#define GPU0 "0000:03:00.0"
#define GPU1 "0000:2a:00.0"
#define UUID0 "GPU-11111111-2222-3333-4444-555555555555"
#define UUID1 "GPU-66666666-7777-8888-9999-000000000000"

/* Two H100s: GPU0 behind a PCIe switch with MIG off, GPU1 with MIG on (a
 * 1g.10gb instance and a 2g instance split into two compute instances).
 * @gpu0: more keys of GPU0's nvidia: mapping (YAML lines), or "". */
static char *build_tree(const char *gpu0)
{
	char yaml[4096];

	snprintf(yaml, sizeof(yaml),
		 "board: gpu-nvidia\n"
		 "numa:\n"
		 "  - {node: 0, cpus: \"0-7\"}\n"
		 "  - {node: 1, cpus: \"8-15\"}\n"
		 "pci:\n"
		 "  - root: \"0000:00\"\n"
		 "    devices:\n"
		 "      - bdf: 00:01.0\n"
		 "        id: \"8086:352a\"\n"
		 "        devices:\n"
		 "          - bdf: 01:00.0\n"
		 "            id: \"1000:c030\"\n"
		 "            devices:\n"
		 "              - bdf: 02:00.0\n"
		 "                id: \"1000:c030\"\n"
		 "                devices:\n"
		 "                  - bdf: 03:00.0\n"
		 "                    id: \"10de:2330\"\n"
		 "                    class: 0x030200\n"
		 "                    driver: nvidia\n"
		 "                    numa: 1\n"
		 "                    nvidia:\n"
		 "                      minor: 0\n"
		 "                      uuid: " UUID0 "\n"
		 "                      model: NVIDIA H100 80GB HBM3\n"
		 "                      vbios: 96.00.89.00.01\n"
		 "                      nvml: {memory: 85520809984}\n"
		 "%s"
		 "      - bdf: 00:02.0\n"
		 "        id: \"8086:352a\"\n"
		 "        devices:\n"
		 "          - bdf: 2a:00.0\n"
		 "            id: \"10de:2330\"\n"
		 "            class: 0x030200\n"
		 "            driver: nvidia\n"
		 "            numa: 0\n"
		 "            nvidia:\n"
		 "              minor: 1\n"
		 "              uuid: " UUID1 "\n"
		 "              model: NVIDIA H100 80GB HBM3\n"
		 "              nvml: {memory: 85520809984, mig_mode: true}\n"
		 "              mig:\n"
		 "                - {profile: 1g.10gb, placement: 0, gi: 9, memory: 10200547328,\n"
		 "                   jpeg_engines: 1, uuid: MIG-aaaaaaaa-0000-0000-0000-000000000001}\n"
		 "                - {profile: 1c.2g.20gb, placement: {start: 2, size: 2}, gi: 3, ci: 0,\n"
		 "                   gi_profile_id: 1, memory: 20937965568, multiprocessors: 16,\n"
		 "                   copy_engines: 1, decoders: 1,\n"
		 "                   uuid: MIG-aaaaaaaa-0000-0000-0000-000000000002}\n"
		 "                - {profile: 1c.2g.20gb, placement: {start: 2, size: 2}, gi: 3, ci: 1,\n"
		 "                   gi_profile_id: 1, memory: 20937965568, multiprocessors: 16,\n"
		 "                   copy_engines: 1, decoders: 1,\n"
		 "                   uuid: MIG-aaaaaaaa-0000-0000-0000-000000000003}\n",
		 gpu0);
	return board_tree(yaml);
}

/* Adds @fields ("\"lost\":true,") to GPU0's entry (the first) of the tree's
 * nvml.json: NVML states the board format does not describe. */
static void nvml_gpu0_add(const char *d, const char *fields)
{
	char path[4096], text[16384], *patched;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/nvml.json", d);
	assert_non_null(f = fopen(path, "r"));
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	char *at = strstr(text, "\"migMode\"");
	assert_non_null(at);
	assert_true(asprintf(&patched, "%.*s%s%s", (int)(at - text), text, fields, at) > 0);
	tree_write(d, "nvml.json", patched);
	free(patched);
}

/* Options naming the fake NVML and the tree's nvml.json (or @lib). */
static char *nvml_options(const char *d, const char *lib)
{
	char data[4096], *so = build_path("tests/lib/fake-nvml.so"), *opts;

	snprintf(data, sizeof(data), "%s/nvml.json", d);
	setenv("FAKE_NVML_DATA", data, 1);
	unsetenv("FAKE_NVML_EVENTS");	/* the fake reads <d>/nvml-events */
	if (asprintf(&opts, "{\"nvmlLibrary\":\"%s\"}", lib ? lib : so) < 0)
		opts = NULL;
	free(so);
	return opts;
}

static void init_probe(struct harness *h, const char *d, const char *opts)
{
	assert_int_equal(harness_init(h, &gpu_nvidia_backend, d, opts), 0);
	assert_int_equal(harness_probe_all(h), 0);
}

static void assert_node(const struct dralet_device *dev, const char *path, unsigned major,
			unsigned minor)
{
	int i = node_index(dev, path);

	if (i < 0)
		fail_msg("device %s has no node %s", dralet_device_name(dev), path);
	assert_int_equal(dralet_device_node(dev, (size_t)i)->major, major);
	assert_int_equal(dralet_device_node(dev, (size_t)i)->minor, minor);
}

static void test_full_gpu_with_nvml(void **state)
{
	struct harness h;
	char *d = build_tree(""), *opts = nvml_options(d, NULL);

	(void)state;
	init_probe(&h, d, opts);
	struct dralet_device *g = harness_device(&h, "gpu-0000-03-00-0");
	assert_non_null(g);
	assert_string_equal(dralet_device_kind(g), "gpu");
	assert_string_equal(attr_string(g, "type"), "gpu");
	assert_string_equal(attr_string(g, "uuid"), UUID0);
	assert_string_equal(attr_string(g, "productName"), "NVIDIA H100 80GB HBM3");
	assert_string_equal(attr_string(g, "brand"), "NVIDIA");
	assert_string_equal(attr_string(g, "architecture"), "Hopper");
	assert_string_equal(attr_string(g, "cudaComputeCapability"), "9.0.0");
	assert_string_equal(attr_string(g, "driverVersion"), "550.54.15");
	assert_string_equal(attr_string(g, "cudaDriverVersion"), "12.4.0");
	assert_string_equal(attr_string(g, "vbiosVersion"), "96.00.89.00.01");
	assert_int_equal(attr_int(g, "minor", -1), 0);
	assert_int_equal(attr_int(g, "index", -1), 0);
	assert_true(attr_bool(g, "migCapable", false));
	assert_false(attr_bool(g, "migEnabled", true));
	assert_string_equal(attr_string(g, DRALET_ATTR_PCIE_ROOT), "pci0000:00");
	assert_string_equal(attr_string(g, DRALET_ATTR_PCI_BUS_ID), GPU0);
	assert_string_equal(attr_string(g, "pcieSwitch"), "0000:01:00.0");
	assert_int_equal(attr_int(g, DRALET_ATTR_NUMA_NODE, -1), 1);
	assert_string_equal(capacity(g, "memory"), "81559Mi");
	/* keys CEL selectors of the scenarios name exist on every device */
	assert_string_equal(attr_string(g, "migProfile"), "");
	assert_true(dralet_device_n_attrs(g) + dralet_device_n_capacities(g) <= 32);
	assert_int_equal(dralet_device_health(g), DRALET_HEALTH_HEALTHY);
	assert_node(g, "/dev/nvidia0", 195, 0);
	assert_node(g, "/dev/nvidiactl", 195, 255);
	assert_node(g, "/dev/nvidia-uvm", 511, 0);
	assert_node(g, "/dev/nvidia-uvm-tools", 511, 1);
	assert_int_equal(dralet_device_n_nodes(g), 4);
	/* the GPU in MIG mode is published only through its MIG devices */
	assert_null(harness_device(&h, "gpu-0000-2a-00-0"));
	assert_int_equal(h.sink.n, 4);
	harness_fini(&h);
	free(opts);
	tree_remove(d);
}

static void test_mig_devices(void **state)
{
	struct harness h;
	char *d = build_tree(""), *opts = nvml_options(d, NULL);

	(void)state;
	init_probe(&h, d, opts);
	struct dralet_device *m = harness_device(&h, "mig-0000-2a-00-0-1g-10gb-0");
	assert_non_null(m);
	assert_string_equal(dralet_device_kind(m), "mig");
	assert_string_equal(attr_string(m, "type"), "mig");
	assert_string_equal(attr_string(m, "migProfile"), "1g.10gb");
	assert_string_equal(attr_string(m, "uuid"), "MIG-aaaaaaaa-0000-0000-0000-000000000001");
	assert_string_equal(attr_string(m, "parentUUID"), UUID1);
	assert_int_equal(attr_int(m, "placementStart", -1), 0);
	assert_int_equal(attr_int(m, "placementSize", -1), 1);
	assert_int_equal(attr_int(m, "minor", -1), 1);
	assert_string_equal(attr_string(m, "productName"), "NVIDIA H100 80GB HBM3");
	assert_string_equal(attr_string(m, "driverVersion"), "550.54.15");
	assert_string_equal(attr_string(m, DRALET_ATTR_PCI_BUS_ID), GPU1);
	assert_string_equal(capacity(m, "memory"), "9728Mi");
	assert_string_equal(capacity(m, "multiprocessors"), "16");
	assert_string_equal(capacity(m, "copyEngines"), "1");
	assert_string_equal(capacity(m, "decoders"), "1");
	assert_string_equal(capacity(m, "encoders"), "0");
	assert_string_equal(capacity(m, "jpegEngines"), "1");
	assert_string_equal(capacity(m, "ofaEngines"), "0");
	assert_true(dralet_device_n_attrs(m) + dralet_device_n_capacities(m) <= 32);
	assert_node(m, "/dev/nvidia1", 195, 1);
	/* the driver's numbering: gi access 3 + 135 * minor + 9 * gi, ci access +1+ci */
	assert_node(m, "/dev/nvidia-caps/nvidia-cap219", 510, 219);
	assert_node(m, "/dev/nvidia-caps/nvidia-cap220", 510, 220);
	assert_int_equal(dralet_device_n_nodes(m), 6);

	/* two compute instances of one 2g GPU instance stay apart */
	struct dralet_device *c0 = harness_device(&h, "mig-0000-2a-00-0-1c-2g-20gb-2-ci0");
	struct dralet_device *c1 = harness_device(&h, "mig-0000-2a-00-0-1c-2g-20gb-2-ci1");
	assert_non_null(c0);
	assert_non_null(c1);
	assert_string_equal(attr_string(c1, "migProfile"), "1c.2g.20gb");
	assert_int_equal(attr_int(c1, "placementStart", -1), 2);
	assert_int_equal(attr_int(c1, "placementSize", -1), 2);
	assert_node(c0, "/dev/nvidia-caps/nvidia-cap165", 510, 165);
	assert_node(c0, "/dev/nvidia-caps/nvidia-cap166", 510, 166);
	assert_node(c1, "/dev/nvidia-caps/nvidia-cap167", 510, 167);
	harness_fini(&h);
	free(opts);
	tree_remove(d);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void test_names_stable_across_runs(void **state)
{
	char *names[2][16];
	size_t n[2];
	char *d = build_tree(""), *opts = nvml_options(d, NULL);

	(void)state;
	for (int run = 0; run < 2; run++) {
		struct harness h;
		init_probe(&h, d, opts);
		n[run] = h.sink.n;
		assert_true(n[run] <= 16);
		for (size_t i = 0; i < h.sink.n; i++)
			names[run][i] = strdup(dralet_device_name(h.sink.items[i]));
		qsort(names[run], n[run], sizeof(char *), cmp_str);
		harness_fini(&h);
	}
	assert_int_equal(n[0], n[1]);
	for (size_t i = 0; i < n[0]; i++) {
		assert_string_equal(names[0][i], names[1][i]);
		free(names[0][i]);
		free(names[1][i]);
	}
	free(opts);
	tree_remove(d);
}

static void test_proc_only_when_nvml_absent(void **state)
{
	struct harness h;
	struct capture c;
	char *d = build_tree(""), *opts = nvml_options(d, "/nonexistent/libnvidia-ml.so.1"), *log;

	(void)state;
	capture_begin(&c);
	init_probe(&h, d, opts);
	log = capture_end(&c);
	assert_non_null(strstr(log, "cannot be loaded"));
	/* a GPU with MIG instances cannot be described without NVML */
	assert_non_null(strstr(log, GPU1 ": GPU has MIG instances"));
	struct dralet_device *g = harness_device(&h, "gpu-0000-03-00-0");
	assert_non_null(g);
	assert_string_equal(attr_string(g, "uuid"), UUID0);
	assert_string_equal(attr_string(g, "productName"), "NVIDIA H100 80GB HBM3");
	assert_string_equal(attr_string(g, "driverVersion"), "550.54.15");
	assert_int_equal(attr_int(g, "minor", -1), 0);
	assert_null(attr_string(g, "brand"));
	assert_null(dralet_device_find_attr(g, "migCapable"));
	assert_string_equal(capacity(g, "memory"), "0");	/* unknown */
	assert_node(g, "/dev/nvidia0", 195, 0);
	assert_int_equal(h.sink.n, 1);
	harness_fini(&h);
	free(log);
	free(opts);
	tree_remove(d);
}

static void test_nvml_init_failure_is_a_warning(void **state)
{
	struct harness h;
	struct capture c;
	char *d = build_tree(""), *opts = nvml_options(d, NULL), *log;

	(void)state;
	tree_write(d, "nvml.json", "{\"initError\":9}");	/* NVML's state, not the board's */
	capture_begin(&c);
	init_probe(&h, d, opts);
	log = capture_end(&c);
	assert_non_null(strstr(log, "NVML unusable"));
	assert_non_null(strstr(log, "Driver Not Loaded"));
	struct dralet_device *g = harness_device(&h, "gpu-0000-03-00-0");
	assert_non_null(g);
	assert_string_equal(attr_string(g, "uuid"), UUID0);
	assert_string_equal(capacity(g, "memory"), "0");	/* unknown */
	harness_fini(&h);
	free(log);
	free(opts);
	tree_remove(d);
}

static void test_nvml_data_missing_is_a_warning(void **state)
{
	struct harness h;
	struct capture c;
	char *d = build_tree(""), *opts = nvml_options(d, NULL), *log;

	(void)state;
	setenv("FAKE_NVML_DATA", "/nonexistent/nvml.json", 1);
	capture_begin(&c);
	init_probe(&h, d, opts);
	log = capture_end(&c);
	assert_non_null(strstr(log, "NVML unusable"));
	assert_non_null(harness_device(&h, "gpu-0000-03-00-0"));
	harness_fini(&h);
	free(log);
	free(opts);
	tree_remove(d);
}

static void test_excluded_gpu_skipped(void **state)
{
	struct harness h;
	struct capture c;
	char *d = build_tree("                      excluded: true\n");
	char *opts = nvml_options(d, NULL), *log;

	(void)state;
	capture_begin(&c);
	init_probe(&h, d, opts);
	log = capture_end(&c);
	assert_non_null(strstr(log, GPU0 ": GPU excluded"));
	assert_null(harness_device(&h, "gpu-0000-03-00-0"));
	harness_fini(&h);
	free(log);
	free(opts);
	tree_remove(d);
}

static void test_garbage_vendor_files(void **state)
{
	struct harness h;
	struct capture c;
	char *d = build_tree(""), *opts = nvml_options(d, "/nonexistent/libnvidia-ml.so.1"), *log;

	(void)state;
	/* what no driver writes, so no board says */
	tree_write(d, "proc/driver/nvidia/gpus/" GPU0 "/information",
		   "Model: \x01\x02garbage\nGPU UUID: not-a-uuid\nDevice Minor: minus-one\n"
		   "no colon here\n::::\nGPU Excluded:\n");
	tree_write(d, "proc/driver/nvidia/version", "NVRM version: none here\n");
	tree_write(d, "proc/driver/nvidia-caps/mig-minors", "gpu/gi/access x\n\xff\xfe\n");
	tree_write(d, "proc/devices", "Character devices:\nzzz nvidia-uvm\n");
	capture_begin(&c);
	init_probe(&h, d, opts);
	log = capture_end(&c);
	assert_non_null(strstr(log, "Device Minor"));
	assert_non_null(strstr(log, "not-a-uuid"));
	struct dralet_device *g = harness_device(&h, "gpu-0000-03-00-0");
	assert_non_null(g);
	assert_null(attr_string(g, "uuid"));
	assert_null(attr_string(g, "driverVersion"));
	assert_null(dralet_device_find_attr(g, "minor"));
	/* no minor: no /dev/nvidiaN; uvm numbers unknown on placeholder files */
	assert_int_equal(node_index(g, "/dev/nvidia0"), -1);
	assert_int_equal(node_index(g, "/dev/nvidia-uvm"), -1);
	assert_node(g, "/dev/nvidiactl", 195, 255);
	harness_fini(&h);
	free(log);
	free(opts);
	tree_remove(d);
}

static void test_mig_without_capability_minors_not_published(void **state)
{
	struct harness h;
	struct capture c;
	char *d = build_tree(""), *opts = nvml_options(d, NULL), *log;

	(void)state;
	/* a driver that numbered only GPU instance 3 (boards number them all) */
	tree_write(d, "proc/driver/nvidia-caps/mig-minors", "config 1\nmonitor 2\n"
							     "gpu1/gi3/access 165\ngpu1/gi3/ci0/access 166\n");
	capture_begin(&c);
	init_probe(&h, d, opts);
	log = capture_end(&c);
	assert_non_null(strstr(log, "no gpu1/gi9/access"));
	assert_null(harness_device(&h, "mig-0000-2a-00-0-1g-10gb-0"));
	assert_null(harness_device(&h, "mig-0000-2a-00-0-1c-2g-20gb-2-ci1"));
	assert_non_null(harness_device(&h, "mig-0000-2a-00-0-1c-2g-20gb-2-ci0"));
	harness_fini(&h);
	free(log);
	free(opts);
	tree_remove(d);
}

static void test_match(void **state)
{
	struct harness h;
	/* functions the driver has not announced in procfs (no nvidia: keys) */
	char *d = board_tree(
		"board: nvidia-match\npci:\n  - root: \"0000:00\"\n    devices:\n"
		"      - {bdf: 00:10.0, id: \"10de:2330\", class: 0x030200, driver: nvidia}\n"
		"      - {bdf: 00:11.0, id: \"10de:2330\", class: 0x030200, driver: vfio-pci}\n"
		"      - {bdf: 00:12.0, id: \"10de:1e04\", class: 0x030000, driver: nouveau}\n"
		"      - {bdf: 00:13.0, id: \"10de:10f7\", class: 0x040300, driver: snd_hda_intel}\n"
		"      - {bdf: 00:14.0, id: \"10de:22a3\", class: 0x068000, driver: nvidia-nvswitch}\n"
		"      - {bdf: 00:15.0, id: \"1002:74a1\", class: 0x030000, driver: nvidia}\n");

	(void)state;
	assert_int_equal(harness_init(&h, &gpu_nvidia_backend, d, "{\"nvmlLibrary\":\"/x\"}"), 0);
	const char *addrs[] = { "0000:00:10.0", "0000:00:11.0", "0000:00:12.0", "0000:00:13.0",
				"0000:00:14.0", "0000:00:15.0" };
	const int want[] = { DRALET_SCORE_VENDOR_CLASS, 0, 0, 0, 0, 0 };
	for (size_t i = 0; i < 6; i++)
		assert_int_equal(harness_score(&h, &gpu_nvidia_backend,
					       hal_scan_find(h.scan, addrs[i])), want[i]);
	/* neither procfs nor NVML know it: a warning, no device */
	assert_int_equal(harness_probe_all(&h), 0);
	assert_int_equal(h.sink.n, 0);
	harness_fini(&h);
	tree_remove(d);
}

/* Appends @line to the fake NVML's events file (<d>/nvml-events): what the
 * driver reports while the agent runs. */
static void inject(const char *d, const char *line)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/nvml-events", d);
	assert_non_null(f = fopen(path, "a"));
	fprintf(f, "%s\n", line);
	fclose(f);
}

/* One health round of @dev; what it said is in h->ctx.error, the cause it
 * named (dralet_ctx_health_cause) in h->ctx.health_cause. */
static int health(struct harness *h, struct dralet_device *dev)
{
	h->ctx.error[0] = '\0';
	h->ctx.health_cause = NULL;
	return gpu_nvidia_backend.health(&h->ctx, dev);
}

static void test_health(void **state)
{
	struct harness h;
	char *d = build_tree(""), *opts = nvml_options(d, NULL);
	char rel[256];

	(void)state;
	init_probe(&h, d, opts);
	struct dralet_device *g = harness_device(&h, "gpu-0000-03-00-0");
	struct dralet_device *m = harness_device(&h, "mig-0000-2a-00-0-1g-10gb-0");
	assert_int_equal(gpu_nvidia_backend.health(&h.ctx, g), DRALET_HEALTH_HEALTHY);
	assert_int_equal(gpu_nvidia_backend.health(&h.ctx, m), DRALET_HEALTH_HEALTHY);
	/* the driver let go of GPU1: its MIG devices are unhealthy */
	t_bind(d, RP2, GPU1, NULL);
	assert_int_equal(gpu_nvidia_backend.health(&h.ctx, m), DRALET_HEALTH_UNHEALTHY);
	/* the function vanished (its directory with its files and driver link) */
	snprintf(rel, sizeof(rel), "%s/sys/devices/" DSP "/" GPU0 "/vendor", d);
	assert_int_equal(unlink(rel), 0);
	t_bind(d, DSP, GPU0, NULL);
	assert_int_equal(gpu_nvidia_backend.health(&h.ctx, g), DRALET_HEALTH_UNHEALTHY);
	harness_fini(&h);
	free(opts);
	tree_remove(d);
}

static void test_health_from_nvml(void **state)
{
	struct harness h;
	char *d = build_tree(""), *opts = nvml_options(d, NULL);

	(void)state;
	/* GPU0 reports pending retired pages */
	nvml_gpu0_add(d, "\"retiredPagesPending\":true,");
	init_probe(&h, d, opts);
	struct dralet_device *g = harness_device(&h, "gpu-0000-03-00-0");
	assert_non_null(g);
	assert_int_equal(health(&h, g), DRALET_HEALTH_UNHEALTHY);
	assert_non_null(strstr(h.ctx.error, "retired memory pages are pending"));
	assert_null(h.ctx.health_cause);	/* the generic taint */
	harness_fini(&h);
	tree_remove(d);

	/* a lost GPU: NVML does not describe it, health says Unhealthy */
	free(opts);
	d = build_tree("");
	opts = nvml_options(d, NULL);
	nvml_gpu0_add(d, "\"lost\":true,");
	init_probe(&h, d, opts);
	g = harness_device(&h, "gpu-0000-03-00-0");
	assert_non_null(g);	/* procfs still knows it */
	assert_int_equal(health(&h, g), DRALET_HEALTH_UNHEALTHY);
	assert_non_null(strstr(h.ctx.error, "the GPU is lost"));
	assert_string_equal(h.ctx.health_cause, "dralet.dev/gpu-lost");
	harness_fini(&h);
	free(opts);
	tree_remove(d);
}

static void test_health_nvml_xid_events(void **state)
{
	struct harness h;
	char *d = build_tree(""), *opts = nvml_options(d, NULL);

	(void)state;
	inject(d, GPU0 " xid 79");	/* before the agent watched: history */
	init_probe(&h, d, opts);
	struct dralet_device *g = harness_device(&h, "gpu-0000-03-00-0");
	struct dralet_device *m9 = harness_device(&h, "mig-0000-2a-00-0-1g-10gb-0");
	struct dralet_device *c0 = harness_device(&h, "mig-0000-2a-00-0-1c-2g-20gb-2-ci0");
	struct dralet_device *c1 = harness_device(&h, "mig-0000-2a-00-0-1c-2g-20gb-2-ci1");
	assert_non_null(g);
	assert_non_null(m9);
	assert_non_null(c0);
	assert_non_null(c1);
	assert_int_equal(health(&h, g), DRALET_HEALTH_HEALTHY);
	/* an application error: the GPU stays healthy */
	inject(d, GPU0 " xid 13");
	assert_int_equal(health(&h, g), DRALET_HEALTH_HEALTHY);
	assert_string_equal(h.ctx.error, "");
	/* the GPU fell off the bus: Unhealthy, and it stays so (the hold) */
	inject(d, GPU0 " xid 79");
	assert_int_equal(health(&h, g), DRALET_HEALTH_UNHEALTHY);
	assert_non_null(strstr(h.ctx.error, "NVML: XID 79 (GPU has fallen off the bus)"));
	assert_string_equal(h.ctx.health_cause, "dralet.dev/xid");
	assert_int_equal(health(&h, g), DRALET_HEALTH_UNHEALTHY);
	assert_non_null(strstr(h.ctx.error, "1 fault event(s)"));
	/* GPU1's MIG devices saw nothing of GPU0's */
	assert_int_equal(health(&h, m9), DRALET_HEALTH_HEALTHY);
	/* an XID in GPU instance 9: that MIG device only */
	inject(d, GPU1 " xid 94 9 0");
	assert_int_equal(health(&h, m9), DRALET_HEALTH_UNHEALTHY);
	assert_non_null(strstr(h.ctx.error, "XID 94 (contained ECC error)"));
	assert_int_equal(health(&h, c0), DRALET_HEALTH_HEALTHY);
	assert_int_equal(health(&h, c1), DRALET_HEALTH_HEALTHY);
	/* one of the whole GPU: every MIG device on it */
	inject(d, GPU1 " xid 74");
	assert_int_equal(health(&h, c0), DRALET_HEALTH_UNHEALTHY);
	assert_int_equal(health(&h, c1), DRALET_HEALTH_UNHEALTHY);
	assert_non_null(strstr(h.ctx.error, "XID 74 (NVLink error)"));
	harness_fini(&h);
	free(opts);
	tree_remove(d);
}

static void test_health_nvml_ecc_and_recovery(void **state)
{
	struct harness h;
	char *d = build_tree(""), *opts = nvml_options(d, NULL);

	(void)state;
	init_probe(&h, d, opts);
	struct dralet_device *g = harness_device(&h, "gpu-0000-03-00-0");
	struct dralet_device *m9 = harness_device(&h, "mig-0000-2a-00-0-1g-10gb-0");
	assert_non_null(g);
	/* a corrected error is no fault; an uncorrected one is */
	inject(d, GPU0 " sbe");
	assert_int_equal(health(&h, g), DRALET_HEALTH_HEALTHY);
	inject(d, GPU0 " dbe");
	assert_int_equal(health(&h, g), DRALET_HEALTH_UNHEALTHY);
	assert_non_null(strstr(h.ctx.error, "NVML: double-bit ECC error"));
	assert_string_equal(h.ctx.health_cause, "dralet.dev/ecc-double-bit");
	/* the recovery action counts while NVML says so, for every device of the GPU */
	inject(d, GPU1 " recovery 2");
	assert_int_equal(health(&h, m9), DRALET_HEALTH_UNHEALTHY);
	assert_string_equal(h.ctx.error, "NVML: node reboot required (GPU recovery action 2)");
	assert_string_equal(h.ctx.health_cause, "dralet.dev/gpu-recovery");
	inject(d, GPU1 " recovery 0");
	assert_int_equal(health(&h, m9), DRALET_HEALTH_HEALTHY);
	assert_null(h.ctx.health_cause);
	harness_fini(&h);
	free(opts);
	tree_remove(d);
}

static void test_health_gpu_without_events(void **state)
{
	struct harness h;
	char *d = build_tree(""), *opts = nvml_options(d, NULL);

	(void)state;
	nvml_gpu0_add(d, "\"eventTypes\":0,");	/* a GPU too old for events */
	init_probe(&h, d, opts);
	struct dralet_device *g = harness_device(&h, "gpu-0000-03-00-0");
	assert_non_null(g);
	inject(d, GPU0 " xid 79");
	assert_int_equal(health(&h, g), DRALET_HEALTH_HEALTHY);	/* no event source */
	inject(d, GPU0 " recovery 1");	/* the polled field still counts */
	assert_int_equal(health(&h, g), DRALET_HEALTH_UNHEALTHY);
	assert_non_null(strstr(h.ctx.error, "GPU reset required"));
	harness_fini(&h);
	free(opts);
	tree_remove(d);
}

static void test_health_nvml_without_event_calls(void **state)
{
	struct harness h;
	char *d = build_tree(""), *so = build_path("tests/lib/fake-nvml-no-events.so");
	char *opts = nvml_options(d, so);

	(void)state;
	init_probe(&h, d, opts);
	struct dralet_device *g = harness_device(&h, "gpu-0000-03-00-0");
	struct dralet_device *m9 = harness_device(&h, "mig-0000-2a-00-0-1g-10gb-0");
	assert_non_null(g);
	assert_non_null(m9);	/* NVML still describes the MIG devices */
	inject(d, GPU0 " xid 79");
	inject(d, GPU0 " recovery 2");
	assert_int_equal(health(&h, g), DRALET_HEALTH_HEALTHY);
	assert_int_equal(health(&h, m9), DRALET_HEALTH_HEALTHY);
	harness_fini(&h);
	free(opts);
	free(so);
	tree_remove(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_gpu_with_nvml),
		cmocka_unit_test(test_mig_devices),
		cmocka_unit_test(test_names_stable_across_runs),
		cmocka_unit_test(test_proc_only_when_nvml_absent),
		cmocka_unit_test(test_nvml_init_failure_is_a_warning),
		cmocka_unit_test(test_nvml_data_missing_is_a_warning),
		cmocka_unit_test(test_excluded_gpu_skipped),
		cmocka_unit_test(test_garbage_vendor_files),
		cmocka_unit_test(test_mig_without_capability_minors_not_published),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_health),
		cmocka_unit_test(test_health_from_nvml),
		cmocka_unit_test(test_health_nvml_xid_events),
		cmocka_unit_test(test_health_nvml_ecc_and_recovery),
		cmocka_unit_test(test_health_gpu_without_events),
		cmocka_unit_test(test_health_nvml_without_event_calls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
