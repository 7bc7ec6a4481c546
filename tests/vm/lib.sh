# shellcheck shell=sh
# The real-kernel VM harness: boots Debian's linux-image-amd64 under QEMU (TCG) with a
# busybox initramfs that carries dralet, its shared libraries and the kernel modules the
# emulated topology needs, runs one guest script inside and hands back its output.
#
#   . "$(dirname "$0")/lib.sh"
#   vm_require                         # exit 77 (skip) with a reason when the VM can't run
#   vm_run guest.sh [qemu args] >out   # boot, run guest.sh as root in the VM, power off;
#                                      # stdout = the script's stdout, status = its status
#
# For tests that act on the running VM (QMP device_del, ...):
#   vm_start guest.sh [qemu args]      # boot in the background
#   vm_wait_mark NAME [secs]           # wait until the guest ran `vm_mark NAME`
#   vm_qmp '{"execute":"device_del","arguments":{"id":"nvme0"}}'
#   vm_wait >out                       # wait for power-off; same result as vm_run
#
# Environment (all optional): DRALET (binary to carry; default $BUILD/dralet), BUILD (cache
# lives in $BUILD/vm), VM_KVER (kernel version), VM_TIMEOUT (seconds, default 240),
# VM_FILES (host files copied to /test/ in the guest), VM_KEEP=1 (keep the run directory).
# The topology and its fixed addresses are described in tests/vm/README.md.

VM_LIB_DIR=$(cd "$(dirname "${VM_LIB_SELF:-$0}")" && pwd)
PATH=$PATH:/usr/sbin:/sbin
: "${BUILD:=build}"
case $BUILD in /*) ;; *) BUILD=$(pwd)/$BUILD ;; esac
: "${DRALET:=$BUILD/dralet}"
: "${VM_TIMEOUT:=240}"
VM_CACHE=$BUILD/vm
VM_DIR=
VM_PID=

# Modules the guest loads, in this order (each after its dependencies). Whatever the
# kernel config builds in (intel-iommu, pcieport, NUMA, 8250) is simply not found here.
VM_MODULES="crc32_generic nvme e1000e virtio_pci virtio_gpu vfio vfio_iommu_type1 vfio_pci
ib_core ib_uverbs rdma_ucm rdma_rxe"

vm_log() { echo "vm: $*" >&2; }

# The newest installed kernel that has both an image and modules (the host's running
# kernel need not be Debian's).
vm_kernel_version() {
    if [ -n "${VM_KVER:-}" ]; then echo "$VM_KVER"; return; fi
    for v in $(ls /usr/lib/modules 2>/dev/null | sort -rV); do
        [ -r "/boot/vmlinuz-$v" ] && [ -r "/usr/lib/modules/$v/modules.dep" ] && { echo "$v"; return; }
    done
}

# Exits 77 with the reason as the last line when this machine cannot run the VM.
vm_require() {
    for t in qemu-system-x86_64 cpio modprobe ldd timeout sha256sum python3; do
        command -v "$t" >/dev/null 2>&1 || vm_skip "$t is not installed (make deps)"
    done
    [ -x /bin/busybox ] || vm_skip "busybox-static is not installed (make deps)"
    command -v rdma >/dev/null 2>&1 || vm_skip "rdma (iproute2) is not installed (make deps)"
    VM_KVER=$(vm_kernel_version)
    [ -n "$VM_KVER" ] || vm_skip "no kernel image in /boot with modules (linux-image-amd64; make deps)"
    [ -r "/boot/vmlinuz-$VM_KVER" ] || vm_skip "/boot/vmlinuz-$VM_KVER is not readable"
    [ -x "$DRALET" ] || vm_skip "no dralet binary at $DRALET (run make)"
}

vm_skip() { echo "$*"; exit 77; }

# Prints the module files for the names given in load order, dependencies and soft
# pre-dependencies first, each once: kmod's dry run reads the kernel's modules.dep and
# modules.softdep and leaves out what the config builds in.
vm_modules_resolve() {
    # shellcheck disable=SC2086
    modprobe -S "$VM_KVER" -a -D "$@" | awk '$1 == "insmod" && !seen[$2]++ {print $2}'
}

# Copies a binary and every shared library ldd reports (plus the dynamic loader) into $1.
vm_copy_binary() {
    local root=$1 bin=$2 dest=$3 lib
    mkdir -p "$root$(dirname "$dest")"
    cp -L "$bin" "$root$dest"
    for lib in $(ldd "$bin" 2>/dev/null | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) .*/\1/p'); do
        [ -e "$root$lib" ] && continue
        mkdir -p "$root$(dirname "$lib")"
        cp -L "$lib" "$root$lib"
    done
}

