/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvidia backend discovery on hand-built trees: NVML facts through the fake
 * NVML library, MIG devices, procfs-only facts, NVML absent or failing,
 * excluded GPUs, garbage vendor files, ownership and health.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "test_gpu_util.h"
#include "backends/gpu/gpu_backends.h"

#define RP ROOT0 "/0000:00:01.0"
#define USP RP "/0000:01:00.0"
#define DSP USP "/0000:02:00.0"
#define RP2 ROOT0 "/0000:00:02.0"
#define GPU0 "0000:03:00.0"
#define GPU1 "0000:2a:00.0"
#define UUID0 "GPU-11111111-2222-3333-4444-555555555555"
#define UUID1 "GPU-66666666-7777-8888-9999-000000000000"

static const char nvml_json[] =
	"{\"driverVersion\":\"550.54.15\",\"cudaDriverVersion\":12040,\"devices\":["
	"{\"pciBusId\":\"00000000:03:00.0\",\"index\":0,\"minor\":0,\"uuid\":\"" UUID0 "\","
	"\"name\":\"NVIDIA H100 80GB HBM3\",\"brand\":\"NVIDIA\",\"architecture\":\"Hopper\","
	"\"cudaComputeCapability\":\"9.0\",\"memoryTotalBytes\":85520809984,"
	"\"migMode\":{\"current\":0,\"pending\":0}},"
	"{\"pciBusId\":\"0000:2a:00.0\",\"index\":1,\"minor\":1,\"uuid\":\"" UUID1 "\","
	"\"name\":\"NVIDIA H100 80GB HBM3\",\"brand\":\"NVIDIA\",\"architecture\":\"Hopper\","
	"\"cudaComputeCapability\":\"9.0\",\"memoryTotalBytes\":85520809984,"
	"\"migMode\":{\"current\":1,\"pending\":1},\"migDevices\":["
	"{\"uuid\":\"MIG-aaaaaaaa-0000-0000-0000-000000000001\",\"profile\":\"1g.10gb\","
	"\"giProfileId\":0,\"ciProfileId\":0,\"gi\":9,\"ci\":0,\"placementStart\":0,"
	"\"placementSize\":1,\"memoryBytes\":10200547328,\"multiprocessors\":16,"
	"\"copyEngines\":1,\"decoders\":1,\"encoders\":0,\"jpegEngines\":1,\"ofaEngines\":0,"
	"\"giAccessMinor\":138,\"ciAccessMinor\":139},"
	"{\"uuid\":\"MIG-aaaaaaaa-0000-0000-0000-000000000002\",\"profile\":\"1c.2g.20gb\","
	"\"giProfileId\":1,\"ciProfileId\":0,\"gi\":3,\"ci\":0,\"placementStart\":2,"
	"\"placementSize\":2,\"memoryBytes\":20937965568,\"multiprocessors\":16,"
	"\"copyEngines\":1,\"decoders\":1,\"encoders\":0,\"jpegEngines\":0,\"ofaEngines\":0},"
	"{\"uuid\":\"MIG-aaaaaaaa-0000-0000-0000-000000000003\",\"profile\":\"1c.2g.20gb\","
	"\"giProfileId\":1,\"ciProfileId\":0,\"gi\":3,\"ci\":1,\"placementStart\":2,"
	"\"placementSize\":2,\"memoryBytes\":20937965568,\"multiprocessors\":16,"
	"\"copyEngines\":1,\"decoders\":1,\"encoders\":0,\"jpegEngines\":0,\"ofaEngines\":0}"
	"]}]}";

static void write_info(const char *d, const char *address, const char *uuid, int minor,
		       const char *excluded)
{
	char rel[256], text[1024];

	snprintf(rel, sizeof(rel), "proc/driver/nvidia/gpus/%s/information", address);
	snprintf(text, sizeof(text),
		 "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 245\nGPU UUID: \t\t %s\n"
		 "Video BIOS: \t\t 96.00.89.00.01\nBus Type: \t\t PCIe\nDMA Size: \t\t 52 bits\n"
		 "DMA Mask: \t\t 0xfffffffffffff\nBus Location: \t\t %s\nDevice Minor: \t\t %d\n"
		 "GPU Excluded:\t\t %s\n", uuid, address, minor, excluded);
	tree_write(d, rel, text);
}

