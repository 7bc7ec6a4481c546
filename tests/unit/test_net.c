/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The net family (rdma, nic-vf) on hand-built trees: a ConnectX-7 in
 * InfiniBand mode behind a PCIe switch shared with a GPU (like an HGX H100
 * node), its VFs (one RDMA-capable, one plain, one on vfio-pci, one
 * unbound), an Intel NIC with soft-RoCE, and a NIC carrying the default
 * route; ownership between rdma, nic-vf and sriov; prepare edits; VfConfig.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <dralet/sharing.h>

#include <dralet/pci_ctl.h>

#include "backends/common/rdma_nodes.h"
#include "backends/net/net.h"
#include "backends/sriov/sriov.h"
#include "test_backend.h"

#define ROOT "pci0000:00"
#define RP ROOT "/0000:00:01.0"
#define USP RP "/0000:01:00.0"
#define DSP0 USP "/0000:02:00.0"
#define DSP1 USP "/0000:02:01.0"
#define ROOT2 "pci0000:80"
#define RP2 ROOT2 "/0000:80:01.0"
#define ROOT3 "pci0000:c0"
#define RP3 ROOT3 "/0000:c0:01.0"

#define PF "0000:04:00.0"
#define VF0 "0000:04:00.1"
#define VF1 "0000:04:00.2"
#define VF2 "0000:04:00.3"
#define VF3 "0000:04:00.4"

/*
 * A ConnectX-7 in InfiniBand mode behind a PCIe switch shared with a GPU, with
 * 4 VFs: VF0 RDMA-capable (own ibdev, no netdev), VF1 a kernel netdev only,
 * sharing group 32 with VF3, VF2 on vfio-pci alone in group 33, VF3 without a
 * driver; an Intel NIC with soft-RoCE over its netdev and a VF; the host NIC,
 * a plain PF carrying the default route.
 */
static const char BOARD[] =
	"board: net-test\n"
	"default_route: {dev: eno1, via: 192.168.0.1}\n"
	"rxe: [{name: rxe0, netdev: ens2f0, uverbs: 4}]\n"
	"pci:\n"
	"  - root: \"0000:00\"\n"
	"    numa: 0\n"
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
	"                  - {bdf: 03:00.0, id: \"10de:2330\", class: 0x030200, driver: nvidia}\n"
	"              - bdf: 02:01.0\n"
	"                id: \"1000:c030\"\n"
	"                devices:\n"
	"                  - bdf: 04:00.0\n"
	"                    id: \"15b3:1021\"\n"
	"                    class: 0x020700\n"
	"                    driver: mlx5_core\n"
	"                    iommu_group: 30\n"
	"                    net: {name: ibp4s0, type: infiniband, mtu: 4092, speed: 400000}\n"
	"                    infiniband:\n"
	"                      name: mlx5_0\n"
	"                      node_guid: \"1070:fd03:00ab:cdef\"\n"
	"                      fw_ver: 28.39.1002\n"
	"                      uverbs: 0\n"
	"                      ports: [{rate: \"400 Gb/sec (4X NDR)\"}]\n"
	"                    sriov:\n"
	"                      total: 16\n"
	"                      num: 4\n"
	"                      vf_id: \"15b3:101e\"\n"
	"                      vf_driver: mlx5_core\n"
	"                      vf_net: \"{pf}v{n}\"\n"
	"                      vf_rdma: mlx5_\n"
	"                      vfs:\n"
	"                        0: {net: false, iommu_group: 31}\n"
	"                        1: {rdma: false, iommu_group: 32}\n"
	"                        2: {driver: vfio-pci, iommu_group: 33}\n"
	"                        3: {driver: null, iommu_group: 32}\n"
	"  - root: \"0000:80\"\n"
	"    devices:\n"
	"      - bdf: 80:01.0\n"
	"        id: \"8086:352a\"\n"
	"        devices:\n"
	"          - bdf: 81:00.0\n"
	"            id: \"8086:1593\"\n"
	"            class: 0x020000\n"
	"            driver: ice\n"
	"            net: {name: ens2f0, mac: \"b4:96:91:00:00:01\", speed: 25000}\n"
	"            sriov: {total: 128, num: 1, offset: 8, vf_id: \"8086:1889\", vf_driver: iavf,\n"
	"                    vf_net: \"{pf}v{n}\"}\n"
	"  - root: \"0000:c0\"\n"
	"    devices:\n"
	"      - bdf: c0:01.0\n"
	"        id: \"8086:352a\"\n"
	"        devices:\n"
	"          - {bdf: c1:00.0, id: \"8086:1572\", class: 0x020000, driver: i40e,\n"
	"             net: {name: eno1, mac: \"3c:fd:fe:00:00:01\", speed: 10000}}\n";

static char *build_tree(void)
{
	return board_tree(BOARD);
}

