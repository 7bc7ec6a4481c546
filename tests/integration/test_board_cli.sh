#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The `dralet board` command line: help, list, check (with located errors
# and exit status 1 for a bad board), materialize (refusing a non-empty
# directory, reporting what it wrote).
#   env: DRALET (absolute path of the binary; default build/dralet)
set -eu

. "$(dirname "$0")/lib/preamble.sh"; preamble board-cli tmpfs

"$dralet" board --help >"$tmp/out" || fail "board --help exited $?"
grep -q "materialize" "$tmp/out" || fail "board --help does not mention materialize"
set +e
"$dralet" board >/dev/null 2>&1; rc=$?
set -e
[ $rc -eq 2 ] || fail "board without a subcommand exited $rc, want 2"

"$dralet" board list "$root/boards" >"$tmp/out"
n=$(ls "$root"/boards/*.yaml | wc -l)
[ "$(wc -l <"$tmp/out")" -eq "$n" ] || fail "board list shows $(wc -l <"$tmp/out") boards, want $n"
grep -q "^hgx-h100.yaml *198 functions" "$tmp/out" || fail "board list: $(cat "$tmp/out")"

"$dralet" board check "$root"/boards/*.yaml >"$tmp/out" || fail "board check of the shipped boards failed"
set +e
"$dralet" board check "$root/tests/fixtures/boards/unknown-key.yaml" >/dev/null 2>"$tmp/err"; rc=$?
set -e
[ $rc -eq 1 ] || fail "board check of a bad board exited $rc, want 1"
grep -q "unknown-key.yaml: line 10 column 13: unknown key 'vendr' in pci function" "$tmp/err" ||
    fail "board check message: $(cat "$tmp/err")"

"$dralet" board materialize "$root/boards/vm-like.yaml" "$tmp/vm" >"$tmp/out"
grep -q "^materialized vm-like (12 PCI functions) into $tmp/vm in " "$tmp/out" ||
    fail "materialize said: $(cat "$tmp/out")"
[ -f "$tmp/vm/nvml.json" ] && [ -d "$tmp/vm/sys/bus/pci/devices" ] && [ -d "$tmp/vm/dev" ] &&
    [ -f "$tmp/vm/proc/devices" ] || fail "materialize left an incomplete tree"
set +e
"$dralet" board materialize --quiet "$root/boards/vm-like.yaml" "$tmp/vm" 2>"$tmp/err"; rc=$?
set -e
[ $rc -eq 1 ] || fail "materialize into a non-empty directory exited $rc, want 1"
grep -q "is not empty" "$tmp/err" || fail "materialize message: $(cat "$tmp/err")"
# the committed synthetic board is the generator's output
if [ -x /usr/bin/python3 ]; then
    /usr/bin/python3 "$root/boards/gen-synthetic.py" | cmp -s - "$root/boards/synthetic-1k.yaml" ||
        fail "boards/synthetic-1k.yaml differs from boards/gen-synthetic.py's output; regenerate it"
fi
echo "dralet board: help, list, check and materialize behave"
