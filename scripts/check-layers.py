#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The layer check (make check-layers; docs/architecture.md "Layers").

One folder per layer. LAYERS names, for each folder, the layers directly below it; a file
may include headers of its own folder and of every layer below it (the closure), nothing
else. There are no exceptions: an include that breaks the order is fixed in the code.
Quoted includes are resolved against the top directory (the agent's -I.) or, for
"../x/y.h" and "y.h", against the including file's folder; <dralet/...> is the SDK
(include/dralet); a generated "<name>.pb-c.h" is the layer "proto". System headers are
not checked.

Exit 0 when every include points down; 1 with one line per violation otherwise.
"""
import os
import re
import sys

# layer -> the layers directly below it (bottom first)
LAYERS = {
    'agent/lib': [],                      # generic helpers: log, JSON/YAML text, files
    'include/dralet': [],                 # the backend SDK (public headers)
    'hal': ['agent/lib', 'include/dralet'],   # reads the node
    'backends/common': ['include/dralet'],    # helpers several backends share
    'backends/accel': ['backends/common'],
    'backends/fpga': ['backends/common'],
    'backends/gpu': ['backends/common'],
    'backends/net': ['backends/common'],
    'backends/sriov': ['backends/common'],
    'proto': [],                          # generated gRPC messages
    'agent/core': ['hal', 'backends/accel', 'backends/fpga', 'backends/gpu',
                   'backends/net', 'backends/sriov'],   # backend runtime, SDK, inventory
    'agent/health': ['agent/core', 'proto'],
    'agent/slices': ['agent/health'],     # the ResourceSlice model (pure)
    'agent/kube': ['agent/slices'],       # apiserver client, stores
    'agent/claims': ['agent/kube'],       # claims engine, checkpoint, CDI
    'agent/sriov': ['agent/claims'],      # SR-IOV policy
    'agent/kubelet': ['agent/sriov', 'proto'],  # gRPC core, kubelet services, registration
    'agent/daemon': ['agent/kubelet'],    # the daemon, node watching
    'boards/sim': ['hal'],                # the board simulator and its kernel model (node_ops)
    'agent/cli': ['agent/daemon', 'boards/sim'],  # every command
}

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def closure(layer, seen=None):
    seen = set() if seen is None else seen
    for below in LAYERS[layer]:
        if below not in seen:
            seen.add(below)
            closure(below, seen)
    return seen


def layer_of(path):
    d = os.path.dirname(path)
    if path.endswith('.pb-c.h'):
        return 'proto'
    return d if d in LAYERS else None


def target_of(src, kind, name):
    """The repository path an include names, or None for a system header."""
    if kind == '<':
        return 'include/' + name if name.startswith('dralet/') else None
    if name.endswith('.pb-c.h'):
        return 'proto/' + os.path.basename(name)
    local = os.path.normpath(os.path.join(os.path.dirname(src), name))
    if os.path.exists(local):
        return local
    return os.path.normpath(name)


def check(root):
    os.chdir(root)
    problems = []
    for layer in sorted(LAYERS):
        if layer == 'proto' or not os.path.isdir(layer):
            continue
        allowed = closure(layer) | {layer}
        for name in sorted(os.listdir(layer)):
            if not name.endswith(('.c', '.h')):
                continue
            src = os.path.join(layer, name)
            with open(src, encoding='utf-8') as f:
                text = f.read()
            for m in INCLUDE.finditer(text):
                target = target_of(src, m.group(1), m.group(2))
                if target is None:
                    continue
                to = layer_of(target)
                line = text.count('\n', 0, m.start()) + 1
                if to is None:
                    problems.append('%s:%d: includes %s, which is in no layer'
                                    % (src, line, m.group(2)))
                elif to not in allowed:
                    problems.append('%s:%d: %s includes %s (%s is not below %s)'
                                    % (src, line, layer, target, to, layer))
    # every source folder is a layer: a new folder must be placed first
    for top in ('agent', 'backends', 'hal', 'boards', 'include'):
        for dirpath, _, files in os.walk(top):
            if any(f.endswith(('.c', '.h')) for f in files) and dirpath not in LAYERS:
                problems.append('%s: holds C sources but is no layer (add it to %s)'
                                % (dirpath, sys.argv[0]))
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    problems = check(root)
    for p in problems:
        print('layers: ' + p, file=sys.stderr)
    if problems:
        print('layers: %d include(s) break the layer order (docs/architecture.md)'
              % len(problems), file=sys.stderr)
        return 1
    print('layers: every include points down (%d layers)' % len(LAYERS))
    return 0


if __name__ == '__main__':
    sys.exit(main())
