#!/bin/sh
# Whole-device VFIO passthrough on a real kernel (docs/sharing.md): with the drm
# backend's option vfio "true", `dralet run` publishes the virtio GPU (00:01.0,
# virtio-pci) also in its vfio form; `dralet ctl prepare` of a claim for that form
# moves the function to vfio-pci through driver_override + drivers_probe (the
# kernel makes /dev/vfio/<group>, the CDI spec hands it over with /dev/vfio/vfio);
# the daemon is then killed (SIGKILL) and restarted: it publishes the marked GPU's
# vfio form again, and `dralet ctl unprepare` from the checkpoint alone gives the
# function back to virtio-pci (DRM card again, driver_override cleared, the mark
# gone).
set -u
. "$(dirname "$0")/lib.sh"
vm_require

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dralet-vm-vfio.XXXXXX")
vm_test_cleanup() { rm -rf "$tmp"; }
cat >"$tmp/guest.sh" <<'GUEST'
gpu=0000:00:01.0
dev=/sys/bus/pci/devices/$gpu
form=gpu-0000-00-01-0-vfio
d=/tmp/d
sock=$d/plugins/gpu.dralet.dev/dra.sock
group=$(basename "$(readlink $dev/iommu_group)")
mkdir -p $d/store/resourceclaims/default $d/cdi
printf 'backends:\n  drm:\n    options:\n      vfio: "true"\n' >$d/config.yaml
cat >$d/store/resourceclaims/default/vm.json <<CLAIM
{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
 "metadata": {"name": "vm", "namespace": "default", "uid": "0c7f4a1e-7000-4b2d-8e3f-000000000001"},
 "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "vfio.gpu.dralet.dev"}}]}},
 "status": {"allocation": {"devices": {"results": [
   {"request": "gpu", "driver": "gpu.dralet.dev", "pool": "vm-node", "device": "$form"}]}}}}
CLAIM
start() {
    rm -f $sock
    dralet run --config $d/config.yaml --store $d/store --plugins-dir $d/plugins \
        --registry-dir $d/registry --cdi-dir $d/cdi --node-name vm-node >>$d/log 2>&1 &
    pid=$!
    vm_wait_for $sock 60
    i=0
    until grep -qs "\"$form\"" $d/store/resourceslices/*.json || [ $i -ge 300 ]; do
        sleep 0.1; i=$((i + 1))
    done
    echo "$1.published $(grep -qs "\"$form\"" $d/store/resourceslices/*.json && echo yes || echo no)"
}
echo "before.driver $(basename "$(readlink $dev/driver)")"
echo "before.card $(ls /sys/class/drm/ | grep -c '^card[0-9]*$')"
start boot
dralet ctl prepare --socket $sock --claim $d/store/resourceclaims/default/vm.json >$d/prepare.json 2>&1
echo "prepare.rc $?"
echo "prepared.driver $(basename "$(readlink $dev/driver)")"
echo "prepared.override $(cat $dev/driver_override)"
echo "prepared.node $(test -c /dev/vfio/$group && echo yes || echo no)"
echo "prepared.cdi $(cat $d/cdi/*.json | grep -c "\"/dev/vfio/$group\"") $(cat $d/cdi/*.json | grep -c '"/dev/vfio/vfio"')"
echo "prepared.mark $(ls $d/plugins/gpu.dralet.dev/ | grep -c "^gpu-vfio-$gpu\$")"
kill -9 $pid
wait $pid 2>/dev/null
start restart
dralet ctl unprepare --socket $sock --uid 0c7f4a1e-7000-4b2d-8e3f-000000000001 \
    --namespace default --name vm >$d/unprepare.out 2>&1
echo "unprepare.rc $?"
echo "after.driver $(basename "$(readlink $dev/driver)")"
echo "after.override $(cat $dev/driver_override)"
echo "after.card $(ls /sys/class/drm/ | grep -c '^card[0-9]*$')"
echo "after.mark $(ls $d/plugins/gpu.dralet.dev/ | grep -c "^gpu-vfio-")"
echo "after.cdi $(ls $d/cdi | wc -l)"
kill $pid
wait $pid 2>/dev/null
echo "--- dralet log"
grep -i "vfio\|error\|warn" $d/log | head -20
cat $d/prepare.json
GUEST

vm_run "$tmp/guest.sh" >"$tmp/out" || { echo "the VM run failed"; cat "$tmp/out"; exit 1; }
cat "$tmp/out"

fail=0
expect() {
    got=$(sed -n "s/^$1 //p" "$tmp/out")
    [ "$got" = "$2" ] || { echo "FAIL: $1 is '$got', expected '$2'"; fail=1; }
}
expect before.driver virtio-pci
expect before.card 1
expect boot.published yes
expect prepare.rc 0
expect prepared.driver vfio-pci
expect prepared.override vfio-pci
expect prepared.node yes
expect prepared.cdi "1 1"
expect prepared.mark 1
expect restart.published yes
expect unprepare.rc 0
expect after.driver virtio-pci
expect after.override "(null)"
expect after.card 1
expect after.mark 0
expect after.cdi 0
exit $fail
