#!/bin/sh
# SR-IOV VFs on demand on a real kernel (docs/sriov.md, "SR-IOV VFs on demand"), with the
# daemon (`dralet run`, file store) in the VM and claims prepared through its kubelet
# socket (`dralet ctl prepare`):
#   - PF nvme1 (0000:01:00.0, sriov_totalvfs 4) starts with 1 VF (made before the daemon)
#     under a policy with onDemand: true, numVfs: 3, vfDriver: vfio-pci: the daemon does
#     not change the count, and publishes vf-0000-01-00-0-vf0..vf2 with the counter set
#     vfs-0000-01-00-0;
#   - a claim for vf0 (made) takes it: no count change, the VF on vfio-pci, its
#     /dev/vfio/<group> in the CDI spec;
#   - a claim for vf2 (not made) while vf0 is prepared: refused with the reason (making
#     it would re-create vf0), the count untouched;
#   - after vf0's unprepare, the claim for vf2 makes the VFs (sriov_numvfs 0, then 3),
#     binds VF 2 to vfio-pci and hands over its group; its unprepare gives the PF its 1
#     VF back and removes the ledger; meanwhile `dralet sriov status` names the claim
#     holding VF 2;
#   - crash safety: SIGKILL right after the prepare made the VFs (DRALET_CRASH_AT=
#     prepare-device) and a restart: the rollback gives the count back from the undo state.
set -u
: "${VM_TIMEOUT:=360}"
. "$(dirname "$0")/lib.sh"
vm_require

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dralet-vm-vfod.XXXXXX")
vm_test_cleanup() { rm -rf "$tmp"; }
cat >"$tmp/guest.sh" <<'GUEST'
. /lib/vm/guest.sh
T=/tmp/t
PF=0000:01:00.0
SOCK=$T/plugins/sriov.dralet.dev/dra.sock
LEDGER=$T/plugins/sriov.dralet.dev/sriov-on-demand-$PF
fails=0
mkdir -p $T/store/resourceclaims/default $T/plugins $T/registry $T/cdi

