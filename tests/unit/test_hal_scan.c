/* SPDX-License-Identifier: Apache-2.0 */
/* HAL scan on board snippets: topology, SR-IOV, class devices, bad input. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "board_snippet.h"
#include "harness.h"
#include "hal/uevent.h"

#define ROOT "pci0000:00"
#define DSP ROOT "/0000:00:01.0/0000:01:00.0/0000:02:00.0"

/* A root port, a switch with two downstream ports, a GPU under the first
 * and a RoCE NIC PF with two VFs under the second; the default route goes
 * through the NIC. @extra: more functions on the root bus (YAML lines). */
static char *build_tree(const char *extra)
{
	char yaml[4096];

	snprintf(yaml, sizeof(yaml),
		 "board: hal-scan\n"
		 "numa:\n"
		 "  - {node: 0, cpus: \"0-55\"}\n"
		 "  - {node: 1, cpus: \"56-111\"}\n"
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
		 "                  - {bdf: 03:00.0, id: \"10de:2330\", class: 0x030200, driver: nvidia,\n"
		 "                     numa: 1, iommu_group: 17, link: 32GT/s x16, max_link: 8GT/s x16}\n"
		 "              - bdf: 02:01.0\n"
		 "                id: \"1000:c030\"\n"
		 "                devices:\n"
		 "                  - bdf: 04:00.0\n"
		 "                    id: \"15b3:1021\"\n"
		 "                    class: 0x020000\n"
		 "                    driver: mlx5_core\n"
		 "                    sriov: {total: 16, num: 2, vf_id: \"15b3:101e\"}\n"
		 "                    net: {name: ens1np0, speed: 400000, mtu: 9000, ipv4: 192.168.0.5/24}\n"
		 "                    infiniband:\n"
		 "                      name: mlx5_0\n"
		 "                      ports: [{link_layer: Ethernet, rate: 400 Gb/sec (4X NDR)}]\n"
		 "%s"
		 "default_route: {dev: ens1np0, via: 192.168.0.1}\n",
		 extra ? extra : "");
	return board_tree(yaml);
}

static struct hal_scan *scan_tree(const char *d)
{
	struct hal_scan *scan;
	char sys[4096], dev[4096], proc[4096];
	struct hal_roots roots = { sys, dev, proc };
	static const struct hal_scan_options opts = { .no_names = true };

	snprintf(sys, sizeof(sys), "%s/sys", d);
	snprintf(dev, sizeof(dev), "%s/dev", d);
	snprintf(proc, sizeof(proc), "%s/proc", d);
	assert_int_equal(hal_scan(&roots, &opts, &scan), 0);
	return scan;
}

static void test_topology_and_facts(void **state)
{
	char *d = build_tree(NULL);
	struct hal_scan *scan = scan_tree(d);

	(void)state;
	assert_int_equal(scan->n_funcs, 8);

	const struct dralet_pci_func *gpu = hal_scan_find(scan, "0000:03:00.0");
	assert_non_null(gpu);
	assert_int_equal(gpu->vendor_id, 0x10de);
	assert_int_equal(gpu->class_code, 0x030200);
	assert_string_equal(gpu->pcie_root, "pci0000:00");
	assert_int_equal(gpu->numa_node, 1);
	assert_string_equal(gpu->local_cpulist, "56-111");
	assert_string_equal(gpu->driver, "nvidia");
	assert_int_equal(gpu->iommu_group, 17);
	assert_int_equal(gpu->link.current_mts, 32000);
	assert_int_equal(gpu->link.current_width, 16);
	assert_int_equal(gpu->link.max_mts, 8000);
	assert_non_null(gpu->pcie_switch);
	assert_string_equal(gpu->pcie_switch->address, "0000:01:00.0");
	assert_string_equal(gpu->parent->address, "0000:02:00.0");
	assert_int_equal(gpu->parent->port_type, DRALET_PCI_SWITCH_DOWNSTREAM);
	assert_int_equal(hal_scan_find(scan, "0000:00:01.0")->port_type, DRALET_PCI_ROOT_PORT);
	assert_int_equal(hal_scan_find(scan, "0000:01:00.0")->port_type, DRALET_PCI_SWITCH_UPSTREAM);
	assert_null(gpu->unsafe_reason);

	const struct dralet_pci_func *pf = hal_scan_find(scan, "0000:04:00.0");
	assert_non_null(pf->sriov);
	assert_int_equal(pf->sriov->total_vfs, 16);
	assert_int_equal(pf->sriov->num_vfs, 2);
	assert_int_equal(pf->sriov->vf_device_id, 0x101e);
	const struct dralet_pci_func *vf1 = hal_scan_find(scan, "0000:04:00.2");
	assert_ptr_equal(pf->sriov->vfs[1], vf1);
	assert_ptr_equal(vf1->physfn, pf);
	assert_int_equal(vf1->vf_index, 1);
	assert_string_equal(vf1->pcie_switch->address, "0000:01:00.0");

	assert_int_equal(pf->n_net, 1);
	assert_string_equal(pf->net[0].ifname, "ens1np0");
	assert_int_equal(pf->net[0].speed_mbps, 400000);
	assert_int_equal(pf->net[0].mtu, 9000);
	assert_true(pf->net[0].default_route);
	assert_non_null(pf->unsafe_reason);
	assert_int_equal(pf->n_ib, 1);
	assert_string_equal(pf->ib[0].name, "mlx5_0");
	assert_int_equal(pf->ib[0].n_ports, 1);
	assert_string_equal(pf->ib[0].ports[0].state, "ACTIVE");
	assert_string_equal(pf->ib[0].ports[0].link_layer, "Ethernet");
	assert_int_equal(pf->ib[0].ports[0].rate_gbps, 400);
	assert_string_equal(pf->ib[0].uverbs.path, "/dev/infiniband/uverbs0");
	assert_int_equal(pf->ib[0].uverbs.major, 231);
	assert_int_equal(pf->ib[0].uverbs.minor, 192);
	for (size_t i = 0; i < scan->n_warnings; i++)
		print_message("unexpected warning: %s\n", scan->warnings[i]);
	assert_int_equal(scan->n_warnings, 0);
	hal_scan_free(scan);
	tree_remove(d);
}

