#!/bin/sh
# The GPU backends on the simulated boards: each board with GPUs is
# materialized (dralet board materialize) and discovered with the fake NVML,
# and the GPU devices the board describes must appear with their key facts.
# Boards not (yet) in boards/ are skipped; with none at all the test SKIPs.
set -eu
: "${DRALET:=build/dralet}"
: "${BUILD:=build}"
FAKE_NVML=$(realpath "$BUILD/tests/lib/fake-nvml.so")
T=$(mktemp -d /tmp/dralet-gpu-boards-XXXXXX)
trap 'rm -rf "$T"' EXIT
ran=0

discover() {  # <board> -> $T/<board>.json
    b=$1
    rm -rf "$T/$b"
    "$DRALET" board materialize --quiet "boards/$b.yaml" "$T/$b" >/dev/null
    printf 'backends:\n  nvidia:\n    options:\n      nvmlLibrary: "%s"\n' "$FAKE_NVML" > "$T/$b.yaml"
    FAKE_NVML_DATA="$T/$b/nvml.json" "$DRALET" discover --sysfs-root "$T/$b/sys" \
        --dev-root "$T/$b/dev" --proc-root "$T/$b/proc" --config "$T/$b.yaml" -o json \
        > "$T/$b.json" 2> "$T/$b.log"
}

check() {  # <board> <python body using `devs` (name -> device)>
    /usr/bin/python3 - "$T/$1.json" "$1" "$2" <<'PY'
import json, sys
devs = {d["name"]: d for d in json.load(open(sys.argv[1]))["devices"]}
gpus = {n: d for n, d in devs.items() if d["driver"] == "gpu.dralet.dev"}
def attr(d, k):
    return next(iter(d["attributes"][k].values())) if k in d["attributes"] else None
def cap(d, k):
    return d["capacity"][k]["value"] if k in d["capacity"] else None
for d in gpus.values():
    assert len(d["attributes"]) + len(d["capacity"]) <= 32, d["name"]
    assert d["deviceNodes"], d["name"] + " has no device nodes"
exec(sys.argv[3])
print("ok %s: %d GPU devices" % (sys.argv[2], len(gpus)))
PY
}

if [ -f boards/hgx-h100.yaml ]; then
    discover hgx-h100
    check hgx-h100 '
full = [d for d in gpus.values() if d["backend"] == "nvidia" and d["kind"] == "gpu"]
mig = [d for d in gpus.values() if d["kind"] == "mig"]
assert len(full) == 7, sorted(gpus)
assert mig, "GPU 7 runs in MIG mode: MIG devices expected"
for d in full:
    assert attr(d, "uuid").startswith("GPU-") and cap(d, "memory") == "81559Mi", d["name"]
    assert attr(d, "architecture") == "Hopper"
for d in mig:
    assert attr(d, "migProfile") and attr(d, "parentUUID").startswith("GPU-"), d["name"]
    assert sum(n["path"].startswith("/dev/nvidia-caps/") for n in d["deviceNodes"]) == 2
assert any(d["backend"] == "drm" for d in gpus.values()), "the ASPEED BMC VGA"
'
    ran=$((ran + 1))
fi
if [ -f boards/mi300x.yaml ]; then
    discover mi300x
    check mi300x '
amd = [d for d in gpus.values() if d["backend"] == "amdgpu"]
assert amd, sorted(gpus)
for d in amd:
    assert attr(d, "type") in ("amdgpu", "amdgpu-partition"), d["name"]
    assert any(n["path"] == "/dev/kfd" for n in d["deviceNodes"]), d["name"]
'
    ran=$((ran + 1))
fi
if [ -f boards/intel-max.yaml ]; then
    discover intel-max
    check intel-max '
intel = [d for d in gpus.values() if d["backend"] == "intel-gpu"]
assert intel, sorted(gpus)
for d in intel:
    assert attr(d, "driver") in ("i915", "xe"), d["name"]
'
    ran=$((ran + 1))
fi
if [ $ran -eq 0 ]; then
    echo "no GPU boards in boards/ yet"
    exit 77
fi
