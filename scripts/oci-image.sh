#!/bin/sh
# Packs a root filesystem into an OCI image archive without a container
# daemon (umoci, from Debian): one layer, the given entrypoint, and the full
# reference name in index.json, which `ctr images import`, `podman load` and
# `skopeo copy oci-archive:...` read. File times are clamped to the epoch, so
# the same ROOTFS gives the same image digest.
#   scripts/oci-image.sh ROOTFS NAME:TAG OUT.tar [ENTRYPOINT [ARG ...]]
set -eu
[ $# -ge 3 ] || { echo "usage: $0 ROOTFS NAME:TAG OUT.tar [ENTRYPOINT [ARG ...]]" >&2; exit 2; }
rootfs=$1 ref=$2 out=$3
shift 3
command -v umoci >/dev/null || { echo "$0: umoci is missing (apt-get install umoci)" >&2; exit 1; }
tag=${ref##*:}
work=$(mktemp -d "${TMPDIR:-/tmp}/oci-image-XXXXXX")
trap 'rm -rf "$work"' EXIT

layout=$work/layout
umoci init --layout "$layout"
umoci new --image "$layout:$tag"
umoci unpack --image "$layout:$tag" "$work/bundle" >/dev/null
cp -a "$rootfs/." "$work/bundle/rootfs/"
find "$work/bundle/rootfs" -exec touch -h -d @0 {} +
umoci repack --image "$layout:$tag" --history.created=1970-01-01T00:00:00Z \
    --history.created_by="scripts/oci-image.sh" "$work/bundle"

# The entrypoint: one --config.entrypoint per word.
entry=
for word in "$@"; do
    entry="$entry --config.entrypoint=$word"
done
# shellcheck disable=SC2086
umoci config --image "$layout:$tag" --no-history --created 1970-01-01T00:00:00Z \
    --os linux --architecture amd64 $entry
umoci gc --layout "$layout"

# umoci names the manifest by its tag; importers want the whole reference.
/usr/bin/python3 - "$layout/index.json" "$ref" <<'PY'
import json, sys
path, ref = sys.argv[1], sys.argv[2]
index = json.load(open(path))
for m in index["manifests"]:
    m.setdefault("annotations", {})["org.opencontainers.image.ref.name"] = ref
json.dump(index, open(path, "w"), separators=(",", ":"))
PY
mkdir -p "$(dirname "$out")"
tar -C "$layout" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf "$out.tmp" .
mv "$out.tmp" "$out"