now() { cut -d' ' -f1 /proc/uptime; }
mark_time() { echo "time $1 $(awk -v a="$2" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')"; }
ok() { echo "ok $1"; }
bad() { echo "FAIL $1: $2"; fails=$((fails + 1)); }
check() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1" "got '$2', want '$3'"; fi; }
contains() { if grep -q -- "$2" "$3"; then ok "$1"; else bad "$1" "'$2' not in $3"; tail -n 20 "$3"; fi; }
wait_until() {
    n=$(($1 * 5)); shift
    while ! "$@" >/dev/null 2>&1; do
        [ $n -le 0 ] && return 1
        n=$((n - 1)); sleep 0.2
    done
}
numvfs() { cat /sys/bus/pci/devices/$PF/sriov_numvfs 2>/dev/null || echo gone; }
driver_of() { [ -e /sys/bus/pci/devices/$1/driver ] && basename "$(readlink /sys/bus/pci/devices/$1/driver)" || echo none; }
group_of() { basename "$(readlink /sys/bus/pci/devices/$1/iommu_group)"; }
published() { cat $T/store/resourceslices/*.json 2>/dev/null | grep -o "\"$1\"" | head -n 1; }
is_published() { [ -n "$(published $1)" ]; }
spec_of() { ls $T/cdi/*$1*.json 2>/dev/null | head -n 1; }

cat >$T/config.yaml <<EOF
sriov:
  policies:
  - name: nvme-on-demand
    pfSelector: {pciAddresses: ["$PF"]}
    onDemand: true
    numVfs: 3
    vfDriver: vfio-pci
EOF

# claim NAME UID DEVICE: allocated DEVICE, a VfConfig without a driver (the policy's)
claim() {
    cat >$T/store/resourceclaims/default/$1.json <<EOF
{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
 "metadata": {"name": "$1", "namespace": "default", "uid": "$2"},
 "spec": {"devices": {"requests": [{"name": "vf", "exactly": {"deviceClassName": "sriov.dralet.dev"}}]}},
 "status": {"allocation": {"devices": {
   "results": [{"request": "vf", "driver": "sriov.dralet.dev", "pool": "vm", "device": "$3"}],
   "config": [{"source": "FromClaim", "requests": ["vf"], "opaque": {"driver": "sriov.dralet.dev",
     "parameters": {"apiVersion": "sriov.dralet.dev/v1alpha1", "kind": "VfConfig"}}}]}}}}
EOF
}
prepare() { dralet ctl prepare --socket $SOCK --uid "$2" --namespace default --name "$1" >$T/out.json 2>&1; }
unprepare() { dralet ctl unprepare --socket $SOCK --uid "$2" --namespace default --name "$1" >$T/out.json 2>&1; }
start_daemon() {
    "$@" dralet run --config $T/config.yaml --store $T/store --registry-dir $T/registry \
        --plugins-dir $T/plugins --cdi-dir $T/cdi --node-name vm >>$T/log 2>&1 &
    pid=$!
    wait_until 60 test -S $SOCK && wait_until 30 grep -q "serving" $T/log || {
        bad daemon-start "no socket"; tail -n 30 $T/log; }
}
stop_daemon() { kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null; rm -f $SOCK; }

UIDA=0c7f4a1e-2000-4b2d-8e3f-00000000000a
UIDB=0c7f4a1e-2000-4b2d-8e3f-00000000000b
VF0=0000:01:00.1
VF2=0000:01:00.3
claim od-a $UIDA vf-0000-01-00-0-vf0
claim od-b $UIDB vf-0000-01-00-0-vf2

# the PF's own count before dralet: 1 VF (autoprobe off: QEMU's NVMe VFs stay offline)
echo 0 >/sys/bus/pci/devices/$PF/sriov_drivers_autoprobe
echo 1 >/sys/bus/pci/devices/$PF/sriov_numvfs
start_daemon
check start.numvfs "$(numvfs)" 1
for d in vf-0000-01-00-0-vf0 vf-0000-01-00-0-vf1 vf-0000-01-00-0-vf2; do
    wait_until 10 is_published $d
    check published.$d "$(published $d)" "\"$d\""
done
check published.counter-set "$(published vfs-0000-01-00-0)" '"vfs-0000-01-00-0"'

# ---- a made VF: taken, no count change ----
t=$(now)
prepare od-a $UIDA || { bad prepare.a "$(cat $T/out.json)"; tail -n 20 $T/log; }
mark_time prepare-taking-made-vf "$t"
check a.numvfs "$(numvfs)" 1
check a.driver "$(driver_of $VF0)" vfio-pci
spec=$(spec_of $UIDA)
[ -n "$spec" ] && contains a.cdi-group "\"/dev/vfio/$(group_of $VF0)\"" "$spec" || bad a.spec "no spec"

# ---- a VF not made while another VF of the PF is prepared: refused ----
if prepare od-b $UIDB; then bad b.refused "prepared"; else ok b.refused; fi
contains b.reason "VF 2 does not exist yet" $T/out.json
contains b.reason-claim "prepared for claim default/od-a" $T/out.json
check b.numvfs-untouched "$(numvfs)" 1
check a.driver-untouched "$(driver_of $VF0)" vfio-pci

unprepare od-a $UIDA || bad unprepare.a "$(cat $T/out.json)"
check a.unprepared.numvfs "$(numvfs)" 1
[ -e $LEDGER ] && bad a.ledger "left: $(cat $LEDGER)" || ok a.ledger-removed

# ---- now the claim makes the VFs (0, then 3) and gets VF 2 ----
t=$(now)
prepare od-b $UIDB || { bad prepare.b "$(cat $T/out.json)"; tail -n 20 $T/log; }
mark_time prepare-making-vfs "$t"
check b.numvfs "$(numvfs)" 3
check b.driver "$(driver_of $VF2)" vfio-pci
check b.override "$(cat /sys/bus/pci/devices/$VF2/driver_override)" vfio-pci
spec=$(spec_of $UIDB)
[ -n "$spec" ] && contains b.cdi-group "\"/dev/vfio/$(group_of $VF2)\"" "$spec" || bad b.spec "no spec"
[ -n "$spec" ] && contains b.cdi-address "PCI_ADDRESS=$VF2" "$spec"
contains b.ledger "original 1" $LEDGER
contains b.ledger-claim "vf 2 $UIDB default/od-b" $LEDGER
contains b.log "3 VFs made on demand for claim default/od-b" $T/log
# the VF it took is the claim's for the policy applier and status (undo pciAddress)
dralet sriov status --config $T/config.yaml --plugins-dir $T/plugins >$T/status.txt 2>&1
contains b.status-claim "$VF2 .*prepared for claim default/od-b" $T/status.txt
contains b.status-on-demand "on demand: claims' prepares make up to 3 VFs" $T/status.txt

# ---- unprepare returns it: the PF has its 1 VF again ----
t=$(now)
unprepare od-b $UIDB || bad unprepare.b "$(cat $T/out.json)"
mark_time unprepare-giving-back "$t"
check b.unprepared.numvfs "$(numvfs)" 1
[ -e $LEDGER ] && bad b.ledger "left: $(cat $LEDGER)" || ok b.ledger-removed
[ -z "$(spec_of $UIDB)" ] && ok b.cdi-removed || bad b.cdi-removed "spec left"
contains b.log-back "sriov_numvfs 1 again" $T/log
stop_daemon

# ---- crash right after the prepare made the VFs: the restart rolls it back ----
start_daemon env DRALET_CRASH_AT=prepare-device
prepare od-b $UIDB && bad crash.prepare "the daemon did not crash"
wait $pid 2>/dev/null
check crash.left-made "$(numvfs)" 3
rm -f $SOCK
start_daemon
wait_until 20 grep -q "rolled back" $T/log
contains crash.log "rolled back" $T/log
check crash.rolled-back "$(numvfs)" 1
[ -e $LEDGER ] && bad crash.ledger "left: $(cat $LEDGER)" || ok crash.ledger-removed
stop_daemon

if [ $fails -ne 0 ]; then
    echo "--- daemon log (last 60 lines)"
    tail -n 60 $T/log
fi
echo "failures $fails"
[ $fails -eq 0 ]
GUEST

NVME1_ARGS="-device pcie-root-port,id=rp2,bus=pcie.0,chassis=3,slot=3,addr=0x4
-device nvme-subsys,id=s1
-device nvme,id=nvme1,bus=rp2,addr=0x0,serial=dralet0002,subsys=s1,sriov_max_vfs=4,max_ioqpairs=12,msix_qsize=24,sriov_vq_flexible=8,sriov_vi_flexible=4"
# shellcheck disable=SC2086  # a list of QEMU arguments
vm_start "$tmp/guest.sh" $NVME1_ARGS || exit 1
vm_wait >"$tmp/out"
rc=$?
cat "$tmp/out"
echo "VM wall time: ${VM_SECONDS}s"
[ $rc -eq 0 ] || exit 1
grep -q '^FAIL' "$tmp/out" && exit 1
grep -q '^failures 0$' "$tmp/out" || exit 1
exit 0
