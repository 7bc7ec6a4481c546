#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Real lspci (libpci's sysfs back-end) reads every board's materialized tree:
# one record per function, the bound driver, NUMA node and IOMMU group of
# each matching the tree, the tree drawing and -vvv working, and nothing on
# stderr but the one line about libkmod that lspci -k prints on hosts
# without /lib/modules for the running kernel.
#   env: DRALET (absolute path of the binary; default build/dralet)
set -eu

if ! command -v lspci >/dev/null 2>&1; then
    echo "lspci is not installed (Debian package pciutils)"
    exit 77
fi
. "$(dirname "$0")/lib/preamble.sh"; preamble lspci tmpfs
fail=0

# Functions per board: a change here is a change of the board files.
expected_functions() {
    case $1 in
        hgx-h100) echo 198 ;; mi300x) echo 63 ;; intel-max) echo 16 ;;
        fpga-server) echo 11 ;; e810) echo 72 ;; edge-box) echo 8 ;;
        synthetic-1k) echo 1009 ;; vm-like) echo 12 ;; *) echo "" ;;
    esac
}

stderr_ok() {
    # the libkmod warning comes from the host, not from the tree
    ! grep -v 'Unable to load libkmod resources' "$1" | grep -q .
}

for board in "$root"/boards/*.yaml; do
    name=$(basename "$board" .yaml)
    dir=$tmp/$name
    "$dralet" board materialize --quiet "$board" "$dir"
    sys=$dir/sys
    pci="lspci -A linux-sysfs -O sysfs.path=$sys/bus/pci"

    $pci -vmm -D -nn -k >"$tmp/out" 2>"$tmp/err"
    if ! stderr_ok "$tmp/err"; then
        echo "FAIL $name: lspci -vmm wrote to stderr:"; sed 's/^/    /' "$tmp/err"; fail=1
    fi

    # one record per function, as many as the board declares
    functions=$(ls "$sys/bus/pci/devices" | wc -l)
    slots=$(grep -c '^Slot:' "$tmp/out" || true)
    want=$(expected_functions "$name")
    if [ "$slots" -ne "$functions" ] || { [ -n "$want" ] && [ "$slots" -ne "$want" ]; }; then
        echo "FAIL $name: lspci lists $slots functions, the tree has $functions, expected ${want:-?}"
        fail=1
    fi

    # driver, NUMA node and IOMMU group per function, as the tree says
    awk -F'\t' '/^Slot:/ {slot=$2; drv="-"; numa="-"; grp="-"}
                /^Driver:/ {drv=$2} /^NUMANode:/ {numa=$2} /^IOMMUGroup:/ {grp=$2}
                /^$/ {if (slot != "") print slot, drv, numa, grp; slot=""}
                END {if (slot != "") print slot, drv, numa, grp}' "$tmp/out" | sort >"$tmp/lspci"
    # (a few processes per board, not per function: this runs on 1000+)
    {
        find "$sys/devices" -name driver -type l -printf 'drv %h %l\n'
        find "$sys/devices" -name iommu_group -type l -printf 'grp %h %l\n'
        grep -H . "$sys"/bus/pci/devices/*/numa_node | sed 's|^|numa |'
    } | awk '
        function base(p) { sub(/.*\//, "", p); return p }
        $1 == "drv" || $1 == "grp" {
            bdf = base($2)
            if (bdf ~ /^[0-9a-f]+:[0-9a-f][0-9a-f]:[0-9a-f][0-9a-f]\.[0-7]$/) a[$1, bdf] = base($3)
        }
        $1 == "numa" {
            split($2, f, ":"); n = f[length(f)]
            path = $2; sub(/\/numa_node:.*/, "", path); bdf = base(path)
            all[bdf] = 1; numa[bdf] = (n == "-1") ? "-" : n
        }
        END {
            for (b in all)
                print b, ((("drv", b) in a) ? a["drv", b] : "-"), numa[b],
                      ((("grp", b) in a) ? a["grp", b] : "-")
        }' | sort >"$tmp/tree"
    if ! diff -u "$tmp/tree" "$tmp/lspci" >"$tmp/diff"; then
        echo "FAIL $name: lspci disagrees with the tree (tree -, lspci +):"
        head -20 "$tmp/diff" | sed 's/^/    /'; fail=1
    fi
    drivers=$(grep -c '^Driver:' "$tmp/out" || true)
    numas=$(grep -c '^NUMANode:' "$tmp/out" || true)
    groups=$(grep -c '^IOMMUGroup:' "$tmp/out" || true)

    # the switch tree and the full dump (config space, BARs, capabilities)
    for opts in "-tv" "-vvv -D" "-PP -nn" "-x"; do
        # shellcheck disable=SC2086
        if ! $pci $opts >/dev/null 2>"$tmp/err" || ! stderr_ok "$tmp/err"; then
            echo "FAIL $name: lspci $opts:"; sed 's/^/    /' "$tmp/err"; fail=1
        fi
    done
    echo "ok   $name: $slots functions, $drivers with a driver, $numas with a NUMA node, $groups IOMMU groups"
    rm -rf "$dir"
done

[ $fail -eq 0 ] || exit 1
echo "lspci read every board without complaint"
