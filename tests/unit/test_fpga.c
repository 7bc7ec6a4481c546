/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fpga family on board snippets: an Alveo U55C (management + user PF)
 * and a U280 in its golden image (xrt), an Intel N3000 and a D5005 with its
 * port on a VF (dfl), an Altera card with only fpga_manager/fpga_region
 * class devices and a raw Xilinx design (fpga-region); health, prepare,
 * FpgaConfig, and ownership against the accel backend.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "backends/accel/accel.h"
#include "backends/fpga/fpga.h"
#include "test_backend.h"

#define R1 "pci0000:60/0000:60:01.0"
#define R2 "pci0000:3a/0000:3a:00.0"
#define R3 "pci0000:5d/0000:5d:00.0"
#define R4 "pci0000:6f/0000:6f:00.0"
#define MGMT "0000:65:00.0"
#define USER "0000:65:00.1"
#define GOLD "0000:66:00.0"
#define N3000 "0000:3b:00.0"
#define D5005 "0000:5e:00.0"
#define D5005_VF "0000:5e:00.1"
#define ALTERA "0000:70:00.0"
#define RAW "0000:71:00.0"

#define IFACE "862c7020a250293e32036f19956669e5"
#define LOGIC "4fd1d2f1be0cf6e3d0c0d1f4a1c1b1a1"
#define XCLBIN "a1b2c3d4-0000-1111-2222-333344445555"
#define AFU "d8424dc4a4a3c413f89e433683f9040b"
#define DFL_IFACE "9926ab6d6c925a68aabca7d84c545738"

/* An Alveo U55C on a two-stage platform (base interface, then the shell's)
 * with a U280 in its factory image beside it; an N3000 with FME and port on
 * its PF, a D5005 with SR-IOV (the FME on the PF); an Altera card with only
 * fpga_manager/fpga_region class devices and a raw Xilinx design on xdma. */
static const char board[] =
	"board: fpga\n"
	"pci:\n"
	"  - root: \"0000:60\"\n"
	"    devices:\n"
	"      - bdf: 60:01.0\n"
	"        id: \"8086:352a\"\n"
	"        devices:\n"
	"          - bdf: 65:00.0\n"
	"            id: \"10ee:505c\"\n"
	"            class: 0x120000\n"
	"            driver: xclmgmt\n"
	"            chardevs: [{name: xclmgmt256, class: xrt, dev: \"240:7\"}]\n"
	"            fpga_managers: [{name: fpga0, under: fmgr.m.0, driver_name: Xilinx FPGA Manager,\n"
	"                             state: operating}]\n"
	"            files:\n"
	"              mgmt_pf: null\n"
	"              instance: \"256\"\n"
	"              interface_uuids: \"0123456789abcdef0123456789abcdef\\n" IFACE "\"\n"
	"              logic_uuids: \"" LOGIC "\\n" IFACE "\"\n"
	"              rom.m.0/VBNV: xilinx_u55c_gen3x16_xdma_base_3\n"
	"          - bdf: 65:00.1\n"
	"            id: \"10ee:505d\"\n"
	"            class: 0x120000\n"
	"            driver: xocl\n"
	"            iommu_group: 60\n"
	"            drm: {card: 0, render: 128}\n"
	"            files:\n"
	"              user_pf: null\n"
	"              rom.u.0/VBNV: xilinx_u55c_gen3x16_xdma_base_3\n"
	"              rom.u.0/timestamp: \"1648520217\"\n"
	"              xclbinuuid: " XCLBIN "\n"
	"              xmc.u.0/serial_num: XFL1RT4K4X0A\n"
	"      - bdf: 60:02.0\n"
	"        id: \"8086:352a\"\n"
	"        devices:\n"
	"          - {bdf: 66:00.0, id: \"10ee:d00c\", class: 0x120000}\n"
	"  - root: \"0000:3a\"\n"
	"    devices:\n"
	"      - bdf: 3a:00.0\n"
	"        id: \"8086:352a\"\n"
	"        devices:\n"
	"          - bdf: 3b:00.0\n"
	"            id: \"8086:0b30\"\n"
	"            class: 0x120000\n"
	"            driver: dfl-pci\n"
	"            dfl:\n"
	"              fme: {bitstream_id: \"0x23000410010309\", bitstream_metadata: \"0x1904107\",\n"
	"                    compat_id: " DFL_IFACE ", socket_id: 0}\n"
	"              ports: [{afu_id: " AFU "}]\n"
	"  - root: \"0000:5d\"\n"
	"    devices:\n"
	"      - bdf: 5d:00.0\n"
	"        id: \"8086:352a\"\n"
	"        devices:\n"
	"          - bdf: 5e:00.0\n"
	"            id: \"8086:0b2b\"\n"
	"            class: 0x120000\n"
	"            driver: dfl-pci\n"
	"            sriov: {total: 1, vf_id: \"8086:0b2c\", vf_driver: dfl-pci}\n"
	"            dfl: {fme: {bitstream_id: \"0x0\", compat_id: " DFL_IFACE "}, ports: []}\n"
	"  - root: \"0000:6f\"\n"
	"    devices:\n"
	"      - bdf: 6f:00.0\n"
	"        id: \"8086:352a\"\n"
	"        devices:\n"
	"          - bdf: 70:00.0\n"
	"            id: \"1172:e001\"\n"
	"            class: 0x120000\n"
	"            driver: altera-cvp\n"
	"            fpga_managers: [{name: fpga2, driver_name: Altera CvP FPGA Manager,\n"
	"                             state: operating}]\n"
	"            fpga_regions: [{name: region3, compat_id: c0ffee00c0ffee00c0ffee00c0ffee00}]\n"
	"      - bdf: 6f:01.0\n"
	"        id: \"8086:352a\"\n"
	"        devices:\n"
	"          - bdf: 71:00.0\n"
	"            id: \"10ee:903f\"\n"
	"            class: 0x058000\n"
	"            driver: xdma\n"
	"            chardevs:\n"
	"              - {name: xdma0_user, class: xdma, dev: \"505:0\"}\n"
	"              - {name: xdma0_h2c_0, class: xdma, dev: \"505:1\"}\n";

