# shellcheck shell=sh
# The real-kernel VM harness: boots Debian's linux-image-amd64 under QEMU (TCG) on the
# topology of README.md, with the initramfs of initramfs.sh, runs one guest script inside
# and hands back its output and exit status.
#
#   . "$(dirname "$0")/lib.sh"         # also sets an EXIT trap that stops QEMU
#   vm_require                         # exit 77 (skip) with a reason when the VM can't run
#   vm_run guest.sh [qemu args] >out   # boot, run guest.sh as root in the VM, power off;
#                                      # stdout: the script's stdout; status: its status
#
# For tests that act on the running VM (QMP device_del, ...):
#   vm_start guest.sh [qemu args]      # boot in the background
#   vm_wait_mark NAME [secs]           # until the guest ran `vm_mark NAME`
#   vm_qmp '{"execute":"device_del","arguments":{"id":"nvme0"}}'
#   vm_wait >out                       # until power-off; same result as vm_run
#
# Environment (all optional): DRALET (binary to carry; default $BUILD/dralet), BUILD (the
# cache lives in $BUILD/vm), VM_KVER (kernel version), VM_TIMEOUT (seconds per VM, default
# 240), VM_FILES (host files copied to /test/ in the guest), VM_APPEND (kernel arguments),
# VM_KEEP=1 (keep the run directory). Names here start with vm_/VM_.

