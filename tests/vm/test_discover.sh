#!/bin/sh
# `dralet discover -o json` on a real kernel: the SR-IOV NVMe PF behind a switch on the
# second root complex (NUMA node 1), soft-RoCE rxe0 over the e1000e NIC and the virtio
# GPU, then the PF's VFs once enabled and selected for the sriov backend, as
# tests/vm/README.md describes them; check_discover.py judges the JSON.
set -u
. "$(dirname "$0")/lib.sh"
vm_require

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dralet-vm-discover.XXXXXX")
vm_test_cleanup() { rm -rf "$tmp"; }
cat >"$tmp/sriov.yaml" <<'YAML'
backends:
  sriov:
    options:
      pfs: "0000:23:00.0"
YAML
cat >"$tmp/guest.sh" <<'GUEST'
set -e
dralet discover -o json
# What discovery did with each function, to explain a missing device.
echo ---
dralet pci -o json
echo ---
pf=/sys/bus/pci/devices/0000:23:00.0
# Unbound VFs: QEMU's NVMe VFs are offline, nvme would bind and drop them again.
echo 0 >$pf/sriov_drivers_autoprobe
echo 3 >$pf/sriov_numvfs
dralet discover --config /test/sriov.yaml -o json
GUEST

VM_FILES=$tmp/sriov.yaml vm_run "$tmp/guest.sh" >"$tmp/out" || {
    echo "the VM run failed; its output:"; cat "$tmp/out"; exit 1; }
# On failure the JSON first, the verdict last (the test runner shows the last lines).
/usr/bin/python3 "$VM_LIB_DIR/check_discover.py" "$tmp/out" >"$tmp/verdict" || {
    echo "--- dralet discover -o json (at boot) ---"; sed '/^---$/q' "$tmp/out"
    cat "$tmp/verdict"; exit 1; }
cat "$tmp/verdict"