#define N3000_FME_MGR "fpga_region/region0/dfl-fme.0/dfl-fme-mgr.0/fpga_manager/fpga1/"
#define D5005_PR_REGION "fpga_region/region2/dfl-fme.1/dfl-fme-region.1/fpga_region/region4/"
#define VF_PORT "fpga_region/region5/dfl-port.1"

static char *build_tree(void)
{
	char *d = board_tree(board);

	/* What the board format does not say. dfl-fme-mgr has no state
	 * operation, so the kernel shows "unknown" (boards write operating). */
	t_write(d, R2, N3000, N3000_FME_MGR "state", "unknown");
	/* an interface ID written with 0x, which boards refuse */
	t_write(d, R3, D5005, D5005_PR_REGION "compat_id", "0x" DFL_IFACE);
	/* the D5005's port moved to its VF (boards put DFL ports on the
	 * functions they declare only) */
	t_write(d, R3, D5005_VF, VF_PORT "/afu_id", AFU);
	t_write(d, R3, D5005_VF, VF_PORT "/id", "0");
	t_write(d, R3, D5005_VF, VF_PORT "/dev", "507:1");
	t_syslink(d, "bus/platform/devices/dfl-port.1", "devices/" R3 "/" D5005_VF "/" VF_PORT);
	t_node(d, "dfl-port.1");
	return d;
}

