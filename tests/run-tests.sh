#!/bin/sh
# Runs test programs one after another and reports each; exits non-zero if any
# failed or could not run (exit 77: the reason is its last line of output).
#   tests/run-tests.sh <suite> <program>...
# .py files run with Debian's /usr/bin/python3 (python3-grpcio lives there).
suite=$1; shift
pass=0; fail=0; failed=""
for t in "$@"; do
    name=$(basename "$t")
    start=$(date +%s)
    case "$t" in
        *.py) /usr/bin/python3 "$t" >"${TMPDIR:-/tmp}/dralet-$suite-$name.log" 2>&1 ;;
        # umockdev's preload must come after the sanitizer runtime, and its own
        # small allocations are not ours to report
        *_umockdev) ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0" \
            umockdev-wrapper "$t" >"${TMPDIR:-/tmp}/dralet-$suite-$name.log" 2>&1 ;;
        *) "$t" >"${TMPDIR:-/tmp}/dralet-$suite-$name.log" 2>&1 ;;
    esac
    rc=$?
    secs=$(( $(date +%s) - start ))
    if [ $rc -eq 0 ]; then
        pass=$((pass + 1)); echo "PASS  $suite/$name (${secs}s)"
    elif [ $rc -eq 77 ]; then
        # A skipped test is a failed one: every suite runs whole or not at all.
        fail=$((fail + 1)); failed="$failed $name"
        echo "FAIL  $suite/$name: it could not run: $(tail -n 1 "${TMPDIR:-/tmp}/dralet-$suite-$name.log")"
    else
        fail=$((fail + 1)); failed="$failed $name"
        echo "FAIL  $suite/$name (exit $rc, ${secs}s); last lines of its output:"
        tail -n 40 "${TMPDIR:-/tmp}/dralet-$suite-$name.log" | sed 's/^/      /'
    fi
done
echo "$suite: $pass passed, $fail failed"
[ $fail -eq 0 ]
