#!/bin/sh
# The embedded default, end to end on a laptop (make run):
#   scripts/run-demo.sh <dralet> <board> <rundir>
# Runs `dralet run --board <board>` with every kubelet-facing directory under
# <rundir> and the file store in <rundir>/store, after putting the example
# claims (deploy/examples/claims) where the file store reads claims and
# printing how to prepare one by hand. The board itself is materialized by
# dralet run (into a temporary directory it removes on exit). Ctrl-C stops it.
set -eu
[ $# -eq 3 ] || { echo "usage: $0 <dralet> <board.yaml> <rundir>" >&2; exit 2; }
dralet=$1 board=$2 run=$3
here=$(cd "$(dirname "$0")/.." && pwd)
examples="$here/deploy/examples/claims"
node=demo-node

mkdir -p "$run/store/resourceclaims" "$run/plugins_registry" "$run/plugins" "$run/cdi"
run=$(cd "$run" && pwd)

# The example claims, as the file store expects them: resourceclaims/<ns>/<name>.yaml
for f in "$examples"/*.yaml; do
    ns=$(awk '/^metadata:/ {m = 1; next} m && /^  namespace:/ {print $2; exit}' "$f")
    name=$(awk '/^metadata:/ {m = 1; next} m && /^  name:/ {print $2; exit}' "$f")
    [ -n "$ns" ] && [ -n "$name" ] || continue
    mkdir -p "$run/store/resourceclaims/$ns"
    cp "$f" "$run/store/resourceclaims/$ns/$name.yaml"
done

cat <<EOF_INFO
dralet demo on $(basename "$board") (node "$node")
  registration sockets  $run/plugins_registry/<driver>-reg.sock
  DRA sockets           $run/plugins/<driver>/dra.sock   (gpu.dralet.dev, net.dralet.dev, ...)
  checkpoints           $run/plugins/<driver>/checkpoint.json
  CDI specs             $run/cdi
  ResourceSlices        $run/store/resourceslices
  claims (file store)   $run/store/resourceclaims/<namespace>/<name>.yaml

Try a claim by hand from another shell (examples in deploy/examples/claims):
  $dralet ctl prepare --socket $run/plugins/gpu.dralet.dev/dra.sock \\
      --claim $examples/gpu.yaml
  cat $run/cdi/k8s.gpu.dralet.dev-gpu_*.json
  $dralet ctl unprepare --socket $run/plugins/gpu.dralet.dev/dra.sock \\
      --claim $examples/gpu.yaml
  $dralet ctl prepare --socket $run/plugins/net.dralet.dev/dra.sock \\
      --claim $examples/rdma.yaml
Ctrl-C stops the agent and removes its sockets; prepared claims stay in the
checkpoints and come back on the next start.

EOF_INFO

exec "$dralet" run --board "$board" --store "$run/store" \
    --registry-dir "$run/plugins_registry" --plugins-dir "$run/plugins" \
    --cdi-dir "$run/cdi" --node-name "$node"
