#!/bin/sh
# `dralet discover -o json` on every board equals its golden file in
# tests/golden/<board>.json. Names come from Debian 12's pci.ids (hwdb off)
# and NVIDIA facts from the fake NVML answering from the board's nvml.json,
# so the output depends on nothing but the board. After an intended change:
#   UPDATE_GOLDEN=1 make check-integration   (then review the diff)
set -eu
: "${DRALET:?}" "${BUILD:=build}"
here=$(cd "$(dirname "$0")/../.." && pwd)
fake_nvml="$here/$BUILD/tests/lib/fake-nvml.so"
[ -f "$fake_nvml" ] || { echo "fake NVML not built (make test-libs)"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/config.yaml" <<YAML
pciIDs: /usr/share/misc/pci.ids
backends:
  nvidia:
    options:
      nvmlLibrary: "$fake_nvml"
YAML
fail=0
for board in "$here"/boards/*.yaml; do
    name=$(basename "$board" .yaml)
    tree="$tmp/$name"
    "$DRALET" board materialize "$board" "$tree" >/dev/null
    FAKE_NVML_DATA="$tree/nvml.json" "$DRALET" discover --sysfs-root "$tree/sys" \
        --dev-root "$tree/dev" --proc-root "$tree/proc" --config "$tmp/config.yaml" \
        -o json >"$tmp/$name.json" 2>"$tmp/$name.log"
    golden="$here/tests/golden/$name.json"
    if [ "${UPDATE_GOLDEN:-}" = 1 ]; then
        cp "$tmp/$name.json" "$golden"
        echo "updated $golden"
    elif ! cmp -s "$golden" "$tmp/$name.json"; then
        echo "discover output of $name differs from $golden:"
        diff -u "$golden" "$tmp/$name.json" | head -40
        fail=1
    else
        echo "$name: $(grep -c '"name"' "$golden") devices as expected"
    fi
done
exit $fail
