#!/bin/sh
# The VM harness itself: the kernel boots on the emulated topology, the modules load and
# sysfs shows what the discover test relies on (NUMA node, root complex, switch, SR-IOV,
# soft-RoCE, DRM), and dralet runs with its libraries inside.
set -u
. "$(dirname "$0")/lib.sh"
vm_require

guest=$(mktemp "${TMPDIR:-/tmp}/dralet-vm-guest.XXXXXX")
result=$(mktemp "${TMPDIR:-/tmp}/dralet-vm-result.XXXXXX")
vm_test_cleanup() { rm -f "$guest" "$result"; }
cat >"$guest" <<'GUEST'
# Facts as "name value" lines; the host compares them.
pf=/sys/bus/pci/devices/0000:23:00.0
echo "nvme.numa $(cat $pf/numa_node)"
echo "nvme.cpus $(cat $pf/local_cpulist)"
echo "nvme.path $(realpath $pf)"
echo "nvme.driver $(basename "$(readlink $pf/driver)")"
echo "nvme.totalvfs $(cat $pf/sriov_totalvfs)"
echo "nvme.numvfs $(cat $pf/sriov_numvfs)"
echo "nvme.iommu $(basename "$(readlink $pf/iommu_group)")"
echo "usp.class $(cat /sys/bus/pci/devices/0000:21:00.0/class)"
echo "rxe.parent $(cat /sys/class/infiniband/rxe0/parent)"
echo "rxe.state $(cat /sys/class/infiniband/rxe0/ports/1/state)"
echo "routes.default $( (ip route show default; ip -6 route show default) | wc -l)"
echo "eth0.device $(basename "$(readlink -f /sys/class/net/eth0/device)")"
echo "gpu.device $(basename "$(readlink -f /sys/class/drm/card0/device)")"
echo "gpu.driver $(basename "$(readlink /sys/bus/pci/devices/0000:00:01.0/driver)")"
echo "uverbs $(cat /sys/class/infiniband_verbs/uverbs0/ibdev)"
echo "vfio $(test -c /dev/vfio/vfio && echo yes)"
echo "dralet $(dralet --version)"
GUEST

vm_run "$guest" >"$result" || { echo "the VM run failed"; exit 1; }
out=$(cat "$result")
echo "$out"
echo "VM booted and ran the script in ${VM_SECONDS}s"

fail=0
expect() {
    got=$(echo "$out" | sed -n "s/^$1 //p")
    [ "$got" = "$2" ] || { echo "FAIL: $1 is '$got', expected '$2'"; fail=1; }
}
expect nvme.numa 1
expect nvme.cpus 1
expect nvme.path /sys/devices/pci0000:20/0000:20:00.0/0000:21:00.0/0000:22:00.0/0000:23:00.0
expect nvme.driver nvme
expect nvme.totalvfs 4
expect nvme.numvfs 0
expect usp.class 0x060400
expect rxe.parent eth0
expect rxe.state "4: ACTIVE"
expect routes.default 0
expect eth0.device 0000:00:02.0
expect gpu.device 0000:00:01.0
expect gpu.driver virtio-pci
expect uverbs rxe0
expect vfio yes
expect dralet "dralet $(sed -n 's/^VERSION := //p' "$VM_LIB_DIR/../../Makefile")"
echo "$out" | grep -q '^nvme.iommu [0-9]' || { echo "FAIL: the NVMe PF has no IOMMU group"; fail=1; }
exit $fail
