/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Simulated boards: every board in boards/ materializes, the files have the
 * kernel's formats, VFs sit at PF routing ID + offset + n*stride, links
 * resolve, and malformed boards fail with a located message (never a
 * crash).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "boards/sim/board.h"
#include "boards/sim/board_model.h"
#include "board_snippet.h"

static char source_dir[PATH_MAX - 64];

/* The repository root: the working directory under make, else two levels
 * above the test binary (build/tests/test_board). */
static const char *root_dir(void)
{
	char exe[PATH_MAX];
	ssize_t n;

	if (source_dir[0])
		return source_dir;
	if (access("boards/hgx-h100.yaml", R_OK) == 0) {
		snprintf(source_dir, sizeof(source_dir), ".");
		return source_dir;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	for (int i = 0; i < 3; i++)
		*strrchr(exe, '/') = '\0';
	snprintf(source_dir, sizeof(source_dir), "%.3000s", exe);
	return source_dir;
}

static char *board_path(const char *name)
{
	char *p;

	assert_true(asprintf(&p, "%s/boards/%s.yaml", root_dir(), name) > 0);
	return p;
}

static char *read_text(const char *dir, const char *rel)
{
	char path[PATH_MAX];
	FILE *f;
	char *buf;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "r");
	if (!f) {
		fail_msg("cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	buf = calloc(1, 1 << 20);
	assert_non_null(buf);
	n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void expect_file(const char *dir, const char *rel, const char *want)
{
	char *got = read_text(dir, rel);

	if (strcmp(got, want))
		fail_msg("%s: got '%s', want '%s'", rel, got, want);
	free(got);
}

static void expect_contains(const char *dir, const char *rel, const char *want)
{
	char *got = read_text(dir, rel);

	if (!strstr(got, want))
		fail_msg("%s: '%s' not in:\n%s", rel, want, got);
	free(got);
}

static void expect_link(const char *dir, const char *rel, const char *want)
{
	char path[PATH_MAX], target[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0) {
		fail_msg("readlink %s: %s", path, strerror(errno));
		return;
	}
	target[n] = '\0';
	if (strcmp(target, want))
		fail_msg("%s -> '%s', want '%s'", rel, target, want);
}

static char *materialize(const char *name)
{
	char err[1024], *dir = NULL, *path = board_path(name);
	int r = board_materialize_temp(path, &dir, err, sizeof(err));

	if (r < 0)
		fail_msg("%s: %s", name, err);
	free(path);
	return dir;
}

static void cleanup(char *dir)
{
	assert_int_equal(board_remove_tree(dir), 0);
	assert_int_equal(access(dir, F_OK), -1);
	free(dir);
}

static size_t count_entries(const char *dir, const char *rel)
{
	char path[PATH_MAX];
	DIR *d;
	struct dirent *de;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static void test_every_board_materializes(void **state)
{
	char dir[PATH_MAX];
	DIR *d;
	struct dirent *de;
	size_t boards = 0;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/boards", root_dir());
	d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char name[256], err[1024], *tree;
		struct board b;

		if (len < 6 || strcmp(de->d_name + len - 5, ".yaml"))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(len - 5), de->d_name);
		memset(&b, 0, sizeof(b));
		{
			char *path = board_path(name);

			if (board_load(path, &b, err, sizeof(err)) < 0)
				fail_msg("%s", err);
			free(path);
		}
		tree = materialize(name);
		/* one bus/pci/devices entry per function, a sys, dev and proc */
		assert_int_equal(count_entries(tree, "sys/bus/pci/devices"), b.n_funcs);
		assert_true(count_entries(tree, "dev") > 0);
		assert_true(count_entries(tree, "proc") > 0);
		expect_contains(tree, "proc/sys/kernel/random/boot_id", "-");
		board_free(&b);
		cleanup(tree);
		boards++;
	}
	closedir(d);
	assert_true(boards >= 7);
}

static void test_pci_formats(void **state)
{
	char *t = materialize("vm-like");
	const char *nic = "sys/bus/pci/devices/0000:01:00.0";
	char rel[PATH_MAX], *resource;
	unsigned char config[256];
	int fd, lines = 0;

	(void)state;
	snprintf(rel, sizeof(rel), "%s/vendor", nic);
	expect_file(t, rel, "0x15b3\n");
	snprintf(rel, sizeof(rel), "%s/device", nic);
	expect_file(t, rel, "0x1021\n");
	snprintf(rel, sizeof(rel), "%s/subsystem_device", nic);
	expect_file(t, rel, "0x0041\n");
	snprintf(rel, sizeof(rel), "%s/class", nic);
	expect_file(t, rel, "0x020000\n");
	snprintf(rel, sizeof(rel), "%s/revision", nic);
	expect_file(t, rel, "0x00\n");
	snprintf(rel, sizeof(rel), "%s/numa_node", nic);
	expect_file(t, rel, "0\n");
	snprintf(rel, sizeof(rel), "%s/local_cpulist", nic);
	expect_file(t, rel, "0-7\n");
	snprintf(rel, sizeof(rel), "%s/local_cpus", nic);
	expect_file(t, rel, "ff\n");
	snprintf(rel, sizeof(rel), "%s/current_link_speed", nic);
	expect_file(t, rel, "16.0 GT/s PCIe\n");
	snprintf(rel, sizeof(rel), "%s/max_link_width", nic);
	expect_file(t, rel, "16\n");
	snprintf(rel, sizeof(rel), "%s/driver_override", nic);
	expect_file(t, rel, "(null)\n");
	snprintf(rel, sizeof(rel), "%s/modalias", nic);
	expect_file(t, rel, "pci:v000015B3d00001021sv000015B3sd00000041bc02sc00i00\n");
	snprintf(rel, sizeof(rel), "%s/uevent", nic);
	expect_file(t, rel, "DRIVER=mlx5_core\nPCI_CLASS=20000\nPCI_ID=15B3:1021\n"
		    "PCI_SUBSYS_ID=15B3:0041\nPCI_SLOT_NAME=0000:01:00.0\n"
		    "MODALIAS=pci:v000015B3d00001021sv000015B3sd00000041bc02sc00i00\n");
	snprintf(rel, sizeof(rel), "%s/sriov_vf_device", nic);
	expect_file(t, rel, "101e\n");
	snprintf(rel, sizeof(rel), "%s/sriov_totalvfs", nic);
	expect_file(t, rel, "8\n");
	snprintf(rel, sizeof(rel), "%s/sriov_numvfs", nic);
	expect_file(t, rel, "4\n");
	snprintf(rel, sizeof(rel), "%s/sriov_drivers_autoprobe", nic);
	expect_file(t, rel, "1\n");

	/* 13 resource lines on an endpoint, 17 on a bridge */
	snprintf(rel, sizeof(rel), "%s/resource", nic);
	resource = read_text(t, rel);
	for (char *p = resource; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 13);
	assert_int_equal(strncmp(resource, "0x0000", 6), 0);
	free(resource);
	resource = read_text(t, "sys/bus/pci/devices/0000:00:01.0/resource");
	lines = 0;
	for (char *p = resource; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 17);
	free(resource);

	/* config space: IDs, class, header type and bridge bus numbers */
	snprintf(rel, sizeof(rel), "%s/sys/bus/pci/devices/0000:00:01.0/config", t);
	fd = open(rel, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, config, sizeof(config)), 256);
	close(fd);
	assert_int_equal(config[0] | config[1] << 8, 0x8086);
	assert_int_equal(config[2] | config[3] << 8, 0x2030);
	assert_int_equal(config[0x0b], 0x06);
	assert_int_equal(config[0x0a], 0x04);
	assert_int_equal(config[0x0e] & 0x7f, 1);
	assert_int_equal(config[0x18], 0x00);
	assert_int_equal(config[0x19], 0x01);
	assert_int_equal(config[0x1a], 0x01);
	expect_file(t, "sys/bus/pci/devices/0000:00:01.0/secondary_bus_number", "1\n");
	expect_file(t, "sys/bus/pci/devices/0000:00:01.0/subordinate_bus_number", "1\n");

	/* links, like the kernel's */
	expect_link(t, "sys/bus/pci/devices/0000:01:00.0",
		    "../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0");
	expect_link(t, "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/driver",
		    "../../../../bus/pci/drivers/mlx5_core");
	expect_link(t, "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/subsystem",
		    "../../../../bus/pci");
	expect_link(t, "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/virtfn0", "../0000:01:00.1");
	expect_link(t, "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.3/physfn", "../0000:01:00.0");
	expect_link(t, "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.3/driver",
		    "../../../../bus/pci/drivers/vfio-pci");
	expect_link(t, "sys/bus/pci/drivers/mlx5_core/0000:01:00.0",
		    "../../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0");
	expect_link(t, "sys/class/net/enp1s0np0",
		    "../../devices/pci0000:00/0000:00:01.0/0000:01:00.0/net/enp1s0np0");
	expect_file(t, "sys/class/pci_bus/0000:01/cpulistaffinity", "0-7\n");
	expect_file(t, "sys/devices/system/node/node0/cpulist", "0-7\n");
	expect_file(t, "sys/devices/system/node/online", "0-0\n");
	cleanup(t);
}

static void test_class_devices(void **state)
{
	char *t = materialize("vm-like");

	(void)state;
	expect_file(t, "sys/class/net/enp1s0np0/mtu", "9000\n");
	expect_file(t, "sys/class/net/enp1s0np0/operstate", "up\n");
	expect_file(t, "sys/class/net/enp1s0np0/speed", "200000\n");
	expect_contains(t, "sys/class/net/enp1s0np0/uevent", "INTERFACE=enp1s0np0\nIFINDEX=");
	/* VF netdevs from the template, none for VFs on vfio-pci */
	expect_file(t, "sys/class/net/enp1s0np0v1/operstate", "up\n");
	assert_int_equal(count_entries(t, "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.3/net"), 0);
	expect_file(t, "sys/class/infiniband/mlx5_0/node_type", "1: CA\n");
	expect_file(t, "sys/class/infiniband/mlx5_0/fw_ver", "28.39.1002\n");
	expect_file(t, "sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
	expect_file(t, "sys/class/infiniband/mlx5_0/ports/1/phys_state", "5: LinkUp\n");
	expect_file(t, "sys/class/infiniband/mlx5_0/ports/1/link_layer", "Ethernet\n");
	expect_file(t, "sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0", "enp1s0np0\n");
	expect_file(t, "sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/1", "RoCE v2\n");
	expect_file(t, "sys/class/infiniband/mlx5_1/ports/1/gid_attrs/ndevs/0", "enp1s0np0v0\n");
	expect_file(t, "sys/class/infiniband_verbs/uverbs0/ibdev", "mlx5_0\n");
	expect_file(t, "sys/class/infiniband_verbs/uverbs0/dev", "231:192\n");
	expect_link(t, "sys/class/infiniband_verbs/uverbs0/device", "../../../0000:01:00.0");
	expect_file(t, "sys/class/infiniband_mad/umad0/port", "1\n");
	expect_file(t, "sys/class/misc/rdma_cm/dev", "10:254\n");
	expect_file(t, "sys/class/misc/vfio/dev", "10:196\n");
	expect_file(t, "sys/class/block/nvme0n1p2/partition", "2\n");
	expect_link(t, "sys/dev/block/259:2",
		    "../../devices/pci0000:00/0000:00:03.0/0000:03:00.0/nvme/nvme0/nvme0n1/nvme0n1p2");
	expect_link(t, "sys/dev/char/231:192",
		    "../../devices/pci0000:00/0000:00:01.0/0000:01:00.0/infiniband_verbs/uverbs0");
	/* device nodes and umockdev's major:minor records */
	assert_int_equal(access(t, F_OK), 0);
	expect_link(t, "dev/.node/infiniband_uverbs0", "231:192");
	expect_link(t, "dev/.node/nvidia0", "195:0");
	expect_link(t, "dev/.node/vfio_vfio", "10:196");
	{
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/dev/infiniband/rdma_cm", t);
		assert_int_equal(access(path, F_OK), 0);
		snprintf(path, sizeof(path), "%s/dev/nvidia-uvm", t);
		assert_int_equal(access(path, F_OK), 0);
	}
	cleanup(t);
}

/* VF n at PF routing ID + offset + n*stride, also across a bus boundary. */
static void test_vf_routing_ids(void **state)
{
	char *t = materialize("e810");

	(void)state;
	expect_link(t, "sys/bus/pci/devices/0000:3b:00.0/virtfn0", "../0000:3b:01.0");
	expect_link(t, "sys/bus/pci/devices/0000:3b:00.0/virtfn9", "../0000:3b:02.1");
	expect_link(t, "sys/bus/pci/devices/0000:3b:00.0/virtfn63", "../0000:3b:08.7");
	expect_file(t, "sys/bus/pci/devices/0000:3b:00.0/sriov_offset", "8\n");
	expect_file(t, "sys/bus/pci/devices/0000:3b:00.0/sriov_vf_device", "1889\n");
	expect_file(t, "sys/bus/pci/devices/0000:3b:08.7/device", "0x1889\n");
	expect_link(t, "sys/bus/pci/devices/0000:3b:08.7/driver", "../../../../bus/pci/drivers/vfio-pci");
	expect_link(t, "sys/bus/pci/devices/0000:3b:01.0/driver", "../../../../bus/pci/drivers/iavf");
	/* VF 48's group is a vfio group node */
	{
		char rel[PATH_MAX], target[PATH_MAX], node[PATH_MAX];
		ssize_t n;

		snprintf(rel, sizeof(rel), "%s/sys/bus/pci/devices/0000:3b:07.0/iommu_group", t);
		n = readlink(rel, target, sizeof(target) - 1);
		assert_true(n > 0);
		target[n] = '\0';
		snprintf(node, sizeof(node), "%s/dev/vfio/%s", t, strrchr(target, '/') + 1);
		assert_int_equal(access(node, F_OK), 0);
	}
	cleanup(t);

	t = materialize("hgx-h100");
	/* 16 VFs, offset 1 stride 1: 04:00.1 ... 04:02.0 */
	expect_link(t, "sys/bus/pci/devices/0000:04:00.0/virtfn15", "../0000:04:02.0");
	expect_file(t, "sys/bus/pci/devices/0000:04:02.0/physfn/vendor", "0x15b3\n");
	cleanup(t);
}

/* iommu_group: null leaves a function outside every group: no iommu_group
 * link, no group directory, and on vfio-pci no vfio group node; the next
 * function still gets the first free number. */
static void test_function_in_no_iommu_group(void **state)
{
	char *t = board_tree("board: no-group\n"
			     "pci:\n"
			     "  - root: \"0000:00\"\n"
			     "    devices:\n"
			     "      - {bdf: 00:02.0, id: \"1e60:2864\", class: 0x120000, driver: vfio-pci,\n"
			     "         iommu_group: null}\n"
			     "      - {bdf: 00:03.0, id: \"1e60:2864\", class: 0x120000, driver: vfio-pci}\n");
	char path[PATH_MAX];

	(void)state;
	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/0000:00:02.0/iommu_group", t);
	assert_int_equal(access(path, F_OK), -1);
	expect_link(t, "sys/bus/pci/devices/0000:00:03.0/iommu_group",
		    "../../../kernel/iommu_groups/0");
	assert_int_equal(count_entries(t, "sys/kernel/iommu_groups"), 1);
	assert_int_equal(count_entries(t, "sys/class/vfio"), 1);
	cleanup(t);
}

/* vfs: settings of single VFs: a shared IOMMU group, no netdev, no RDMA device. */
static void test_vf_settings(void **state)
{
	char *t = board_tree("board: vf-settings\n"
			     "pci:\n"
			     "  - root: \"0000:00\"\n"
			     "    devices:\n"
			     "      - bdf: 00:04.0\n"
			     "        id: \"15b3:1021\"\n"
			     "        class: 0x020000\n"
			     "        driver: mlx5_core\n"
			     "        net: {name: eth0}\n"
			     "        infiniband: {name: mlx5_0}\n"
			     "        sriov:\n"
			     "          total: 4\n"
			     "          vf_id: \"15b3:101e\"\n"
			     "          vf_driver: mlx5_core\n"
			     "          vf_net: \"{pf}v{n}\"\n"
			     "          vf_rdma: mlx5_\n"
			     "          vfs: {0: {net: false}, 1: {rdma: false, iommu_group: 40},\n"
			     "                3: {driver: null, iommu_group: 40}}\n");
	char path[PATH_MAX];

	(void)state;
	snprintf(path, sizeof(path), "%s/sys/class/net/eth0v0", t);
	assert_int_equal(access(path, F_OK), -1);
	expect_file(t, "sys/class/infiniband/mlx5_1/device/vendor", "0x15b3\n");
	expect_link(t, "sys/class/infiniband/mlx5_1/device", "../../../0000:00:04.1");
	expect_file(t, "sys/class/net/eth0v1/mtu", "1500\n");
	expect_link(t, "sys/class/infiniband/mlx5_2/device", "../../../0000:00:04.3");
	expect_link(t, "sys/bus/pci/devices/0000:00:04.2/iommu_group",
		    "../../../kernel/iommu_groups/40");
	expect_link(t, "sys/bus/pci/devices/0000:00:04.4/iommu_group",
		    "../../../kernel/iommu_groups/40");
	assert_int_equal(count_entries(t, "sys/kernel/iommu_groups/40/devices"), 2);
	assert_int_equal(count_entries(t, "sys/class/infiniband"), 3);
	cleanup(t);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Offset and stride that push VFs onto the next bus: the bridge's
 * subordinate bus grows to cover them. */
static void test_vfs_spill_onto_next_bus(void **state)
{
	static const char yaml[] =
		"board: spill\n"
		"pci:\n"
		"  - root: \"0000:00\"\n"
		"    devices:\n"
		"      - bdf: 00:01.0\n"
		"        id: 8086:2030\n"
		"        devices:\n"
		"          - bdf: 01:00.0\n"
		"            id: 15b3:1021\n"
		"            class: 0x020000\n"
		"            driver: mlx5_core\n"
		"            sriov: {total: 200, num: 130, offset: 2, stride: 2, vf_id: 15b3:101e}\n"
		"      - bdf: 00:02.0\n"
		"        id: 8086:2031\n"
		"        type: root-port\n";
	char path[] = "/tmp/dralet-test-board-XXXXXX.yaml", err[1024], *dir = NULL;
	int fd = mkstemps(path, 5);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	write_file(path, yaml);
	if (board_materialize_temp(path, &dir, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	/* VF 127: 0x100 + 2 + 254 = 0x200 -> 02:00.0; VF 129 -> 02:00.4 */
	expect_link(dir, "sys/bus/pci/devices/0000:01:00.0/virtfn127", "../0000:02:00.0");
	expect_link(dir, "sys/bus/pci/devices/0000:01:00.0/virtfn129", "../0000:02:00.4");
	expect_link(dir, "sys/bus/pci/devices/0000:02:00.4",
		    "../../../devices/pci0000:00/0000:00:01.0/0000:02:00.4");
	expect_file(dir, "sys/bus/pci/devices/0000:00:01.0/subordinate_bus_number", "2\n");
	/* the empty root port gets the next free bus */
	expect_file(dir, "sys/bus/pci/devices/0000:00:02.0/secondary_bus_number", "3\n");
	cleanup(dir);
	unlink(path);
}

/* Every symlink below sys/ resolves inside the tree. */
static int check_links(int base, const char *rel, size_t *n_links)
{
	DIR *d;
	struct dirent *de;
	int fd = openat(base, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);

	if (fd < 0)
		return -1;
	d = fdopendir(fd);
	while ((de = readdir(d))) {
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			fail_msg("%s/%s: %s", rel, de->d_name, strerror(errno));
		if (S_ISLNK(st.st_mode)) {
			(*n_links)++;
			if (fstatat(dirfd(d), de->d_name, &st, 0) < 0)
				fail_msg("dangling link %s/%s", rel, de->d_name);
		} else if (S_ISDIR(st.st_mode)) {
			char sub[PATH_MAX];

			snprintf(sub, sizeof(sub), "%s/%s", rel, de->d_name);
			check_links(base, sub, n_links);
		}
	}
	closedir(d);
	return 0;
}

static void test_links_resolve(void **state)
{
	static const char *const boards[] = { "vm-like", "e810", "fpga-server", "mi300x",
					      "intel-max", "edge-box", "hgx-h100" };

	(void)state;
	for (size_t i = 0; i < sizeof(boards) / sizeof(boards[0]); i++) {
		char *t = materialize(boards[i]), sys[PATH_MAX];
		size_t n = 0;
		int fd;

		snprintf(sys, sizeof(sys), "%s/sys", t);
		fd = open(sys, O_RDONLY | O_DIRECTORY);
		assert_true(fd >= 0);
		/* walk devices/ (not class/ and bus/, whose links lead there) */
		assert_int_equal(check_links(fd, "devices", &n), 0);
		assert_int_equal(check_links(fd, "class", &n), 0);
		assert_int_equal(check_links(fd, "bus", &n), 0);
		assert_int_equal(check_links(fd, "dev", &n), 0);
		assert_int_equal(check_links(fd, "kernel", &n), 0);
		assert_true(n > 10);
		close(fd);
		cleanup(t);
	}
}

static void test_nvidia_files(void **state)
{
	char *t = materialize("vm-like"), *text;
	struct json_object *root, *devices, *gpu, *migs, *mig, *v;

	(void)state;
	expect_contains(t, "proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15");
	expect_contains(t, "proc/driver/nvidia/gpus/0000:02:00.0/information",
			"Bus Location: \t 0000:02:00.0\nDevice Minor: \t 0\n");
	expect_contains(t, "proc/driver/nvidia/gpus/0000:02:00.0/information", "GPU UUID: \t GPU-");
	expect_contains(t, "proc/driver/nvidia-caps/mig-minors",
			"config 1\nmonitor 2\ngpu0/gi0/access 3\ngpu0/gi0/ci0/access 4\n");
	expect_contains(t, "proc/driver/nvidia-caps/mig-minors", "gpu0/gi1/access 12\n");
	expect_file(t, "proc/driver/nvidia/capabilities/gpu0/mig/gi1/access",
		    "DeviceFileMinor: 12\nDeviceFileMode: 292\nDeviceFileModify: 1\n");
	expect_file(t, "proc/driver/nvidia/capabilities/gpu0/mig/gi1/ci0/access",
		    "DeviceFileMinor: 13\nDeviceFileMode: 292\nDeviceFileModify: 1\n");
	expect_link(t, "dev/.node/nvidia-caps_nvidia-cap12", "510:12");
	expect_contains(t, "proc/devices", "195 nvidia-frontend\n");
	expect_contains(t, "proc/devices", "510 nvidia-caps\n");

	text = read_text(t, "nvml.json");
	root = json_tokener_parse(text);
	free(text);
	assert_non_null(root);
	assert_true(json_object_object_get_ex(root, "driverVersion", &v));
	assert_string_equal(json_object_get_string(v), "550.54.15");
	assert_true(json_object_object_get_ex(root, "cudaDriverVersion", &v));
	assert_int_equal(json_object_get_int(v), 12040);
	assert_true(json_object_object_get_ex(root, "devices", &devices));
	assert_int_equal(json_object_array_length(devices), 1);
	gpu = json_object_array_get_idx(devices, 0);
	assert_true(json_object_object_get_ex(gpu, "pciBusId", &v));
	assert_string_equal(json_object_get_string(v), "0000:02:00.0");
	assert_true(json_object_object_get_ex(gpu, "index", &v));
	assert_int_equal(json_object_get_int(v), 0);
	assert_true(json_object_object_get_ex(gpu, "memoryTotalBytes", &v));
	assert_int_equal(json_object_get_int64(v), 85520809984LL);
	assert_true(json_object_object_get_ex(gpu, "migMode", &v));
	assert_true(json_object_object_get_ex(gpu, "migDevices", &migs));
	assert_int_equal(json_object_array_length(migs), 2);
	mig = json_object_array_get_idx(migs, 1);
	assert_true(json_object_object_get_ex(mig, "profile", &v));
	assert_string_equal(json_object_get_string(v), "1g.10gb");
	assert_true(json_object_object_get_ex(mig, "multiprocessors", &v));
	assert_int_equal(json_object_get_int(v), 16);
	assert_true(json_object_object_get_ex(mig, "placementStart", &v));
	assert_int_equal(json_object_get_int(v), 4);
	assert_true(json_object_object_get_ex(mig, "giAccessMinor", &v));
	{
		struct json_object *gi = NULL;

		assert_true(json_object_object_get_ex(mig, "gi", &gi));
		assert_int_equal(json_object_get_int(v), 3 + 9 * json_object_get_int(gi));
	}
	assert_true(json_object_object_get_ex(mig, "uuid", &v));
	assert_int_equal(strncmp(json_object_get_string(v), "MIG-", 4), 0);
	json_object_put(root);
	cleanup(t);
}

static void test_proc_files(void **state)
{
	char *t = materialize("vm-like");

	(void)state;
	/* default route first, Destination 00000000, gateway 10.0.0.1 */
	expect_contains(t, "proc/net/route", "\nenp1s0np0\t00000000\t0100000A\t0003\t");
	expect_contains(t, "proc/1/mountinfo", " 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 ");
	expect_contains(t, "proc/self/mountinfo", " /boot/efi ");
	expect_contains(t, "proc/devices", "Character devices:\n");
	expect_contains(t, "proc/devices", "231 infiniband_verbs\n");
	expect_contains(t, "proc/devices", "\nBlock devices:\n");
	expect_file(t, "proc/sys/kernel/random/boot_id", "5f0c6a1e-7c1b-4d2b-9a53-0e3f7d2c1a90\n");
	cleanup(t);
}

/* tests/fixtures/boards/<name>.yaml: malformed boards whose first line reads
 * "# expect: <text>"; the error must name the file and hold the text. */
static void test_malformed_boards(void **state)
{
	char dir[PATH_MAX];
	DIR *d;
	struct dirent *de;
	size_t n = 0;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/tests/fixtures/boards", root_dir());
	d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d))) {
		char path[PATH_MAX + 256], err[1024], *text, *expect, *nl;
		struct board b;
		int r;

		if (!strstr(de->d_name, ".yaml"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		text = read_text(dir, de->d_name);
		expect = strstr(text, "# expect: ");
		assert_non_null(expect);
		expect += strlen("# expect: ");
		nl = strchr(expect, '\n');
		*nl = '\0';
		memset(&b, 0, sizeof(b));
		r = board_load(path, &b, err, sizeof(err));
		board_free(&b);
		if (r != -EINVAL)
			fail_msg("%s: expected -EINVAL, got %d (%s)", de->d_name, r, err);
		if (!strstr(err, expect) || strncmp(err, path, strlen(path)))
			fail_msg("%s:\n  got:  %s\n  want: %s", de->d_name, err, expect);
		free(text);
		n++;
	}
	closedir(d);
	assert_true(n >= 15);
}

/* Damaged versions of real boards (a line dropped, a value replaced) load
 * or fail with a message; none crashes (run under ASan by make check-san). */
static void test_damaged_boards_never_crash(void **state)
{
	static const char *const boards[] = { "vm-like", "fpga-server" };
	static const char *const values[] = { "[]", "{a: 1}", "-1", "0xfffffffffffff", "\"\"",
					      "null", "x:y", "9999999999999999999999" };
	char tmp[] = "/tmp/dralet-test-damaged-XXXXXX.yaml";
	int fd = mkstemps(tmp, 5);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	for (size_t bi = 0; bi < sizeof(boards) / sizeof(boards[0]); bi++) {
		char *path = board_path(boards[bi]), *dir = strdup(path), *text;
		size_t n_lines = 0;
		char **lines;

		*strrchr(dir, '/') = '\0';
		text = read_text(dir, strrchr(path, '/') + 1);
		for (char *p = text; *p; p++)
			n_lines += *p == '\n';
		lines = calloc(n_lines + 1, sizeof(*lines));
		assert_non_null(lines);
		{
			char *save = NULL, *line = strtok_r(text, "\n", &save);
			size_t i = 0;

			while (line && i < n_lines) {
				lines[i++] = line;
				line = strtok_r(NULL, "\n", &save);
			}
			n_lines = i;
		}
		for (size_t victim = 0; victim < n_lines; victim++) {
			for (size_t variant = 0; variant <= sizeof(values) / sizeof(values[0]); variant++) {
				FILE *f = fopen(tmp, "w");
				char err[1024];
				struct board b;
				int r;

				assert_non_null(f);
				for (size_t i = 0; i < n_lines; i++) {
					const char *colon = strchr(lines[i], ':');

					if (i != victim) {
						fprintf(f, "%s\n", lines[i]);
					} else if (variant > 0 && colon && lines[i][0] != '#') {
						fprintf(f, "%.*s: %s\n", (int)(colon - lines[i]), lines[i],
							values[variant - 1]);
					}
				}
				fclose(f);
				memset(&b, 0, sizeof(b));
				r = board_load(tmp, &b, err, sizeof(err));
				board_free(&b);
				if (r < 0 && (r != -EINVAL || strncmp(err, tmp, strlen(tmp))))
					fail_msg("line %zu variant %zu: %d %s", victim, variant, r, err);
			}
		}
		free(lines);
		free(text);
		free(dir);
		free(path);
	}
	unlink(tmp);
}

static void test_target_must_be_empty(void **state)
{
	char dir[] = "/tmp/dralet-test-target-XXXXXX", file[PATH_MAX], err[1024];
	char *path = board_path("edge-box");

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/keep", dir);
	write_file(file, "x");
	assert_int_equal(board_materialize(path, dir, err, sizeof(err)), -ENOTEMPTY);
	assert_non_null(strstr(err, "not empty"));
	unlink(file);
	assert_int_equal(board_materialize(path, dir, err, sizeof(err)), 0);
	expect_file(dir, "sys/bus/pci/devices/0000:01:00.0/class", "0x120000\n");
	assert_int_equal(board_remove_tree(dir), 0);
	assert_int_equal(board_materialize("/nonexistent/board.yaml", "/tmp/x", err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/board.yaml: cannot read"));
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_board_materializes),
		cmocka_unit_test(test_pci_formats),
		cmocka_unit_test(test_class_devices),
		cmocka_unit_test(test_vf_routing_ids),
		cmocka_unit_test(test_vfs_spill_onto_next_bus),
		cmocka_unit_test(test_function_in_no_iommu_group),
		cmocka_unit_test(test_vf_settings),
		cmocka_unit_test(test_links_resolve),
		cmocka_unit_test(test_nvidia_files),
		cmocka_unit_test(test_proc_files),
		cmocka_unit_test(test_malformed_boards),
		cmocka_unit_test(test_damaged_boards_never_crash),
		cmocka_unit_test(test_target_must_be_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
