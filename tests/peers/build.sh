#!/bin/sh
# Builds the peers' node plugins for the peers benchmark, under $BUILD/peers
# (default build/peers), each from its upstream Go module at the version its
# go.mod pins (a go.mod tool; nothing of theirs is committed):
#   dra-example-kubeletplugin  sigs.k8s.io/dra-example-driver (tests/peers/example)
#   dranet                     github.com/google/dranet       (tests/peers/dranet)
# Go comes from /usr/local/go (GO=... to override); a binary newer than its
# module files is not rebuilt.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
GO=${GO:-/usr/local/go/bin/go}
OUT=$BUILD/peers
[ -x "$GO" ] || { echo "peers build: no Go toolchain at $GO (set GO=)" >&2; exit 1; }
export GOFLAGS=-mod=readonly GOTOOLCHAIN=local
mkdir -p "$OUT"

build() { # build <module dir> <binary> <tool package>
    dir=$ROOT/tests/peers/$1
    if [ -e "$OUT/$2" ] && [ ! "$dir/go.mod" -nt "$OUT/$2" ] && [ ! "$dir/go.sum" -nt "$OUT/$2" ]; then
        echo "peers build: $2 is up to date"
        return
    fi
    t=$(date +%s)
    (cd "$dir" && $GO build -trimpath -ldflags='-s -w' -o "$OUT/$2.tmp" "$3")
    mv "$OUT/$2.tmp" "$OUT/$2"
    echo "peers build: $2 ($3) in $(( $(date +%s) - t ))s"
}

build example dra-example-kubeletplugin sigs.k8s.io/dra-example-driver/cmd/dra-example-kubeletplugin
build dranet dranet github.com/google/dranet/cmd/dranet
