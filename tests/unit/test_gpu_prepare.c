/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GPU prepare/unprepare and opaque config: container edits (nodes, env,
 * driver library mounts), strict GpuConfig/MigDeviceConfig validation,
 * time-slicing through a fake nvidia-smi that logs its arguments, the
 * tool-absent and tool-failure errors, adminAccess, unprepare from the undo
 * state alone, and "not supported" on backends that cannot time-slice.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <dralet/sharing.h>

#include "board_snippet.h"
#include "test_gpu_util.h"
#include "backends/gpu/gpu.h"
#include "backends/gpu/gpu_backends.h"
#include "backends/common/pcidev.h"

#define GPU0 "0000:18:00.0"
#define GPU1 "0000:2a:00.0"
#define UUID0 "GPU-11111111-2222-3333-4444-555555555555"
#define UUID1 "GPU-66666666-7777-8888-9999-000000000000"
#define MIGUUID "MIG-aaaaaaaa-0000-0000-0000-000000000001"
#define LIBDIR "usr/lib/x86_64-linux-gnu"

/* Two A100s, GPU1 in MIG mode with one 1g.10gb instance at placement 6. */
static const char board[] =
	"board: gpu-prepare\n"
	"numa:\n"
	"  - {node: 0, cpus: \"0-7\"}\n"
	"  - {node: 1, cpus: \"8-15\"}\n"
	"pci:\n"
	"  - root: \"0000:18\"\n"
	"    numa: 0\n"
	"    devices:\n"
	"      - {bdf: 18:00.0, id: \"10de:20b2\", class: 0x030200, driver: nvidia,\n"
	"         nvidia: {minor: 0, uuid: " UUID0 ", nvml: {memory: 85899345920}}}\n"
	"  - root: \"0000:2a\"\n"
	"    numa: 1\n"
	"    devices:\n"
	"      - bdf: 2a:00.0\n"
	"        id: \"10de:20b2\"\n"
	"        class: 0x030200\n"
	"        driver: nvidia\n"
	"        nvidia:\n"
	"          minor: 1\n"
	"          uuid: " UUID1 "\n"
	"          nvml: {memory: 85899345920, mig_mode: true}\n"
	"          mig: [{profile: 1g.10gb, placement: 6, gi: 9, uuid: " MIGUUID "}]\n";

/* A logging nvidia-smi: appends its arguments to <tree>/smi.log, writes its
 * LD_LIBRARY_PATH to <tree>/smi.env and exits with the code in
 * <tree>/smi.exit (0 when absent). */
static void write_fake_smi(const char *d, const char *rel)
{
	char text[2048], path[4096];

	snprintf(text, sizeof(text),
		 "#!/bin/sh\necho \"$*\" >> '%s/smi.log'\necho \"$LD_LIBRARY_PATH\" > '%s/smi.env'\n"
		 "if [ -f '%s/smi.exit' ]; then echo 'Unable to set the time-slice: Insufficient "
		 "Permissions'; exit $(cat '%s/smi.exit'); fi\nexit 0\n", d, d, d, d);
	tree_write(d, rel, text);
	snprintf(path, sizeof(path), "%s/%s", d, rel);
	chmod(path, 0755);
}

static char *build_tree(void)
{
	char *d = board_tree(board);

	/* the driver's user-space half below the tree (the default driver
	 * root): host files, not the node's sysfs, so not in the board */
	tree_write(d, LIBDIR "/libcuda.so.550.54.15", "ELF");
	tree_write(d, LIBDIR "/libnvidia-ml.so.550.54.15", "ELF");
	tree_write(d, LIBDIR "/libnvidia-nvvm.so.550.54.15", "ELF");
	tree_write(d, LIBDIR "/libnvidia-gpucomp.so.550.54.15", "ELF");
	tree_write(d, LIBDIR "/libcuda.so.535.104.05", "an older driver's, never mounted");
	write_fake_smi(d, "usr/bin/nvidia-smi");
	return d;
}

struct prep {
	struct harness h;
	struct dralet_edits edits;
	struct dralet_undo undo;
	struct dralet_prepare_req req;
	char *dir;
};

static void prep_setup(struct prep *p, const char *extra_options)
{
	char data[4096], *so = build_path("tests/lib/fake-nvml.so"), *opts;

	memset(p, 0, sizeof(*p));
	p->dir = build_tree();
	snprintf(data, sizeof(data), "%s/nvml.json", p->dir);
	setenv("FAKE_NVML_DATA", data, 1);
	assert_true(asprintf(&opts, "{\"nvmlLibrary\":\"%s\"%s%s}", so,
			     extra_options ? "," : "", extra_options ? extra_options : "") > 0);
	assert_int_equal(harness_init(&p->h, &gpu_nvidia_backend, p->dir, opts), 0);
	assert_int_equal(harness_probe_all(&p->h), 0);
	free(opts);
	free(so);
	p->req.claim = (struct dralet_claim_ref){ "7f1c2b3a-0000-4000-8000-000000000001", "team-a",
						  "gpu-claim" };
	p->req.request = "gpu";
	p->req.edits = &p->edits;
	p->req.undo = &p->undo;
}

