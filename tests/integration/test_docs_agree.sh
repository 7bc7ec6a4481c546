#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Docs that must say what the code does: every 'docs/<file>.md, "<Section>"'
# reference names a heading that exists; the SR-IOV score in architecture.md
# is the one in backends/sriov/sriov.h; the checkpoint example's undo keys
# are keys a backend records; `run --help` names every claim file suffix the
# file store reads; claims.md does not call hot-plug unsupported (the daemon
# rediscovers, agent/daemon/daemon.c); and the `discover` line `make run` prints
# lists as many devices as the agent it starts publishes.
#   env: DRALET (absolute path of the binary), BUILD (default build)
set -eu

. "$(dirname "$0")/lib/preamble.sh"; preamble docs
demo=
at_exit() { [ -z "$demo" ] || kill "$demo" 2>/dev/null || true; }
cd "$root"

# 1. section references
# (a reference may wrap: a line break and a comment leader count as one space)
git ls-files -z | grep -zv '^tests/e2e/' | /usr/bin/python3 -c '
import re, sys
for name in sys.stdin.buffer.read().split(b"\0"):
    try:
        text = open(name, encoding="utf-8").read()
    except (OSError, UnicodeDecodeError):
        continue
    text = re.sub(r"\s*\n\s*(?:\*|#|//)?\s*", " ", text)
    for m in re.findall(r"docs/[a-z0-9-]+\.md, \"[^\"]+\"", text):
        print(m)' | sort -u >"$tmp/refs"
[ -s "$tmp/refs" ] || fail "no section references found"
while IFS= read -r ref; do
    file=${ref%%,*}
    section=${ref#*\"}
    section=${section%\"}
    [ -f "$file" ] || fail "$ref: no such file"
    grep -qE "^#+ $(printf '%s' "$section" | sed 's/[][\.*^$/]/\\&/g')" "$file" ||
        fail "$ref: $file has no heading '$section'"
done <"$tmp/refs"

# 2. the SR-IOV score
device=$(sed -n 's/^#define DRALET_SCORE_DEVICE \([0-9]*\)$/\1/p' include/dralet/backend.h)
plus=$(sed -n 's/^#define SRIOV_SCORE (DRALET_SCORE_DEVICE + \([0-9]*\))$/\1/p' backends/sriov/sriov.h)
[ -n "$device" ] && [ -n "$plus" ] || fail "cannot read the scores from the headers"
grep -q "scores configured PFs' VFs at $((device + plus))," docs/architecture.md ||
    fail "docs/architecture.md does not give the SR-IOV score $((device + plus))"

# 3. the checkpoint example's undo keys
/usr/bin/python3 - <<'PY' || fail "docs/claims.md: the checkpoint example's undo keys"
import json, re, subprocess, sys
text = open("docs/claims.md").read()
example = re.search(r'```json\n(\{\n  "kind": "DraletCheckpoint".*?)```', text, re.S).group(1)
keys = [k for c in json.loads(example)["data"]["claims"] for d in c["devices"]
        for k in d.get("undo", {})]
assert keys, "the example has no undo keys"
sources = subprocess.run(["git", "grep", "-h", "-e", "dralet_undo_set", "-e", "#define UNDO_",
                          "--", "backends"], capture_output=True, text=True).stdout
for k in keys:
    assert '"%s"' % k in sources, "no backend records undo key %r" % k
PY

# 4. run --help and the claim files the file store reads
"$dralet" run --help >"$tmp/help"
for suffix in .json .yaml .yml; do
    grep -q -- "$suffix" "$tmp/help" || fail "run --help does not mention $suffix claim files"
done

# 5. hot-plug
! grep -qiE "hot-?plugged devices need a restart" docs/claims.md ||
    fail "docs/claims.md says hot-plugged devices need a restart"

# 6. the make run banner: its discover line lists what the agent publishes
sh scripts/run-demo.sh "$dralet" boards/hgx-h100.yaml "$tmp/run" \
    "$build/tests/lib/fake-nvml.so" >"$tmp/banner" 2>"$tmp/demo.log" &
demo=$!
for _ in $(seq 150); do
    grep -q "serving [0-9]* driver(s) on node" "$tmp/demo.log" && break
    sleep 0.2
done
grep -q "serving [0-9]* driver(s) on node" "$tmp/demo.log" ||
    fail "the demo agent did not start: $(tail -5 "$tmp/demo.log")"
kill "$demo"; wait "$demo" 2>/dev/null || true; demo=
cmd=$(sed -n '/ discover --sysfs-root/{N;s/\\\n//;p}' "$tmp/banner")
[ -n "$cmd" ] || fail "no discover line in the banner: $(cat "$tmp/banner")"
shown=$(eval "$cmd -o json" 2>/dev/null | /usr/bin/python3 -c 'import json, sys
print(len(json.load(sys.stdin)["devices"]))')
published=$(/usr/bin/python3 -c 'import glob, json, sys
print(sum(len(json.load(open(f))["spec"].get("devices", [])) for f in glob.glob(sys.argv[1] + "/*.json")))' \
    "$tmp/run/store/resourceslices")
[ "$shown" -gt 0 ] && [ "$shown" -eq "$published" ] ||
    fail "the banner's discover line lists $shown devices, the agent published $published"
echo "docs agree with the code: $(wc -l <"$tmp/refs") section references, banner $shown devices"