/* What the kernel shows as @ifname's address. */
static const char *netdev_address(const char *d, const char *ifname)
{
	static char buf[128];
	char rel[256];
	FILE *f;

	snprintf(rel, sizeof(rel), "%s/sys/class/net/%s/address", d, ifname);
	f = fopen(rel, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static void test_rdma_pf_and_vf(void **state)
{
	struct harness h;
	char *d = build_tree();

	(void)state;
	assert_int_equal(harness_init(&h, &backend_rdma, d, "{\"sharing\":\"true\"}"), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	/* the PF, the RDMA VF and the soft-RoCE NIC (the default-route NIC has no
	 * ibdev; the agent would skip it anyway) */
	assert_int_equal(h.sink.n, 3);

	struct dralet_device *pf = harness_device(&h, "rdma-0000-04-00-0");
	assert_non_null(pf);
	assert_string_equal(dralet_device_kind(pf), "rdma");
	assert_string_equal(attr_string(pf, "ibDevice"), "mlx5_0");
	assert_string_equal(attr_string(pf, "linkLayer"), "InfiniBand");
	assert_string_equal(attr_string(pf, "portState"), "ACTIVE");
	assert_string_equal(attr_string(pf, "rate"), "400 Gb/sec (4X NDR)");
	assert_int_equal(attr_int(pf, "rateGbps", 0), 400);
	assert_string_equal(attr_string(pf, "nodeGUID"), "1070:fd03:00ab:cdef");
	assert_string_equal(attr_string(pf, "firmware"), "28.39.1002");
	assert_string_equal(attr_string(pf, "nodeType"), "CA");
	assert_string_equal(attr_string(pf, "ifName"), "ibp4s0");
	assert_int_equal(attr_int(pf, "mtu", 0), 4092);
	assert_int_equal(attr_int(pf, "speedMbps", 0), 400000);
	assert_string_equal(attr_string(pf, "driver"), "mlx5_core");
	assert_int_equal(attr_bool(pf, "isVF"), 0);
	assert_int_equal(attr_int(pf, "sriovVfs", -1), 4);
	assert_int_equal(attr_bool(pf, "softRoCE"), 0);
	assert_string_equal(attr_string(pf, "pcieSwitch"), "0000:01:00.0");
	assert_string_equal(attr_string(pf, DRALET_ATTR_PCIE_ROOT), "pci0000:00");
	assert_string_equal(attr_string(pf, "vendorID"), "0x15b3");
	assert_string_equal(attr_string(pf, "deviceID"), "0x1021");
	assert_true(dralet_device_n_attrs(pf) <= DRALET_ATTRS_AND_CAPACITIES_MAX);
	assert_true(t_dev_node(pf, "/dev/infiniband/uverbs0"));
	assert_true(t_dev_node(pf, "/dev/infiniband/rdma_cm"));
	assert_true(t_dev_node(pf, "/dev/infiniband/umad0"));
	assert_true(t_dev_node(pf, "/dev/infiniband/issm0"));
	assert_int_equal(dralet_device_health(pf), DRALET_HEALTH_HEALTHY);

	struct dralet_device *vf = harness_device(&h, "rdma-0000-04-00-1");
	assert_non_null(vf);
	assert_int_equal(attr_bool(vf, "isVF"), 1);
	assert_string_equal(attr_string(vf, "pfPciAddress"), PF);
	assert_int_equal(attr_int(vf, "vfID", -1), 0);
	assert_string_equal(attr_string(vf, "pfName"), "ibp4s0");
	assert_true(dralet_device_n_attrs(vf) <= DRALET_ATTRS_AND_CAPACITIES_MAX);
	assert_true(t_dev_node(vf, "/dev/infiniband/uverbs1"));

	struct dralet_device *soft = harness_device(&h, "rdma-0000-81-00-0");
	assert_non_null(soft);
	assert_int_equal(attr_bool(soft, "softRoCE"), 1);
	assert_string_equal(attr_string(soft, "ibDevice"), "rxe0");
	assert_string_equal(attr_string(soft, "ifName"), "ens2f0");
	assert_string_equal(attr_string(soft, "linkLayer"), "Ethernet");
	assert_true(t_dev_node(soft, "/dev/infiniband/uverbs4"));
	assert_false(t_dev_node(soft, "/dev/infiniband/umad4"));

	/* shared mode (option sharing "true"): the PF (and the soft-RoCE NIC)
	 * may be shared by pods, all of its shares by default; a VF stays
	 * exclusive */
	const struct dralet_capacity_policy *p = dralet_device_capacity_policy(pf, "shares");
	assert_true(dralet_device_allows_multiple(pf));
	assert_non_null(p);
	assert_string_equal(p->default_value, "1k");
	assert_string_equal(p->range_min, "1");
	assert_string_equal(p->range_max, "1k");
	assert_true(dralet_device_n_attrs(pf) + dralet_device_n_capacities(pf) <=
		    DRALET_ATTRS_AND_CAPACITIES_MAX);
	assert_false(dralet_device_allows_multiple(vf));
	assert_true(dralet_device_allows_multiple(soft));
	{
		static const struct dralet_capacity one[] = { { "shares", "1" } };
		struct dralet_edits edits = { 0 };
		struct dralet_undo undo = { 0 };
		struct dralet_prepare_req req = {
			.claim = { "7f1c2b3a-0000-4000-8000-000000000001", "ns", "c" },
			.request = "rdma", .edits = &edits, .undo = &undo,
			.share_id = "5a5a5a5a-0000-4000-8000-00000000000a", .consumed = one,
			.n_consumed = 1,
		};
		bool share_env = false;
		assert_int_equal(backend_rdma.prepare(&h.ctx, pf, &req), 0);
		for (size_t i = 0; i < edits.n_env; i++)
			share_env |= !strcmp(edits.env[i], "DRALET_RDMA_0000_04_00_0_SHARE_ID="
					     "5a5a5a5a-0000-4000-8000-00000000000a");
		assert_true(share_env);
		edits_clear(&edits);
		undo_clear(&undo);
	}
	harness_fini(&h);

	/* without option sharing "true" (the default, or "false"): exclusive */
	assert_int_equal(harness_init(&h, &backend_rdma, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	pf = harness_device(&h, "rdma-0000-04-00-0");
	assert_false(dralet_device_allows_multiple(pf));
	assert_int_equal(dralet_device_n_capacities(pf), 0);
	harness_fini(&h);
	tree_remove(d);
}

static void test_rdma_health_follows_port_state(void **state)
{
	struct harness h;
	char *d = build_tree();

	(void)state;
	/* the kernel makes a port's counters when it registers the device */
	t_write(d, DSP1, PF, "infiniband/mlx5_0/ports/1/counters/link_downed", "3");
	assert_int_equal(harness_init(&h, &backend_rdma, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	struct dralet_device *pf = harness_device(&h, "rdma-0000-04-00-0");
	assert_int_equal(backend_rdma.health(&h.ctx, pf), DRALET_HEALTH_HEALTHY);	/* history */
	t_write(d, DSP1, PF, "infiniband/mlx5_0/ports/1/state", "1: DOWN");
	assert_int_equal(backend_rdma.health(&h.ctx, pf), DRALET_HEALTH_UNHEALTHY);
	t_write(d, DSP1, PF, "infiniband/mlx5_0/ports/1/state", "2: INIT");
	assert_int_equal(backend_rdma.health(&h.ctx, pf), DRALET_HEALTH_UNHEALTHY);
	t_write(d, DSP1, PF, "infiniband/mlx5_0/ports/1/state", "4: ACTIVE");
	assert_int_equal(backend_rdma.health(&h.ctx, pf), DRALET_HEALTH_HEALTHY);
	/* a flap between two rounds: the port is ACTIVE again, link_downed rose */
	t_write(d, DSP1, PF, "infiniband/mlx5_0/ports/1/counters/link_downed", "4");
	assert_int_equal(backend_rdma.health(&h.ctx, pf), DRALET_HEALTH_UNHEALTHY);
	assert_string_equal(dralet_ctx_error_message(&h.ctx),
			    "RDMA device mlx5_0 port 1: the link went down and came back "
			    "(link_downed rose); Unhealthy until 300 s pass without that");
	assert_int_equal(backend_rdma.health(&h.ctx, pf), DRALET_HEALTH_UNHEALTHY);	/* held */
	/* the hold, on the device's own memory with a clock of the test's */
	const struct dralet_ibdev *ib = &dralet_device_pci(pf)->ib[0];
	struct rdma_flaps *flaps = dralet_device_private(pf);
	int64_t last = flaps->last;
	assert_int_equal(rdma_link_flaps(&h.ctx, ib, flaps, last + RDMA_LINK_FLAP_HOLD_S - 1),
			 DRALET_HEALTH_UNHEALTHY);
	assert_non_null(strstr(dralet_ctx_error_message(&h.ctx), "a link went down and came back"));
	assert_int_equal(rdma_link_flaps(&h.ctx, ib, flaps, last + RDMA_LINK_FLAP_HOLD_S),
			 DRALET_HEALTH_HEALTHY);
	t_write(d, DSP1, PF, "infiniband/mlx5_0/ports/1/counters/link_downed", "0");	/* reset */
	assert_int_equal(rdma_link_flaps(&h.ctx, ib, flaps, last + 2 * RDMA_LINK_FLAP_HOLD_S),
			 DRALET_HEALTH_HEALTHY);
	/* the function disappears (hot-unplug: its files and driver link) */
	char p[512];
	snprintf(p, sizeof(p), "%s/sys/devices/" DSP1 "/" PF "/vendor", d);
	assert_int_equal(unlink(p), 0);
	t_bind(d, DSP1, PF, NULL);
	assert_int_equal(backend_rdma.health(&h.ctx, pf), DRALET_HEALTH_UNHEALTHY);
	harness_fini(&h);
	tree_remove(d);
}

/* A port without link_downed (many VFs) is looked for once per probe, not
 * in every health round. */
static void test_rdma_port_without_counter_is_not_read_again(void **state)
{
	struct harness h;
	char *d = build_tree();

	(void)state;
	assert_int_equal(harness_init(&h, &backend_rdma, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	struct dralet_device *pf = harness_device(&h, "rdma-0000-04-00-0");
	struct rdma_flaps *flaps = dralet_device_private(pf);
	assert_int_equal(backend_rdma.health(&h.ctx, pf), DRALET_HEALTH_HEALTHY);
	assert_true(flaps->absent[0]);
	assert_false(flaps->known[0]);
	/* a counter that rises later is not read: only a new probe looks again */
	t_write(d, DSP1, PF, "infiniband/mlx5_0/ports/1/counters/link_downed", "3");
	assert_int_equal(backend_rdma.health(&h.ctx, pf), DRALET_HEALTH_HEALTHY);
	t_write(d, DSP1, PF, "infiniband/mlx5_0/ports/1/counters/link_downed", "4");
	assert_int_equal(backend_rdma.health(&h.ctx, pf), DRALET_HEALTH_HEALTHY);
	assert_false(flaps->known[0]);
	harness_fini(&h);

	assert_int_equal(harness_init(&h, &backend_rdma, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	pf = harness_device(&h, "rdma-0000-04-00-0");
	flaps = dralet_device_private(pf);
	assert_int_equal(backend_rdma.health(&h.ctx, pf), DRALET_HEALTH_HEALTHY);
	assert_false(flaps->absent[0]);
	assert_true(flaps->known[0]);
	assert_int_equal(flaps->link_downed[0], 4);
	t_write(d, DSP1, PF, "infiniband/mlx5_0/ports/1/counters/link_downed", "5");
	assert_int_equal(backend_rdma.health(&h.ctx, pf), DRALET_HEALTH_UNHEALTHY);
	harness_fini(&h);
	tree_remove(d);
}

static void test_rdma_prepare(void **state)
{
	struct harness h;
	struct t_req t;
	char *d = build_tree();

	(void)state;
	assert_int_equal(harness_init(&h, &backend_rdma, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	struct dralet_device *pf = harness_device(&h, "rdma-0000-04-00-0");

	t_req_init(&t, NULL);
	assert_int_equal(backend_rdma.prepare(&h.ctx, pf, &t.req), 0);
	const struct dralet_devnode *n = t_edit_node(&t, "/dev/infiniband/uverbs0");
	assert_non_null(n);
	assert_int_equal(n->major, 231);
	assert_int_equal(n->minor, 192);
	n = t_edit_node(&t, "/dev/infiniband/rdma_cm");
	assert_non_null(n);
	assert_int_equal(n->major, 10);
	assert_int_equal(n->minor, 254);	/* misc, dynamic */
	assert_non_null(t_edit_node(&t, "/dev/infiniband/umad0"));
	assert_non_null(t_edit_node(&t, "/dev/infiniband/issm0"));
	assert_null(t_edit_node(&t, "/dev/infiniband/uverbs1"));
	assert_string_equal(t_env(&t, "DRALET_RDMA_0000_04_00_0_PCI_ADDRESS"), PF);
	assert_string_equal(t_env(&t, "DRALET_RDMA_0000_04_00_0_RDMA_DEVICE"), "mlx5_0");
	assert_string_equal(t_env(&t, "DRALET_RDMA_0000_04_00_0_NETDEV"), "ibp4s0");
	assert_string_equal(t_env(&t, "DRALET_RDMA_0000_04_00_0_LINK_LAYER"), "InfiniBand");
	assert_string_equal(dralet_undo_get(&t.undo, "pciAddress"), PF);
	assert_string_equal(dralet_undo_get(&t.undo, "driver"), "mlx5_core");
	t_req_clear(&t);

	/* a VfConfig driver change on a PF is refused */
	t_req_init(&t, "{\"apiVersion\":\"net.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\","
		       "\"driver\":\"vfio-pci\"}");
	assert_int_equal(backend_rdma.prepare(&h.ctx, pf, &t.req), -EINVAL);
	assert_non_null(strstr(h.ctx.error, "physical function"));
	t_req_clear(&t);

	/* soft-RoCE: Ethernet link layer, no MAD nodes */
	struct dralet_device *soft = harness_device(&h, "rdma-0000-81-00-0");
	t_req_init(&t, NULL);
	assert_int_equal(backend_rdma.prepare(&h.ctx, soft, &t.req), 0);
	assert_non_null(t_edit_node(&t, "/dev/infiniband/uverbs4"));
	assert_non_null(t_edit_node(&t, "/dev/infiniband/rdma_cm"));
	assert_int_equal(t.edits.n_nodes, 2);
	assert_string_equal(t_env(&t, "DRALET_RDMA_0000_81_00_0_NETDEV"), "ens2f0");
	t_req_clear(&t);

	/* unprepare is a no-op and idempotent */
	assert_int_equal(backend_rdma.unprepare(&h.ctx, pf, &t.req.claim, NULL), 0);
	assert_int_equal(backend_rdma.unprepare(&h.ctx, pf, &t.req.claim, NULL), 0);
	harness_fini(&h);
	tree_remove(d);
}

static void test_nic_vf_devices(void **state)
{
	struct harness h;
	char *d = build_tree();

	(void)state;
	assert_int_equal(harness_init(&h, &backend_nic_vf, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	/* the harness probes every VF nic-vf scores, the RDMA VF included */
	struct dralet_device *v1 = harness_device(&h, "vf-0000-04-00-2");
	assert_non_null(v1);
	assert_string_equal(dralet_device_kind(v1), "vf");
	assert_int_equal(attr_int(v1, "vfID", -1), 1);
	assert_string_equal(attr_string(v1, "pfPciAddress"), PF);
	assert_string_equal(attr_string(v1, "pfName"), "ibp4s0");
	assert_string_equal(attr_string(v1, "pfDeviceID"), "0x1021");
	assert_string_equal(attr_string(v1, "ifName"), "ibp4s0v1");
	assert_string_equal(attr_string(v1, "mac"), netdev_address(d, "ibp4s0v1"));
	assert_string_equal(attr_string(v1, "driver"), "mlx5_core");
	assert_string_equal(attr_string(v1, "linkType"), "infiniband");
	assert_string_equal(attr_string(v1, "k8s.cni.cncf.io/deviceID"), VF1);
	assert_int_equal(attr_int(v1, "iommuGroup", -1), 32);
	assert_int_equal(attr_bool(v1, "vfioCapable"), 0);	/* shares group 32 with VF3 */
	assert_int_equal(attr_bool(v1, "rdmaCapable"), 0);
	assert_int_equal(dralet_device_n_nodes(v1), 0);
	assert_int_equal(dralet_device_health(v1), DRALET_HEALTH_HEALTHY);

	struct dralet_device *v2 = harness_device(&h, "vf-0000-04-00-3");
	assert_int_equal(attr_bool(v2, "vfioCapable"), 1);
	assert_string_equal(attr_string(v2, "driver"), "vfio-pci");
	assert_true(t_dev_node(v2, "/dev/vfio/33"));
	assert_true(t_dev_node(v2, "/dev/vfio/vfio"));

	/* no driver is fine (prepare binds one), at probe as in the health op */
	struct dralet_device *v3 = harness_device(&h, "vf-0000-04-00-4");
	assert_null(attr_string(v3, "driver"));
	assert_int_equal(dralet_device_health(v3), DRALET_HEALTH_HEALTHY);
	assert_int_equal(backend_nic_vf.health(&h.ctx, v3), DRALET_HEALTH_HEALTHY);

	/* an RDMA-capable VF, were nic-vf to own it, keeps its RDMA nodes */
	struct dralet_device *v0 = harness_device(&h, "vf-0000-04-00-1");
	assert_int_equal(attr_bool(v0, "rdmaCapable"), 1);
	assert_string_equal(attr_string(v0, "rdmaDevice"), "mlx5_1");
	assert_true(t_dev_node(v0, "/dev/infiniband/uverbs1"));

	struct dralet_device *iavf = harness_device(&h, "vf-0000-81-01-0");
	assert_non_null(iavf);
	assert_string_equal(attr_string(iavf, "linkType"), "ethernet");
	assert_string_equal(attr_string(iavf, "pfName"), "ens2f0");

	/* PF link down: its VFs cannot pass traffic */
	t_write(d, RP2, "0000:81:00.0", "net/ens2f0/operstate", "down");
	assert_int_equal(backend_nic_vf.health(&h.ctx, iavf), DRALET_HEALTH_UNHEALTHY);
	t_write(d, RP2, "0000:81:00.0", "net/ens2f0/operstate", "up");
	assert_int_equal(backend_nic_vf.health(&h.ctx, iavf), DRALET_HEALTH_HEALTHY);
	/* unbound since discovery (its driver link is what the kernel says now): still
	 * usable, prepare binds it when the claim's VfConfig names a driver */
	t_bind(d, RP2, "0000:81:01.0", NULL);
	t_write(d, RP2, "0000:81:01.0", "uevent", "PCI_SLOT_NAME=0000:81:01.0");
	assert_int_equal(backend_nic_vf.health(&h.ctx, iavf), DRALET_HEALTH_HEALTHY);
	/* gone */
	char p[512];
	snprintf(p, sizeof(p), "%s/sys/devices/" RP2 "/0000:81:01.0/vendor", d);
	unlink(p);
	snprintf(p, sizeof(p), "%s/sys/devices/" RP2 "/0000:81:01.0/uevent", d);
	unlink(p);
	assert_int_equal(backend_nic_vf.health(&h.ctx, iavf), DRALET_HEALTH_UNHEALTHY);
	harness_fini(&h);
	tree_remove(d);
}

static void test_nic_vf_prepare(void **state)
{
	struct harness h;
	struct t_req t;
	char *d = build_tree();

	(void)state;
	assert_int_equal(harness_init(&h, &backend_nic_vf, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);

	/* kernel netdev VF */
	struct dralet_device *v1 = harness_device(&h, "vf-0000-04-00-2");
	t_req_init(&t, NULL);
	assert_int_equal(backend_nic_vf.prepare(&h.ctx, v1, &t.req), 0);
	assert_int_equal(t.edits.n_nodes, 0);
	assert_string_equal(t_env(&t, "DRALET_VF_0000_04_00_2_PCI_ADDRESS"), VF1);
	assert_string_equal(t_env(&t, "DRALET_VF_0000_04_00_2_PF_PCI_ADDRESS"), PF);
	assert_string_equal(t_env(&t, "DRALET_VF_0000_04_00_2_VF_ID"), "1");
	assert_string_equal(t_env(&t, "DRALET_VF_0000_04_00_2_NETDEV"), "ibp4s0v1");
	assert_string_equal(t_env(&t, "DRALET_VF_0000_04_00_2_DRIVER"), "mlx5_core");
	t_req_clear(&t);
	/* an Ethernet VF: its MAC too */
	struct dralet_device *iavf = harness_device(&h, "vf-0000-81-01-0");
	t_req_init(&t, NULL);
	assert_int_equal(backend_nic_vf.prepare(&h.ctx, iavf, &t.req), 0);
	assert_string_equal(t_env(&t, "DRALET_VF_0000_81_01_0_NETDEV"), "ens2f0v0");
	assert_string_equal(t_env(&t, "DRALET_VF_0000_81_01_0_MAC"), netdev_address(d, "ens2f0v0"));
	t_req_clear(&t);

	/* moving a VF between drivers and its VF settings: test_sriov_lifecycle.c */

	/* vfio-pci VF: group and container nodes */
	struct dralet_device *v2 = harness_device(&h, "vf-0000-04-00-3");
	t_req_init(&t, "{\"apiVersion\":\"net.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\","
		       "\"driver\":\"vfio-pci\"}");
	assert_int_equal(backend_nic_vf.prepare(&h.ctx, v2, &t.req), 0);
	const struct dralet_devnode *g = t_edit_node(&t, "/dev/vfio/33");
	assert_non_null(g);
	assert_int_equal(g->major, 509);	/* the board's dynamic vfio major */
	assert_int_equal(g->minor, 0);
	const struct dralet_devnode *c = t_edit_node(&t, "/dev/vfio/vfio");
	assert_non_null(c);
	assert_int_equal(c->major, 10);
	assert_int_equal(c->minor, 196);
	assert_int_equal(t.edits.n_nodes, 2);
	assert_string_equal(t_env(&t, "DRALET_VF_0000_04_00_3_IOMMU_GROUP"), "33");
	assert_string_equal(t_env(&t, "DRALET_VF_0000_04_00_3_VFIO_GROUP"), "/dev/vfio/33");
	assert_null(t_env(&t, "DRALET_VF_0000_04_00_3_NETDEV"));
	t_req_clear(&t);

	/* the group node vanished since discovery */
	char p[512];
	snprintf(p, sizeof(p), "%s/dev/vfio/33", d);
	unlink(p);
	t_req_init(&t, NULL);
	assert_int_equal(backend_nic_vf.prepare(&h.ctx, v2, &t.req), -ENODEV);
	assert_non_null(strstr(h.ctx.error, "/dev/vfio/33"));
	t_req_clear(&t);

	/* no driver bound */
	struct dralet_device *v3 = harness_device(&h, "vf-0000-04-00-4");
	t_req_init(&t, NULL);
	assert_int_equal(backend_nic_vf.prepare(&h.ctx, v3, &t.req), -ENODEV);
	assert_non_null(strstr(h.ctx.error, "no driver"));
	t_req_clear(&t);

	/* RDMA-capable VF prepared through nic-vf: verbs nodes */
	struct dralet_device *v0 = harness_device(&h, "vf-0000-04-00-1");
	t_req_init(&t, NULL);
	assert_int_equal(backend_nic_vf.prepare(&h.ctx, v0, &t.req), 0);
	assert_non_null(t_edit_node(&t, "/dev/infiniband/uverbs1"));
	assert_non_null(t_edit_node(&t, "/dev/infiniband/rdma_cm"));
	assert_string_equal(t_env(&t, "DRALET_VF_0000_04_00_1_RDMA_DEVICE"), "mlx5_1");
	t_req_clear(&t);
	harness_fini(&h);
	tree_remove(d);
}

static void test_vf_config_validation(void **state)
{
	struct harness h;
	static const struct {
		const char *json;
		int want;
		const char *msg;
	} cases[] = {
		{ "{\"apiVersion\":\"net.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\"}", 0, NULL },
		{ "{\"apiVersion\":\"net.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\","
		  "\"driver\":\"vfio-pci\"}", 0, NULL },
		{ "{\"apiVersion\":\"net.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\","
		  "\"driver\":\"\"}", 0, NULL },
		{ "{\"apiVersion\":\"net.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\","
		  "\"driver\":\"igb_uio\"}", -EINVAL, "igb_uio" },
		{ "{\"apiVersion\":\"net.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\","
		  "\"mac\":\"02:00:00:00:00:0a\"}", 0, NULL },
		{ "{\"apiVersion\":\"net.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\","
		  "\"mac\":\"01:00:5e:00:00:01\"}", -EINVAL, "unicast" },
		{ "{\"apiVersion\":\"net.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\","
		  "\"mac\":\"00:00:00:00:00:00\"}", -EINVAL, "unicast" },
		{ "{\"apiVersion\":\"net.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\","
		  "\"mac\":\"zz:00:00:00:00:01\"}", -EINVAL, "unicast" },
		{ "{\"apiVersion\":\"net.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\","
		  "\"vlan\":100}", 0, NULL },
		{ "{\"apiVersion\":\"net.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\","
		  "\"vlan\":100,\"qos\":7,\"linkState\":\"disable\",\"minTxRate\":10,"
		  "\"maxTxRate\":100}", 0, NULL },
		{ "{\"apiVersion\":\"net.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\","
		  "\"qos\":3}", -EINVAL, "VfConfig.qos: needs a vlan" },
		{ "{\"apiVersion\":\"net.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\","
		  "\"vlan\":0,\"qos\":3}", -EINVAL, "vlan other than 0" },
		{ "{\"apiVersion\":\"net.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\","
		  "\"vlan\":1,\"qos\":8}", -EINVAL, "between 0 and 7" },
		{ "{\"apiVersion\":\"net.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\","
		  "\"linkState\":\"up\"}", -EINVAL, "auto, enable, disable" },
		{ "{\"apiVersion\":\"net.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\","
		  "\"minTxRate\":100,\"maxTxRate\":10}", -EINVAL, "above maxTxRate" },
		{ "{\"apiVersion\":\"net.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\","
		  "\"maxTxRate\":-1}", -EINVAL, "between 0 and" },
		{ "{\"apiVersion\":\"net.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\","
		  "\"vlan\":4095}", -EINVAL, "between 0 and 4094" },
		{ "{\"apiVersion\":\"net.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\","
		  "\"vlan\":\"100\"}", -EINVAL, "integer" },
		{ "{\"apiVersion\":\"net.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\","
		  "\"vlan\":1.5}", -EINVAL, "integer" },
		{ "{\"apiVersion\":\"net.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\","
		  "\"trust\":true}", 0, NULL },
		{ "{\"apiVersion\":\"net.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\","
		  "\"spoofChk\":\"yes\"}", -EINVAL, "true or false" },
		{ "{\"apiVersion\":\"net.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\","
		  "\"ifName\":\"net1\"}", -EINVAL, "unknown field \"ifName\"" },
		{ "{\"apiVersion\":\"net.dralet.dev/v1\",\"kind\":\"VfConfig\"}", -EINVAL,
		  "not supported" },
		{ "{\"apiVersion\":\"sriov.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\"}", -EINVAL,
		  "want \"net.dralet.dev/v1alpha1\"" },
		{ "{\"apiVersion\":\"net.dralet.dev/v1alpha1\",\"kind\":\"GpuConfig\"}", -EINVAL,
		  "GpuConfig" },
		{ "{\"kind\":\"VfConfig\"}", -EINVAL, "apiVersion: is required (want \"net.dralet.dev/v1alpha1\")" },
		{ "{\"apiVersion\":\"net.dralet.dev/v1alpha1\"}", -EINVAL, "kind: is required (one of VfConfig)" },
		{ "[1,2]", -EINVAL, "JSON object" },
		{ "{\"apiVersion\":", -EINVAL, "not valid JSON" },
		{ "{\"apiVersion\":\"net.dralet.dev/v1alpha1\",\"kind\":\"VfConfig\"} x", -EINVAL,
		  "not valid JSON" },
		{ "{'apiVersion':'net.dralet.dev/v1alpha1'}", -EINVAL, "not valid JSON" },
	};

	(void)state;
	assert_int_equal(harness_init(&h, &backend_nic_vf, NULL, NULL), 0);
	assert_int_equal(backend_nic_vf.validate_config(&h.ctx, NULL), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		h.ctx.error[0] = '\0';
		int r = backend_nic_vf.validate_config(&h.ctx, cases[i].json);
		if (r != cases[i].want || (cases[i].msg && !strstr(h.ctx.error, cases[i].msg)))
			fail_msg("case %zu %s: got %d \"%s\", want %d \"%s\"", i, cases[i].json, r,
				 h.ctx.error, cases[i].want, cases[i].msg ? cases[i].msg : "");
	}
	/* the rdma backend takes the same VfConfig */
	assert_int_equal(backend_rdma.validate_config(&h.ctx, cases[1].json), 0);
	harness_fini(&h);
}

static void test_ownership(void **state)
{
	struct t_inv t;
	char *d = build_tree();

	(void)state;
	assert_int_equal(t_inv_open(&t, d, NULL), 0);
	/* rdma wins the RDMA-capable VF over nic-vf; nic-vf takes the others */
	assert_non_null(t_find(&t, NET_DRIVER, "rdma-0000-04-00-0"));
	assert_non_null(t_find(&t, NET_DRIVER, "rdma-0000-04-00-1"));
	assert_null(t_find(&t, NET_DRIVER, "vf-0000-04-00-1"));
	assert_non_null(t_find(&t, NET_DRIVER, "vf-0000-04-00-2"));
	assert_non_null(t_find(&t, NET_DRIVER, "vf-0000-04-00-3"));
	assert_non_null(t_find(&t, NET_DRIVER, "vf-0000-04-00-4"));
	assert_non_null(t_find(&t, NET_DRIVER, "vf-0000-81-01-0"));
	/* plain NIC PFs carry host networking: never published */
	assert_null(t_find(&t, NET_DRIVER, "vf-0000-c1-00-0"));
	assert_null(t_find(&t, NET_DRIVER, "rdma-0000-c1-00-0"));
	assert_int_equal(inventory_n_devices(t.inv, SRIOV_DRIVER), 0);
	assert_int_equal(inventory_n_devices(t.inv, NET_DRIVER), 7);
	t_inv_close(&t);

	/* the operator selects the ConnectX PF for the sriov backend: all its VFs,
	 * the RDMA-capable one too, move to sriov.dralet.dev */
	assert_int_equal(t_inv_open(&t, d, "backends:\n  sriov:\n    options:\n"
				    "      pfs: \"netdev=ibp4s0\"\n"), 0);
	assert_non_null(t_find(&t, NET_DRIVER, "rdma-0000-04-00-0"));
	assert_null(t_find(&t, NET_DRIVER, "rdma-0000-04-00-1"));
	assert_null(t_find(&t, NET_DRIVER, "vf-0000-04-00-2"));
	struct dralet_device *moved = t_find(&t, SRIOV_DRIVER, "vf-0000-04-00-1");
	assert_non_null(moved);
	assert_int_equal(attr_bool(moved, "rdmaCapable"), 1);
	assert_non_null(t_find(&t, SRIOV_DRIVER, "vf-0000-04-00-4"));
	assert_int_equal(inventory_n_devices(t.inv, SRIOV_DRIVER), 4);
	assert_non_null(t_find(&t, NET_DRIVER, "vf-0000-81-01-0"));
	t_inv_close(&t);

	/* disabling rdma hands RDMA-capable VFs to nic-vf, with their verbs nodes */
	assert_int_equal(t_inv_open(&t, d, "backends:\n  rdma:\n    enabled: false\n"), 0);
	struct dralet_device *v0 = t_find(&t, NET_DRIVER, "vf-0000-04-00-1");
	assert_non_null(v0);
	assert_true(t_dev_node(v0, "/dev/infiniband/uverbs1"));
	assert_null(t_find(&t, NET_DRIVER, "rdma-0000-04-00-0"));
	t_inv_close(&t);
	tree_remove(d);
}

static void test_names_are_stable(void **state)
{
	struct t_inv a, b;
	char *d = build_tree();

	(void)state;
	assert_int_equal(t_inv_open(&a, d, NULL), 0);
	assert_int_equal(t_inv_open(&b, d, NULL), 0);
	assert_int_equal(inventory_n_all(a.inv), inventory_n_all(b.inv));
	for (size_t i = 0; i < inventory_n_all(a.inv); i++)
		assert_string_equal(dralet_device_name(inventory_all(a.inv, i)),
				    dralet_device_name(inventory_all(b.inv, i)));
	t_inv_close(&a);
	t_inv_close(&b);
	tree_remove(d);
}

static void test_garbage_vendor_files(void **state)
{
	struct harness h;
	char *d = build_tree();

	(void)state;
	/* garbage in the RDMA files, a GUID longer than an attribute may be, a
	 * port without state, missing rdma_cm, a dangling uverbs */
	t_write(d, DSP1, PF, "infiniband/mlx5_0/ports/1/rate", "fast");
	t_write(d, DSP1, PF, "infiniband/mlx5_0/node_guid",
		"1070:fd03:00ab:cdef:1070:fd03:00ab:cdef:1070:fd03:00ab:cdef:1070:fd03:00ab:cdef");
	t_write(d, DSP1, PF, "infiniband/mlx5_0/ports/2/link_layer", "InfiniBand");
	t_write(d, DSP1, VF0, "infiniband/mlx5_1/ports/1/state", "\x01\x02");
	char p[512];
	snprintf(p, sizeof(p), "%s/sys/devices/virtual/misc/rdma_cm/dev", d);
	tree_write(d, "sys/devices/virtual/misc/rdma_cm/dev", "garbage");
	snprintf(p, sizeof(p), "%s/dev/infiniband/uverbs0", d);
	unlink(p);
	assert_int_equal(harness_init(&h, &backend_rdma, d, NULL), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	struct dralet_device *pf = harness_device(&h, "rdma-0000-04-00-0");
	assert_non_null(pf);
	assert_null(attr_string(pf, "nodeGUID"));	/* too long: dropped with a warning */
	assert_int_equal(attr_int(pf, "rateGbps", -1), -1);
	assert_int_equal(attr_int(pf, "ports", 0), 2);
	assert_false(t_dev_node(pf, "/dev/infiniband/uverbs0"));
	assert_false(t_dev_node(pf, "/dev/infiniband/rdma_cm"));
	assert_true(h.ctx.warnings > 0);
	/* port 2 has no state: cannot say it is healthy */
	assert_int_equal(dralet_device_health(pf), DRALET_HEALTH_UNKNOWN);
	struct dralet_device *vf = harness_device(&h, "rdma-0000-04-00-1");
	assert_int_equal(dralet_device_health(vf), DRALET_HEALTH_UNHEALTHY);
	struct t_req t;
	t_req_init(&t, NULL);
	assert_int_equal(backend_rdma.prepare(&h.ctx, pf, &t.req), -ENODEV);
	assert_non_null(strstr(h.ctx.error, "uverbs"));
	t_req_clear(&t);
	harness_fini(&h);
	tree_remove(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rdma_pf_and_vf),
		cmocka_unit_test(test_rdma_health_follows_port_state),
		cmocka_unit_test(test_rdma_port_without_counter_is_not_read_again),
		cmocka_unit_test(test_rdma_prepare),
		cmocka_unit_test(test_nic_vf_devices),
		cmocka_unit_test(test_nic_vf_prepare),
		cmocka_unit_test(test_vf_config_validation),
		cmocka_unit_test(test_ownership),
		cmocka_unit_test(test_names_are_stable),
		cmocka_unit_test(test_garbage_vendor_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
