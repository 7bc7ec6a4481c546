#!/bin/sh
# Runs test programs, TEST_JOBS at a time (default 1), and reports each as it
# ends; exits non-zero if any failed or could not run (exit 77: the reason is
# its last line of output). A failed test's last lines come after the list.
#   tests/run-tests.sh <suite> <program>...
# .py files run with Debian's /usr/bin/python3 (python3-grpcio lives there).
# Each test's output: ${TMPDIR:-/tmp}/dralet-<suite>-<name>.log.
if [ "$1" = --one ]; then
    # one test: prints its line, leaves "<rc> <seconds>" in $results/<name>
    suite=$2; results=$3; t=$4
    name=$(basename "$t")
    log="${TMPDIR:-/tmp}/dralet-$suite-$name.log"
    start=$(date +%s)
    case "$t" in
        *.py) /usr/bin/python3 "$t" >"$log" 2>&1 ;;
        # umockdev's preload must come after the sanitizer runtime, and its own
        # small allocations are not ours to report
        *_umockdev) ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0" \
            umockdev-wrapper "$t" >"$log" 2>&1 ;;
        *) "$t" >"$log" 2>&1 ;;
    esac
    rc=$?
    secs=$(( $(date +%s) - start ))
    echo "$rc $secs" >"$results/$name"
    case $rc in
        0) echo "PASS  $suite/$name (${secs}s)" ;;
        # A skipped test is a failed one: every suite runs whole or not at all.
        77) echo "FAIL  $suite/$name: it could not run: $(tail -n 1 "$log")" ;;
        *) echo "FAIL  $suite/$name (exit $rc, ${secs}s)" ;;
    esac
    exit 0
fi

suite=$1; shift
results=$(mktemp -d "${TMPDIR:-/tmp}/dralet-$suite-results.XXXXXX") || exit 1
trap 'rm -rf "$results"' EXIT
start=$(date +%s)
printf '%s\n' "$@" | xargs -P "${TEST_JOBS:-1}" -n 1 sh "$0" --one "$suite" "$results"
pass=0; fail=0
for t in "$@"; do
    name=$(basename "$t")
    rc=$(cut -d' ' -f1 "$results/$name" 2>/dev/null) || rc=lost
    if [ "$rc" = 0 ]; then
        pass=$((pass + 1))
        continue
    fi
    fail=$((fail + 1))
    if [ "$rc" != 77 ]; then
        echo "--- $suite/$name (exit $rc); last lines of its output:"
        tail -n 40 "${TMPDIR:-/tmp}/dralet-$suite-$name.log" | sed 's/^/      /'
    fi
done
echo "$suite: $pass passed, $fail failed ($(( $(date +%s) - start ))s, ${TEST_JOBS:-1} at a time)"
[ $fail -eq 0 ]
