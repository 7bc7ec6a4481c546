#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# What the agent refuses to start on, with the message naming the culprit:
# an option no backend declares (a typo), on a simulated board.
#   env: DRALET (absolute path of the binary; default build/dralet)
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
dralet=${DRALET:-$root/build/dralet}
[ -x "$dralet" ] || { echo "no dralet binary at $dralet"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dralet-test-config-inputs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
board="$root/boards/vm-like.yaml"

fail() { echo "FAIL: $*"; exit 1; }

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
refused "backends.nvidia.options.nvmlLibary: unknown option (known: nvmlLibrary, driverRoot, hostDriverRoot, nvidiaSmi)" \
    --config "$tmp/typo.yaml"
printf 'backends:\n  amdgpu:\n    options:\n      x: "1"\n' >"$tmp/none.yaml"
refused "backends.amdgpu.options.x: unknown option (the backend takes no options)" \
    --config "$tmp/none.yaml"
printf 'backends:\n  nvidia:\n    options:\n      driverRoot: /run/nvidia/driver\n' >"$tmp/ok.yaml"
"$dralet" discover --board "$board" --config "$tmp/ok.yaml" >/dev/null ||
    fail "a declared option was refused"

echo "config inputs: unknown backend options refused"
