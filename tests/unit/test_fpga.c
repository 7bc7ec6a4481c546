/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fpga family on hand-built trees: an Alveo U55C (management + user PF)
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

static void add_bridges(const char *d)
{
	t_pci(d, "pci0000:60", "0000:60:01.0", 0x8086, 0x352a, 0x060400, "pcieport");
	t_pci(d, "pci0000:3a", "0000:3a:00.0", 0x8086, 0x352a, 0x060400, "pcieport");
	t_pci(d, "pci0000:5d", "0000:5d:00.0", 0x8086, 0x352a, 0x060400, "pcieport");
	t_pci(d, "pci0000:6f", "0000:6f:00.0", 0x8086, 0x352a, 0x060400, "pcieport");
}

/* A platform device below a function (DFL FME/port) with its bus link. */
static void platform_dev(const char *d, const char *parent, const char *addr, const char *sub,
			 const char *name)
{
	char rel[1024], target[1024];
	snprintf(rel, sizeof(rel), "bus/platform/devices/%s", name);
	snprintf(target, sizeof(target), "devices/%s/%s/%s/%s", parent, addr, sub, name);
	t_syslink(d, rel, target);
}

static void add_alveo(const char *d, const char *iface, const char *mgr_state)
{
	t_pci(d, R1, MGMT, 0x10ee, 0x505c, 0x120000, "xclmgmt");
	t_pci(d, R1, USER, 0x10ee, 0x505d, 0x120000, "xocl");
	t_write(d, R1, MGMT, "mgmt_pf", "");
	t_write(d, R1, MGMT, "instance", "256");
	t_write(d, R1, MGMT, "interface_uuids", iface);
	t_write(d, R1, MGMT, "logic_uuids", LOGIC "\n" IFACE);
	t_write(d, R1, MGMT, "rom.m.0/VBNV", "xilinx_u55c_gen3x16_xdma_base_3");
	t_write(d, R1, MGMT, "xrt/xclmgmt256/dev", "240:7");
	t_node(d, "xclmgmt256");
	t_write(d, R1, MGMT, "fmgr.m.0/fpga_manager/fpga0/name", "Xilinx FPGA Manager");
	t_write(d, R1, MGMT, "fmgr.m.0/fpga_manager/fpga0/state", mgr_state);
	t_syslink(d, "class/fpga_manager/fpga0", "devices/" R1 "/" MGMT "/fmgr.m.0/fpga_manager/fpga0");
	t_write(d, R1, USER, "user_pf", "");
	t_write(d, R1, USER, "rom.u.0/VBNV", "xilinx_u55c_gen3x16_xdma_base_3");
	t_write(d, R1, USER, "rom.u.0/timestamp", "1648520217");
	t_write(d, R1, USER, "xclbinuuid", XCLBIN);
	t_write(d, R1, USER, "xmc.u.0/serial_num", "XFL1RT4K4X0A");
	t_group(d, R1, USER, 60);
	t_classdev(d, R1, USER, "drm", "drm", "renderD128", "226:128", "dri/renderD128");
	t_classdev(d, R1, USER, "drm", "drm", "card0", "226:0", "dri/card0");
	/* a U280 still in its factory image */
	t_pci(d, R1, GOLD, 0x10ee, 0xd00c, 0x120000, NULL);
}

