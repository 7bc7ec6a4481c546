#!/bin/sh
# dralet discover over a hand-built node with GPUs of every backend of the gpu
# family: an H100 with MIG off and one with MIG on (fake NVML), an MI300X, an
# Intel Max on xe and the BMC's ASPEED VGA. Checks names, kinds, backends,
# key attributes and capacities in the JSON output, and that a second run
# gives the same names.
set -eu
: "${DRALET:=build/dralet}"
: "${BUILD:=build}"
FAKE_NVML=$(realpath "$BUILD/tests/lib/fake-nvml.so")
T=$(mktemp -d /tmp/dralet-gpu-discover-XXXXXX)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$T"' EXIT

# pci <parent path below sys/devices> <address> <vendor> <device> <class> [driver]
pci() {
    d="$T/sys/devices/$1/$2"
    mkdir -p "$d" "$T/sys/bus/pci/devices"
    echo "$3" > "$d/vendor"; echo "$4" > "$d/device"; echo "$5" > "$d/class"
    echo 0x00 > "$d/revision"; echo 0x0000 > "$d/subsystem_vendor"; echo 0x0000 > "$d/subsystem_device"
    ln -s "../../../devices/$1/$2" "$T/sys/bus/pci/devices/$2"
    if [ -n "${6:-}" ]; then
        mkdir -p "$T/sys/bus/pci/drivers/$6"
        ln -s "$T/sys/bus/pci/drivers/$6" "$d/driver"
    fi
}
# drm <parent path> <address> <name> <minor>
drm() {
    mkdir -p "$T/sys/devices/$1/$2/drm/$3" "$T/sys/class/drm" "$T/dev/dri"
    echo "226:$4" > "$T/sys/devices/$1/$2/drm/$3/dev"
    ln -s "../../devices/$1/$2/drm/$3" "$T/sys/class/drm/$3"
    : > "$T/dev/dri/$3"
}

mkdir -p "$T/sys" "$T/dev" "$T/proc"
pci pci0000:00 0000:00:01.0 0x8086 0x352a 0x060400
pci pci0000:00/0000:00:01.0 0000:18:00.0 0x10de 0x2330 0x030200 nvidia
pci pci0000:00 0000:00:02.0 0x8086 0x352a 0x060400
pci pci0000:00/0000:00:02.0 0000:2a:00.0 0x10de 0x2330 0x030200 nvidia
pci pci0000:00 0000:c1:00.0 0x1002 0x74a1 0x120000 amdgpu
echo "AMD Instinct MI300X OAM" > "$T/sys/devices/pci0000:00/0000:c1:00.0/product_name"
echo 206158430208 > "$T/sys/devices/pci0000:00/0000:c1:00.0/mem_info_vram_total"
drm pci0000:00 0000:c1:00.0 card1 1
drm pci0000:00 0000:c1:00.0 renderD128 128
pci pci0000:00 0000:3a:00.0 0x8086 0x0bd5 0x038000 xe
mkdir -p "$T/sys/devices/pci0000:00/0000:3a:00.0/tile0"
echo 68719476736 > "$T/sys/devices/pci0000:00/0000:3a:00.0/tile0/physical_vram_size_bytes"
drm pci0000:00 0000:3a:00.0 card2 2
drm pci0000:00 0000:3a:00.0 renderD129 129
pci pci0000:00 0000:05:00.0 0x1a03 0x2000 0x030000 ast
drm pci0000:00 0000:05:00.0 card0 0

mkdir -p "$T/proc/driver/nvidia/gpus/0000:18:00.0" "$T/proc/driver/nvidia/gpus/0000:2a:00.0" \
    "$T/proc/driver/nvidia-caps" "$T/dev/nvidia-caps"
printf 'Character devices:\n195 nvidia-frontend\n226 drm\n235 kfd\n509 nvidia-caps\n510 nvidia-uvm\n' \
    > "$T/proc/devices"
echo "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024" \
    > "$T/proc/driver/nvidia/version"
printf 'Model: \t NVIDIA H100 80GB HBM3\nGPU UUID: \t GPU-aaaaaaaa-0000-0000-0000-000000000000\nDevice Minor: \t 0\nGPU Excluded: \t No\n' \
    > "$T/proc/driver/nvidia/gpus/0000:18:00.0/information"
printf 'Model: \t NVIDIA H100 80GB HBM3\nGPU UUID: \t GPU-bbbbbbbb-0000-0000-0000-000000000000\nDevice Minor: \t 1\nGPU Excluded: \t No\n' \
    > "$T/proc/driver/nvidia/gpus/0000:2a:00.0/information"
