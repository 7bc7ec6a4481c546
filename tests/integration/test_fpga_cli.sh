#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The `dralet fpga` command line (docs/fpga.md, "2. The bitstream store"): add
# copies an image under its sha256 and names it in index.json; bitstreams
# lists names, sha256, kind and the IDs read from the file itself (GBS, xclbin,
# a raw image with its manifest), flags a named image that is missing, and
# fails with the reason on a broken index; the store comes from --dir or the
# configuration's backends.dfl.options.bitstreamDir.
#   env: DRALET (absolute path of the binary; default build/dralet)
set -eu

. "$(dirname "$0")/lib/preamble.sh"; preamble fpga-cli

store=$tmp/store
/usr/bin/python3 - "$tmp" <<'PY'
import json, struct, sys
d = sys.argv[1]
meta = json.dumps({"version": 1, "afu-image": {
    "magic-no": 488605312, "interface-uuid": "9926ab6d-6c92-5a68-aabc-a7d84c545738",
    "accelerator-clusters": [{"name": "nlb3", "total-contexts": 1,
                              "accelerator-type-uuid": "f7df405c-bd7a-cf72-22f1-44b0b93acd18"}]}}).encode()
open(d + "/nlb3.gbs", "wb").write(bytes.fromhex("58656f6e46504741b747425376303031") +
                                  struct.pack("<I", len(meta)) + meta + bytes(range(256)))
x = bytearray(456 + 40 + 64)
x[0:8] = b"xclbin2\0"
struct.pack_into("<Q", x, 304, len(x))
x[336:352] = bytes.fromhex("5a4ab2ef5c8b4d62a1e7f3d8b2c09e61")
x[352:352 + 31] = b"xilinx_u55c_gen3x16_xdma_base_3"
x[416:432] = bytes.fromhex("11112222333344445555666677778888")
struct.pack_into("<I", x, 448, 1)
open(d + "/vadd.xclbin", "wb").write(bytes(x))
open(d + "/blinky.bin", "wb").write(b"\x5a" * 100)
PY

"$dralet" fpga --help >"$tmp/out" || fail "fpga --help exited $?"
grep -q "bitstreams" "$tmp/out" || fail "fpga --help does not mention bitstreams"
"$dralet" fpga add nlb3 "$tmp/nlb3.gbs" --dir "$store" >"$tmp/out" || fail "add nlb3 failed"
sha=$(sha256sum "$tmp/nlb3.gbs" | cut -d' ' -f1)
[ "$(cat "$tmp/out")" = "nlb3 $sha" ] || fail "add printed: $(cat "$tmp/out")"
cmp -s "$tmp/nlb3.gbs" "$store/$sha" || fail "the store does not hold nlb3 under its sha256"
"$dralet" fpga add vadd "$tmp/vadd.xclbin" --dir "$store" >/dev/null || fail "add vadd failed"
"$dralet" fpga add blinky "$tmp/blinky.bin" --dir "$store" >/dev/null 2>"$tmp/err" ||
    fail "add blinky failed"
grep -q "warning: .*unknown format" "$tmp/err" || fail "no warning for a raw image: $(cat "$tmp/err")"
raw=$(sha256sum "$tmp/blinky.bin" | cut -d' ' -f1)
printf '{"interfaceID": "c0ffee00c0ffee00c0ffee00c0ffee00"}' >"$store/$raw.json"
set +e
"$dralet" fpga add "bad/name" "$tmp/nlb3.gbs" --dir "$store" >/dev/null 2>&1; rc=$?
set -e
[ $rc -eq 2 ] || fail "add with a bad name exited $rc, want 2"

"$dralet" fpga bitstreams --dir "$store" >"$tmp/out" || fail "bitstreams failed"
grep -Eq "^nlb3 +${sha%"${sha#????????????}"}… +gbs +9926ab6d6c925a68aabca7d84c545738 +f7df405cbd7acf7222f144b0b93acd18 +nlb3" \
    "$tmp/out" || fail "bitstreams: $(cat "$tmp/out")"
grep -Eq "^vadd .* xclbin +5a4ab2ef5c8b4d62a1e7f3d8b2c09e61 +11112222333344445555666677778888 +xilinx_u55c" \
    "$tmp/out" || fail "bitstreams: $(cat "$tmp/out")"
grep -Eq "^blinky .* raw +c0ffee00c0ffee00c0ffee00c0ffee00 +- " "$tmp/out" ||
    fail "bitstreams: $(cat "$tmp/out")"

# the configuration names the store
printf 'backends:\n  dfl:\n    options:\n      bitstreamDir: %s\n' "$store" >"$tmp/config.yaml"
"$dralet" fpga bitstreams --config "$tmp/config.yaml" -o json >"$tmp/json" || fail "-o json failed"
/usr/bin/python3 - "$tmp/json" "$sha" <<'PY' || fail "bitstreams -o json: $(cat "$tmp/json")"
import json, sys
rows = {r["names"]: r for r in json.load(open(sys.argv[1]))}
assert rows["nlb3"]["sha256"] == sys.argv[2] and rows["nlb3"]["kind"] == "gbs", rows
assert rows["vadd"]["acceleratorID"] == "11112222333344445555666677778888", rows
assert rows["blinky"]["kind"] == "raw" and "error" not in rows["blinky"], rows
PY

# a named image that is gone
rm "$store/$sha"
"$dralet" fpga bitstreams --dir "$store" >"$tmp/out" || fail "bitstreams failed"
grep -q "^nlb3 .*# missing from the store" "$tmp/out" || fail "missing image: $(cat "$tmp/out")"
# a broken index
printf '{"nlb3": 5}' >"$store/index.json"
set +e
"$dralet" fpga bitstreams --dir "$store" >/dev/null 2>"$tmp/err"; rc=$?
set -e
[ $rc -eq 1 ] || fail "bitstreams with a broken index exited $rc, want 1"
grep -q "index.json: nlb3: want 64 lower-case hex digits" "$tmp/err" || fail "message: $(cat "$tmp/err")"
echo "fpga cli: add, bitstreams (text, json, --config), missing image, broken index"
