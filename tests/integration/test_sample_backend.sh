#!/bin/sh
# An out-of-tree backend, built against the installed SDK (make sample-backend),
# is loaded from --backend-dir and publishes a device; a backend built for
# another ABI is refused with a clear error and does not stop discovery.
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

"$DRALET" discover --sysfs-root "$tmp/sys" --dev-root "$tmp/dev" --proc-root "$tmp/proc" \
    --backend-dir "$backends" -o json >"$tmp/out.json" 2>"$tmp/err.log"
/usr/bin/python3 - "$tmp/out.json" <<'PY'
import json, sys
devs = json.load(open(sys.argv[1]))["devices"]
d = [x for x in devs if x["name"] == "sample-0000-00-05-0"]
assert d, devs
d = d[0]
assert d["driver"] == "sample.example.com", d
assert d["backend"] == "sample", d
assert d["attributes"]["vendorBackend"] == {"string": "sample"}, d
assert d["attributes"]["revision"] == {"string": "16"}, d
assert d["attributes"]["resource.kubernetes.io/pciBusID"] == {"string": "0000:00:05.0"}, d
assert d["capacity"]["slots"] == {"value": "4"}, d
assert d["health"] == "Healthy", d
PY
grep -q "abi_mismatch.so: backend future was built for SDK ABI" "$tmp/err.log" || {
    echo "expected an ABI error, got:"; cat "$tmp/err.log"; exit 1; }
echo "sample backend loaded; ABI mismatch refused"