static void prep_teardown(struct prep *p)
{
	edits_clear(&p->edits);
	undo_clear(&p->undo);
	harness_fini(&p->h);
	tree_remove(p->dir);
}

/* <d>/@name's text (malloc'd; empty when absent). */
static char *read_tree_file(const char *d, const char *name)
{
	char path[4096];
	FILE *f;
	char *buf = calloc(1, 4096);

	snprintf(path, sizeof(path), "%s/%s", d, name);
	if ((f = fopen(path, "r"))) {
		(void)!fread(buf, 1, 4095, f);
		fclose(f);
	}
	return buf;
}

static char *read_log(const char *d)
{
	return read_tree_file(d, "smi.log");
}

/* The edits bind-mount @host_path at @container_path, read-only. */
static void assert_mount(const struct dralet_edits *e, const char *container_path,
			 const char *host_path)
{
	const struct edits_mount *m = edit_mount(e, container_path);

	assert_non_null(m);
	assert_string_equal(m->host_path, host_path);
	assert_string_equal(m->options, "ro,nosuid,nodev,bind");
}

static int prepare(struct prep *p, const char *device, const char *config)
{
	struct dralet_device *dev = harness_device(&p->h, device);

	assert_non_null(dev);
	p->req.config = config;
	p->h.ctx.error[0] = '\0';
	return gpu_nvidia_backend.prepare(&p->h.ctx, dev, &p->req);
}

static void test_prepare_full_gpu_edits(void **state)
{
	struct prep p;

	(void)state;
	prep_setup(&p, NULL);
	assert_int_equal(prepare(&p, "gpu-0000-18-00-0", NULL), 0);
	const struct edits_node *n = edit_node(&p.edits, "/dev/nvidia0");
	assert_non_null(n);
	assert_int_equal(n->node.major, 195);
	assert_int_equal(n->node.minor, 0);
	assert_null(n->permissions);	/* default rwm */
	assert_non_null(edit_node(&p.edits, "/dev/nvidiactl"));
	assert_int_equal(edit_node(&p.edits, "/dev/nvidia-uvm")->node.major, 511);
	assert_int_equal(edit_node(&p.edits, "/dev/nvidia-uvm-tools")->node.minor, 1);
	assert_int_equal(p.edits.n_nodes, 4);
	assert_string_equal(edit_env(&p.edits, "DRALET_GPU_0000_18_00_0_UUID"), UUID0);
	assert_string_equal(edit_env(&p.edits, "DRALET_GPU_0000_18_00_0_PCI_ADDRESS"), GPU0);
	assert_string_equal(edit_env(&p.edits, "DRALET_GPU_0000_18_00_0_MINOR"), "0");
	assert_string_equal(edit_env(&p.edits, "DRALET_GPU_0000_18_00_0_INDEX"), "0");
	assert_string_equal(edit_env(&p.edits, "DRALET_GPU_0000_18_00_0_DEVICE"), "gpu-0000-18-00-0");
	assert_string_equal(edit_env(&p.edits, "DRALET_GPU_0000_18_00_0_CLAIM_UID"),
			    "7f1c2b3a-0000-4000-8000-000000000001");
	assert_string_equal(edit_env(&p.edits, "DRALET_GPU_0000_18_00_0_REQUEST"), "gpu");
	assert_string_equal(edit_env(&p.edits, "NVIDIA_VISIBLE_DEVICES"), "void");
	assert_null(edit_env(&p.edits, "DRALET_GPU_0000_18_00_0_TIMESLICE"));
	/* driver libraries at their path and at their soname; absent ones skipped */
	assert_mount(&p.edits, "/" LIBDIR "/libcuda.so.550.54.15",
		     "/" LIBDIR "/libcuda.so.550.54.15");
	assert_mount(&p.edits, "/" LIBDIR "/libcuda.so.1", "/" LIBDIR "/libcuda.so.550.54.15");
	assert_non_null(edit_mount(&p.edits, "/" LIBDIR "/libnvidia-ml.so.1"));
	assert_non_null(edit_mount(&p.edits, "/" LIBDIR "/libnvidia-nvvm.so.4"));
	assert_non_null(edit_mount(&p.edits, "/" LIBDIR "/libnvidia-gpucomp.so.550.54.15"));
	assert_null(edit_mount(&p.edits, "/" LIBDIR "/libnvidia-ptxjitcompiler.so.1"));
	assert_null(edit_mount(&p.edits, "/" LIBDIR "/libcuda.so.535.104.05"));
	assert_non_null(edit_mount(&p.edits, "/usr/bin/nvidia-smi"));
	assert_int_equal(p.edits.n_mounts, 8);
	assert_int_equal(p.undo.n, 0);	/* nothing changed on the host */
	prep_teardown(&p);
}

