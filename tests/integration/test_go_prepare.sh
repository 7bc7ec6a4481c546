#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The kubelet's own gRPC stack (grpc-go, tests/go/kubeletclient)
# against `dralet run` on the default board: registration like the plugin
# watcher, then one NodePrepareResources/NodeUnprepareResources round trip
# for an example claim, and the CDI spec it names appears and goes away.
set -eu
: "${DRALET:?}"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
CLIENT=$BUILD/tests/go/kubeletclient
[ -x "$CLIENT" ] || { echo "missing $CLIENT (make check-integration builds it)"; exit 1; }

TMP=$(mktemp -d /tmp/dralet-go-prepare-XXXXXX)
PID=
cleanup() {
    [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT


mkdir -p "$TMP/store/resourceclaims/default"
cp "$ROOT/deploy/examples/claims/gpu.yaml" "$TMP/store/resourceclaims/default/gpu.yaml"
"$DRALET" run --board "$ROOT/boards/hgx-h100.yaml" --store "$TMP/store" --node-name demo-node \
    --registry-dir "$TMP/registry" --plugins-dir "$TMP/plugins" --cdi-dir "$TMP/cdi" \
    2>"$TMP/agent.log" &
PID=$!
REG="$TMP/registry/gpu.dralet.dev-reg.sock"
for _ in $(seq 200); do [ -S "$REG" ] && [ -S "$TMP/plugins/gpu.dralet.dev/dra.sock" ] && break; sleep 0.1; done
[ -S "$REG" ] || { echo "the agent did not start"; cat "$TMP/agent.log"; exit 1; }

"$CLIENT" -socket "$REG" -expect-driver gpu.dralet.dev \
    -prepare default/gpu/0c7f4a1e-0001-4b2d-8e3f-000000000001 >"$TMP/out" ||
    { cat "$TMP/out"; echo "---- agent ----"; cat "$TMP/agent.log"; exit 1; }
cat "$TMP/out"
grep -q "cdi=k8s.gpu.dralet.dev/gpu=0c7f4a1e-0001-4b2d-8e3f-000000000001-gpu-0000-03-00-0" "$TMP/out" ||
    { echo "unexpected CDI ID"; exit 1; }
# unprepared: its CDI spec is gone again
if ls "$TMP/cdi" | grep -q 0c7f4a1e-0001-4b2d-8e3f-000000000001; then
    echo "CDI spec left after unprepare: $(ls "$TMP/cdi")"; exit 1
fi
grep -q "driver gpu.dralet.dev: registered with the kubelet" "$TMP/agent.log" ||
    { echo "no registration line in the agent's log"; cat "$TMP/agent.log"; exit 1; }
echo "grpc-go registered and prepared/unprepared one claim"
