/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sriov backend: PF selectors of its "pfs" option, and an E810 with 64
 * VFs (48 on iavf, 16 on vfio-pci, like boards/e810.yaml) moving from nic-vf
 * to sriov when selected; attributes, prepare, config, bad options.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "backends/net/net.h"
#include "backends/sriov/selector.h"
#include "backends/sriov/sriov.h"
#include "test_backend.h"

#define RP "pci0000:16/0000:16:02.0"
#define PF "0000:17:00.0"
#define PF2 "0000:17:00.1"
#define NVFS 64

/* VF n is 0000:17:<1 + n / 8>.<n % 8> (offset 8, stride 1); IOMMU groups in tree
 * order, VFs last: the root port 0, the PFs 1 and 2, VF n 3 + n. */
static const char BOARD[] =
	"board: e810-test\n"
	"pci:\n"
	"  - root: \"0000:16\"\n"
	"    numa: 0\n"
	"    devices:\n"
	"      - bdf: 16:02.0\n"
	"        id: \"8086:347a\"\n"
	"        devices:\n"
	"          - bdf: 17:00.0\n"
	"            id: \"8086:1593\"\n"
	"            class: 0x020000\n"
	"            driver: ice\n"
	"            net: {name: ens1f0, mac: \"b4:96:91:aa:00:00\", mtu: 9000, speed: 25000}\n"
	"            sriov:\n"
	"              total: 128\n"
	"              num: 64\n"	/* NVFS */
	"              offset: 8\n"
	"              vf_id: \"8086:1889\"\n"
	"              vf_driver: iavf\n"
	"              vf_net: \"{pf}v{n}\"\n"
	"              vfs: {48-63: {driver: vfio-pci}}\n"
	"          # the second port, no VFs\n"
	"          - {bdf: 17:00.1, id: \"8086:1593\", class: 0x020000, driver: ice,\n"
	"             net: {name: ens1f1, mac: \"b4:96:91:aa:00:01\", speed: 25000}}\n";

static char *build_tree(void)
{
	return board_tree(BOARD);
}

static void vf_address(int n, char *buf, size_t size)
{
	snprintf(buf, size, "0000:17:%02x.%d", 1 + n / 8, n % 8);
}

