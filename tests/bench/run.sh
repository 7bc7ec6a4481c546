#!/bin/sh
# make bench: every benchmark, one after another. Timing goals live here,
# never in tests; each benchmark compares ratios measured in the same run.
set -eu
: "${DRALET:?}"
cd "$(dirname "$0")/../.."
status=0
for b in tests/bench/bench_*.py tests/bench/bench_*.sh; do
    [ -e "$b" ] || continue
    echo "== $b"
    case "$b" in
        *.py) /usr/bin/python3 "$b" || status=1 ;;
        *) sh "$b" || status=1 ;;
    esac
    echo
done
exit $status
