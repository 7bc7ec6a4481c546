#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The libraries only some dralet processes use are opened with dlopen, not
# linked: libcurl (agent/kube/curl_loader.c, an apiserver) and libmicrohttpd
# (agent/daemon/mhd_loader.c, --metrics-address), and libcrypto
# (backends/fpga/bitstream_store.c, a bitstream's sha256). Linked, they and their TLS
# stacks (GnuTLS, nettle, gmp, p11-kit ...) cost every process, `discover`
# included, MiB of RSS (docs/performance.md). The binary's DT_NEEDED list must
# name none of them. (That each is still found when wanted, test_metrics.py
# and the apiserver tests show.)
set -eu
. "$(dirname "$0")/lib/preamble.sh"
preamble lazy-libraries

needed=$(readelf -d "$dralet" | awk '/\(NEEDED\)/ {print $NF}' | tr -d '[]')
[ -n "$needed" ] || fail "readelf shows no NEEDED entries for $dralet"
echo "$needed" | grep -q '^libuv' || fail "NEEDED list unreadable (no libuv): $needed"
for lib in libcurl libmicrohttpd libcrypto libssl libgnutls libnettle libhogweed libgmp libp11-kit; do
    if echo "$needed" | grep -q "^$lib"; then
        fail "$dralet links $lib (it must be opened with dlopen when used): $needed"
    fi
done

echo "ok: $dralet links none of the libraries it opens with dlopen"
