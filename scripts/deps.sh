#!/bin/sh
# Installs (or checks for) the Debian 12 packages dralet needs to build, test and demo.
#   scripts/deps.sh --check [build]     exit 0 when everything is installed, 1 otherwise
#   scripts/deps.sh [--install] [build] install what is missing (as root), or print the apt-get line
# "build": only what building the agent needs (make, make image-rootfs, deploy/Containerfile).
set -eu

BUILD_PKGS="build-essential pkg-config libpci-dev libudev-dev zlib1g-dev libjson-c-dev libyaml-dev \
libuv1-dev libnghttp2-dev libprotobuf-c-dev protobuf-c-compiler libcurl4-openssl-dev \
libnl-3-dev libnl-route-3-dev libmicrohttpd-dev libssl-dev"
TEST_PKGS="openssl libcmocka-dev umockdev libumockdev-dev valgrind clang libclang-rt-14-dev pciutils \
python3 python3-grpcio \
python3-protobuf protobuf-compiler python3-jsonschema python3-yaml python3-prometheus-client \
qemu-system-x86 linux-image-amd64 busybox-static cpio kmod iproute2 rdma-core hyperfine time"
# make image (umoci) and the e2e cluster's node: runc for containerd, CNI
# plugins, iptables for kube-proxy, tini as the sandbox's init.
E2E_PKGS="umoci runc containernetworking-plugins iptables conntrack tini util-linux"
PKGS="$BUILD_PKGS $TEST_PKGS $E2E_PKGS"
check=no
for arg in "$@"; do
    case $arg in
    --check) check=yes ;;
    --install) ;;
    build) PKGS=$BUILD_PKGS ;;
    *) echo "usage: $0 [--check|--install] [build]" >&2; exit 2 ;;
    esac
done

missing() {
    # dpkg-query prints one line per known package; unknown ones go to stderr.
    installed=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' $PKGS 2>/dev/null |
                awk '$2 ~ /^ii/ {print $1}')
    for p in $PKGS; do
        case " $(echo $installed) " in *" $p "*) ;; *) printf '%s ' "$p" ;; esac
    done
}

todo=$(missing)
if [ $check = yes ]; then
    [ -z "$todo" ] && exit 0
    echo "missing Debian packages: $todo" >&2
    exit 1
fi
[ -z "$todo" ] && { echo "all build and test dependencies are installed"; exit 0; }

line="apt-get install -y --no-install-recommends $todo"
if [ "$(id -u)" -ne 0 ]; then
    echo "dralet needs these Debian 12 packages. Run as root:" >&2
    echo "  apt-get update && $line" >&2
    exit 1
fi
echo "installing: $todo" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $todo >&2
