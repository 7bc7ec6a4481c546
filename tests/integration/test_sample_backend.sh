#!/bin/sh
# An out-of-tree backend, built against the installed SDK (make sample-backend),
# is loaded from --backend-dir and publishes a device (its filter refuses the
# one bound to vfio-pci; its probe names the match table entry it was told);
# backends built for another ABI (a future one, the one before) are refused
# with a clear error and do not stop discovery.
set -eu
: "${DRALET:?}" "${BUILD:=build}"
here=$(cd "$(dirname "$0")/../.." && pwd)
backends="$here/$BUILD/backends"
[ -f "$backends/sample.so" ] || { echo "sample backend not built (make sample-backend)"; exit 1; }

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
dev="$tmp/sys/devices/pci0000:00/0000:00:05.0"
mkdir -p "$dev" "$tmp/sys/bus/pci/devices" "$tmp/dev" "$tmp/proc"
printf '0x1234\n' > "$dev/vendor"; printf '0x11e8\n' > "$dev/device"
printf '0x00ff00\n' > "$dev/class"; printf '0x10\n' > "$dev/revision"
printf '0x1af4\n' > "$dev/subsystem_vendor"; printf '0x1100\n' > "$dev/subsystem_device"
ln -s ../../../devices/pci0000:00/0000:00:05.0 "$tmp/sys/bus/pci/devices/0000:00:05.0"
vm="$tmp/sys/devices/pci0000:00/0000:00:06.0"
mkdir -p "$vm" "$tmp/sys/bus/pci/drivers/vfio-pci"
for f in vendor device class revision subsystem_vendor subsystem_device; do cp "$dev/$f" "$vm/$f"; done
ln -s ../../../bus/pci/drivers/vfio-pci "$vm/driver"
ln -s ../../../devices/pci0000:00/0000:00:06.0 "$tmp/sys/bus/pci/devices/0000:00:06.0"

"$DRALET" discover --sysfs-root "$tmp/sys" --dev-root "$tmp/dev" --proc-root "$tmp/proc" \
    --backend-dir "$backends" -o json >"$tmp/out.json" 2>"$tmp/err.log"
/usr/bin/python3 - "$tmp/out.json" <<'PY'
import json, sys
devs = json.load(open(sys.argv[1]))["devices"]
d = [x for x in devs if x["name"] == "sample-0000-00-05-0"]
assert d, devs
assert not [x for x in devs if x["name"] == "sample-0000-00-06-0"], devs  # the filter refused it
d = d[0]
assert d["driver"] == "sample.example.com", d
assert d["backend"] == "sample", d
assert d["attributes"]["vendorBackend"] == {"string": "sample"}, d
assert d["attributes"]["revision"] == {"string": "16"}, d
assert d["attributes"]["matchedEntry"] == {"string": "1234:11e8"}, d
assert d["attributes"]["resource.kubernetes.io/pciBusID"] == {"string": "0000:00:05.0"}, d
assert d["capacity"]["slots"] == {"value": "4"}, d
assert d["health"] == "Healthy", d
PY
for b in "future was built for SDK ABI 10[0-9]" "old was built for SDK ABI 4, this dralet speaks 5"; do
    grep -q "abi_mismatch.so: backend $b.*; rebuild it against this dralet's SDK" "$tmp/err.log" || {
        echo "expected an ABI error for backend $b, got:"; cat "$tmp/err.log"; exit 1; }
done
echo "sample backend loaded and filtered; ABI mismatches refused"
