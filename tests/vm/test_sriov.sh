#!/bin/sh
# SR-IOV provisioning and VF prepare on a real kernel (docs/sriov.md), with the daemon
# (`dralet run`, file store) in the VM:
#   - a policy for the NVMe PFs with 3 VFs: the VFs appear before the first discovery
#     and are published (file store);
#   - a claim for a VF with VfConfig driver vfio-pci: the VF is bound to vfio-pci and
#     the claim's CDI spec holds /dev/vfio/<its group>; unprepare puts it back on its
#     previous driver (none: the policy's vfDriver);
#   - the VF of the PF behind the switch shares its IOMMU group with the PF (bound to
#     nvme): vfio is refused with the reason;
#   - a policy of 0 VFs while a VF is prepared (config file changed, watched): refused
#     with a clear error for that PF, the other PF goes to 0 VFs and its VFs are
#     withdrawn; after unprepare, SIGHUP applies it; back to 3 VFs in one slice update;
#   - crash safety: SIGKILL after the VF moved to vfio-pci (DRALET_CRASH_AT) and a
#     restart roll it back; SIGKILL after the claim completed keeps it;
#   - QMP device_del of the PF behind the switch: its VFs are withdrawn; device_add of a
#     new PF there: the policy gives it its VFs and they are published.
#
# Topology: the harness's NVMe PF nvme0 (0000:23:00.0, behind the switch, no ACS: PF,
# VFs and downstream port in one IOMMU group), plus a second SR-IOV NVMe PF nvme1 on a
# root port of pcie.0 (0000:01:00.0; the root port isolates, so each VF has its own
# group). QEMU's NVMe VFs do not work with the nvme driver, so the policy keeps VFs
# unbound (vfDriver: none) and claims bind them to vfio-pci.
set -u
: "${VM_TIMEOUT:=420}"
# Under TCG on a busy host the kernel's IO-APIC timer check can fail and, with interrupt
# remapping on, panic at boot ("timer doesn't work through Interrupt-remapped IO-APIC").
# no_timer_check is in the harness for every VM (a loaded host once made the
# boot-time IO-APIC timer check fail)
. "$(dirname "$0")/lib.sh"
vm_require

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dralet-vm-sriov.XXXXXX")
vm_test_cleanup() { rm -rf "$tmp"; }
cat >"$tmp/guest.sh" <<'GUEST'
. /lib/vm/guest.sh
T=/tmp/t
NVME0=0000:23:00.0
NVME1=0000:01:00.0
SOCK=$T/plugins/sriov.dralet.dev/dra.sock
fails=0
mkdir -p $T/store/resourceclaims/default $T/plugins $T/registry $T/cdi

