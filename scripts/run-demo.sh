#!/bin/sh
# The embedded default, end to end on a laptop (make run):
#   scripts/run-demo.sh <dralet> <board> <rundir> [<fake-nvml.so>]
# Materializes the board into <rundir>/node and runs `dralet run` on it with
# every kubelet-facing directory under <rundir> and the file store in
# <rundir>/store, after putting the example claims (deploy/examples/claims)
# where the file store reads claims and printing how to prepare one by hand.
# With the test double of NVML (built by `make test-libs`) NVIDIA GPUs also get
# their NVML facts and MIG devices, answered from the board's nvml.json.
# Ctrl-C stops it.
set -eu
[ $# -ge 3 ] || { echo "usage: $0 <dralet> <board.yaml> <rundir> [fake-nvml.so]" >&2; exit 2; }
dralet=$1 board=$2 run=$3 fake_nvml=${4:-}
here=$(cd "$(dirname "$0")/.." && pwd)
examples="$here/deploy/examples/claims"
node=demo-node

mkdir -p "$run/store/resourceclaims" "$run/plugins_registry" "$run/plugins" "$run/cdi"
run=$(cd "$run" && pwd)
# One demo per run directory, decided before anything in it changes: the
# lock is taken here and held by the agent (exec keeps fd 9 open) for its life.
exec 9>"$run/demo.lock"
if ! flock -n 9; then
    echo "$0: another demo is running in $run (it holds $run/demo.lock); stop it first" >&2
    exit 1
fi
rm -rf "$run/node"
"$dralet" board materialize "$board" "$run/node" >/dev/null
config="$run/config.yaml"
: >"$config"
nvml_note=""
nvml_env=""
if [ -n "$fake_nvml" ] && [ -f "$fake_nvml" ] && [ -f "$run/node/nvml.json" ]; then
    # sharing: the demo's GPUs are shareable by memory (docs/sharing.md, opt-in)
    printf 'backends:\n  nvidia:\n    options:\n      nvmlLibrary: "%s"\n      sharing: "true"\n' \
        "$fake_nvml" >"$config"
    export FAKE_NVML_DATA="$run/node/nvml.json"
    nvml_env="FAKE_NVML_DATA=$FAKE_NVML_DATA "
    nvml_note="  NVML                  simulated from $run/node/nvml.json (MIG devices included)
"
fi

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
  simulated node        $run/node/{sys,dev,proc}
$nvml_note  registration sockets  $run/plugins_registry/<driver>-reg.sock
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
  $nvml_env$dralet discover --sysfs-root $run/node/sys --dev-root $run/node/dev \\
      --proc-root $run/node/proc --config $config
Ctrl-C stops the agent and removes its sockets; prepared claims stay in the
checkpoints and come back on the next start.

EOF_INFO

exec "$dralet" run --sysfs-root "$run/node/sys" --dev-root "$run/node/dev" \
    --proc-root "$run/node/proc" --config "$config" --store "$run/store" \
    --registry-dir "$run/plugins_registry" --plugins-dir "$run/plugins" \
    --cdi-dir "$run/cdi" --node-name "$node"
