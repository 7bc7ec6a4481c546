#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A simulated board's temporary tree belongs to its agent while the agent
# lives (a flock on <tree>/.owner): an agent killed with SIGKILL leaves its
# tree behind, and the next agent that materializes a board in the same
# directory removes it, never a live agent's tree nor one without an owner
# (`dralet board materialize`, a test's). TMPDIR keeps every tree in this
# test's directory.
set -eu
. "$(dirname "$0")/lib/preamble.sh"; preamble board-owner
PIDS=""
at_exit() {
    for p in $PIDS; do kill -9 "$p" 2>/dev/null || :; done
    wait 2>/dev/null || :
}
export TMPDIR="$tmp/trees"
mkdir -p "$TMPDIR"
BOARD=$root/boards/e810.yaml

fail() { echo "FAIL: $*"; ls -la "$TMPDIR"; for f in "$tmp"/*.log; do echo "== $f"; cat "$f"; done; exit 1; }

# start <name>: an agent with its own directories; waits until it registered
start() {
    d=$tmp/$1
    mkdir -p "$d/registry" "$d/plugins" "$d/cdi"
    "$dralet" run --board "$BOARD" --store "$d/store" --node-name node-1 \
        --registry-dir "$d/registry" --plugins-dir "$d/plugins" --cdi-dir "$d/cdi" \
        >"$tmp/$1.log" 2>&1 &
    LAST=$!
    PIDS="$PIDS $LAST"
    n=0
    until [ -n "$(ls -A "$d/registry")" ]; do
        kill -0 "$LAST" 2>/dev/null || fail "agent $1 stopped"
        n=$((n + 1)); [ $n -lt 600 ] || fail "agent $1 did not register"
        sleep 0.1
    done
}
trees() { ls -d "$TMPDIR"/dralet-board.* 2>/dev/null | sort; }

start dead
dead_tree=$(trees)
[ -f "$dead_tree/.owner" ] || fail "no owner file in $dead_tree"
kill -9 "$LAST"; wait "$LAST" 2>/dev/null || :
[ -d "$dead_tree/sys" ] || fail "a killed agent's tree is gone by itself"

"$dralet" board materialize --quiet "$BOARD" "$TMPDIR/dralet-board.manual"
start a
a_pid=$LAST
grep -q "removed 1 board tree(s) left by agents that died" "$tmp/a.log" || fail "agent a did not say it removed the tree"
[ ! -e "$dead_tree" ] || fail "the dead agent's tree $dead_tree is still there"
[ -d "$TMPDIR/dralet-board.manual/sys" ] || fail "a tree without an owner was removed"
a_tree=$(trees | grep -v -e manual)
[ "$(echo "$a_tree" | wc -l)" -eq 1 ] || fail "agent a's tree: $a_tree"

start b
b_pid=$LAST
[ -d "$a_tree/sys" ] || fail "agent b removed live agent a's tree"
grep -q "removed .* board tree" "$tmp/b.log" && fail "agent b removed a tree"
[ "$(trees | wc -l)" -eq 3 ] || fail "expected a's, b's and the manual tree"

kill -TERM "$a_pid" "$b_pid"; wait "$a_pid" "$b_pid" 2>/dev/null || :
[ "$(trees)" = "$TMPDIR/dralet-board.manual" ] || fail "trees left after SIGTERM: $(trees)"
echo "board tree owner: ok"
