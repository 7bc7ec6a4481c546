#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `make run` (scripts/run-demo.sh) twice on one run directory: the second
# refuses before it touches anything, so the first demo's simulated node
# stays as it is and the first agent keeps serving.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
DRALET=${DRALET:-$BUILD/dralet}
[ -x "$DRALET" ] || { echo "missing $DRALET"; exit 1; }

TMP=$(mktemp -d /tmp/dralet-run-demo-XXXXXX)
PID=
cleanup() {
    [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "---- first demo ----"; cat "$TMP/first.log"; exit 1; }

"$ROOT/scripts/run-demo.sh" "$DRALET" "$ROOT/boards/e810.yaml" "$TMP/run" >"$TMP/first.log" 2>&1 &
PID=$!
i=0
until [ -S "$TMP/run/plugins_registry/net.dralet.dev-reg.sock" ]; do
    i=$((i + 1))
    [ $i -lt 400 ] || fail "the first demo did not open its sockets"
    kill -0 "$PID" 2>/dev/null || fail "the first demo exited"
    sleep 0.05
done
: >"$TMP/run/node/sys/marker"	# the first demo's tree, as it is now

rc=0
"$ROOT/scripts/run-demo.sh" "$DRALET" "$ROOT/boards/e810.yaml" "$TMP/run" >"$TMP/second.log" 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "the second demo did not refuse"
[ -e "$TMP/run/node/sys/marker" ] || fail "the second demo touched the first one's tree"
grep -q "another demo is running in $TMP/run" "$TMP/second.log" || { cat "$TMP/second.log"; fail "no clear message"; }
kill -0 "$PID" 2>/dev/null || fail "the first demo died"
[ -S "$TMP/run/plugins_registry/net.dralet.dev-reg.sock" ] || fail "the first demo lost its socket"
echo "run demo: ok"
