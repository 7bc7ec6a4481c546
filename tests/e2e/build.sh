#!/bin/sh
# Builds what the e2e suite runs, under $BUILD/e2e (default build/e2e):
#   <minor>/k8s          etcd + the Kubernetes components of each pinned release
#                        (one multi-call binary, tests/e2e/k8s/<minor>/go.mod)
#   runtime/             containerd, containerd-shim-runc-v2, ctr, helm
#                        (tests/e2e/runtime/go.mod)
#   images/*.tar         the pause and busybox images the pods run (OCI archives)
# Go comes from /usr/local/go (GO=... to override): Debian's golang-go is too old.
# Modules come through the Go module proxy; go's build cache makes a second
# build cheap, and a binary newer than its module files is not rebuilt at all.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
GO=${GO:-/usr/local/go/bin/go}
OUT=$BUILD/e2e
VERSIONS=${E2E_VERSIONS:-$(cd "$ROOT/tests/e2e/k8s" && ls -d 1.* | sort -V | tr '\n' ' ')}

[ -x "$GO" ] || { echo "e2e build: no Go toolchain at $GO (set GO=)" >&2; exit 1; }
export GOFLAGS=-mod=readonly GOTOOLCHAIN=local

# newer: is $1 newer than every other argument?
newer() {
    out=$1; shift
    [ -e "$out" ] || return 1
    for f in "$@"; do [ "$f" -nt "$out" ] && return 1; done
    return 0
}

stamp() { date +%s; }

# The version the components report (/version, the Node's kubeletVersion),
# set the way upstream's release build sets it.
version_ldflags() {
    release=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v1\./ {print $2; exit}' "$1/go.mod")
    major=${release#v}; minor=${major#*.}; major=${major%%.*}; minor=${minor%%.*}
    flags="-s -w"
    for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        flags="$flags -X $pkg.gitVersion=$release -X $pkg.gitMajor=$major"
        flags="$flags -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
    done
    echo "$flags"
}

# One Kubernetes release's multi-call binary.
build_k8s() {
    v=$1; dir=$ROOT/tests/e2e/k8s/$v
    if newer "$OUT/$v/k8s" "$dir/go.mod" "$dir/go.sum" "$ROOT/tests/e2e/k8s/multicall.go"; then
        echo "e2e build: $v/k8s is up to date"
        return 0
    fi
    t=$(stamp)
    echo "e2e build: Kubernetes $v (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy, kubelet, kubectl)"
    mkdir -p "$OUT/$v"
    (cd "$dir" && $GO build -trimpath -ldflags="$(version_ldflags "$dir")" -o "$OUT/$v/k8s.tmp" .)
    mv "$OUT/$v/k8s.tmp" "$OUT/$v/k8s"
    echo "e2e build: $v/k8s in $(( $(stamp) - t ))s"
}

build_runtime() {
    dir=$ROOT/tests/e2e/runtime
    if newer "$OUT/runtime/helm" "$dir/go.mod" "$dir/go.sum"; then
        echo "e2e build: runtime is up to date"
        return 0
    fi
    t=$(stamp)
    echo "e2e build: containerd, containerd-shim-runc-v2, ctr, helm"
    mkdir -p "$OUT/runtime"
    (cd "$dir" && $GO build -trimpath -ldflags='-s -w' -o "$OUT/runtime/" \
        github.com/containerd/containerd/v2/cmd/containerd \
        github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
        github.com/containerd/containerd/v2/cmd/ctr \
        helm.sh/helm/v4/cmd/helm)
    echo "e2e build: runtime in $(( $(stamp) - t ))s"
}

# The builds run at once: one's module downloads and links overlap the others'
# compiles (go's module and build caches lock what they share).
pids=""
for v in $VERSIONS; do
    (set -e; build_k8s "$v") &
    pids="$pids $!"
done
(set -e; build_runtime) &
pids="$pids $!"
failed=0
for pid in $pids; do
    wait "$pid" || failed=1
done
[ $failed -eq 0 ] || { echo "e2e build: a Go build failed (above)" >&2; exit 1; }

# The images: our own pause (tests/e2e/images/pause.c, static) and Debian's
# busybox-static with its applet links. Nothing is pulled from a registry.
images=$OUT/images
mkdir -p "$images"
if ! newer "$images/pause.tar" "$ROOT/tests/e2e/images/pause.c" "$ROOT/scripts/oci-image.sh"; then
    rm -rf "$images/pause"
    mkdir -p "$images/pause"
    cc -static -O2 -Wall -Wextra -Werror -o "$images/pause/pause" "$ROOT/tests/e2e/images/pause.c"
    "$ROOT/scripts/oci-image.sh" "$images/pause" localhost/dralet-e2e/pause:1 \
        "$images/pause.tar" /pause
fi
if ! newer "$images/busybox.tar" /bin/busybox "$ROOT/scripts/oci-image.sh"; then
    rm -rf "$images/busybox"
    mkdir -p "$images/busybox/bin" "$images/busybox/tmp"
    cp /bin/busybox "$images/busybox/bin/busybox"
    for applet in $(/bin/busybox --list); do
        [ "$applet" = busybox ] || ln -s busybox "$images/busybox/bin/$applet"
    done
    "$ROOT/scripts/oci-image.sh" "$images/busybox" localhost/dralet-e2e/busybox:1 \
        "$images/busybox.tar" /bin/sh
fi
echo "e2e build: images in $images"