printf 'config 1\nmonitor 2\ngpu1/gi9/access 138\ngpu1/gi9/ci0/access 139\n' > "$T/proc/driver/nvidia-caps/mig-minors"
for n in nvidia0 nvidia1 nvidiactl nvidia-uvm nvidia-uvm-tools kfd nvidia-caps/nvidia-cap138 \
         nvidia-caps/nvidia-cap139; do : > "$T/dev/$n"; done
cat > "$T/nvml.json" <<'JSON'
{"driverVersion":"550.54.15","cudaDriverVersion":12040,"devices":[
 {"pciBusId":"0000:18:00.0","index":0,"minor":0,"uuid":"GPU-aaaaaaaa-0000-0000-0000-000000000000",
  "name":"NVIDIA H100 80GB HBM3","brand":"NVIDIA","architecture":"Hopper","cudaComputeCapability":"9.0",
  "memoryTotalBytes":85520809984,"migMode":{"current":0,"pending":0}},
 {"pciBusId":"0000:2a:00.0","index":1,"minor":1,"uuid":"GPU-bbbbbbbb-0000-0000-0000-000000000000",
  "name":"NVIDIA H100 80GB HBM3","brand":"NVIDIA","architecture":"Hopper","cudaComputeCapability":"9.0",
  "memoryTotalBytes":85520809984,"migMode":{"current":1,"pending":1},"migDevices":[
   {"uuid":"MIG-cccccccc-0000-0000-0000-000000000000","profile":"1g.10gb","giProfileId":0,"ciProfileId":0,
    "gi":9,"ci":0,"placementStart":0,"placementSize":1,"memoryBytes":10200547328,"multiprocessors":16,
    "copyEngines":1,"decoders":1,"encoders":0,"jpegEngines":1,"ofaEngines":0,
    "giAccessMinor":138,"ciAccessMinor":139}]}]}
JSON
cat > "$T/config.yaml" <<YAML
backends:
  nvidia:
    options:
      nvmlLibrary: "$FAKE_NVML"
YAML

run() {
    FAKE_NVML_DATA="$T/nvml.json" "$DRALET" discover --sysfs-root "$T/sys" --dev-root "$T/dev" \
        --proc-root "$T/proc" --config "$T/config.yaml" -o json
}
run > "$T/out1.json" 2> "$T/err1.log" || { cat "$T/err1.log"; exit 1; }
cat "$T/err1.log" >&2
run > "$T/out2.json" 2>/dev/null

/usr/bin/python3 - "$T/out1.json" "$T/out2.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["devices"]
b = json.load(open(sys.argv[2]))["devices"]
by = {d["name"]: d for d in a}
want = {
    "gpu-0000-18-00-0": ("gpu", "nvidia"),
    "mig-0000-2a-00-0-1g-10gb-0": ("mig", "nvidia"),
    "gpu-0000-c1-00-0": ("gpu", "amdgpu"),
    "gpu-0000-3a-00-0": ("gpu", "intel-gpu"),
    "gpu-0000-05-00-0": ("gpu", "drm"),
}
assert set(by) == set(want), sorted(by)
for name, (kind, backend) in want.items():
    d = by[name]
    assert d["kind"] == kind and d["backend"] == backend, (name, d["kind"], d["backend"])
    assert d["driver"] == "gpu.dralet.dev", d["driver"]
    assert len(d["attributes"]) + len(d["capacity"]) <= 32, name
gpu = by["gpu-0000-18-00-0"]
assert gpu["attributes"]["uuid"] == {"string": "GPU-aaaaaaaa-0000-0000-0000-000000000000"}
assert gpu["attributes"]["driverVersion"] == {"version": "550.54.15"}
assert gpu["attributes"]["resource.kubernetes.io/pcieRoot"] == {"string": "pci0000:00"}
assert gpu["capacity"]["memory"] == {"value": "81559Mi"}
assert "allowMultipleAllocations" not in gpu, gpu   # sharing is opt-in (docs/sharing.md)
mig = by["mig-0000-2a-00-0-1g-10gb-0"]
assert mig["attributes"]["migProfile"] == {"string": "1g.10gb"}
assert mig["capacity"]["multiprocessors"] == {"value": "16"}
assert any(n["path"] == "/dev/nvidia-caps/nvidia-cap139" and n["device"] == "509:139"
           for n in mig["deviceNodes"]), mig["deviceNodes"]
assert by["gpu-0000-c1-00-0"]["capacity"]["memory"] == {"value": "192Gi"}
assert by["gpu-0000-3a-00-0"]["capacity"]["memory"] == {"value": "64Gi"}
assert [d["name"] for d in a] == [d["name"] for d in b], "names changed between runs"
print("ok:", ", ".join(sorted(by)))
PY