/* Two H100s: GPU0 behind a PCIe switch with MIG off, GPU1 with MIG on. */
static char *build_tree(void)
{
	char *d = tree_new();

	tree_add_pci(d, ROOT0, "0000:00:01.0", 0x8086, 0x352a, 0x060400);
	tree_add_pci(d, RP, "0000:01:00.0", 0x1000, 0xc030, 0x060400);
	tree_add_pci(d, USP, "0000:02:00.0", 0x1000, 0xc030, 0x060400);
	tree_add_pci(d, ROOT0, "0000:00:02.0", 0x8086, 0x352a, 0x060400);
	gpu_tree_add(d, DSP, GPU0, 0x10de, 0x2330, 0x030200, "nvidia", 1);
	gpu_tree_add(d, RP2, GPU1, 0x10de, 0x2330, 0x030200, "nvidia", 0);
	/* the GPU's HDMI/audio-less sibling: an NVSwitch-like bridge nobody takes */
	tree_write(d, "proc/devices", "Character devices:\n  1 mem\n195 nvidia-frontend\n"
				      "226 drm\n509 nvidia-caps\n510 nvidia-uvm\n\nBlock devices:\n"
				      "  8 sd\n");
	tree_write(d, "proc/driver/nvidia/version",
		   "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 "
		   "22:23:56 UTC 2024\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n");
	write_info(d, GPU0, UUID0, 0, "No");
	write_info(d, GPU1, UUID1, 1, "No");
	tree_write(d, "proc/driver/nvidia-caps/mig-minors",
		   "config 1\nmonitor 2\ngpu1/gi3/access 48\ngpu1/gi3/ci0/access 49\n"
		   "gpu1/gi3/ci1/access 50\ngpu1/gi9/access 138\ngpu1/gi9/ci0/access 139\n");
	tree_mkdir(d, "proc/driver/nvidia/capabilities/gpu1/mig/gi9/ci0");
	tree_mkdir(d, "proc/driver/nvidia/capabilities/gpu1/mig/gi3/ci0");
	static const char *const nodes[] = {
		"dev/nvidia0", "dev/nvidia1", "dev/nvidiactl", "dev/nvidia-uvm",
		"dev/nvidia-uvm-tools", "dev/nvidia-caps/nvidia-cap48",
		"dev/nvidia-caps/nvidia-cap49", "dev/nvidia-caps/nvidia-cap50",
		"dev/nvidia-caps/nvidia-cap138", "dev/nvidia-caps/nvidia-cap139", NULL,
	};
	for (size_t i = 0; nodes[i]; i++)
		tree_write(d, nodes[i], "");
	tree_write(d, "nvml.json", nvml_json);
	return d;
}

