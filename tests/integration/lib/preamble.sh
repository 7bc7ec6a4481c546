# SPDX-License-Identifier: Apache-2.0
# The start every shell test shares, after `set -eu`:
#   . "$(dirname "$0")/lib/preamble.sh"; preamble <name> [tmpfs]
# preamble sets root (the checkout), build (absolute; $BUILD, default build), dralet ($DRALET, or
# $build/dralet; it must be executable) and tmp (a new directory, removed at exit; with
# "tmpfs", on /dev/shm when TMPDIR is unset and it has 512 MiB free: board trees are tens
# of thousands of tiny files), and defines fail(). A test with more to clean up defines
# at_exit() after sourcing; it runs before tmp is removed.

preamble() {
    root=$(cd "$(dirname "$0")/../.." && pwd)
    build=${BUILD:-build}
    case $build in /*) ;; *) build=$root/$build ;; esac
    dralet=${DRALET:-$build/dralet}
    [ -x "$dralet" ] || { echo "no dralet binary at $dralet"; exit 1; }

    preamble_base=${TMPDIR:-}
    if [ "${2:-}" = tmpfs ] && [ -z "$preamble_base" ] && [ -w /dev/shm ] &&
       [ "$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 {print $4}')" -ge 524288 ] 2>/dev/null; then
        preamble_base=/dev/shm
    fi
    tmp=$(mktemp -d "${preamble_base:-/tmp}/dralet-test-$1.XXXXXX")

    at_exit() { :; }
    trap 'at_exit; rm -rf "$tmp"' EXIT INT TERM
    fail() { echo "FAIL: $*"; exit 1; }
}
