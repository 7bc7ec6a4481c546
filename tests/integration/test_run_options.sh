#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `dralet run` fails fast, with a message that names the flag, on options
# that would leave it serving while every call fails: a --cdi-dir (or another
# directory flag) that is a file, a --node-name that is no node name.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
DRALET=${DRALET:-$BUILD/dralet}
[ -x "$DRALET" ] || { echo "missing $DRALET"; exit 1; }

TMP=$(mktemp -d /tmp/dralet-run-options-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
: >"$TMP/a-file"

# run <expected flag in the message> <options...>: exit 2, flag named, no socket made
run() {
    flag=$1; shift
    rc=0
    timeout 30 "$DRALET" run --board "$ROOT/boards/e810.yaml" --store "$TMP/store" \
        --registry-dir "$TMP/registry" --plugins-dir "$TMP/plugins" "$@" \
        >"$TMP/out.log" 2>&1 || rc=$?
    [ "$rc" -eq 2 ] || { echo "FAIL: $* exited $rc, not 2"; cat "$TMP/out.log"; exit 1; }
    grep -q -- "$flag" "$TMP/out.log" || { echo "FAIL: $* did not name $flag"; cat "$TMP/out.log"; exit 1; }
    if [ -d "$TMP/registry" ] && [ -n "$(ls -A "$TMP/registry")" ]; then
        echo "FAIL: $* made sockets"; exit 1
    fi
}

run "--cdi-dir $TMP/a-file: not a directory" --cdi-dir "$TMP/a-file" --node-name node-1
run "--cdi-dir $TMP/a-file/cdi: Not a directory" --cdi-dir "$TMP/a-file/cdi" --node-name node-1
run "--node-name BadName: not a valid node name" --cdi-dir "$TMP/cdi" --node-name BadName
run "--node-name -node: not a valid node name" --cdi-dir "$TMP/cdi" --node-name=-node
run "--plugins-dir $TMP/a-file: not a directory" --cdi-dir "$TMP/cdi" --node-name node-1 \
    --plugins-dir "$TMP/a-file"
echo "run options: ok"
