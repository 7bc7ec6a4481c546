#!/bin/sh
# Runs `dralet discover` under valgrind (memcheck, full leak check) on every
# board and on this machine's real /sys; any error or leak fails.
set -eu
: "${DRALET:?}"
here=$(cd "$(dirname "$0")/.." && pwd)
fail=0
run() {
    name=$1; shift
    if valgrind --quiet --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect,possible \
        --errors-for-leak-kinds=definite,indirect,possible --track-origins=yes \
        "$DRALET" discover "$@" -o json >/dev/null 2>"${TMPDIR:-/tmp}/valgrind-$name.log"; then
        echo "clean: $name"
    else
        echo "valgrind reported problems for $name:"; tail -n 60 "${TMPDIR:-/tmp}/valgrind-$name.log"
        fail=1
    fi
}
for board in "$here"/boards/*.yaml; do
    [ -e "$board" ] || continue
    run "$(basename "$board" .yaml)" --board "$board"
done
run real-sys
exit $fail
