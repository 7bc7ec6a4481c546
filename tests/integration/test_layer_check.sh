#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The layer check (scripts/check-layers.py) passes on this tree and rejects, each with
# its own message, what it exists to reject: an upward include (core -> cli), a
# backend reaching into the agent, one backend family including another, a public SDK
# header including an agent header, and a new source folder that is no layer.
set -eu

. "$(dirname "$0")/lib/preamble.sh"; preamble layers
check=$root/scripts/check-layers.py

/usr/bin/python3 "$check" "$root" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "the tree breaks its layers"; }

# one copy of the sources per case, each with one bad include
rejects() {	# <case> <file> <line to add> <expected message part>
    dir=$tmp/$1
    mkdir -p "$dir"
    (cd "$root" && tar cf - agent backends hal boards include) | (cd "$dir" && tar xf -)
    mkdir -p "$(dirname "$dir/$2")"
    printf '%s\n' "$3" >>"$dir/$2"
    if /usr/bin/python3 "$check" "$dir" >"$dir.out" 2>&1; then
        cat "$dir.out"; fail "$1: accepted"
    fi
    grep -qF -- "$4" "$dir.out" || { cat "$dir.out"; fail "$1: not the expected message ($4)"; }
    rm -rf "$dir"
}
rejects upward agent/core/inventory.c '#include "agent/cli/commands.h"' \
    'agent/core/inventory.c'
rejects backend-into-agent backends/gpu/drm.c '#include "agent/lib/log.h"' \
    'backends/gpu includes agent/lib/log.h'
rejects family-to-family backends/net/rdma.c '#include "../gpu/gpu.h"' \
    'backends/net includes backends/gpu/gpu.h'
rejects sdk-header include/dralet/device.h '#include "hal/hal.h"' \
    'include/dralet includes hal/hal.h'
rejects new-folder agent/extra/x.c '#include "agent/lib/log.h"' \
    'agent/extra: holds C sources but is no layer'
echo "layer check: the tree passes; 5 kinds of violation rejected"