/* One DRALET_<DEVICE>_<FIELD> rule for every backend: the GPU family's names
 * come from pcidev_env_name, which refuses a name that does not fit. */
static void test_env_name_rule(void **state)
{
	struct prep p;
	char name[PCIDEV_ENV_NAME_MAX];
	struct dralet_device *dev;

	(void)state;
	prep_setup(&p, NULL);
	dev = harness_device(&p.h, "gpu-0000-18-00-0");
	assert_non_null(dev);
	assert_int_equal(pcidev_env_name(dev, "UUID", name, sizeof(name)), 0);
	assert_string_equal(name, "DRALET_GPU_0000_18_00_0_UUID");
	assert_int_equal(prepare(&p, "gpu-0000-18-00-0", NULL), 0);
	assert_non_null(edit_env(&p.edits, name));
	assert_int_equal(pcidev_env_name(dev, "UUID", name, 28), -ENAMETOOLONG);
	assert_int_equal(pcidev_env_name(dev, "UUID", name, 29), 0);
	assert_int_equal(pcidev_env_name(dev, "UUID", name, 8), -ENAMETOOLONG);
	prep_teardown(&p);
}

static void test_host_driver_root_option(void **state)
{
	struct prep p;

	(void)state;
	prep_setup(&p, "\"hostDriverRoot\":\"/run/nvidia/driver\"");
	assert_int_equal(prepare(&p, "gpu-0000-18-00-0", NULL), 0);
	assert_mount(&p.edits, "/" LIBDIR "/libcuda.so.1",
		     "/run/nvidia/driver/" LIBDIR "/libcuda.so.550.54.15");
	prep_teardown(&p);
}

/* An ELF header of class @class and machine @machine at <d>/<rel>. */
static void write_elf(const char *d, const char *rel, unsigned char class, uint16_t machine)
{
	Elf64_Ehdr h = { .e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, class, ELFDATA2LSB,
				      EV_CURRENT },
			 .e_type = ET_DYN, .e_machine = machine };
	char path[4096];
	FILE *f;

	tree_write(d, rel, "");
	snprintf(path, sizeof(path), "%s/%s", d, rel);
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fwrite(&h, sizeof(h), 1, f), 1);
	fclose(f);
}

/* The ELF machine of the agent's own objects. */
static uint16_t this_machine(void)
{
#if defined(__x86_64__)
	return EM_X86_64;
#elif defined(__aarch64__)
	return EM_AARCH64;
#else
	return EM_NONE;
#endif
}

/* prep_setup's tree without the driver's files in the standard directory. */
static void prep_setup_driver_elsewhere(struct prep *p)
{
	static const char *const standard[] = { "libcuda.so.550.54.15", "libnvidia-ml.so.550.54.15",
		"libnvidia-nvvm.so.550.54.15", "libnvidia-gpucomp.so.550.54.15" };
	char path[4096];

	prep_setup(p, NULL);
	for (size_t i = 0; i < sizeof(standard) / sizeof(*standard); i++) {
		snprintf(path, sizeof(path), "%s/" LIBDIR "/%s", p->dir, standard[i]);
		assert_int_equal(unlink(path), 0);
	}
}

/* A driver kept outside the standard directories, as on GKE: the versioned
 * files in /usr/local/nvidia/lib64, which ld.so.conf names; the 32-bit
 * copies in directories named before it are not taken. */