static void add_dfl(const char *d, const char *afu)
{
	/* N3000: FME and one port on the PF */
	t_pci(d, R2, N3000, 0x8086, 0x0b30, 0x120000, "dfl-pci");
	t_write(d, R2, N3000, "fpga_region/region0/.keep", "");
	t_syslink(d, "class/fpga_region/region0", "devices/" R2 "/" N3000 "/fpga_region/region0");
	t_write(d, R2, N3000, "fpga_region/region0/dfl-fme.0/bitstream_id", "0x23000410010309");
	t_write(d, R2, N3000, "fpga_region/region0/dfl-fme.0/bitstream_metadata", "0x1904107");
	t_write(d, R2, N3000, "fpga_region/region0/dfl-fme.0/ports_num", "1");
	t_write(d, R2, N3000, "fpga_region/region0/dfl-fme.0/socket_id", "0");
	t_write(d, R2, N3000, "fpga_region/region0/dfl-fme.0/dev", "238:0");
	t_write(d, R2, N3000, "fpga_region/region0/dfl-fme.0/dfl-fme-region.0/fpga_region/region1/"
		"compat_id", DFL_IFACE);
	t_syslink(d, "class/fpga_region/region1", "devices/" R2 "/" N3000 "/fpga_region/region0/"
		  "dfl-fme.0/dfl-fme-region.0/fpga_region/region1");
	t_write(d, R2, N3000, "fpga_region/region0/dfl-fme.0/dfl-fme-mgr.0/fpga_manager/fpga1/"
		"state", "unknown");
	t_write(d, R2, N3000, "fpga_region/region0/dfl-fme.0/dfl-fme-mgr.0/fpga_manager/fpga1/"
		"name", "DFL FME FPGA Manager");
	t_syslink(d, "class/fpga_manager/fpga1", "devices/" R2 "/" N3000 "/fpga_region/region0/"
		  "dfl-fme.0/dfl-fme-mgr.0/fpga_manager/fpga1");
	platform_dev(d, R2, N3000, "fpga_region/region0", "dfl-fme.0");
	t_node(d, "dfl-fme.0");
	t_write(d, R2, N3000, "fpga_region/region0/dfl-port.0/afu_id", afu);
	t_write(d, R2, N3000, "fpga_region/region0/dfl-port.0/id", "0");
	t_write(d, R2, N3000, "fpga_region/region0/dfl-port.0/dev", "237:0");
	platform_dev(d, R2, N3000, "fpga_region/region0", "dfl-port.0");
	t_node(d, "dfl-port.0");

	/* D5005 with SR-IOV: the FME stays on the PF, the port moved to the VF */
	t_pci(d, R3, D5005, 0x8086, 0x0b2b, 0x120000, "dfl-pci");
	t_sriov(d, R3, D5005, 1, 1);
	t_pci(d, R3, D5005_VF, 0x8086, 0x0b2c, 0x120000, "dfl-pci");
	t_vf(d, R3, D5005, D5005_VF, 0);
	t_write(d, R3, D5005, "fpga_region/region2/dfl-fme.1/bitstream_id", "0x0");
	t_write(d, R3, D5005, "fpga_region/region2/dfl-fme.1/dev", "238:1");
	t_write(d, R3, D5005, "fpga_region/region2/dfl-fme.1/dfl-fme-region.1/fpga_region/region4/"
		"compat_id", "0x" DFL_IFACE);
	platform_dev(d, R3, D5005, "fpga_region/region2", "dfl-fme.1");
	t_node(d, "dfl-fme.1");
	t_write(d, R3, D5005_VF, "fpga_region/region5/dfl-port.1/afu_id", AFU);
	t_write(d, R3, D5005_VF, "fpga_region/region5/dfl-port.1/id", "0");
	t_write(d, R3, D5005_VF, "fpga_region/region5/dfl-port.1/dev", "237:1");
	platform_dev(d, R3, D5005_VF, "fpga_region/region5", "dfl-port.1");
	t_node(d, "dfl-port.1");
}

static void add_generic(const char *d)
{
	t_pci(d, R4, ALTERA, 0x1172, 0xe001, 0x120000, "altera-cvp");
	t_write(d, R4, ALTERA, "fpga_manager/fpga2/name", "Altera CvP FPGA Manager");
	t_write(d, R4, ALTERA, "fpga_manager/fpga2/state", "operating");
	t_syslink(d, "class/fpga_manager/fpga2", "devices/" R4 "/" ALTERA "/fpga_manager/fpga2");
	t_write(d, R4, ALTERA, "fpga_region/region3/compat_id", "c0ffee00c0ffee00c0ffee00c0ffee00");
	t_syslink(d, "class/fpga_region/region3", "devices/" R4 "/" ALTERA "/fpga_region/region3");
	t_pci(d, R4, RAW, 0x10ee, 0x903f, 0x058000, "xdma");
	t_write(d, R4, RAW, "xdma/xdma0_user/dev", "505:0");
	t_write(d, R4, RAW, "xdma/xdma0_user/uevent", "MAJOR=505\nMINOR=0\nDEVNAME=xdma0_user");
	t_write(d, R4, RAW, "xdma/xdma0_h2c_0/dev", "505:1");
	t_node(d, "xdma0_user");
	t_node(d, "xdma0_h2c_0");
}

static char *build_tree(void)
{
	char *d = tree_new();

	add_bridges(d);
	/* a two-stage platform: base (BLP) interface, then the shell's (PLP) */
	add_alveo(d, "0123456789abcdef0123456789abcdef\n" IFACE, "operating");
	add_dfl(d, AFU);
	add_generic(d);
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
	char *d = tree_new();

	(void)state;
	add_bridges(d);
	add_alveo(d, "ffffffffffffffffffffffffffffffff", "operating");
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
	t_write(d, R2, N3000, "fpga_region/region0/dfl-fme.0/dfl-fme-mgr.0/fpga_manager/fpga1/"
		"status", "reconfig incompatible image");
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
	assert_int_equal(n->major, 237);
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
	assert_int_equal(n->major, 238);
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
		  "\"bitstream\":{\"url\":\"https://example.com/a.xclbin\"}}", -EOPNOTSUPP,
		  "not supported yet" },
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
	assert_int_equal(backend_fpga_region.validate_config(&h.ctx, cases[2].json), -EOPNOTSUPP);
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
	char *d = tree_new();

	(void)state;
	add_bridges(d);
	add_alveo(d, "zz-not-a-uuid", "\x01\x02");
	t_write(d, R1, USER, "rom.u.0/timestamp", "yesterday");
	t_write(d, R1, USER, "rom.u.0/VBNV",
		"xilinx_u55c_gen3x16_xdma_base_3_with_a_name_longer_than_any_attribute_may_be");
	t_write(d, R1, MGMT, "instance", "minus one");
	add_dfl(d, "not hex at all");
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
