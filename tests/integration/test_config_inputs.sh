#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# What the agent refuses to start on, with the message naming the culprit:
# an option no backend declares (a typo); a configuration file, backend
# shared object or NVML library that someone but root could change.
#   env: DRALET (absolute path of the binary; default build/dralet)
set -eu

. "$(dirname "$0")/lib/preamble.sh"; preamble config-inputs
board="$root/boards/vm-like.yaml"

# refused: exits 1 with @want in its error output
refused() {
    want=$1; shift
    set +e
    "$dralet" discover --board "$board" "$@" >/dev/null 2>"$tmp/err"; rc=$?
    set -e
    [ $rc -ne 0 ] || fail "discover $* succeeded; want a refusal naming: $want"
    grep -qF -- "$want" "$tmp/err" || fail "discover $*: want '$want', got: $(cat "$tmp/err")"
}

# 1. backend options are declared: a typo is an error naming it and the known keys
printf 'backends:\n  nvidia:\n    options:\n      nvmlLibary: /usr/lib/libnvidia-ml.so.1\n' \
    >"$tmp/typo.yaml"
refused 'backends.nvidia.options: unknown field "nvmlLibary" (known: nvmlLibrary, driverRoot, hostDriverRoot, nvidiaSmi, dynamicMig, migStateDir, sharing, vfio, vfioDriver)' \
    --config "$tmp/typo.yaml"
printf 'backends:\n  gpu-vfio:\n    options:\n      x: "1"\n' >"$tmp/none.yaml"
refused 'backends.gpu-vfio.options: unknown field "x" (no fields are known)' \
    --config "$tmp/none.yaml"
printf 'backends:\n  nvidia:\n    options:\n      driverRoot: /run/nvidia/driver\n' >"$tmp/ok.yaml"
"$dralet" discover --board "$board" --config "$tmp/ok.yaml" >/dev/null ||
    fail "a declared option was refused"

# 2. files root loads code or settings from: refused when others could change them
build=$root/${BUILD:-build}
cp "$tmp/ok.yaml" "$tmp/open.yaml"
chmod 0666 "$tmp/open.yaml"
refused "$tmp/open.yaml: refusing the configuration: $tmp/open.yaml is writable by every user (mode 0666)" \
    --config "$tmp/open.yaml"
mkdir -m 0755 "$tmp/nvml"
cp "$build/tests/lib/fake-nvml.so" "$tmp/nvml/libnvidia-ml.so.1"
chmod 0775 "$tmp/nvml"
chgrp 4242 "$tmp/nvml"
printf 'backends:\n  nvidia:\n    options:\n      nvmlLibrary: %s\n' "$tmp/nvml/libnvidia-ml.so.1" \
    >"$tmp/nvml.yaml"
refused "backends.nvidia.options.nvmlLibrary: refusing $tmp/nvml/libnvidia-ml.so.1: $tmp/nvml is writable by group 4242 (mode 0775)" \
    --config "$tmp/nvml.yaml"
chmod 0755 "$tmp/nvml"
"$dralet" discover --board "$board" --config "$tmp/nvml.yaml" >/dev/null ||
    fail "a trusted nvmlLibrary was refused"
mkdir -m 0755 "$tmp/backends"
cp "$build/backends/sample.so" "$tmp/backends/"
chmod 0666 "$tmp/backends/sample.so"
"$dralet" discover --board "$board" --backend-dir "$tmp/backends" >/dev/null 2>"$tmp/err" || true
grep -qF "$tmp/backends/sample.so: refusing to load it: $tmp/backends/sample.so is writable by every user (mode 0666)" \
    "$tmp/err" || fail "a writable backend was not refused: $(cat "$tmp/err")"
chmod 0644 "$tmp/backends/sample.so"
chmod 0777 "$tmp/backends"
"$dralet" discover --board "$board" --backend-dir "$tmp/backends" >/dev/null 2>"$tmp/err" || true
grep -qF "refusing to load backends: $tmp/backends is writable by every user (mode 0777)" \
    "$tmp/err" || fail "a writable backend directory was not refused: $(cat "$tmp/err")"

echo "config inputs: unknown backend options and untrusted files refused"