static void test_xrt_pairs_mgmt_and_user(void **state)
{
	struct harness h;
	char *d = build_tree();

	(void)state;
	assert_int_equal(harness_init(&h, &backend_xrt, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	assert_int_equal(h.sink.n, 1);	/* mgmt PF and golden image yield none */
	struct dralet_device *c = harness_device(&h, "fpga-0000-65-00-1");
	assert_non_null(c);
	assert_string_equal(dralet_device_kind(c), "fpga");
	assert_string_equal(attr_string(c, "framework"), "xrt");
	assert_string_equal(attr_string(c, "productName"), "Alveo U55C");
	assert_string_equal(attr_string(c, "shell"), "xilinx_u55c_gen3x16_xdma_base_3");
	assert_int_equal(attr_int(c, "shellTimestamp", 0), 1648520217);
	assert_string_equal(attr_string(c, "interfaceUUID"), IFACE);
	assert_string_equal(attr_string(c, "logicUUID"), LOGIC);
	assert_string_equal(attr_string(c, "xclbinUUID"), "a1b2c3d4000011112222333344445555");
	assert_string_equal(attr_string(c, "serial"), "XFL1RT4K4X0A");
	assert_string_equal(attr_string(c, "mgmtPciAddress"), MGMT);
	assert_string_equal(attr_string(c, "userPciAddress"), USER);
	assert_string_equal(attr_string(c, "driver"), "xocl");
	assert_string_equal(attr_string(c, DRALET_ATTR_PCIE_ROOT), "pci0000:60");
	assert_int_equal(attr_int(c, "iommuGroup", -1), 60);
	assert_true(t_dev_node(c, "/dev/dri/renderD128"));
	assert_true(t_dev_node(c, "/dev/dri/card0"));
	assert_false(t_dev_node(c, "/dev/xclmgmt256"));
	assert_int_equal(dralet_device_health(c), DRALET_HEALTH_HEALTHY);
	assert_true(h.ctx.warnings >= 1);	/* the golden image */

	/* health: the management PF's FPGA manager reports an error now */
	t_write(d, R1, MGMT, "fmgr.m.0/fpga_manager/fpga0/state", "write error");
	assert_int_equal(backend_xrt.health(&h.ctx, c), DRALET_HEALTH_UNHEALTHY);
	t_write(d, R1, MGMT, "fmgr.m.0/fpga_manager/fpga0/state", "write");
	assert_int_equal(backend_xrt.health(&h.ctx, c), DRALET_HEALTH_UNKNOWN);
	t_write(d, R1, MGMT, "fmgr.m.0/fpga_manager/fpga0/state", "operating");
	t_write(d, R1, MGMT, "fmgr.m.0/fpga_manager/fpga0/status", "reconfig CRC error");
	assert_int_equal(backend_xrt.health(&h.ctx, c), DRALET_HEALTH_UNHEALTHY);
	t_write(d, R1, MGMT, "fmgr.m.0/fpga_manager/fpga0/status", "");
	assert_int_equal(backend_xrt.health(&h.ctx, c), DRALET_HEALTH_HEALTHY);
	/* the user PF's driver is unbound */
	t_bind(d, R1, USER, NULL);
	t_write(d, R1, USER, "uevent", "PCI_ID=10EE:505D");
	assert_int_equal(backend_xrt.health(&h.ctx, c), DRALET_HEALTH_UNHEALTHY);
	harness_fini(&h);
	tree_remove(d);
}

static void test_xrt_crashed_firmware_is_unhealthy(void **state)
{
	struct harness h;
	char *d = build_tree();

	(void)state;
	t_write(d, R1, MGMT, "interface_uuids", "ffffffffffffffffffffffffffffffff");
	assert_int_equal(harness_init(&h, &backend_xrt, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	struct dralet_device *c = harness_device(&h, "fpga-0000-65-00-1");
	assert_non_null(c);
	assert_int_equal(dralet_device_health(c), DRALET_HEALTH_UNHEALTHY);
	harness_fini(&h);
	tree_remove(d);
}

static void test_xrt_prepare(void **state)
{
	struct harness h;
	struct t_req t;
	char *d = build_tree();

	(void)state;
	assert_int_equal(harness_init(&h, &backend_xrt, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	struct dralet_device *c = harness_device(&h, "fpga-0000-65-00-1");

	t_req_init(&t, NULL);
	assert_int_equal(backend_xrt.prepare(&h.ctx, c, &t.req), 0);
	const struct dralet_devnode *n = t_edit_node(&t, "/dev/dri/renderD128");
	assert_non_null(n);
	assert_int_equal(n->major, 226);
	assert_int_equal(n->minor, 128);
	assert_non_null(t_edit_node(&t, "/dev/dri/card0"));
	assert_int_equal(t.edits.n_nodes, 2);
	assert_string_equal(t_env(&t, "DRALET_FPGA_0000_65_00_1_PCI_ADDRESS"), USER);
	assert_string_equal(t_env(&t, "DRALET_FPGA_0000_65_00_1_MGMT_PCI_ADDRESS"), MGMT);
	assert_string_equal(t_env(&t, "DRALET_FPGA_0000_65_00_1_SHELL"),
			    "xilinx_u55c_gen3x16_xdma_base_3");
	assert_string_equal(t_env(&t, "DRALET_FPGA_0000_65_00_1_INTERFACE_UUID"), IFACE);
	assert_string_equal(t_env(&t, "DRALET_FPGA_0000_65_00_1_XCLBIN_UUID"),
			    "a1b2c3d4000011112222333344445555");
	t_req_clear(&t);

	/* the claim requires this shell and interface (dashes, upper case) and
	 * the management node */
	t_req_init(&t, "{\"apiVersion\":\"fpga.dralet.dev/v1alpha1\",\"kind\":\"FpgaConfig\","
		       "\"requireShell\":\"xilinx_u55c_gen3x16_xdma_base_3\","
		       "\"requireInterfaceID\":\"862C7020-A250-293E-3203-6F19956669E5\","
		       "\"requireAfuID\":\"" XCLBIN "\",\"managementAccess\":true}");
	assert_int_equal(backend_xrt.prepare(&h.ctx, c, &t.req), 0);
	n = t_edit_node(&t, "/dev/xclmgmt256");
	assert_non_null(n);
	assert_int_equal(n->major, 240);
	assert_int_equal(n->minor, 7);
	assert_string_equal(t_env(&t, "DRALET_FPGA_0000_65_00_1_MGMT_NODE"), "/dev/xclmgmt256");
	t_req_clear(&t);

	/* another shell */
	t_req_init(&t, "{\"apiVersion\":\"fpga.dralet.dev/v1alpha1\",\"kind\":\"FpgaConfig\","
		       "\"requireShell\":\"xilinx_u280_gen3x16_xdma_base_1\"}");
	assert_int_equal(backend_xrt.prepare(&h.ctx, c, &t.req), -EINVAL);
	assert_non_null(strstr(h.ctx.error, "runs shell \"xilinx_u55c_gen3x16_xdma_base_3\""));
	assert_non_null(strstr(h.ctx.error, "xilinx_u280_gen3x16_xdma_base_1"));
	t_req_clear(&t);

	/* another interface */
	t_req_init(&t, "{\"apiVersion\":\"fpga.dralet.dev/v1alpha1\",\"kind\":\"FpgaConfig\","
		       "\"requireInterfaceID\":\"00000000000000000000000000000001\"}");
	assert_int_equal(backend_xrt.prepare(&h.ctx, c, &t.req), -EINVAL);
	assert_non_null(strstr(h.ctx.error, "interface ID"));
	t_req_clear(&t);
	harness_fini(&h);
	tree_remove(d);
}

static void test_dfl_ports(void **state)
{
	struct harness h;
	char *d = build_tree();

	(void)state;
	assert_int_equal(harness_init(&h, &backend_dfl, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	assert_int_equal(h.sink.n, 2);	/* the N3000 port and the D5005 VF's port */

	struct dralet_device *p = harness_device(&h, "fpga-0000-3b-00-0-port0");
	assert_non_null(p);
	assert_string_equal(attr_string(p, "framework"), "dfl");
	assert_string_equal(attr_string(p, "productName"), "Intel PAC N3000");
	assert_string_equal(attr_string(p, "afuID"), AFU);
	assert_string_equal(attr_string(p, "interfaceID"), DFL_IFACE);
	assert_string_equal(attr_string(p, "regionCompatID"), DFL_IFACE);
	assert_string_equal(attr_string(p, "bitstreamID"), "23000410010309");
	assert_int_equal(attr_int(p, "socketID", -1), 0);
	assert_int_equal(attr_int(p, "portID", -1), 0);
	assert_string_equal(attr_string(p, "portDevice"), "dfl-port.0");
	assert_string_equal(attr_string(p, "fmeDevice"), "dfl-fme.0");
	assert_int_equal(attr_bool(p, "isVF"), 0);
	assert_true(t_dev_node(p, "/dev/dfl-port.0"));
	assert_false(t_dev_node(p, "/dev/dfl-fme.0"));
	/* the FME manager always says "unknown": that is fine */
	assert_int_equal(dralet_device_health(p), DRALET_HEALTH_HEALTHY);

	struct dralet_device *v = harness_device(&h, "fpga-0000-5e-00-1-port0");
	assert_non_null(v);
	assert_int_equal(attr_bool(v, "isVF"), 1);
	assert_string_equal(attr_string(v, "pfPciAddress"), D5005);
	assert_string_equal(attr_string(v, "productName"), "Intel PAC D5005");
	assert_string_equal(attr_string(v, "interfaceID"), DFL_IFACE);	/* from the PF's FME */
	assert_string_equal(attr_string(v, "fmeDevice"), "dfl-fme.1");
	assert_true(t_dev_node(v, "/dev/dfl-port.1"));
	assert_null(harness_device(&h, "fpga-0000-5e-00-0-port0"));

	/* crashed firmware: the AFU ID reads all f now */
	t_write(d, R2, N3000, "fpga_region/region0/dfl-port.0/afu_id",
		"ffffffffffffffffffffffffffffffff");
	assert_int_equal(backend_dfl.health(&h.ctx, p), DRALET_HEALTH_UNHEALTHY);
	t_write(d, R2, N3000, "fpga_region/region0/dfl-port.0/afu_id", AFU);
	assert_int_equal(backend_dfl.health(&h.ctx, p), DRALET_HEALTH_HEALTHY);
	t_write(d, R2, N3000, N3000_FME_MGR "status", "reconfig incompatible image");
	assert_int_equal(backend_dfl.health(&h.ctx, p), DRALET_HEALTH_UNHEALTHY);
	harness_fini(&h);
	tree_remove(d);
}

static void test_dfl_prepare(void **state)
{
	struct harness h;
	struct t_req t;
	char *d = build_tree();

	(void)state;
	assert_int_equal(harness_init(&h, &backend_dfl, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	struct dralet_device *p = harness_device(&h, "fpga-0000-3b-00-0-port0");

	t_req_init(&t, "{\"apiVersion\":\"fpga.dralet.dev/v1alpha1\",\"kind\":\"FpgaConfig\","
		       "\"requireAfuID\":\"" AFU "\",\"requireInterfaceID\":\"" DFL_IFACE "\"}");
	assert_int_equal(backend_dfl.prepare(&h.ctx, p, &t.req), 0);
	const struct dralet_devnode *n = t_edit_node(&t, "/dev/dfl-port.0");
	assert_non_null(n);
	assert_int_equal(n->major, 507);
	assert_int_equal(n->minor, 0);
	assert_int_equal(t.edits.n_nodes, 1);
	assert_string_equal(t_env(&t, "DRALET_FPGA_0000_3B_00_0_PORT0_AFU_ID"), AFU);
	assert_string_equal(t_env(&t, "DRALET_FPGA_0000_3B_00_0_PORT0_INTERFACE_ID"), DFL_IFACE);
	assert_string_equal(t_env(&t, "DRALET_FPGA_0000_3B_00_0_PORT0_PORT_NODE"), "/dev/dfl-port.0");
	assert_string_equal(t_env(&t, "DRALET_FPGA_0000_3B_00_0_PORT0_PCI_ADDRESS"), N3000);
	t_req_clear(&t);

	t_req_init(&t, "{\"apiVersion\":\"fpga.dralet.dev/v1alpha1\",\"kind\":\"FpgaConfig\","
		       "\"managementAccess\":true}");
	assert_int_equal(backend_dfl.prepare(&h.ctx, p, &t.req), 0);
	n = t_edit_node(&t, "/dev/dfl-fme.0");
	assert_non_null(n);
	assert_int_equal(n->major, 508);
	t_req_clear(&t);

	t_req_init(&t, "{\"apiVersion\":\"fpga.dralet.dev/v1alpha1\",\"kind\":\"FpgaConfig\","
		       "\"requireAfuID\":\"00112233445566778899aabbccddeeff\"}");
	assert_int_equal(backend_dfl.prepare(&h.ctx, p, &t.req), -EINVAL);
	assert_non_null(strstr(h.ctx.error, AFU));
	t_req_clear(&t);

	/* shells are an XRT notion */
	t_req_init(&t, "{\"apiVersion\":\"fpga.dralet.dev/v1alpha1\",\"kind\":\"FpgaConfig\","
		       "\"requireShell\":\"any\"}");
	assert_int_equal(backend_dfl.prepare(&h.ctx, p, &t.req), -EINVAL);
	t_req_clear(&t);
	harness_fini(&h);
	tree_remove(d);
}

static void test_generic_fpga(void **state)
{
	struct harness h;
	struct t_req t;
	char *d = build_tree();

	(void)state;
	assert_int_equal(harness_init(&h, &backend_fpga_region, d, NULL), 0);
	struct dralet_device *a, *raw;
	assert_int_equal(harness_probe(&h, hal_scan_find(h.scan, ALTERA)), 0);
	assert_int_equal(harness_probe(&h, hal_scan_find(h.scan, RAW)), 0);
	a = harness_device(&h, "fpga-0000-70-00-0");
	assert_non_null(a);
	assert_string_equal(attr_string(a, "framework"), "fpga-manager");
	assert_string_equal(attr_string(a, "managerName"), "Altera CvP FPGA Manager");
	assert_string_equal(attr_string(a, "managerState"), "operating");
	assert_string_equal(attr_string(a, "regionCompatID"), "c0ffee00c0ffee00c0ffee00c0ffee00");
	assert_int_equal(dralet_device_health(a), DRALET_HEALTH_HEALTHY);
	raw = harness_device(&h, "fpga-0000-71-00-0");
	assert_non_null(raw);
	assert_string_equal(attr_string(raw, "framework"), "raw");
	assert_string_equal(attr_string(raw, "driver"), "xdma");
	assert_true(t_dev_node(raw, "/dev/xdma0_user"));
	assert_true(t_dev_node(raw, "/dev/xdma0_h2c_0"));
	assert_int_equal(dralet_device_n_nodes(raw), 2);

	t_req_init(&t, "{\"apiVersion\":\"fpga.dralet.dev/v1alpha1\",\"kind\":\"FpgaConfig\","
		       "\"requireInterfaceID\":\"c0ffee00c0ffee00c0ffee00c0ffee00\"}");
	assert_int_equal(backend_fpga_region.prepare(&h.ctx, a, &t.req), 0);
	assert_string_equal(t_env(&t, "DRALET_FPGA_0000_70_00_0_INTERFACE_ID"),
			    "c0ffee00c0ffee00c0ffee00c0ffee00");
	t_req_clear(&t);
	t_req_init(&t, "{\"apiVersion\":\"fpga.dralet.dev/v1alpha1\",\"kind\":\"FpgaConfig\","
		       "\"managementAccess\":true}");
	assert_int_equal(backend_fpga_region.prepare(&h.ctx, a, &t.req), -EINVAL);
	t_req_clear(&t);

	t_write(d, R4, ALTERA, "fpga_manager/fpga2/state", "power off");
	assert_int_equal(backend_fpga_region.health(&h.ctx, a), DRALET_HEALTH_UNHEALTHY);
	harness_fini(&h);
	tree_remove(d);
}

static void test_fpga_config_validation(void **state)
{
	struct harness h;
	static const struct {
		const char *json;
		int want;
		const char *msg;
	} cases[] = {
		{ "{\"apiVersion\":\"fpga.dralet.dev/v1alpha1\",\"kind\":\"FpgaConfig\"}", 0, NULL },
		{ "{\"apiVersion\":\"fpga.dralet.dev/v1alpha1\",\"kind\":\"FpgaConfig\","
		  "\"requireShell\":\"xilinx_u55c_gen3x16_xdma_base_3\",\"managementAccess\":false,"
		  "\"requireInterfaceID\":\"0x" DFL_IFACE "\",\"requireAfuID\":\"" XCLBIN "\"}", 0,
		  NULL },
		{ "{\"apiVersion\":\"fpga.dralet.dev/v1alpha1\",\"kind\":\"FpgaConfig\","
		  "\"bitstream\":{\"url\":\"https://example.com/a.xclbin\"}}", -EINVAL,
		  "unknown field \"url\"" },
		{ "{\"apiVersion\":\"fpga.dralet.dev/v1alpha1\",\"kind\":\"FpgaConfig\","
		  "\"requireInterfaceID\":\"not-an-id\"}", -EINVAL, "not a hex ID" },
		{ "{\"apiVersion\":\"fpga.dralet.dev/v1alpha1\",\"kind\":\"FpgaConfig\","
		  "\"requireAfuID\":\"00112233445566778899aabbccddeeff00\"}", -EINVAL,
		  "not a hex ID" },
		{ "{\"apiVersion\":\"fpga.dralet.dev/v1alpha1\",\"kind\":\"FpgaConfig\","
		  "\"requireShell\":\"\"}", -EINVAL, "empty" },
		{ "{\"apiVersion\":\"fpga.dralet.dev/v1alpha1\",\"kind\":\"FpgaConfig\","
		  "\"requireShell\":7}", -EINVAL, "must be a string" },
		{ "{\"apiVersion\":\"fpga.dralet.dev/v1alpha1\",\"kind\":\"FpgaConfig\","
		  "\"managementAccess\":1}", -EINVAL, "true or false" },
		{ "{\"apiVersion\":\"fpga.dralet.dev/v1alpha1\",\"kind\":\"FpgaConfig\","
		  "\"shell\":\"x\"}", -EINVAL, "unknown field \"shell\"" },
		{ "{\"apiVersion\":\"fpga.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\"}", -EINVAL,
		  "VfConfig" },
		{ "{\"apiVersion\":\"fpga.dralet.dev/v2\",\"kind\":\"FpgaConfig\"}", -EINVAL,
		  "apiVersion" },
		{ "null", -EINVAL, "JSON object" },
	};

	(void)state;
	assert_int_equal(harness_init(&h, &backend_xrt, NULL, NULL), 0);
	assert_int_equal(backend_xrt.validate_config(&h.ctx, NULL), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		h.ctx.error[0] = '\0';
		int r = backend_xrt.validate_config(&h.ctx, cases[i].json);
		if (r != cases[i].want || (cases[i].msg && !strstr(h.ctx.error, cases[i].msg)))
			fail_msg("case %zu %s: got %d \"%s\", want %d \"%s\"", i, cases[i].json, r,
				 h.ctx.error, cases[i].want, cases[i].msg ? cases[i].msg : "");
	}
	/* dfl and fpga-region take the same config */
	assert_int_equal(backend_dfl.validate_config(&h.ctx, cases[1].json), 0);
	assert_int_equal(backend_fpga_region.validate_config(&h.ctx, cases[2].json), -EINVAL);
	harness_fini(&h);
}

static void test_ownership(void **state)
{
	struct t_inv t;
	char *d = build_tree();

	(void)state;
	assert_int_equal(t_inv_open(&t, d, NULL), 0);
	/* Alveo user PF (class 0x1200): xrt, not accel; the mgmt PF and the
	 * golden image are claimed and not published anywhere */
	assert_non_null(t_find(&t, FPGA_DRIVER, "fpga-0000-65-00-1"));
	assert_null(t_find(&t, FPGA_DRIVER, "fpga-0000-65-00-0"));
	assert_null(t_find(&t, FPGA_DRIVER, "fpga-0000-66-00-0"));
	assert_null(t_find(&t, ACCEL_DRIVER, "accel-0000-65-00-1"));
	assert_null(t_find(&t, ACCEL_DRIVER, "accel-0000-65-00-0"));
	assert_null(t_find(&t, ACCEL_DRIVER, "accel-0000-66-00-0"));
	/* DFL cards (class 0x1200) go to dfl, generic FPGAs to fpga-region */
	assert_non_null(t_find(&t, FPGA_DRIVER, "fpga-0000-3b-00-0-port0"));
	assert_non_null(t_find(&t, FPGA_DRIVER, "fpga-0000-5e-00-1-port0"));
	assert_non_null(t_find(&t, FPGA_DRIVER, "fpga-0000-70-00-0"));
	assert_non_null(t_find(&t, FPGA_DRIVER, "fpga-0000-71-00-0"));
	assert_int_equal(inventory_n_devices(t.inv, FPGA_DRIVER), 5);
	assert_int_equal(inventory_n_devices(t.inv, ACCEL_DRIVER), 0);
	/* the xrt backend owns the device */
	struct dralet_device *c = t_find(&t, FPGA_DRIVER, "fpga-0000-65-00-1");
	assert_string_equal(inventory_backend_of(t.inv, c)->name, "xrt");
	t_inv_close(&t);

	/* with xrt disabled the Alveo user PF falls back to fpga-region (a
	 * Xilinx function of class 0x1200), still not to accel */
	assert_int_equal(t_inv_open(&t, d, "backends:\n  xrt:\n    enabled: false\n"), 0);
	c = t_find(&t, FPGA_DRIVER, "fpga-0000-65-00-1");
	assert_non_null(c);
	assert_string_equal(inventory_backend_of(t.inv, c)->name, "fpga-region");
	assert_int_equal(inventory_n_devices(t.inv, ACCEL_DRIVER), 0);
	t_inv_close(&t);
	tree_remove(d);
}

static void test_garbage_vendor_files(void **state)
{
	struct harness h;
	char *d = build_tree();

	(void)state;
	/* what no driver writes, so no board says */
	t_write(d, R1, MGMT, "interface_uuids", "zz-not-a-uuid");
	t_write(d, R1, MGMT, "fmgr.m.0/fpga_manager/fpga0/state", "\x01\x02");
	t_write(d, R1, USER, "rom.u.0/timestamp", "yesterday");
	t_write(d, R1, USER, "rom.u.0/VBNV",
		"xilinx_u55c_gen3x16_xdma_base_3_with_a_name_longer_than_any_attribute_may_be");
	t_write(d, R1, MGMT, "instance", "minus one");
	t_write(d, R2, N3000, "fpga_region/region0/dfl-port.0/afu_id", "not hex at all");
	assert_int_equal(harness_init(&h, &backend_xrt, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	struct dralet_device *c = harness_device(&h, "fpga-0000-65-00-1");
	assert_non_null(c);
	assert_null(attr_string(c, "interfaceUUID"));
	assert_null(attr_string(c, "shell"));
	assert_int_equal(attr_int(c, "shellTimestamp", -1), -1);
	assert_true(h.ctx.warnings >= 3);
	struct t_req t;
	t_req_init(&t, "{\"apiVersion\":\"fpga.dralet.dev/v1alpha1\",\"kind\":\"FpgaConfig\","
		       "\"managementAccess\":true}");
	assert_int_equal(backend_xrt.prepare(&h.ctx, c, &t.req), -EINVAL);
	assert_non_null(strstr(h.ctx.error, "management"));
	t_req_clear(&t);
	harness_fini(&h);

	assert_int_equal(harness_init(&h, &backend_dfl, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	struct dralet_device *p = harness_device(&h, "fpga-0000-3b-00-0-port0");
	assert_non_null(p);
	assert_null(attr_string(p, "afuID"));
	harness_fini(&h);
	tree_remove(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xrt_pairs_mgmt_and_user),
		cmocka_unit_test(test_xrt_crashed_firmware_is_unhealthy),
		cmocka_unit_test(test_xrt_prepare),
		cmocka_unit_test(test_dfl_ports),
		cmocka_unit_test(test_dfl_prepare),
		cmocka_unit_test(test_generic_fpga),
		cmocka_unit_test(test_fpga_config_validation),
		cmocka_unit_test(test_ownership),
		cmocka_unit_test(test_garbage_vendor_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
