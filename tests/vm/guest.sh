# shellcheck shell=sh
# Helpers for guest scripts (". /lib/vm/guest.sh"); /init sources it too.

# vm_wait_for PATH [SECONDS]: waits until PATH exists (devices bind asynchronously).
vm_wait_for() {
    _n=$(( ${2:-10} * 10 ))
    while [ ! -e "$1" ]; do
        [ $_n -le 0 ] && return 1
        _n=$((_n - 1)); sleep 0.1
    done
}

# vm_wait_gone PATH [SECONDS]: waits until PATH is gone (hot-unplug, VFs disabled).
vm_wait_gone() {
    _n=$(( ${2:-10} * 10 ))
    while [ -e "$1" ]; do
        [ $_n -le 0 ] && return 1
        _n=$((_n - 1)); sleep 0.1
    done
}

# vm_mark NAME: tells the host (vm_wait_mark NAME) that the script reached a point, e.g.
# before the host hot-unplugs a device over QMP.
vm_mark() { echo "@@VM-MARK $1"; }