now() { cut -d' ' -f1 /proc/uptime; }
T0=$(now)
mark_time() { echo "time $1 $(awk -v a="$2" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')"; }
ok() { echo "ok $1"; }
bad() { echo "FAIL $1: $2"; fails=$((fails + 1)); }
check() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1" "got '$2', want '$3'"; fi; }
contains() { if grep -q -- "$2" "$3"; then ok "$1"; else bad "$1" "'$2' not in $3"; tail -n 20 "$3"; fi; }
# wait_until SECS CMD...: polls CMD every 0.2 s
wait_until() {
    n=$(($1 * 5)); shift
    while ! "$@" >/dev/null 2>&1; do
        [ $n -le 0 ] && return 1
        n=$((n - 1)); sleep 0.2
    done
}
numvfs() { cat /sys/bus/pci/devices/$1/sriov_numvfs 2>/dev/null || echo gone; }
numvfs_is() { [ "$(numvfs $1)" = "$2" ]; }
driver_of() { [ -e /sys/bus/pci/devices/$1/driver ] && basename "$(readlink /sys/bus/pci/devices/$1/driver)" || echo none; }
group_of() { basename "$(readlink /sys/bus/pci/devices/$1/iommu_group)"; }
published() { cat $T/store/resourceslices/*.json 2>/dev/null | grep -o "\"$1\"" | head -n 1; }
slice_updates() { grep -c "slices of sriov.dralet.dev" $T/log; }
is_published() { [ -n "$(published $1)" ]; }
not_published() { [ -z "$(published $1)" ]; }

policy() {
    cat >$T/config.new <<EOF
backends:
  sriov:
    options:
      pfs: "1b36:0010"
sriov:
  policies:
  - name: nvme-vfs
    pfSelector: {vendor: "1b36", device: "0010"}
    numVfs: $1
    vfDriver: none
EOF
    mv $T/config.new $T/config.yaml
}

# claim NAME UID DEVICE: a claim allocated to DEVICE with VfConfig driver vfio-pci
claim() {
    cat >$T/store/resourceclaims/default/$1.json <<EOF
{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
 "metadata": {"name": "$1", "namespace": "default", "uid": "$2"},
 "spec": {"devices": {"requests": [{"name": "vf", "exactly": {"deviceClassName": "sriov.dralet.dev"}}]}},
 "status": {"allocation": {"devices": {
   "results": [{"request": "vf", "driver": "sriov.dralet.dev", "pool": "vm", "device": "$3"}],
   "config": [{"source": "FromClaim", "requests": ["vf"], "opaque": {"driver": "sriov.dralet.dev",
     "parameters": {"apiVersion": "sriov.dralet.dev/v1alpha1", "kind": "VfConfig", "driver": "vfio-pci"}}}]}}}}
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

UID1=0c7f4a1e-1000-4b2d-8e3f-000000000001
UID2=0c7f4a1e-1000-4b2d-8e3f-000000000002
UID3=0c7f4a1e-1000-4b2d-8e3f-000000000003
VF=0000:01:00.1
claim vf-vfio $UID1 vf-0000-01-00-1
claim vf-shared $UID2 vf-0000-23-00-1
claim vf-crash $UID3 vf-0000-01-00-2

# ---- a policy of 3 VFs: applied before the first discovery, published with it ----
policy 3
t=$(now)
start_daemon
mark_time start-with-policy "$t"
check nvme0.numvfs "$(numvfs $NVME0)" 3
check nvme1.numvfs "$(numvfs $NVME1)" 3
check vf.autoprobe-off "$(cat /sys/bus/pci/devices/$NVME1/sriov_drivers_autoprobe)" 0
check vf.unbound "$(driver_of $VF)" none
for d in vf-0000-23-00-1 vf-0000-23-00-3 vf-0000-01-00-1 vf-0000-01-00-3; do
    wait_until 10 is_published $d
    check published.$d "$(published $d)" "\"$d\""
done
check slice-updates.start "$(slice_updates)" 1

# ---- a VF on vfio-pci for a claim ----
t=$(now)
prepare vf-vfio $UID1 || { bad prepare.vfio "$(cat $T/out.json)"; tail -n 20 $T/log; }
mark_time prepare-vfio "$t"
check prepared.driver "$(driver_of $VF)" vfio-pci
g=$(group_of $VF)
spec=$(ls $T/cdi/*$UID1*.json 2>/dev/null | head -n 1)
[ -n "$spec" ] && contains cdi.group "\"/dev/vfio/$g\"" "$spec" || bad cdi.spec "no spec for $UID1"
[ -n "$spec" ] && contains cdi.container '"/dev/vfio/vfio"' "$spec"
[ -n "$spec" ] && contains cdi.env-address "PCI_ADDRESS=$VF" "$spec"
[ -n "$spec" ] && contains cdi.env-group "IOMMU_GROUP=$g" "$spec"
test -c /dev/vfio/$g && ok vfio.node || bad vfio.node "/dev/vfio/$g is missing"

# the VF behind the switch shares its group with the PF on nvme
if prepare vf-shared $UID2; then bad shared.refused "prepared"; else ok shared.refused; fi
contains shared.reason "also holds $NVME0 (bound to nvme)" $T/out.json
check shared.untouched "$(driver_of 0000:23:00.1)" none

dralet sriov status --config $T/config.yaml --plugins-dir $T/plugins >$T/status.txt 2>&1
contains status.claim "prepared for claim default/vf-vfio (sriov.dralet.dev)" $T/status.txt
contains status.pf "$NVME1 .* nvme-vfs" $T/status.txt

# ---- 0 VFs while one is prepared: the config file changes (watched) ----
before=$(slice_updates)
t=$(now)
policy 0
wait_until 20 numvfs_is $NVME0 0 || bad watch "nvme0 still has $(numvfs $NVME0) VFs"
mark_time config-change-applied "$t"
wait_until 10 grep -q "VF 0 ($VF) is prepared for claim default/vf-vfio" $T/log
contains shrink.refused "PF $NVME1: policy nvme-vfs wants 0 VFs, but VF 0 ($VF) is prepared for claim default/vf-vfio" $T/log
check shrink.kept "$(numvfs $NVME1)" 3
check shrink.vf-kept "$(driver_of $VF)" vfio-pci
wait_until 10 not_published vf-0000-23-00-1
check withdrawn.nvme0 "$(published vf-0000-23-00-1)" ""
check still-published.nvme1 "$(published vf-0000-01-00-1)" '"vf-0000-01-00-1"'
check slice-updates.shrink "$(($(slice_updates) - before))" 1

# ---- unprepare: back to no driver; then SIGHUP applies the 0 ----
t=$(now)
unprepare vf-vfio $UID1 || bad unprepare "$(cat $T/out.json)"
mark_time unprepare "$t"
check unprepared.driver "$(driver_of $VF)" none
check unprepared.override "$(cat /sys/bus/pci/devices/$VF/driver_override)" "(null)"
[ -z "$(ls $T/cdi/*$UID1* 2>/dev/null)" ] && ok cdi.removed || bad cdi.removed "spec left"
kill -HUP $pid
wait_until 20 numvfs_is $NVME1 0 || bad sighup "nvme1 still has $(numvfs $NVME1) VFs"
wait_until 10 not_published vf-0000-01-00-1
check withdrawn.nvme1 "$(published vf-0000-01-00-1)" ""

# ---- back to 3 VFs (SIGHUP): both PFs' VFs in one slice update ----
before=$(slice_updates)
t=$(now)
policy 3
kill -HUP $pid
wait_until 20 is_published vf-0000-01-00-3 && wait_until 5 is_published vf-0000-23-00-3
mark_time sighup-3-vfs-published "$t"
check regrow.nvme0 "$(numvfs $NVME0)" 3
check regrow.nvme1 "$(numvfs $NVME1)" 3
sleep 1
check slice-updates.regrow "$(($(slice_updates) - before))" 1
stop_daemon

# ---- crash safety ----
# killed after the VF moved to vfio-pci (the undo state on disk): rolled back at restart
start_daemon env DRALET_CRASH_AT=prepare-device
claim vf-crash $UID3 vf-0000-01-00-2
prepare vf-crash $UID3 && bad crash.prepare "the daemon did not crash"
wait $pid 2>/dev/null
check crash.left-on-vfio "$(driver_of 0000:01:00.2)" vfio-pci
rm -f $SOCK
t=$(now)
start_daemon
mark_time restart-rollback "$t"
check crash.rolled-back "$(driver_of 0000:01:00.2)" none
contains crash.log "rolled back" $T/log
stop_daemon
# killed after the claim completed: the VF stays the claim's
start_daemon env DRALET_CRASH_AT=prepare-completed
prepare vf-crash $UID3
wait $pid 2>/dev/null
rm -f $SOCK
start_daemon
check completed.kept "$(driver_of 0000:01:00.2)" vfio-pci
prepare vf-crash $UID3 && ok completed.prepared-again || bad completed.prepared-again "$(cat $T/out.json)"
unprepare vf-crash $UID3 && check completed.unprepared "$(driver_of 0000:01:00.2)" none

# ---- hot-unplug of the PF behind the switch, then a new PF in its slot ----
before=$(slice_updates)
vm_mark unplug
t=$(now)
vm_wait_gone /sys/bus/pci/devices/$NVME0 60 || bad unplug "the PF is still there"
wait_until 20 not_published vf-0000-23-00-1
mark_time unplug-withdrawn "$t"
check unplug.withdrawn "$(published vf-0000-23-00-1)" ""
check unplug.other-kept "$(published vf-0000-01-00-1)" '"vf-0000-01-00-1"'
vm_mark plug
t=$(now)
vm_wait_for /sys/bus/pci/devices/$NVME0 60 || bad plug "no PF appeared"
wait_until 30 is_published vf-0000-23-00-3
mark_time plug-published "$t"
check plug.numvfs "$(numvfs $NVME0)" 3
check plug.published "$(published vf-0000-23-00-3)" '"vf-0000-23-00-3"'
stop_daemon

mark_time total "$T0"
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
vm_wait_mark unplug 300 || { vm_wait >"$tmp/out"; cat "$tmp/out"; exit 1; }
vm_qmp '{"execute": "device_del", "arguments": {"id": "nvme0"}}' >/dev/null ||
    { echo "device_del failed"; vm_wait >/dev/null; exit 1; }
vm_wait_mark plug 120 || { vm_wait >"$tmp/out"; cat "$tmp/out"; exit 1; }
# pciehp needs the slot empty (the removal finished) before it takes a new device; a
# controller joining subsystem s0 must carry its serial
sleep 2
vm_qmp '{"execute": "device_add", "arguments": {"driver": "nvme", "id": "nvme2", "bus": "dsp1",
    "serial": "dralet0001", "subsys": "s0", "sriov_max_vfs": 4, "max_ioqpairs": 12,
    "msix_qsize": 24, "sriov_vq_flexible": 8, "sriov_vi_flexible": 4}}' >"$tmp/qmp" ||
    { echo "device_add failed: $(cat "$tmp/qmp")"; }
vm_wait >"$tmp/out"
rc=$?
cat "$tmp/out"
echo "VM wall time: ${VM_SECONDS}s"
[ $rc -eq 0 ] || exit 1
grep -q '^FAIL' "$tmp/out" && exit 1
grep -q '^failures 0$' "$tmp/out" || exit 1
exit 0
