#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The kubelet's own gRPC stack against dralet's kubelet endpoint: the grpc-go
# client of tests/go/kubeletclient (its own Go module, built by make
# check-integration) registers like the plugin watcher does:
# GetInfo (1 s deadline) + NotifyRegistrationStatus, accepted and rejected,
# then echoes over "unix:" + PluginInfo.endpoint (small and 3 MB messages,
# which makes grpc-go send BDP pings and window updates).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
SERVER=$BUILD/tests/integration/grpc_test_server
CLIENT=$BUILD/tests/go/kubeletclient
[ -x "$SERVER" ] || { echo "missing $SERVER"; exit 1; }
[ -x "$CLIENT" ] || { echo "missing $CLIENT (make check-integration builds it)"; exit 1; }

TMP=$(mktemp -d /tmp/dralet-go-XXXXXX)
PID=
cleanup() {
    [ -n "$PID" ] && kill "$PID" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT


DRIVER=gpu.test.dralet.io
mkfifo "$TMP/ready"
"$SERVER" --driver $DRIVER --registry-dir "$TMP/plugins_registry" \
    --plugins-dir "$TMP/plugins" >"$TMP/ready" 2>"$TMP/server.log" &
PID=$!
read -r word REG DRA <"$TMP/ready" || true
[ "${word:-}" = READY ] || { echo "test server did not start"; cat "$TMP/server.log"; exit 1; }

fail() { echo "FAIL: $*"; echo "---- server log ----"; cat "$TMP/server.log"; exit 1; }

# Relative bare path, like the plugin watcher's dial (grpc-go 1.33 then sends
# the path as :authority), and the absolute path.
(cd "$TMP/plugins_registry" && "$CLIENT" -socket "$DRIVER-reg.sock" \
    -expect-driver $DRIVER -dra-echo) || fail "registration (relative path)"
"$CLIENT" -socket "$REG" -reject "plugin is not supported" -big 3000000 ||
    fail "rejected registration + 3 MB echo"
grep -q "registered DRA driver $DRIVER" "$TMP/server.log" || fail "no 'registered' log line"
grep -q "registration of DRA driver $DRIVER failed: plugin is not supported" "$TMP/server.log" ||
    fail "no rejection log line"

kill -TERM $PID
wait $PID || fail "test server exit status $?"
PID=
[ ! -e "$REG" ] && [ ! -e "$DRA" ] || fail "sockets left behind"
echo "grpc-go client: ok"