VM_LIB_DIR=$(cd "$(dirname "${VM_LIB_SELF:-$0}")" && pwd)
PATH=$PATH:/usr/sbin:/sbin
: "${BUILD:=build}"
case $BUILD in /*) ;; *) BUILD=$(pwd)/$BUILD ;; esac
: "${DRALET:=$BUILD/dralet}"
: "${VM_TIMEOUT:=240}"
# shellcheck disable=SC2034  # used by initramfs.sh
VM_CACHE=$BUILD/vm
VM_DIR=
VM_PID=
. "$VM_LIB_DIR/initramfs.sh"

vm_log() { echo "vm: $*" >&2; }
vm_skip() { echo "$*"; exit 77; }

# Exits 77 with the reason as the last line when this machine cannot run the VM.
vm_require() {
    for vm_t in qemu-system-x86_64 cpio modprobe ldd timeout sha256sum python3 rdma; do
        command -v "$vm_t" >/dev/null 2>&1 || vm_skip "$vm_t is not installed (make deps)"
    done
    [ -x /bin/busybox ] || vm_skip "busybox-static is not installed (make deps)"
    VM_KVER=$(vm_kernel_version)
    [ -n "$VM_KVER" ] || vm_skip "no kernel in /boot with modules (linux-image-amd64; make deps)"
    [ -r "/boot/vmlinuz-$VM_KVER" ] || vm_skip "/boot/vmlinuz-$VM_KVER is not readable"
    [ -x "$DRALET" ] || vm_skip "no dralet binary at $DRALET (run make)"
}

# The emulated machine; README.md lists the addresses it produces. Fixed ids, buses and
# slots keep those addresses stable; tests refer to the ids (device_del nvme0).
vm_qemu_args() {
    cat <<ARGS
-machine q35,kernel-irqchip=split -accel tcg -cpu qemu64 -smp 2 -m 512M
-object memory-backend-ram,id=mem0,size=256M -object memory-backend-ram,id=mem1,size=256M
-numa node,nodeid=0,cpus=0,memdev=mem0 -numa node,nodeid=1,cpus=1,memdev=mem1
-nodefaults -no-user-config -display none -no-reboot
-device intel-iommu,intremap=on
-device virtio-gpu-pci,id=gpu0,bus=pcie.0,addr=0x1
-netdev user,id=net0,restrict=on,ipv6=off
-device e1000e,id=nic0,netdev=net0,bus=pcie.0,addr=0x2,mac=52:54:00:12:34:56
-device pxb-pcie,id=pxb1,bus_nr=0x20,numa_node=1,bus=pcie.0,addr=0x3
-device pcie-root-port,id=rp1,bus=pxb1,chassis=1,slot=1,addr=0x0
-device x3130-upstream,id=usp1,bus=rp1,addr=0x0
-device xio3130-downstream,id=dsp1,bus=usp1,chassis=2,slot=0,addr=0x0
-device nvme-subsys,id=s0
-device nvme,id=nvme0,bus=dsp1,addr=0x0,serial=dralet0001,subsys=s0,sriov_max_vfs=4,max_ioqpairs=12,msix_qsize=24,sriov_vq_flexible=8,sriov_vi_flexible=4
ARGS
}

# Boots the VM in the background with guest script $1; further arguments go to QEMU.
# Console (ttyS0) and results (ttyS1) go to files in the run directory $VM_DIR.
vm_start() {
    [ -r "$1" ] || { vm_log "no guest script $1"; return 2; }
    vm_base=$(vm_initramfs) || return 2
    VM_DIR=$(mktemp -d "${TMPDIR:-/tmp}/dralet-vm.XXXXXX")
    # The run's own files ride in a second cpio archive; the kernel unpacks both.
    mkdir -p "$VM_DIR/extra/test"
    cp "$1" "$VM_DIR/extra/test/script"
    shift
    for vm_f in ${VM_FILES:-}; do cp "$vm_f" "$VM_DIR/extra/test/"; done
    (cd "$VM_DIR/extra" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$VM_DIR/extra.cpio"
    cat "$vm_base" "$VM_DIR/extra.cpio" >"$VM_DIR/initrd"
    : >"$VM_DIR/console.log"
    : >"$VM_DIR/result.log"
    VM_START_TIME=$(date +%s)
    # shellcheck disable=SC2046  # the topology is a list of words
    timeout -k 10 "$VM_TIMEOUT" qemu-system-x86_64 $(vm_qemu_args) \
        -kernel "/boot/vmlinuz-$VM_KVER" -initrd "$VM_DIR/initrd" \
        -append "console=ttyS0 intel_iommu=on panic=-1 loglevel=4 no_timer_check ${VM_APPEND:-}" \
        -serial "file:$VM_DIR/console.log" -serial "file:$VM_DIR/result.log" \
        -qmp "unix:$VM_DIR/qmp.sock,server=on,wait=off" -pidfile "$VM_DIR/qemu.pid" \
        "$@" </dev/null >"$VM_DIR/qemu.log" 2>&1 &
    VM_PID=$!
}

# Waits until the guest script printed the mark NAME (guest.sh: vm_mark NAME).
vm_wait_mark() {
    vm_i=$(( ${2:-$VM_TIMEOUT} * 5 ))
    until tr -d '\r' <"$VM_DIR/result.log" | grep -qxF "@@VM-MARK $1"; do
        kill -0 "$VM_PID" 2>/dev/null || { vm_log "the VM ended before mark $1"; return 1; }
        [ "$vm_i" -le 0 ] && { vm_log "timed out waiting for mark $1"; return 1; }
        vm_i=$((vm_i - 1))
        sleep 0.2
    done
}

# Sends one QMP command (JSON text) to the running VM and prints QEMU's reply; fails
# when QEMU answers with an error.
vm_qmp() {
    python3 "$VM_LIB_DIR/qmp.py" "$VM_DIR/qmp.sock" "$1"
}

# Waits for the VM to power off; prints the guest script's stdout and returns its exit
# status, or 124 on timeout and 125 when the guest reported none. Then removes the run
# directory, so vm_run also works inside $(...).
vm_wait() {
    wait "$VM_PID"
    vm_rc=$?
    VM_PID=
    VM_SECONDS=$(( $(date +%s) - VM_START_TIME ))
    vm_log "the VM ran for ${VM_SECONDS}s"
    # Between the markers; output without a final newline leaves the exit marker at
    # the end of its last line.
    : >"$VM_DIR/status"
    tr -d '\r' <"$VM_DIR/result.log" | awk -v status="$VM_DIR/status" '
        !begun { begun = ($0 == "@@VM-BEGIN"); next }
        /^@@VM-MARK / { next }
        match($0, /@@VM-EXIT [0-9]+$/) {
            printf "%s", substr($0, 1, RSTART - 1)
            print substr($0, RSTART + 10) >status
            exit
        }
        { print }'
    vm_status=$(cat "$VM_DIR/status")
    if [ -n "$vm_status" ]; then
        [ "$vm_status" -eq 0 ] || { vm_log "the guest script exited with $vm_status"; vm_dump; }
    elif [ $vm_rc -eq 124 ] || [ $vm_rc -eq 137 ]; then
        vm_log "the VM timed out after ${VM_TIMEOUT}s"; vm_dump; vm_status=124
    else
        vm_log "the guest reported no exit status (qemu exit $vm_rc)"; vm_dump; vm_status=125
    fi
    vm_stop
    return "$vm_status"
}

vm_run() {
    vm_start "$@" || return $?
    vm_wait
}

# Shows what went wrong: QEMU's own messages and the end of the guest console (where
# /init prints the kernel log when the script failed).
vm_dump() {
    [ -n "$VM_DIR" ] || return 0
    echo "--- qemu ---" >&2
    tail -n 20 "$VM_DIR/qemu.log" >&2
    echo "--- guest console (last 100 lines) ---" >&2
    tail -n 100 "$VM_DIR/console.log" >&2
}

# Stops a VM still running and removes the run directory (VM_KEEP=1 keeps it).
vm_stop() {
    if [ -n "$VM_PID" ]; then
        kill "$VM_PID" 2>/dev/null  # timeout(1) passes it on to QEMU
        wait "$VM_PID" 2>/dev/null
        VM_PID=
    fi
    if [ -n "$VM_DIR" ]; then
        if [ "${VM_KEEP:-0}" = 1 ]; then vm_log "kept $VM_DIR"; else rm -rf "$VM_DIR"; fi
    fi
    VM_DIR=
}

# The exit trap; a test that needs its own cleanup defines vm_test_cleanup.
vm_cleanup() {
    command -v vm_test_cleanup >/dev/null 2>&1 && vm_test_cleanup
    vm_stop
}
trap vm_cleanup EXIT
trap 'exit 130' INT TERM
