#!/bin/sh
# The HAL on a real kernel: `dralet pci -o json` shows the topology of README.md (NUMA,
# root complexes, port types, switch, IOMMU groups, SR-IOV, netdev and RDMA links, DRM
# nodes), at boot and after VFs were enabled; check_pci.py judges it. Discovery by the
# backends is test_discover.sh's concern.
set -u
. "$(dirname "$0")/lib.sh"
vm_require

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dralet-vm-pci.XXXXXX")
vm_test_cleanup() { rm -rf "$tmp"; }
cat >"$tmp/guest.sh" <<'GUEST'
set -e
dralet pci -o json
echo ---
pf=/sys/bus/pci/devices/0000:23:00.0
# Unbound VFs: QEMU's NVMe VFs are offline, nvme would bind and drop them again.
echo 0 >$pf/sriov_drivers_autoprobe
echo 3 >$pf/sriov_numvfs
dralet pci -o json
GUEST

vm_run "$tmp/guest.sh" >"$tmp/out" || { echo "the VM run failed; output:"; cat "$tmp/out"; exit 1; }
# On failure the JSON first, the verdict last (the test runner shows the last lines).
/usr/bin/python3 "$VM_LIB_DIR/check_pci.py" "$tmp/out" >"$tmp/verdict" || {
    echo "--- dralet pci -o json ---"; cat "$tmp/out"; cat "$tmp/verdict"; exit 1; }
cat "$tmp/verdict"