# What the cached initramfs depends on: this harness, the guest files, the kernel
# modules, the binaries carried and the libraries they load.
vm_initramfs_key() {
    {
        echo "$VM_KVER $VM_MODULES"
        cat "$VM_LIB_DIR/lib.sh" "$VM_LIB_DIR/init" "$VM_LIB_DIR/guest.sh"
        for f in "$DRALET" /bin/busybox "$(command -v rdma)"; do
            sha256sum "$f"
            ldd "$f" 2>/dev/null | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p' | xargs -r ls -lL
        done
        ls -lL "/boot/vmlinuz-$VM_KVER" "/usr/lib/modules/$VM_KVER/modules.dep"
    } | sha256sum | cut -c1-16
}

# Prints the path of the base initramfs, building it when its inputs changed.
vm_initramfs() {
    local key out root f
    key=$(vm_initramfs_key)
    out=$VM_CACHE/initramfs-$key.cpio
    if [ -s "$out" ]; then echo "$out"; return; fi
    mkdir -p "$VM_CACHE"
    rm -f "$VM_CACHE"/initramfs-*.cpio
    root=$(mktemp -d "$VM_CACHE/root.XXXXXX")
    mkdir -p "$root/bin" "$root/sbin" "$root/usr/bin" "$root/usr/sbin" "$root/proc" \
        "$root/sys" "$root/dev" "$root/tmp" "$root/run" "$root/etc" "$root/test" \
        "$root/lib/modules/$VM_KVER" "$root/lib/vm"
    vm_copy_binary "$root" /bin/busybox /bin/busybox
    for f in $(/bin/busybox --list-full); do
        [ -e "$root/$f" ] || ln -s /bin/busybox "$root/$f"
    done
    vm_copy_binary "$root" "$(command -v rdma)" /usr/bin/rdma
    vm_copy_binary "$root" "$DRALET" /usr/bin/dralet
    # libpci names devices from pci.ids when present; the udev hwdb is far larger and
    # not needed for the facts the tests check.
    [ -r /usr/share/misc/pci.ids ] && mkdir -p "$root/usr/share/misc" &&
        cp -L /usr/share/misc/pci.ids "$root/usr/share/misc/"
    # shellcheck disable=SC2086
    for f in $(vm_modules_resolve $VM_MODULES); do
        mkdir -p "$root$(dirname "$f")"
        case $f in
            *.ko.xz) xz -dc "$f" >"$root${f%.xz}"; f=${f%.xz} ;;
            *.ko.zst) zstd -qdc "$f" >"$root${f%.zst}"; f=${f%.zst} ;;
            *) cp "$f" "$root$f" ;;
        esac
        echo "$f" >>"$root/lib/vm/modules"
    done
    echo "$VM_KVER" >"$root/lib/vm/kernel"
    cp "$VM_LIB_DIR/init" "$root/init"
    cp "$VM_LIB_DIR/guest.sh" "$root/lib/vm/guest.sh"
    chmod 0755 "$root/init"
    # Written aside and renamed, so a concurrent run never reads half an archive.
    (cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$root.cpio"
    rm -rf "$root"
    mv "$root.cpio" "$out"
    echo "$out"
}

# The emulated machine; see README.md for the addresses this produces.
vm_qemu_args() {
    cat <<ARGS
-machine q35,kernel-irqchip=split -accel tcg -cpu qemu64 -m 512M -smp 2
-object memory-backend-ram,id=mem0,size=256M -object memory-backend-ram,id=mem1,size=256M
-numa node,nodeid=0,cpus=0,memdev=mem0 -numa node,nodeid=1,cpus=1,memdev=mem1
-nodefaults -no-user-config -display none -no-reboot
-device intel-iommu,intremap=on
-device virtio-gpu-pci,id=gpu0,bus=pcie.0,addr=0x1
-netdev user,id=net0,restrict=on -device e1000e,id=nic0,netdev=net0,bus=pcie.0,addr=0x2,mac=52:54:00:12:34:56
-device pxb-pcie,id=pxb1,bus_nr=0x20,numa_node=1,bus=pcie.0,addr=0x3
-device pcie-root-port,id=rp1,bus=pxb1,chassis=1,slot=1,addr=0x0
-device x3130-upstream,id=usp1,bus=rp1,addr=0x0
-device xio3130-downstream,id=dsp1,bus=usp1,chassis=2,slot=0,addr=0x0
-device nvme-subsys,id=s0
-device nvme,id=nvme0,bus=dsp1,addr=0x0,serial=dralet0001,subsys=s0,sriov_max_vfs=4,max_ioqpairs=12,msix_qsize=24,sriov_vq_flexible=8,sriov_vi_flexible=4
ARGS
}

