/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node of the SR-IOV tests, for the kernel model (node_model.h): an ice
 * NIC (0000:17:00.0, ens1f0 with interface index 7, group 20) whose iavf
 * VFs get netdevs ens1f0v<n> and groups 100 + n, and an NVMe (0000:18:00.0,
 * group 30 with its root port) whose VFs share that group; both PFs start
 * without VFs.
 */
#ifndef DRALET_TEST_SRIOV_BOARD_H
#define DRALET_TEST_SRIOV_BOARD_H

static const char SRIOV_BOARD[] =
	"board: sriov-kernel\n"
	"pci:\n"
	"  - root: \"0000:16\"\n"
	"    devices:\n"
	"      - bdf: 16:02.0\n"
	"        id: \"8086:347a\"\n"
	"        devices:\n"
	"          - bdf: 17:00.0\n"
	"            id: \"8086:1593\"\n"
	"            class: 0x020000\n"
	"            driver: ice\n"
	"            iommu_group: 20\n"
	"            net: {name: ens1f0, mac: \"b4:96:91:aa:00:00\", speed: 25000, ifindex: 7}\n"
	"            sriov:\n"
	"              total: 8\n"
	"              num: 0\n"
	"              vf_id: \"8086:1889\"\n"
	"              vf_driver: iavf\n"
	"              vf_net: \"{pf}v{n}\"\n"
	"              vfs: {\"0\": {iommu_group: 100}, \"1\": {iommu_group: 101},\n"
	"                    \"2\": {iommu_group: 102}, \"3\": {iommu_group: 103},\n"
	"                    \"4\": {iommu_group: 104}, \"5\": {iommu_group: 105},\n"
	"                    \"6\": {iommu_group: 106}, \"7\": {iommu_group: 107}}\n"
	"      - bdf: 16:03.0\n"
	"        id: \"8086:347b\"\n"
	"        iommu_group: 30          # a bridge in the NVMe's group\n"
	"        devices:\n"
	"          - bdf: 18:00.0\n"
	"            id: \"1b36:0010\"\n"
	"            class: 0x010802\n"
	"            driver: nvme\n"
	"            iommu_group: 30\n"
	"            sriov: {total: 4, num: 0, vf_id: \"1b36:0011\", vf_driver: nvme,\n"
	"                    vfs: {\"0-3\": {iommu_group: 30}}}\n";

#endif
