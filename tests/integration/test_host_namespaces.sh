#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Network devices only from the host's namespaces (hal/host_ns.c): a simulated
# node is its own host and publishes its NICs; the same node whose proc tree
# says the agent runs in a pod's network or PID namespace publishes none, with
# one error; and so does the agent on the real /proc from a new PID or network
# namespace (unshare: the test needs root).
#   env: DRALET (absolute path of the binary; default build/dralet)
set -eu

. "$(dirname "$0")/lib/preamble.sh"; preamble host-ns

"$dralet" board materialize --quiet "$root/boards/e810.yaml" "$tmp/node"
n="$tmp/node"

# discover [proc root]: prints the number of net.dralet.dev devices
net_devices() {
    "$dralet" discover --sysfs-root "$n/sys" --dev-root "$n/dev" --proc-root "${1:-$n/proc}" \
        -o json 2>"$tmp/err" |
        /usr/bin/python3 -c 'import json, sys
print(sum(d["driver"] == "net.dralet.dev" for d in json.load(sys.stdin)["devices"]))'
}
one_error() {
    c=$(grep -c "network devices (RDMA NICs, SR-IOV PFs and VFs) are not published: $1" "$tmp/err" || true)
    [ "$c" -eq 1 ] || fail "want one error naming '$1', got: $(cat "$tmp/err")"
}

[ "$(net_devices)" -gt 0 ] || fail "the simulated board publishes no NICs: $(cat "$tmp/err")"
! grep -q "not published: the agent" "$tmp/err" || fail "a board was refused: $(cat "$tmp/err")"

# a board's agent is its init (proc/self -> 1); a pod's agent is another process
[ "$(readlink "$n/proc/self")" = 1 ] || fail "the board's proc/self is not its init"
rm "$n/proc/self"
mkdir -p "$n/proc/self/ns" "$n/proc/1/ns"
ln -s "pid:[4026531836]" "$n/proc/self/ns/pid"
ln -s "net:[4026531840]" "$n/proc/1/ns/net"
ln -s "net:[4026532999]" "$n/proc/self/ns/net"
[ "$(net_devices)" -eq 0 ] || fail "NICs published from a pod's network namespace"
one_error "the agent is not in the host's network namespace"

ln -sf "net:[4026531840]" "$n/proc/self/ns/net"
ln -sf "pid:[4026532100]" "$n/proc/self/ns/pid"
[ "$(net_devices)" -eq 0 ] || fail "NICs published from a pod's PID namespace"
one_error "the agent is not in the host's PID namespace"
rm -r "$n/proc/self" "$n/proc/1/ns"
ln -s 1 "$n/proc/self"

# the real procfs, seen from namespaces of our own
# the real /proc part is part of the test: where unshare cannot run, the test
# cannot run (exit 77 fails the suite with the reason)
unshare --pid --fork --mount-proc true 2>/dev/null ||
    { echo "unshare --pid fails here (needs root): the real /proc cannot be tried"; exit 77; }
unshare --pid --fork --mount-proc "$dralet" discover --sysfs-root "$n/sys" --dev-root "$n/dev" \
    --proc-root /proc -o json 2>"$tmp/err" >"$tmp/out.json"
one_error "the agent is not in the host's PID namespace"
grep -q '"net.dralet.dev"' "$tmp/out.json" && fail "NICs published from a new PID namespace"
unshare --net "$dralet" discover --sysfs-root "$n/sys" --dev-root "$n/dev" --proc-root /proc \
    -o json 2>"$tmp/err" >"$tmp/out.json"
one_error ".*network namespace"
grep -q '"net.dralet.dev"' "$tmp/out.json" && fail "NICs published from a new network namespace"
echo "host namespaces: boards publish, pods' namespaces (simulated and real) refused"
