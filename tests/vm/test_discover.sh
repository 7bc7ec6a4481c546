#!/bin/sh
# `dralet discover -o json` on a real kernel: the SR-IOV NVMe PF behind a switch on the
# second root complex (NUMA node 1), soft-RoCE rxe0 over the e1000e NIC and the virtio
# GPU, as tests/vm/README.md describes them; check_discover.py judges the JSON.
set -u
. "$(dirname "$0")/lib.sh"
vm_require

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dralet-vm-discover.XXXXXX")
vm_test_cleanup() { rm -rf "$tmp"; }
cat >"$tmp/guest.sh" <<'GUEST'
dralet discover -o json || exit
# What discovery did with each function, to explain a missing device.
echo ---
dralet pci -o json
GUEST

vm_run "$tmp/guest.sh" >"$tmp/discover.json" || {
    echo "dralet discover failed in the VM; its output:"; cat "$tmp/discover.json"; exit 1; }
/usr/bin/python3 "$VM_LIB_DIR/check_discover.py" "$tmp/discover.json" || {
    echo "--- dralet discover -o json ---"; sed '/^---$/q' "$tmp/discover.json"; exit 1; }