/* Options naming the fake NVML and the tree's nvml.json (or @lib). */
static char *nvml_options(const char *d, const char *lib)
{
	char data[4096], *so = build_path("tests/lib/fake-nvml.so"), *opts;

	snprintf(data, sizeof(data), "%s/nvml.json", d);
	setenv("FAKE_NVML_DATA", data, 1);
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
	char *d = build_tree(), *opts = nvml_options(d, NULL);

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
	assert_node(g, "/dev/nvidia-uvm", 510, 0);
	assert_node(g, "/dev/nvidia-uvm-tools", 510, 1);
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
	char *d = build_tree(), *opts = nvml_options(d, NULL);

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
	assert_node(m, "/dev/nvidia-caps/nvidia-cap138", 509, 138);
	assert_node(m, "/dev/nvidia-caps/nvidia-cap139", 509, 139);
	assert_int_equal(dralet_device_n_nodes(m), 6);

	/* two compute instances of one 2g GPU instance stay apart */
	struct dralet_device *c0 = harness_device(&h, "mig-0000-2a-00-0-1c-2g-20gb-2-ci0");
	struct dralet_device *c1 = harness_device(&h, "mig-0000-2a-00-0-1c-2g-20gb-2-ci1");
	assert_non_null(c0);
	assert_non_null(c1);
	assert_string_equal(attr_string(c1, "migProfile"), "1c.2g.20gb");
	assert_int_equal(attr_int(c1, "placementStart", -1), 2);
	assert_int_equal(attr_int(c1, "placementSize", -1), 2);
	assert_node(c0, "/dev/nvidia-caps/nvidia-cap48", 509, 48);
	assert_node(c0, "/dev/nvidia-caps/nvidia-cap49", 509, 49);
	assert_node(c1, "/dev/nvidia-caps/nvidia-cap50", 509, 50);
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
	char *d = build_tree(), *opts = nvml_options(d, NULL);

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
	char *d = build_tree(), *opts = nvml_options(d, "/nonexistent/libnvidia-ml.so.1"), *log;

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
	char *d = build_tree(), *opts = nvml_options(d, NULL), *log;

	(void)state;
	tree_write(d, "nvml.json", "{\"initError\":9}");
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
	char *d = build_tree(), *opts = nvml_options(d, NULL), *log;

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
	char *d = build_tree(), *opts = nvml_options(d, NULL), *log;

	(void)state;
	write_info(d, GPU0, UUID0, 0, "Yes");
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
	char *d = build_tree(), *opts = nvml_options(d, "/nonexistent/libnvidia-ml.so.1"), *log;

	(void)state;
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
	char *d = build_tree(), *opts = nvml_options(d, NULL), *log;

	(void)state;
	tree_write(d, "proc/driver/nvidia-caps/mig-minors", "config 1\nmonitor 2\n"
							     "gpu1/gi3/access 48\ngpu1/gi3/ci0/access 49\n");
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
	char *d = tree_new();

	(void)state;
	gpu_tree_add(d, ROOT0, "0000:10:00.0", 0x10de, 0x2330, 0x030200, "nvidia", -1);
	gpu_tree_add(d, ROOT0, "0000:11:00.0", 0x10de, 0x2330, 0x030200, "vfio-pci", -1);
	gpu_tree_add(d, ROOT0, "0000:12:00.0", 0x10de, 0x1e04, 0x030000, "nouveau", -1);
	gpu_tree_add(d, ROOT0, "0000:13:00.0", 0x10de, 0x10f7, 0x040300, "snd_hda_intel", -1);
	gpu_tree_add(d, ROOT0, "0000:14:00.0", 0x10de, 0x22a3, 0x068000, "nvidia-nvswitch", -1);
	gpu_tree_add(d, ROOT0, "0000:15:00.0", 0x1002, 0x74a1, 0x030000, "nvidia", -1);
	assert_int_equal(harness_init(&h, &gpu_nvidia_backend, d, "{\"nvmlLibrary\":\"/x\"}"), 0);
	const char *addrs[] = { "0000:10:00.0", "0000:11:00.0", "0000:12:00.0", "0000:13:00.0",
				"0000:14:00.0", "0000:15:00.0" };
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

static void test_health(void **state)
{
	struct harness h;
	char *d = build_tree(), *opts = nvml_options(d, NULL);
	char rel[256];

	(void)state;
	init_probe(&h, d, opts);
	struct dralet_device *g = harness_device(&h, "gpu-0000-03-00-0");
	struct dralet_device *m = harness_device(&h, "mig-0000-2a-00-0-1g-10gb-0");
	assert_int_equal(gpu_nvidia_backend.health(&h.ctx, g), DRALET_HEALTH_HEALTHY);
	assert_int_equal(gpu_nvidia_backend.health(&h.ctx, m), DRALET_HEALTH_HEALTHY);
	/* the driver let go of GPU1: its MIG devices are unhealthy */
	snprintf(rel, sizeof(rel), "%s/sys/devices/" RP2 "/" GPU1 "/driver", d);
	assert_int_equal(unlink(rel), 0);
	assert_int_equal(gpu_nvidia_backend.health(&h.ctx, m), DRALET_HEALTH_UNHEALTHY);
	/* the function vanished */
	snprintf(rel, sizeof(rel), "%s/sys/devices/" DSP "/" GPU0 "/vendor", d);
	assert_int_equal(unlink(rel), 0);
	assert_int_equal(gpu_nvidia_backend.health(&h.ctx, g), DRALET_HEALTH_UNHEALTHY);
	harness_fini(&h);
	free(opts);
	tree_remove(d);
}

static void test_health_from_nvml(void **state)
{
	struct harness h;
	char *d = build_tree(), *opts = nvml_options(d, NULL), *json = strdup(nvml_json);

	(void)state;
	/* GPU0 reports pending retired pages */
	char *p = strstr(json, "\"migMode\":{\"current\":0");
	assert_non_null(p);
	char *patched;
	assert_true(asprintf(&patched, "%.*s\"retiredPagesPending\":true,%s", (int)(p - json), json,
			     p) > 0);
	tree_write(d, "nvml.json", patched);
	init_probe(&h, d, opts);
	struct dralet_device *g = harness_device(&h, "gpu-0000-03-00-0");
	assert_non_null(g);
	assert_int_equal(gpu_nvidia_backend.health(&h.ctx, g), DRALET_HEALTH_UNHEALTHY);
	harness_fini(&h);

	/* a lost GPU: NVML does not describe it, health says Unhealthy */
	free(patched);
	assert_true(asprintf(&patched, "%.*s\"lost\":true,%s", (int)(p - json), json, p) > 0);
	tree_write(d, "nvml.json", patched);
	init_probe(&h, d, opts);
	g = harness_device(&h, "gpu-0000-03-00-0");
	assert_non_null(g);	/* procfs still knows it */
	assert_int_equal(gpu_nvidia_backend.health(&h.ctx, g), DRALET_HEALTH_UNHEALTHY);
	harness_fini(&h);
	free(patched);
	free(json);
	free(opts);
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