static void test_selector_parsing(void **state)
{
	struct sriov_selector *sel;
	size_t n;
	char err[256];

	(void)state;
	assert_int_equal(sriov_selectors_parse(NULL, &sel, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 0);
	assert_int_equal(sriov_selectors_parse(" , ", &sel, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 0);
	free(sel);
	assert_int_equal(sriov_selectors_parse("0000:3B:00.0, 8086:0D58 ,driver=nvme,"
					       "netdev=ens1f0#0-7,10000:00:01.1#3",
					       &sel, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 5);
	assert_int_equal(sel[0].type, SRIOV_SEL_ADDRESS);
	assert_string_equal(sel[0].value, "0000:3b:00.0");
	assert_int_equal(sel[0].first_vf, -1);
	assert_int_equal(sel[1].type, SRIOV_SEL_IDS);
	assert_int_equal(sel[1].vendor, 0x8086);
	assert_int_equal(sel[1].device, 0x0d58);
	assert_int_equal(sel[2].type, SRIOV_SEL_DRIVER);
	assert_string_equal(sel[2].value, "nvme");
	assert_int_equal(sel[3].type, SRIOV_SEL_NETDEV);
	assert_string_equal(sel[3].value, "ens1f0");
	assert_int_equal(sel[3].first_vf, 0);
	assert_int_equal(sel[3].last_vf, 7);
	assert_int_equal(sel[4].type, SRIOV_SEL_ADDRESS);
	assert_int_equal(sel[4].first_vf, 3);
	assert_int_equal(sel[4].last_vf, 3);
	free(sel);

	static const char *const bad[] = {
		"ens1f0", "8086:", "0000:3b:00.8", "driver=", "netdev=a b", "0000:3b:00.0#",
		"0000:3b:00.0#7-3", "0000:3b:00.0#x", "pci=0000:3b:00.0", "3b:00.0",
		"8086:0d58:01", "driver=ice#1-", "0000:3b:00.0#-1",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (sriov_selectors_parse(bad[i], &sel, &n, err, sizeof(err)) != -EINVAL ||
		    !strstr(err, "pfs"))
			fail_msg("selector \"%s\" was accepted (%s)", bad[i], err);
	}
}

static void test_bad_option_stops_the_backend(void **state)
{
	struct harness h;
	struct t_inv t;
	char *d = build_tree();

	(void)state;
	assert_int_equal(harness_init(&h, &backend_sriov, d, "{\"pfs\":\"ens1f0\"}"), -EINVAL);
	assert_non_null(strstr(h.ctx.error, "\"ens1f0\" is not a PF selector"));
	harness_fini(&h);
	assert_int_equal(harness_init(&h, &backend_sriov, d, "{\"pfs\":\"driver=ice\","
				      "\"resourceName\":\"bad name\"}"), -EINVAL);
	assert_non_null(strstr(h.ctx.error, "resourceName"));
	harness_fini(&h);
	/* the agent logs it and runs without the backend: VFs stay with nic-vf */
	assert_int_equal(t_inv_open(&t, d, "backends:\n  sriov:\n    options:\n"
				    "      pfs: \"ens1f0\"\n"), 0);
	assert_int_equal(inventory_n_devices(t.inv, SRIOV_DRIVER), 0);
	assert_int_equal(inventory_n_devices(t.inv, NET_DRIVER), NVFS);
	t_inv_close(&t);
	tree_remove(d);
}

static void test_selected_vfs_move_to_sriov(void **state)
{
	struct t_inv t;
	char *d = build_tree();
	char name[64], vf[32];

	(void)state;
	/* nothing selected: the E810's VFs are nic-vf devices, its PFs nothing */
	assert_int_equal(t_inv_open(&t, d, NULL), 0);
	assert_int_equal(inventory_n_devices(t.inv, NET_DRIVER), NVFS);
	assert_int_equal(inventory_n_devices(t.inv, SRIOV_DRIVER), 0);
	assert_null(t_find(&t, NET_DRIVER, "vf-0000-17-00-0"));
	t_inv_close(&t);

	static const char *const selections[] = {
		"0000:17:00.0", "8086:1593", "driver=ice", "netdev=ens1f0",
	};
	for (size_t s = 0; s < 4; s++) {
		char yaml[256];
		snprintf(yaml, sizeof(yaml), "backends:\n  sriov:\n    options:\n      pfs: \"%s\"\n",
			 selections[s]);
		assert_int_equal(t_inv_open(&t, d, yaml), 0);
		assert_int_equal(inventory_n_devices(t.inv, SRIOV_DRIVER), NVFS);
		assert_int_equal(inventory_n_devices(t.inv, NET_DRIVER), 0);
		for (int n = 0; n < NVFS; n++) {
			vf_address(n, vf, sizeof(vf));
			snprintf(name, sizeof(name), "vf-%.4s-%.2s-%.2s-%c", vf, vf + 5, vf + 8, vf[11]);
			struct dralet_device *dev = t_find(&t, SRIOV_DRIVER, name);
			if (!dev)
				fail_msg("%s: no %s", selections[s], name);
			assert_int_equal(attr_int(dev, "vfID", -1), n);
		}
		t_inv_close(&t);
	}

	/* a VF range */
	assert_int_equal(t_inv_open(&t, d, "backends:\n  sriov:\n    options:\n"
				    "      pfs: \"netdev=ens1f0#48-63\"\n"), 0);
	assert_int_equal(inventory_n_devices(t.inv, SRIOV_DRIVER), 16);
	assert_int_equal(inventory_n_devices(t.inv, NET_DRIVER), 48);
	assert_non_null(t_find(&t, SRIOV_DRIVER, "vf-0000-17-07-0"));	/* VF 48 */
	assert_non_null(t_find(&t, NET_DRIVER, "vf-0000-17-06-7"));	/* VF 47 */
	t_inv_close(&t);
	tree_remove(d);
}

static void test_attributes_and_prepare(void **state)
{
	struct harness h;
	struct t_req t;
	char *d = build_tree();

	(void)state;
	assert_int_equal(harness_init(&h, &backend_sriov, d, "{\"pfs\":\"netdev=ens1f0\","
				      "\"resourceName\":\"intel.com/e810_vfs\"}"), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	assert_int_equal(h.sink.n, NVFS);

	struct dralet_device *v3 = harness_device(&h, "vf-0000-17-01-3");
	assert_non_null(v3);
	assert_int_equal(attr_int(v3, "vfID", -1), 3);
	assert_string_equal(attr_string(v3, "pfPciAddress"), PF);
	assert_string_equal(attr_string(v3, "pfName"), "ens1f0");
	assert_string_equal(attr_string(v3, "pfDeviceID"), "0x1593");
	assert_string_equal(attr_string(v3, "deviceID"), "0x1889");
	assert_string_equal(attr_string(v3, "vendorID"), "0x8086");
	assert_string_equal(attr_string(v3, "ifName"), "ens1f0v3");
	assert_string_equal(attr_string(v3, "driver"), "iavf");
	assert_string_equal(attr_string(v3, "linkType"), "ethernet");
	assert_int_equal(attr_bool(v3, "vfioCapable"), 1);
	assert_int_equal(attr_bool(v3, "rdmaCapable"), 0);
	assert_string_equal(attr_string(v3, DRALET_ATTR_PCI_BUS_ID), "0000:17:01.3");
	assert_string_equal(attr_string(v3, "k8s.cni.cncf.io/deviceID"), "0000:17:01.3");
	assert_string_equal(attr_string(v3, "k8s.cni.cncf.io/resourceName"), "intel.com/e810_vfs");
	assert_string_equal(attr_string(v3, DRALET_ATTR_PCIE_ROOT), "pci0000:16");
	assert_true(dralet_device_n_attrs(v3) <= DRALET_ATTRS_AND_CAPACITIES_MAX);

	t_req_init(&t, "{\"apiVersion\":\"sriov.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\"}");
	assert_int_equal(backend_sriov.prepare(&h.ctx, v3, &t.req), 0);
	assert_int_equal(t.edits.n_nodes, 0);
	assert_string_equal(t_env(&t, "DRALET_VF_0000_17_01_3_NETDEV"), "ens1f0v3");
	assert_string_equal(t_env(&t, "DRALET_VF_0000_17_01_3_PCI_ADDRESS"), "0000:17:01.3");
	t_req_clear(&t);

	/* VF 50 on vfio-pci: group 53 */
	struct dralet_device *v50 = harness_device(&h, "vf-0000-17-07-2");
	assert_non_null(v50);
	assert_string_equal(attr_string(v50, "driver"), "vfio-pci");
	t_req_init(&t, "{\"apiVersion\":\"sriov.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\","
		       "\"driver\":\"vfio-pci\"}");
	assert_int_equal(backend_sriov.prepare(&h.ctx, v50, &t.req), 0);
	assert_non_null(t_edit_node(&t, "/dev/vfio/53"));
	assert_non_null(t_edit_node(&t, "/dev/vfio/vfio"));
	assert_string_equal(t_env(&t, "DRALET_VF_0000_17_07_2_IOMMU_GROUP"), "53");
	t_req_clear(&t);

	/* the sriov driver's own API group */
	assert_int_equal(backend_sriov.validate_config(&h.ctx, "{\"apiVersion\":"
			 "\"sriov.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\",\"driver\":\"\"}"), 0);
	assert_int_equal(backend_sriov.validate_config(&h.ctx, "{\"apiVersion\":"
			 "\"net.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\"}"), -EINVAL);
	assert_int_equal(backend_sriov.validate_config(&h.ctx, "{\"apiVersion\":"
			 "\"sriov.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\",\"vlan\":10}"),
			 0);

	/* health: PF link down, then the VF gone (so it goes with its PF too: the
	 * kernel removes a PF's VFs before the PF) */
	assert_int_equal(backend_sriov.health(&h.ctx, v3), DRALET_HEALTH_HEALTHY);
	t_write(d, RP, PF, "net/ens1f0/operstate", "down");
	assert_int_equal(backend_sriov.health(&h.ctx, v3), DRALET_HEALTH_UNHEALTHY);
	t_write(d, RP, PF, "net/ens1f0/operstate", "up");
	assert_int_equal(backend_sriov.health(&h.ctx, v3), DRALET_HEALTH_HEALTHY);
	char p[512];
	snprintf(p, sizeof(p), "%s/sys/devices/" RP "/0000:17:01.3/vendor", d);
	assert_int_equal(unlink(p), 0);
	t_bind(d, RP, "0000:17:01.3", NULL);
	assert_int_equal(backend_sriov.health(&h.ctx, v3), DRALET_HEALTH_UNHEALTHY);
	harness_fini(&h);
	tree_remove(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_selector_parsing),
		cmocka_unit_test(test_bad_option_stops_the_backend),
		cmocka_unit_test(test_selected_vfs_move_to_sriov),
		cmocka_unit_test(test_attributes_and_prepare),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