static int unlink_in(const char *d, const char *rel)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s", d, rel);
	return unlink(path);
}

/* Points the link <d>/@rel at @target, replacing it. */
static void relink(const char *d, const char *rel, const char *target)
{
	assert_int_equal(tree_link(d, rel, target), 0);
}

/* A simulated node is its own host; links the tree carries are compared. */
static void test_host_namespaces(void **state)
{
	char *d = build_tree(NULL), want[4400];
	struct hal_scan *scan;
	static const char *const nic[] = { "0000:04:00.0", "0000:04:00.1", "0000:04:00.2" };

	(void)state;
	/* a board without namespace links: nothing to say, VFs publishable */
	scan = scan_tree(d);
	assert_null(scan->host_net_problem);
	assert_null(hal_scan_find(scan, "0000:04:00.1")->unsafe_reason);
	hal_scan_free(scan);

	/* the same namespace as the node's init; the agent is another process
	 * than init, so proc/self (a board's link to 1) becomes its own */
	assert_int_equal(unlink_in(d, "proc/self"), 0);
	tree_mkdir(d, "proc/self/ns");
	relink(d, "proc/self/ns/pid", "pid:[4026531836]");
	relink(d, "proc/self/ns/net", "net:[4026531840]");
	relink(d, "proc/1/ns/net", "net:[4026531840]");
	scan = scan_tree(d);
	assert_null(scan->host_net_problem);
	hal_scan_free(scan);

	/* a pod's network namespace: every network function refused, nothing else */
	relink(d, "proc/self/ns/net", "net:[4026532999]");
	scan = scan_tree(d);
	assert_non_null(scan->host_net_problem);
	assert_non_null(strstr(scan->host_net_problem, "not in the host's network namespace (it "
				"is in net:[4026532999], the host's init in net:[4026531840]; "
				"run it with hostNetwork: true)"));
	for (size_t i = 0; i < 3; i++) {
		const char *why = hal_scan_find(scan, nic[i])->unsafe_reason;
		assert_non_null(why);
		assert_non_null(strstr(why, "is a network device and the agent is not in the "
				       "host's network namespace"));
	}
	assert_null(hal_scan_find(scan, "0000:03:00.0")->unsafe_reason);	/* the GPU */
	hal_scan_free(scan);

	/* init's link that cannot be read (a file, not a link: EINVAL) is named */
	assert_int_equal(unlink_in(d, "proc/1/ns/net"), 0);
	tree_write(d, "proc/1/ns/net", "");
	relink(d, "proc/self/ns/net", "net:[4026531840]");
	scan = scan_tree(d);
	assert_non_null(scan->host_net_problem);
	snprintf(want, sizeof(want), "cannot read %s/proc/1/ns/net (Invalid argument) to tell "
		 "whether the agent is in the host's network namespace", d);
	assert_non_null(strstr(scan->host_net_problem, want));
	hal_scan_free(scan);
	assert_int_equal(unlink_in(d, "proc/1/ns/net"), 0);
	relink(d, "proc/1/ns/net", "net:[4026531840]");

	/* a pod's PID namespace: <proc>/1 is not the host's init, whatever its links say */
	relink(d, "proc/self/ns/pid", "pid:[4026532100]");
	scan = scan_tree(d);
	assert_non_null(strstr(scan->host_net_problem, "not in the host's PID namespace"));
	assert_non_null(strstr(scan->host_net_problem, "hostPID: true"));
	assert_non_null(hal_scan_find(scan, "0000:04:00.2")->unsafe_reason);
	hal_scan_free(scan);
	tree_remove(d);
}

