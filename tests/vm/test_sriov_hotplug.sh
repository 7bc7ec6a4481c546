#!/bin/sh
# The harness's live path and the kernel primitives SR-IOV provisioning builds on:
# writing sriov_numvfs of the NVMe PF makes VFs appear at their fixed addresses, a VF
# binds to vfio-pci through driver_override, and QMP device_del (sent while the guest
# waits at a mark) hot-unplugs the PF through pciehp.
set -u
. "$(dirname "$0")/lib.sh"
vm_require

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dralet-vm-sriov.XXXXXX")
vm_test_cleanup() { rm -rf "$tmp"; }
cat >"$tmp/guest.sh" <<'GUEST'
pf=/sys/bus/pci/devices/0000:23:00.0
# QEMU's NVMe VFs are offline until NVMe virtualization management assigns them
# resources: nvme would bind each and drop it half a second later. Keep them unbound.
echo 0 >$pf/sriov_drivers_autoprobe
echo 3 >$pf/sriov_numvfs || echo "write to sriov_numvfs failed"
echo "numvfs $(cat $pf/sriov_numvfs)"
for i in 0 1 2; do
    vf=$(basename "$(readlink -f $pf/virtfn$i)")
    echo "vf$i $vf physfn=$(basename "$(readlink -f /sys/bus/pci/devices/$vf/physfn)")"
done
vf=/sys/bus/pci/devices/0000:23:00.1
echo vfio-pci >$vf/driver_override
[ -e $vf/driver ] && echo 0000:23:00.1 >$vf/driver/unbind
echo 0000:23:00.1 >/sys/bus/pci/drivers_probe
echo "vf0.driver $(basename "$(readlink $vf/driver)")"
echo "vf1.driver $(basename "$(readlink /sys/bus/pci/devices/0000:23:00.2/driver)")"
echo "vfio.group $(test -c /dev/vfio/$(basename "$(readlink $vf/iommu_group)") && echo yes)"
vm_mark unplug
# pciehp waits 5 s after the attention button before it removes the device.
vm_wait_gone $pf 60
echo "pf.present $(test -e $pf && echo yes || echo no)"
echo "vf0.present $(test -e $vf && echo yes || echo no)"
GUEST

vm_start "$tmp/guest.sh" || exit 1
vm_wait_mark unplug 180 || { vm_wait >/dev/null; exit 1; }
vm_qmp '{"execute": "device_del", "arguments": {"id": "nvme0"}}' || { echo "device_del failed"; exit 1; }
vm_wait >"$tmp/out" || { echo "the VM run failed"; cat "$tmp/out"; exit 1; }
cat "$tmp/out"

fail=0
expect() {
    got=$(sed -n "s/^$1 //p" "$tmp/out")
    [ "$got" = "$2" ] || { echo "FAIL: $1 is '$got', expected '$2'"; fail=1; }
}
expect numvfs 3
expect vf0 "0000:23:00.1 physfn=0000:23:00.0"
expect vf1 "0000:23:00.2 physfn=0000:23:00.0"
expect vf2 "0000:23:00.3 physfn=0000:23:00.0"
expect vf0.driver vfio-pci
expect vf1.driver ""
expect vfio.group yes
expect pf.present no
expect vf0.present no
exit $fail