# Boots the VM in the background with guest script $1; further arguments go to QEMU.
vm_start() {
    local script=$1 base f
    shift
    [ -r "$script" ] || { vm_log "no guest script $script"; return 2; }
    base=$(vm_initramfs) || return 2
    VM_DIR=$(mktemp -d "${TMPDIR:-/tmp}/dralet-vm.XXXXXX")
    # The run's own files ride in a second cpio archive; the kernel unpacks both.
    mkdir -p "$VM_DIR/extra/test"
    cp "$script" "$VM_DIR/extra/test/script"
    for f in ${VM_FILES:-}; do cp "$f" "$VM_DIR/extra/test/"; done
    (cd "$VM_DIR/extra" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$VM_DIR/extra.cpio"
    cat "$base" "$VM_DIR/extra.cpio" >"$VM_DIR/initrd"
    : >"$VM_DIR/console.log"; : >"$VM_DIR/result.log"
    VM_START_TIME=$(date +%s)
    # shellcheck disable=SC2046
    timeout -k 10 "$VM_TIMEOUT" qemu-system-x86_64 $(vm_qemu_args) \
        -kernel "/boot/vmlinuz-$VM_KVER" -initrd "$VM_DIR/initrd" \
        -append "console=ttyS0 intel_iommu=on panic=-1 loglevel=4 ${VM_APPEND:-}" \
        -serial "file:$VM_DIR/console.log" -serial "file:$VM_DIR/result.log" \
        -qmp "unix:$VM_DIR/qmp.sock,server=on,wait=off" -pidfile "$VM_DIR/qemu.pid" \
        "$@" </dev/null >"$VM_DIR/qemu.log" 2>&1 &
    VM_PID=$!
}

# Waits until the guest script printed the mark NAME (see guest.sh vm_mark).
vm_wait_mark() {
    local name=$1 secs=${2:-$VM_TIMEOUT} i=0
    while ! tr -d '\r' <"$VM_DIR/result.log" | grep -qx "@@VM-MARK $name"; do
        kill -0 "$VM_PID" 2>/dev/null || { vm_log "VM ended before mark $name"; return 1; }
        [ $i -ge $((secs * 5)) ] && { vm_log "timed out waiting for mark $name"; return 1; }
        i=$((i + 1)); sleep 0.2
    done
}

# Sends one QMP command (JSON text) to the running VM and prints QEMU's reply.
vm_qmp() {
    python3 "$VM_LIB_DIR/qmp.py" "$VM_DIR/qmp.sock" "$1"
}

# Waits for the VM to power off; prints the guest script's stdout and returns its exit
# status, or 124 on timeout and 125 when the guest never reported one. Removes the run
# directory (VM_KEEP=1 keeps it), so vm_run also works inside $(...).
vm_wait() {
    local rc status
    wait "$VM_PID"; rc=$?
    VM_PID=
    VM_SECONDS=$(( $(date +%s) - VM_START_TIME ))
    vm_log "VM ran for ${VM_SECONDS}s"
    tr -d '\r' <"$VM_DIR/result.log" >"$VM_DIR/result.txt"
    sed -n '/^@@VM-BEGIN$/,/^@@VM-EXIT /p' "$VM_DIR/result.txt" | sed '1d;/^@@VM-EXIT /d;/^@@VM-MARK /d'
    status=$(sed -n 's/^@@VM-EXIT \([0-9]*\)$/\1/p' "$VM_DIR/result.txt")
    if [ -n "$status" ]; then
        [ "$status" -eq 0 ] || { vm_log "guest script exited with $status"; vm_dump; }
    elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        vm_log "VM timed out after ${VM_TIMEOUT}s"; vm_dump; status=124
    else
        vm_log "guest reported no exit status (qemu exit $rc)"; vm_dump; status=125
    fi
    vm_stop
    return "$status"
}

vm_run() {
    vm_start "$@" || return $?
    vm_wait
}

# Shows what went wrong: QEMU's own messages and the end of the guest console.
vm_dump() {
    [ -n "$VM_DIR" ] || return 0
    echo "--- qemu ---" >&2; tail -n 20 "$VM_DIR/qemu.log" >&2
    echo "--- guest console (last 60 lines) ---" >&2; tail -n 60 "$VM_DIR/console.log" >&2
}

# Stops a VM still running and removes the run directory (VM_KEEP=1 keeps it).
vm_stop() {
    if [ -n "$VM_PID" ]; then
        [ -r "$VM_DIR/qemu.pid" ] && kill "$(cat "$VM_DIR/qemu.pid")" 2>/dev/null
        kill "$VM_PID" 2>/dev/null
        wait "$VM_PID" 2>/dev/null
        VM_PID=
    fi
    if [ -n "$VM_DIR" ]; then
        if [ "${VM_KEEP:-0}" = 1 ]; then vm_log "kept $VM_DIR"; else rm -rf "$VM_DIR"; fi
    fi
    VM_DIR=
}

# The exit trap: a test that needs its own cleanup defines vm_test_cleanup.
vm_cleanup() {
    command -v vm_test_cleanup >/dev/null 2>&1 && vm_test_cleanup
    vm_stop
}
trap vm_cleanup EXIT
trap 'exit 130' INT TERM