static void test_bad_input_is_skipped_with_warnings(void **state)
{
	struct hal_scan *scan;
	char *d = build_tree("      - {bdf: 00:0a.0, id: \"1234:5678\", class: 0x120000}\n");

	(void)state;
	/* What no kernel writes, so no board says: a garbage entry name, a
	 * dangling link, garbage identity and attribute values, broken links. */
	tree_link(d, "sys/bus/pci/devices/garbage", "../../../devices/nowhere");
	tree_link(d, "sys/bus/pci/devices/0000:09:00.0", "../../../devices/" ROOT "/0000:09:00.0");
	tree_write(d, "sys/devices/" ROOT "/0000:00:0a.0/vendor", "zzz");
	tree_write(d, "sys/devices/" DSP "/0000:03:00.0/local_cpulist", "\x01garbage");
	tree_write(d, "sys/devices/" DSP "/0000:03:00.0/current_link_width", "wide");
	tree_link(d, "sys/devices/" DSP "/0000:03:00.0/iommu_group", "../../../../../../kernel/iommu_groups/x");
	tree_link(d, "sys/class/net/broken", "../../devices/" ROOT "/missing/net/broken");

	scan = scan_tree(d);
	assert_int_equal(scan->n_funcs, 8);
	const struct dralet_pci_func *gpu = hal_scan_find(scan, "0000:03:00.0");
	assert_null(gpu->local_cpulist);
	assert_int_equal(gpu->link.current_width, 0);
	assert_int_equal(gpu->iommu_group, -1);
	assert_null(hal_scan_find(scan, "0000:00:0a.0"));
	bool saw_vendor = false, saw_garbage = false;
	for (size_t i = 0; i < scan->n_warnings; i++) {
		saw_vendor |= strstr(scan->warnings[i], "0000:00:0a.0/vendor") != NULL;
		saw_garbage |= strstr(scan->warnings[i], "devices/garbage") != NULL;
	}
	assert_true(saw_vendor);
	assert_true(saw_garbage);
	assert_true(scan->n_warnings >= 5);
	hal_scan_free(scan);
	tree_remove(d);
}

static void test_unreadable_root_fails(void **state)
{
	struct hal_scan *scan;
	struct hal_roots roots = { "/nonexistent/sys", "/nonexistent/dev", "/nonexistent/proc" };

	(void)state;
	assert_int_equal(hal_scan(&roots, NULL, &scan), -ENOENT);
}

static void test_empty_node(void **state)
{
	struct hal_scan *scan;
	char *d = board_tree("board: empty\npci: []\n");
	char sys[4096], dev[4096], proc[4096];
	struct hal_roots roots = { sys, dev, proc };

	(void)state;
	snprintf(sys, sizeof(sys), "%s/sys", d);
	snprintf(dev, sizeof(dev), "%s/dev", d);
	snprintf(proc, sizeof(proc), "%s/proc", d);
	assert_int_equal(hal_scan(&roots, NULL, &scan), 0);
	assert_int_equal(scan->n_funcs, 0);
	hal_scan_free(scan);
	tree_remove(d);
}

static void test_ten_thousand_entries(void **state)
{
	struct hal_scan *scan;
	char *d = board_tree("board: veths\npci:\n  - root: \"0000:00\"\n    devices:\n"
			     "      - {bdf: 00:02.0, id: \"8086:1572\", class: 0x020000}\n");
	char name[64];

	(void)state;
	/* one function, and 10,000 class/net entries that lead nowhere useful
	 * (virtual netdevs, which boards do not describe) */
	for (int i = 0; i < 10000; i++) {
		snprintf(name, sizeof(name), "sys/class/net/veth%d", i);
		char target[96];
		snprintf(target, sizeof(target), "../../devices/virtual/net/veth%d", i);
		tree_link(d, name, target);
		snprintf(name, sizeof(name), "sys/devices/virtual/net/veth%d", i);
		tree_mkdir(d, name);
	}
	scan = scan_tree(d);
	assert_int_equal(scan->n_funcs, 1);
	assert_int_equal(scan->funcs[0]->n_net, 0);
	hal_scan_free(scan);
	tree_remove(d);
}

/* The kernel's uevents are about the host's sysfs wherever it is mounted,
 * never about a simulated board's tree. */
static void test_uevents_describe_sysfs_only(void **state)
{
	char *d = board_tree("board: empty\npci: []\n"), sys[4096];

	(void)state;
	snprintf(sys, sizeof(sys), "%s/sys", d);
	assert_false(hal_uevent_describes(&(struct hal_roots){ sys, "/dev", "/proc" }));
	assert_true(hal_uevent_describes(&(struct hal_roots){ "/sys", "/dev", "/proc" }));
	assert_false(hal_uevent_describes(&(struct hal_roots){ "/nonexistent", "/dev", "/proc" }));
	tree_remove(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_topology_and_facts),
		cmocka_unit_test(test_host_namespaces),
		cmocka_unit_test(test_bad_input_is_skipped_with_warnings),
		cmocka_unit_test(test_unreadable_root_fails),
		cmocka_unit_test(test_empty_node),
		cmocka_unit_test(test_ten_thousand_entries),
		cmocka_unit_test(test_uevents_describe_sysfs_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
