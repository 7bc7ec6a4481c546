#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `dralet ctl` (the real binary, $DRALET) against the test daemon's kubelet
# sockets: info, health, prepare and unprepare, JSON on stdout, exit codes.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
SERVER=$BUILD/tests/integration/grpc_test_server
DRALET=${DRALET:-$BUILD/dralet}
PY=/usr/bin/python3
[ -x "$SERVER" ] || { echo "missing $SERVER"; exit 1; }
[ -x "$DRALET" ] || { echo "missing $DRALET"; exit 1; }

TMP=$(mktemp -d /tmp/dralet-ctl-XXXXXX)
PID=
cleanup() {
    [ -n "$PID" ] && kill "$PID" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "---- server log ----"; cat "$TMP/server.log"; exit 1; }

mkfifo "$TMP/ready"
"$SERVER" --driver gpu.test.dralet.io --registry-dir "$TMP/reg" --plugins-dir "$TMP/plugins" \
    --health >"$TMP/ready" 2>"$TMP/server.log" &
PID=$!
read -r word REG DRA <"$TMP/ready" || true
[ "${word:-}" = READY ] || fail "test server did not start"

# json FILE EXPR: evaluates a Python expression over the parsed JSON as j
json() { $PY -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; }

"$DRALET" ctl info --socket "$REG" >"$TMP/out" || fail "ctl info"
json "$TMP/out" "j['type'] == 'DRAPlugin' and j['endpoint'] == '$DRA' and \
    j['supportedVersions'] == ['v1.DRAPlugin', 'v1beta1.DRAPlugin', 'v1.DRAResourceHealth', 'v1alpha1.DRAResourceHealth']" ||
    fail "info output: $(cat "$TMP/out")"

"$DRALET" ctl health --socket "$DRA" --timeout 2s >"$TMP/out" || fail "ctl health"
json "$TMP/out" "j == {'status': 'SERVING'}" || fail "health output"

"$DRALET" ctl prepare --socket "$DRA" --uid u-1 --namespace default --name c1 >"$TMP/out" ||
    fail "ctl prepare"
json "$TMP/out" "j['claims']['u-1']['devices'][0]['cdiDeviceIds'] == ['example.com/gpu=u-1-gpu-0']" ||
    fail "prepare output: $(cat "$TMP/out")"

cat >"$TMP/claims.json" <<JSON
[{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
  "metadata": {"namespace": "ns", "name": "ok", "uid": "u-ok"}},
 {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
  "metadata": {"namespace": "ns", "name": "fail", "uid": "u-fail"}}]
JSON
rc=0
"$DRALET" ctl prepare --socket "$DRA" --claim "$TMP/claims.json" --api v1beta1 \
    >"$TMP/out" 2>"$TMP/err" || rc=$?
[ $rc = 1 ] || fail "a failed claim must exit 1 (got $rc)"
grep -q "claim u-fail: injected failure" "$TMP/err" || fail "stderr: $(cat "$TMP/err")"
json "$TMP/out" "j['claims']['u-fail']['error'] == 'injected failure' and \
    j['claims']['u-ok']['devices'][0]['deviceName'] == 'gpu-0'" || fail "prepare list output"

"$DRALET" ctl unprepare --socket "$DRA" --uid u-1 --namespace default --name c1 >"$TMP/out" ||
    fail "ctl unprepare"
json "$TMP/out" "j == {'claims': {'u-1': {'error': ''}}}" || fail "unprepare output"

rc=0
"$DRALET" ctl info --socket "$DRA" >"$TMP/out" 2>"$TMP/err" || rc=$?
[ $rc = 1 ] && [ ! -s "$TMP/out" ] && grep -q UNIMPLEMENTED "$TMP/err" ||
    fail "GetInfo on the DRA socket: rc=$rc $(cat "$TMP/err")"
rc=0
"$DRALET" ctl info >/dev/null 2>&1 || rc=$?
[ $rc = 2 ] || fail "usage error must exit 2 (got $rc)"

kill -TERM $PID
wait $PID || fail "test server exit status"
PID=
echo "dralet ctl: ok"
