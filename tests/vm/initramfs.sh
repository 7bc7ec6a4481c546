# shellcheck shell=sh
# Builds the VM's base initramfs (sourced by lib.sh): busybox-static with its applet
# links, dralet and iproute2's rdma with every shared library ldd reports and the dynamic
# loader, the kernel modules of $VM_MODULES with their dependencies, /init and the guest
# helpers. Cached as $VM_CACHE/initramfs-<key>.cpio, the key covering every input.
# Functions and variables here start with vm_ so that they never clobber a test's own.

# Modules the guest loads (after their dependencies). Whatever Debian's config builds in
# (intel-iommu, pcieport, pciehp, NUMA, the 8250 UARTs) modprobe reports as builtin.
VM_MODULES="crc32_generic nvme e1000e virtio_pci virtio_gpu vfio vfio_iommu_type1 vfio_pci
ib_core ib_uverbs rdma_ucm rdma_rxe"

# The newest installed kernel that has both an image and modules; the host's running
# kernel need not be Debian's. VM_KVER overrides.
vm_kernel_version() {
    if [ -n "${VM_KVER:-}" ]; then echo "$VM_KVER"; return; fi
    for vm_v in $(printf '%s\n' /usr/lib/modules/* | sed 's|.*/||' | sort -rV); do
        [ -r "/boot/vmlinuz-$vm_v" ] && [ -r "/usr/lib/modules/$vm_v/modules.dep" ] &&
            { echo "$vm_v"; return; }
    done
}

# Prints the module files for the names given in load order, dependencies and soft
# pre-dependencies first, each once: kmod's dry run reads the kernel's modules.dep and
# modules.softdep and leaves out what the config builds in.
vm_modules_resolve() {
    modprobe -S "$VM_KVER" -a -D "$@" | awk '$1 == "insmod" && !seen[$2]++ {print $2}'
}

# The libraries ldd reports for a binary, the dynamic loader included.
vm_libraries() {
    ldd "$1" 2>/dev/null | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) .*/\1/p'
}

# vm_copy_binary ROOT BINARY DEST: BINARY goes to ROOT/DEST, its libraries to their own
# paths under ROOT (the loader's default search path finds them there).
vm_copy_binary() {
    mkdir -p "$1$(dirname "$3")"
    cp -L "$2" "$1$3"
    for vm_lib in $(vm_libraries "$2"); do
        [ -e "$1$vm_lib" ] && continue
        mkdir -p "$1$(dirname "$vm_lib")"
        cp -L "$vm_lib" "$1$vm_lib"
    done
}

# What the archive depends on: the harness files, kernel and module list, the binaries
# carried (their content) and their libraries (size and time, which package upgrades change).
vm_initramfs_key() {
    {
        echo "$VM_KVER $VM_MODULES"
        cat "$VM_LIB_DIR/initramfs.sh" "$VM_LIB_DIR/init" "$VM_LIB_DIR/guest.sh"
        for vm_bin in "$DRALET" /bin/busybox "$(command -v rdma)"; do
            sha256sum "$vm_bin"
            vm_libraries "$vm_bin" | xargs -r ls -lL
        done
        ls -lL "/usr/lib/modules/$VM_KVER/modules.dep"
    } | sha256sum | cut -c1-16
}

# Prints the path of the base initramfs, building it when an input changed.
vm_initramfs() {
    vm_out=$VM_CACHE/initramfs-$(vm_initramfs_key).cpio
    if [ -s "$vm_out" ]; then echo "$vm_out"; return; fi
    mkdir -p "$VM_CACHE"
    rm -f "$VM_CACHE"/initramfs-*.cpio
    vm_root=$(mktemp -d "$VM_CACHE/root.XXXXXX")
    for vm_d in bin sbin usr/bin usr/sbin proc sys dev tmp run etc root test lib/vm; do
        mkdir -p "$vm_root/$vm_d"
    done
    vm_copy_binary "$vm_root" /bin/busybox /bin/busybox
    for vm_f in $(/bin/busybox --list-full); do
        [ -e "$vm_root/$vm_f" ] || ln -s /bin/busybox "$vm_root/$vm_f"
    done
    vm_copy_binary "$vm_root" "$(command -v rdma)" /usr/bin/rdma
    vm_copy_binary "$vm_root" "$DRALET" /usr/bin/dralet
    # libpci names devices from pci.ids; the udev hwdb (13 MB) is not needed here.
    if [ -r /usr/share/misc/pci.ids ]; then
        mkdir -p "$vm_root/usr/share/misc"
        cp -L /usr/share/misc/pci.ids "$vm_root/usr/share/misc/"
    fi
    # Modules keep their paths; compressed ones are unpacked, busybox insmod wants plain.
    # shellcheck disable=SC2086
    for vm_f in $(vm_modules_resolve $VM_MODULES); do
        mkdir -p "$vm_root$(dirname "$vm_f")"
        case $vm_f in
            *.ko.xz) xz -dc "$vm_f" >"$vm_root${vm_f%.xz}"; vm_f=${vm_f%.xz} ;;
            *.ko.zst) zstd -qdc "$vm_f" >"$vm_root${vm_f%.zst}"; vm_f=${vm_f%.zst} ;;
            *) cp "$vm_f" "$vm_root$vm_f" ;;
        esac
        echo "$vm_f" >>"$vm_root/lib/vm/modules"
    done
    cp "$VM_LIB_DIR/init" "$vm_root/init"
    chmod 0755 "$vm_root/init"
    cp "$VM_LIB_DIR/guest.sh" "$vm_root/lib/vm/guest.sh"
    # Written aside and renamed, so a concurrent run never reads half an archive.
    (cd "$vm_root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$vm_root.cpio"
    rm -rf "$vm_root"
    mv "$vm_root.cpio" "$vm_out"
    echo "$vm_out"
}
