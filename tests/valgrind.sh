#!/bin/sh
# Runs `dralet discover` under valgrind (memcheck, full leak check) on every
# board and on this machine's real /sys, and the daemon once (a board, the file
# store, the metrics endpoint scraped, then SIGTERM); any error or leak fails.
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

# the daemon: its threads (libuv workers, the metrics server) and its shutdown
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dralet-valgrind-run.XXXXXX")
mkdir -p "$tmp/store" "$tmp/registry" "$tmp/plugins" "$tmp/cdi"
valgrind --quiet --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect,possible \
    --errors-for-leak-kinds=definite,indirect,possible --track-origins=yes \
    "$DRALET" run --board "$here/boards/edge-box.yaml" --store "$tmp/store" --node-name node-1 \
    --registry-dir "$tmp/registry" --plugins-dir "$tmp/plugins" --cdi-dir "$tmp/cdi" \
    --metrics-address 127.0.0.1:0 >"$tmp/run.log" 2>&1 &
pid=$!
if /usr/bin/python3 - "$tmp/run.log" <<'PY'
import re, sys, time, urllib.request
deadline = time.time() + 120
while time.time() < deadline:
    m = re.search(r"\(port (\d+)\)", open(sys.argv[1]).read())
    if m and "serving" in open(sys.argv[1]).read():
        break
    time.sleep(0.2)
else:
    sys.exit("no metrics port")
for path in ("/metrics", "/healthz", "/readyz", "/metrics"):
    try:
        urllib.request.urlopen("http://127.0.0.1:%s%s" % (m.group(1), path), timeout=30).read()
    except urllib.error.HTTPError as e:
        if path != "/readyz":   # no kubelet registers the drivers here
            raise
PY
then
    kill -TERM $pid
    if wait $pid; then
        echo "clean: run (daemon with the metrics endpoint)"
    else
        echo "valgrind reported problems for the daemon:"; tail -n 60 "$tmp/run.log"; fail=1
    fi
else
    kill -TERM $pid 2>/dev/null || true; wait $pid || true
    echo "the daemon under valgrind did not serve its metrics:"; tail -n 40 "$tmp/run.log"; fail=1
fi
rm -rf "$tmp"
exit $fail
