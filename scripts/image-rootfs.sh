#!/bin/sh
# Assembles the root filesystem of dralet's container image from a build:
# the binary, exactly the shared libraries it links and the ones it opens with
# dlopen (libcurl, libmicrohttpd and what they link), the PCI name database, CA
# certificates, the simulated boards and their vendor simulators. Nothing
# else: no shell, no package manager.
#   scripts/image-rootfs.sh BUILD_DIR ROOTFS
set -eu
[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR ROOTFS" >&2; exit 2; }
build=$1 root=$2
here=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$build/dralet" ] || { echo "$0: $build/dralet is not built" >&2; exit 1; }

rm -rf "$root"
mkdir -p "$root/usr/bin" "$root/usr/lib/x86_64-linux-gnu" "$root/usr/lib64" \
    "$root/usr/lib/dralet" "$root/usr/share/dralet/boards" "$root/usr/share/misc" \
    "$root/etc/ssl/certs" "$root/etc/dralet" "$root/var/lib/dralet"
mkdir -m 1777 "$root/tmp"
# Debian 12 is merged-/usr: the usual top-level names are links into /usr.
for d in bin lib lib64 sbin; do ln -s "usr/$d" "$root/$d"; done
ln -s ../usr/bin "$root/usr/sbin" 2>/dev/null || true

install -m 0755 "$build/dralet" "$root/usr/bin/dralet"
strip --strip-unneeded "$root/usr/bin/dralet"

# Libraries: what ldd resolves for the binary and for each dlopen'ed library
# (libcurl: an apiserver; libmicrohttpd: --metrics-address; libcrypto: a
# bitstream's sha256).
lazy=
for name in libcurl.so.4 libmicrohttpd.so.12 libcrypto.so.3; do
    path=$(/sbin/ldconfig -p | awk -v n="$name" '$1 == n && /x86-64/ {print $NF; exit}')
    [ -n "$path" ] || { echo "$0: $name not found (apt-get install ${name%%.so*}*)" >&2; exit 1; }
    lazy="$lazy $path"
done
for lib in $( { ldd "$build/dralet"; for l in $lazy; do echo "$(basename "$l") => $l"; ldd "$l"; done; } |
        awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u); do
    install -m 0644 "$(readlink -f "$lib")" "$root/usr/lib/x86_64-linux-gnu/$(basename "$lib")"
done
interp=$(readlink -f /lib64/ld-linux-x86-64.so.2)
install -m 0755 "$interp" "$root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
ln -s ../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$root/usr/lib64/ld-linux-x86-64.so.2"
strip --strip-unneeded "$root"/usr/lib/x86_64-linux-gnu/*.so* 2>/dev/null || true
# dlopen("libcurl.so.4") and dlopen("libmicrohttpd.so.12") find the libraries through the image's own cache.
echo /usr/lib/x86_64-linux-gnu >"$root/etc/ld.so.conf"
/sbin/ldconfig -r "$root"

install -m 0644 /usr/share/misc/pci.ids "$root/usr/share/misc/pci.ids"
install -m 0644 /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
install -m 0644 "$here"/boards/*.yaml "$root/usr/share/dralet/boards/"
# The simulated vendor interfaces of boards/ (NVML, nvidia-smi and XRT), for
# simulatedBoard: a board's GPUs get their NVML facts, MIG devices and
# time-slicing as on the real server, its Alveo cards load xclbins
# (docs/boards.md).
install -m 0755 "$build/tests/lib/fake-nvml.so" "$root/usr/lib/dralet/board-nvml.so"
install -m 0755 "$build/tests/lib/fake-xrt.so" "$root/usr/lib/dralet/board-xrt.so"
install -m 0755 "$build/tests/sim/nvidia-smi" "$root/usr/lib/dralet/board-nvidia-smi"
printf 'root:x:0:0:root:/:/usr/bin/dralet\n' >"$root/etc/passwd"
printf 'root:x:0:\n' >"$root/etc/group"