static void test_driver_libs_from_ld_so_conf(void **state)
{
	const uint16_t machine = this_machine();
	struct prep p;

	(void)state;
	prep_setup_driver_elsewhere(&p);
	tree_write(p.dir, "etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
	tree_write(p.dir, "etc/ld.so.conf.d/00-i386.conf", "/usr/lib/i386-linux-gnu\n");
	tree_write(p.dir, "etc/ld.so.conf.d/nvidia.conf",
		   "/usr/local/nvidia/lib\n/usr/local/nvidia/lib64\n");
	write_elf(p.dir, "usr/lib/i386-linux-gnu/libcuda.so.550.54.15", ELFCLASS32, EM_386);
	write_elf(p.dir, "usr/local/nvidia/lib/libcuda.so.550.54.15", ELFCLASS32, EM_386);
	tree_write(p.dir, "usr/local/nvidia/lib/libnvidia-ml.so.550.54.15", "not an ELF object");
	write_elf(p.dir, "usr/local/nvidia/lib64/libcuda.so.550.54.15", ELFCLASS64, machine);
	write_elf(p.dir, "usr/local/nvidia/lib64/libnvidia-ml.so.550.54.15", ELFCLASS64, machine);
	write_elf(p.dir, "usr/local/nvidia/lib64/libnvidia-ptxjitcompiler.so.550.54.15",
		  ELFCLASS64, EM_S390);
	assert_int_equal(prepare(&p, "gpu-0000-18-00-0", NULL), 0);
	assert_mount(&p.edits, "/usr/local/nvidia/lib64/libcuda.so.550.54.15",
		     "/usr/local/nvidia/lib64/libcuda.so.550.54.15");
	assert_mount(&p.edits, "/usr/local/nvidia/lib64/libcuda.so.1",
		     "/usr/local/nvidia/lib64/libcuda.so.550.54.15");
	assert_mount(&p.edits, "/usr/local/nvidia/lib64/libnvidia-ml.so.1",
		     "/usr/local/nvidia/lib64/libnvidia-ml.so.550.54.15");
	assert_non_null(edit_mount(&p.edits, "/usr/bin/nvidia-smi"));
	assert_int_equal(p.edits.n_mounts, 5);	/* 2 libraries at 2 paths, nvidia-smi */
	prep_teardown(&p);
}

/* The versioned files elsewhere, only soname links in a standard directory
 * (absolute ones, followed below the driver root): mounted in that directory;
 * a link to another driver version's file is not taken. */
static void test_driver_libs_behind_soname_links(void **state)
{
	const uint16_t machine = this_machine();
	struct prep p;

	(void)state;
	prep_setup_driver_elsewhere(&p);
	write_elf(p.dir, "opt/nv/lib64/libcuda.so.550.54.15", ELFCLASS64, machine);
	assert_int_equal(tree_link(p.dir, "opt/nv/lib64/libcuda.so.1", "libcuda.so.550.54.15"), 0);
	assert_int_equal(tree_link(p.dir, "usr/lib/libcuda.so.1", "/opt/nv/lib64/libcuda.so.1"), 0);
	write_elf(p.dir, "opt/nv/lib64/libnvidia-ml.so.535.104.05", ELFCLASS64, machine);
	assert_int_equal(tree_link(p.dir, "usr/lib/libnvidia-ml.so.1",
				   "/opt/nv/lib64/libnvidia-ml.so.535.104.05"), 0);
	assert_int_equal(prepare(&p, "gpu-0000-18-00-0", NULL), 0);
	assert_mount(&p.edits, "/usr/lib/libcuda.so.550.54.15",
		     "/opt/nv/lib64/libcuda.so.550.54.15");
	assert_mount(&p.edits, "/usr/lib/libcuda.so.1", "/opt/nv/lib64/libcuda.so.550.54.15");
	assert_null(edit_mount(&p.edits, "/usr/lib/libnvidia-ml.so.1"));
	assert_int_equal(p.edits.n_mounts, 3);	/* libcuda at 2 paths, nvidia-smi */
	prep_teardown(&p);
}

/* Without nvmlLibrary the driver's own libnvidia-ml.so.<version> below the
 * driver root is loaded (here the fake NVML copied there), not the loader's. */
static void test_nvml_from_driver_root(void **state)
{
	char *so = build_path("tests/lib/fake-nvml.so"), data[4096], dst[4096], cmd[9000];
	struct harness h;
	struct dralet_device *dev;
	char *d = build_tree();

	(void)state;
	snprintf(dst, sizeof(dst), "%s/" LIBDIR "/libnvidia-ml.so.550.54.15", d);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", so, dst);
	assert_int_equal(system(cmd), 0);
	snprintf(data, sizeof(data), "%s/nvml.json", d);
	setenv("FAKE_NVML_DATA", data, 1);
	assert_int_equal(harness_init(&h, &gpu_nvidia_backend, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	assert_non_null(dev = harness_device(&h, "gpu-0000-18-00-0"));
	assert_non_null(dralet_device_find_attr(dev, "cudaComputeCapability"));	/* NVML's */
	harness_fini(&h);

	/* a copy that someone else may change is not loaded: procfs facts only */
	assert_int_equal(chmod(dst, 0666), 0);
	assert_int_equal(harness_init(&h, &gpu_nvidia_backend, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	assert_non_null(dev = harness_device(&h, "gpu-0000-18-00-0"));
	assert_null(dralet_device_find_attr(dev, "cudaComputeCapability"));
	harness_fini(&h);
	tree_remove(d);
	free(so);
}

static void test_two_gpus_in_one_container_do_not_collide(void **state)
{
	struct prep p;

	(void)state;
	prep_setup(&p, NULL);
	assert_int_equal(prepare(&p, "gpu-0000-18-00-0", NULL), 0);
	assert_int_equal(prepare(&p, "mig-0000-2a-00-0-1g-10gb-6", NULL), 0);
	assert_string_equal(edit_env(&p.edits, "DRALET_GPU_0000_18_00_0_UUID"), UUID0);
	assert_string_equal(edit_env(&p.edits, "DRALET_MIG_0000_2A_00_0_1G_10GB_6_UUID"), MIGUUID);
	assert_string_equal(edit_env(&p.edits, "DRALET_MIG_0000_2A_00_0_1G_10GB_6_PROFILE"),
			    "1g.10gb");
	assert_string_equal(edit_env(&p.edits, "DRALET_MIG_0000_2A_00_0_1G_10GB_6_MINOR"), "1");
	/* MIG: the GPU's node and both capability nodes */
	assert_non_null(edit_node(&p.edits, "/dev/nvidia1"));
	assert_int_equal(edit_node(&p.edits, "/dev/nvidia-caps/nvidia-cap219")->node.major, 510);
	assert_int_equal(edit_node(&p.edits, "/dev/nvidia-caps/nvidia-cap220")->node.minor, 220);
	prep_teardown(&p);
}

static void test_time_slicing_and_unprepare(void **state)
{
	struct prep p;
	char *log;
	const char *config = "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"GpuConfig\","
			     "\"sharing\":{\"strategy\":\"TimeSlicing\","
			     "\"timeSlicingConfig\":{\"interval\":\"Long\"}}}";

	(void)state;
	prep_setup(&p, NULL);
	assert_int_equal(gpu_nvidia_backend.validate_config(&p.h.ctx, config), 0);
	assert_int_equal(prepare(&p, "gpu-0000-18-00-0", config), 0);
	log = read_log(p.dir);
	assert_string_equal(log, "compute-policy --set-timeslice=3 -i " UUID0 "\n");
	free(log);
	assert_string_equal(edit_env(&p.edits, "DRALET_GPU_0000_18_00_0_TIMESLICE"), "Long");
	assert_string_equal(dralet_undo_get(&p.undo, "nvidia.timeslice.uuid"), UUID0);

	/* unprepare in a new process: a fresh backend state, the undo state only */
	struct harness h2;
	assert_int_equal(harness_init(&h2, &gpu_nvidia_backend, p.dir, "{\"nvmlLibrary\":\"/x\"}"), 0);
	assert_int_equal(gpu_nvidia_backend.unprepare(&h2.ctx, NULL, &p.req.claim, &p.undo), 0);
	log = read_log(p.dir);
	assert_string_equal(log, "compute-policy --set-timeslice=3 -i " UUID0 "\n"
				 "compute-policy --set-timeslice=0 -i " UUID0 "\n");
	free(log);
	/* the driver root is not "/" (the host's files in the agent's container):
	 * the tool finds libnvidia-ml in the driver's library directory there */
	char want[4200], *env = read_tree_file(p.dir, "smi.env");
	snprintf(want, sizeof(want), "%s/" LIBDIR "\n", p.dir);
	assert_string_equal(env, want);
	free(env);
	/* and again: idempotent */
	assert_int_equal(gpu_nvidia_backend.unprepare(&h2.ctx, NULL, &p.req.claim, &p.undo), 0);
	harness_fini(&h2);
	prep_teardown(&p);
}

static void test_time_slicing_default_interval(void **state)
{
	struct prep p;
	char *log;

	(void)state;
	prep_setup(&p, NULL);
	assert_int_equal(prepare(&p, "gpu-0000-18-00-0",
				 "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"GpuConfig\","
				 "\"sharing\":{\"strategy\":\"TimeSlicing\"}}"),
			 0);
	log = read_log(p.dir);
	assert_string_equal(log, "compute-policy --set-timeslice=0 -i " UUID0 "\n");
	free(log);
	prep_teardown(&p);
}

static void test_time_slicing_tool_absent(void **state)
{
	struct prep p;
	const char *config = "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"GpuConfig\","
			     "\"sharing\":{\"strategy\":\"TimeSlicing\","
			     "\"timeSlicingConfig\":{\"interval\":\"Short\"}}}";

	(void)state;
	prep_setup(&p, "\"nvidiaSmi\":\"/nonexistent/nvidia-smi\"");
	assert_int_equal(prepare(&p, "gpu-0000-18-00-0", config), -ENOENT);
	assert_non_null(strstr(p.h.ctx.error, "time-slicing needs nvidia-smi"));
	assert_non_null(strstr(p.h.ctx.error, "/nonexistent/nvidia-smi"));
	prep_teardown(&p);

	/* and without the option, when the driver root has none */
	prep_setup(&p, NULL);
	char path[4096];
	snprintf(path, sizeof(path), "%s/usr/bin/nvidia-smi", p.dir);
	unlink(path);
	assert_int_equal(prepare(&p, "gpu-0000-18-00-0", config), -ENOENT);
	assert_non_null(strstr(p.h.ctx.error, "nvidia-smi"));
	prep_teardown(&p);
}

static void test_time_slicing_tool_fails(void **state)
{
	struct prep p;

	(void)state;
	prep_setup(&p, NULL);
	tree_write(p.dir, "smi.exit", "4");
	assert_int_equal(prepare(&p, "gpu-0000-18-00-0",
				 "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"GpuConfig\","
				 "\"sharing\":{\"strategy\":\"TimeSlicing\"}}"),
			 -EIO);
	assert_non_null(strstr(p.h.ctx.error, "exit 4"));
	assert_non_null(strstr(p.h.ctx.error, "Insufficient Permissions"));
	/* the undo state was kept: unprepare still resets */
	assert_string_equal(dralet_undo_get(&p.undo, "nvidia.timeslice.uuid"), UUID0);
	prep_teardown(&p);
}

static void test_time_slicing_option_tool(void **state)
{
	struct prep p;
	char opt[4096], *log;

	(void)state;
	char *d = tree_new();
	write_fake_smi(d, "opt/nvidia-smi");
	snprintf(opt, sizeof(opt), "\"nvidiaSmi\":\"%s/opt/nvidia-smi\"", d);
	prep_setup(&p, opt);
	assert_int_equal(prepare(&p, "gpu-0000-18-00-0",
				 "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"GpuConfig\","
				 "\"sharing\":{\"strategy\":\"TimeSlicing\","
				 "\"timeSlicingConfig\":{\"interval\":\"Medium\"}}}"),
			 0);
	log = read_log(d);
	assert_string_equal(log, "compute-policy --set-timeslice=2 -i " UUID0 "\n");
	free(log);
	log = read_log(p.dir);
	assert_string_equal(log, "");	/* the driver root's one was not used */
	free(log);
	prep_teardown(&p);
	tree_remove(d);
}

static void test_admin_access_changes_nothing(void **state)
{
	struct prep p;
	char *log;

	(void)state;
	prep_setup(&p, NULL);
	p.req.admin_access = true;
	assert_int_equal(prepare(&p, "gpu-0000-18-00-0",
				 "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"GpuConfig\","
				 "\"sharing\":{\"strategy\":\"TimeSlicing\"}}"),
			 0);
	log = read_log(p.dir);
	assert_string_equal(log, "");
	free(log);
	assert_non_null(edit_node(&p.edits, "/dev/nvidia0"));
	assert_int_equal(p.undo.n, 0);
	prep_teardown(&p);
}

static void test_mig_configs(void **state)
{
	struct prep p;
	char *log;

	(void)state;
	prep_setup(&p, NULL);
	assert_int_equal(prepare(&p, "mig-0000-2a-00-0-1g-10gb-6",
				 "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"GpuConfig\"}"),
			 -EINVAL);
	assert_non_null(strstr(p.h.ctx.error, "use kind MigDeviceConfig"));
	assert_int_equal(prepare(&p, "gpu-0000-18-00-0",
				 "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\","
				 "\"kind\":\"MigDeviceConfig\"}"),
			 -EINVAL);
	assert_non_null(strstr(p.h.ctx.error, "use kind GpuConfig"));
	assert_int_equal(prepare(&p, "mig-0000-2a-00-0-1g-10gb-6",
				 "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\","
				 "\"kind\":\"MigDeviceConfig\",\"sharing\":{\"strategy\":\"TimeSlicing\"}}"),
			 0);
	log = read_log(p.dir);
	assert_string_equal(log, "");	/* MIG devices time-slice anyway */
	free(log);
	prep_teardown(&p);
}

static void test_config_validation(void **state)
{
	static const struct {
		const char *config, *message;
	} bad[] = {
		{ "[]", "must be a JSON object" },
		{ "{\"apiVersion\":", "not valid JSON" },
		{ "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"GpuConfig\"} x",
		  "not valid JSON" },
		{ "{\"kind\":\"GpuConfig\"}", "apiVersion: is required (want \"gpu.dralet.dev/v1alpha1\")" },
		{ "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\"}", "kind: is required (one of GpuConfig, MigDeviceConfig)" },
		{ "{\"apiVersion\":\"resource.nvidia.com/v1beta1\",\"kind\":\"GpuConfig\"}",
		  "apiVersion: \"resource.nvidia.com/v1beta1\" is not supported" },
		{ "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"GPUConfig\"}",
		  "kind: \"GPUConfig\" is not one of GpuConfig, MigDeviceConfig" },
		{ "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"GpuConfig\",\"sharin\":{}}",
		  "unknown field \"sharin\"" },
		{ "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"GpuConfig\",\"sharing\":"
		  "{\"strategy\":\"TimeSlicing\",\"mps\":{}}}",
		  "GpuConfig.sharing: unknown field \"mps\" (known: strategy, timeSlicingConfig)" },
		{ "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"GpuConfig\",\"sharing\":"
		  "{\"strategy\":\"TimeSlicing\",\"timeSlicingConfig\":{\"interval\":\"Forever\"}}}",
		  "interval: \"Forever\" is not one of Default, Short, Medium, Long" },
		{ "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"GpuConfig\",\"sharing\":"
		  "{\"strategy\":\"TimeSlicing\",\"timeSlicingConfig\":{\"interval\":1}}}",
		  "GpuConfig.sharing.timeSlicingConfig.interval: must be one of Default," },
		{ "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"GpuConfig\",\"sharing\":"
		  "{\"strategy\":\"TimeSlicing\",\"timeSlicingConfig\":{\"intervall\":\"Long\"}}}",
		  "GpuConfig.sharing.timeSlicingConfig: unknown field \"intervall\"" },
		{ "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"GpuConfig\",\"sharing\":"
		  "{\"strategy\":\"MPS\"}}", "\"MPS\" is not supported" },
		{ "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"GpuConfig\",\"sharing\":"
		  "{\"strategy\":\"Exclusive\"}}", "unknown sharing strategy" },
		{ "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"GpuConfig\",\"sharing\":"
		  "{}}", "GpuConfig.sharing.strategy: is required" },
		{ "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"GpuConfig\",\"sharing\":"
		  "\"TimeSlicing\"}", "GpuConfig.sharing: must be an object" },
		{ "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"MigDeviceConfig\","
		  "\"sharing\":{\"strategy\":\"TimeSlicing\",\"timeSlicingConfig\":{\"interval\":"
		  "\"Long\"}}}", "not supported for MIG devices" },
	};
	static const char *const good[] = {
		NULL,
		"",
		"{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"GpuConfig\"}",
		"{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"GpuConfig\",\"sharing\":null}",
		"{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"GpuConfig\",\"sharing\":"
		"{\"strategy\":\"TimeSlicing\",\"timeSlicingConfig\":{\"interval\":\"Default\"}}}",
		"{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"MigDeviceConfig\","
		"\"sharing\":{\"strategy\":\"TimeSlicing\"}}",
	};
	struct harness h;

	(void)state;
	assert_int_equal(harness_init(&h, &gpu_nvidia_backend, NULL, "{\"nvmlLibrary\":\"/x\"}"), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		h.ctx.error[0] = '\0';
		int r = gpu_nvidia_backend.validate_config(&h.ctx, bad[i].config);
		if (r != -EINVAL || !strstr(h.ctx.error, bad[i].message))
			fail_msg("config %s: got %d \"%s\", want \"%s\"", bad[i].config, r,
				 h.ctx.error, bad[i].message);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++)
		if (gpu_nvidia_backend.validate_config(&h.ctx, good[i]) != 0)
			fail_msg("config %s rejected: %s", good[i] ? good[i] : "(null)", h.ctx.error);
	/* an operator who renamed the driver may use its own group */
	h.ctx.driver = "gpu.nvidia.com";
	assert_int_equal(gpu_nvidia_backend.validate_config(
				 &h.ctx, "{\"apiVersion\":\"gpu.nvidia.com/v1alpha1\",\"kind\":\"GpuConfig\"}"),
			 0);
	harness_fini(&h);
}

static void test_no_time_slicing_elsewhere(void **state)
{
	const struct dralet_backend *const backends[] = { &gpu_amdgpu_backend, &gpu_intel_backend,
							   &gpu_drm_backend };
	const char *ts = "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"GpuConfig\","
			 "\"sharing\":{\"strategy\":\"TimeSlicing\"}}";

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		struct harness h;
		assert_int_equal(harness_init(&h, backends[i], NULL, NULL), 0);
		assert_int_equal(backends[i]->validate_config(&h.ctx, ts), -EOPNOTSUPP);
		assert_non_null(strstr(h.ctx.error, "not supported by this device"));
		assert_int_equal(backends[i]->validate_config(
					 &h.ctx, "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\","
						 "\"kind\":\"GpuConfig\"}"),
				 0);
		assert_int_equal(backends[i]->validate_config(
					 &h.ctx, "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\","
						 "\"kind\":\"MigDeviceConfig\"}"),
				 -EINVAL);
		assert_int_equal(backends[i]->validate_config(&h.ctx, "{\"kind\":1}"), -EINVAL);
		harness_fini(&h);
	}
}

static void test_run_tool_timeout(void **state)
{
	char *d = tree_new(), path[4096], out[64];

	(void)state;
	tree_write(d, "slow.sh", "#!/bin/sh\nexec sleep 5\n");
	snprintf(path, sizeof(path), "%s/slow.sh", d);
	chmod(path, 0755);
	char *argv[] = { path, NULL };
	assert_int_equal(gpu_run_tool(argv, NULL, 200, out, sizeof(out)), -ETIMEDOUT);
	char *none[] = { "/nonexistent/tool", NULL };
	assert_int_equal(gpu_run_tool(none, NULL, 200, out, sizeof(out)), -ENOENT);
	char *relative[] = { "nvidia-smi", NULL };
	assert_int_equal(gpu_run_tool(relative, NULL, 200, out, sizeof(out)), -EINVAL);
	tree_remove(d);
}

/* A full GPU shared by memory (nvidia_sharing.c): published shareable, each
 * share prepared with its ID and memory; a time-slice only for a share that
 * holds all the memory; without option sharing "true" it is exclusive. */
static void test_shared_gpu(void **state)
{
	static const struct dralet_capacity small[] = { { "memory", "8Gi" }, { "shares", "1" } };
	static const struct dralet_capacity all[] = { { "gpu.dralet.dev/memory", "80Gi" } };
	const char *config = "{\"apiVersion\":\"gpu.dralet.dev/v1alpha1\",\"kind\":\"GpuConfig\","
			     "\"sharing\":{\"strategy\":\"TimeSlicing\","
			     "\"timeSlicingConfig\":{\"interval\":\"Long\"}}}";
	const struct dralet_capacity_policy *mem, *shares;
	struct dralet_device *g;
	struct prep p;
	char *log;

	(void)state;
	prep_setup(&p, "\"sharing\":\"true\"");
	g = harness_device(&p.h, "gpu-0000-18-00-0");
	assert_true(dralet_device_allows_multiple(g));
	mem = dralet_device_capacity_policy(g, "memory");
	assert_non_null(mem);
	assert_string_equal(mem->default_value, "80Gi");
	assert_string_equal(mem->range_min, "1Gi");
	assert_string_equal(mem->range_max, "80Gi");
	assert_string_equal(mem->range_step, "1Gi");
	shares = dralet_device_capacity_policy(g, "shares");
	assert_non_null(shares);
	assert_string_equal(shares->default_value, "1");
	assert_string_equal(shares->range_max, "100");
	/* MIG devices are not shared */
	assert_false(dralet_device_allows_multiple(harness_device(&p.h, "mig-0000-2a-00-0-1g-10gb-6")));

	p.req.share_id = "5a5a5a5a-0000-4000-8000-00000000000a";
	p.req.consumed = small;
	p.req.n_consumed = 2;
	assert_int_equal(prepare(&p, "gpu-0000-18-00-0", NULL), 0);
	assert_string_equal(edit_env(&p.edits, "DRALET_GPU_0000_18_00_0_SHARE_ID"), p.req.share_id);
	assert_string_equal(edit_env(&p.edits, "DRALET_GPU_0000_18_00_0_SHARE_MEMORY"), "8589934592");
	edits_clear(&p.edits);
	assert_int_equal(prepare(&p, "gpu-0000-18-00-0", config), -EINVAL);
	assert_non_null(strstr(p.h.ctx.error, "changes the whole GPU"));
	log = read_log(p.dir);
	assert_string_equal(log, "");
	free(log);
	edits_clear(&p.edits);
	p.req.consumed = all;
	p.req.n_consumed = 1;
	assert_int_equal(prepare(&p, "gpu-0000-18-00-0", config), 0);
	log = read_log(p.dir);
	assert_string_equal(log, "compute-policy --set-timeslice=3 -i " UUID0 "\n");
	free(log);
	prep_teardown(&p);

	prep_setup(&p, NULL);	/* the default: exclusive */
	g = harness_device(&p.h, "gpu-0000-18-00-0");
	assert_false(dralet_device_allows_multiple(g));
	assert_null(dralet_device_capacity_policy(g, "memory"));
	for (size_t i = 0; i < dralet_device_n_capacities(g); i++)
		assert_string_not_equal(dralet_device_capacity(g, i)->name, "shares");
	prep_teardown(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prepare_full_gpu_edits),
		cmocka_unit_test(test_host_driver_root_option),
		cmocka_unit_test(test_driver_libs_from_ld_so_conf),
		cmocka_unit_test(test_driver_libs_behind_soname_links),
		cmocka_unit_test(test_nvml_from_driver_root),
		cmocka_unit_test(test_env_name_rule),
		cmocka_unit_test(test_two_gpus_in_one_container_do_not_collide),
		cmocka_unit_test(test_time_slicing_and_unprepare),
		cmocka_unit_test(test_time_slicing_default_interval),
		cmocka_unit_test(test_time_slicing_tool_absent),
		cmocka_unit_test(test_time_slicing_tool_fails),
		cmocka_unit_test(test_time_slicing_option_tool),
		cmocka_unit_test(test_admin_access_changes_nothing),
		cmocka_unit_test(test_mig_configs),
		cmocka_unit_test(test_config_validation),
		cmocka_unit_test(test_no_time_slicing_elsewhere),
		cmocka_unit_test(test_run_tool_timeout),
		cmocka_unit_test(test_shared_gpu),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
