#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""`dralet slices` over a discovered node (a hand-built sysfs tree, real backends): the
slices hold exactly the devices `dralet discover` lists, with the same attributes and
capacities, sorted, schema-valid; `--publish --store DIR` writes the same objects, and a
second publish writes nothing."""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'apiserver'))
import harness  # noqa: E402

NODE = 'node-7'


def pci(t, parent, addr, vendor, device, klass, driver=None):
    d = os.path.join(t, 'sys/devices', parent, addr)
    os.makedirs(d)
    os.makedirs(os.path.join(t, 'sys/bus/pci/devices'), exist_ok=True)
    for k, v in (('vendor', vendor), ('device', device), ('class', klass), ('revision', '0x00'),
                 ('subsystem_vendor', '0x0000'), ('subsystem_device', '0x0000')):
        with open(os.path.join(d, k), 'w') as f:
            f.write(v + '\n')
    os.symlink('../../../devices/%s/%s' % (parent, addr), os.path.join(t, 'sys/bus/pci/devices', addr))
    if driver:
        os.makedirs(os.path.join(t, 'sys/bus/pci/drivers', driver), exist_ok=True)
        os.symlink(os.path.join(t, 'sys/bus/pci/drivers', driver), os.path.join(d, 'driver'))
    return d


def drm(t, parent, addr, name, minor):
    d = os.path.join(t, 'sys/devices', parent, addr, 'drm', name)
    os.makedirs(d)
    with open(os.path.join(d, 'dev'), 'w') as f:
        f.write('226:%d\n' % minor)
    os.makedirs(os.path.join(t, 'sys/class/drm'), exist_ok=True)
    os.symlink('../../devices/%s/%s/drm/%s' % (parent, addr, name), os.path.join(t, 'sys/class/drm', name))
    os.makedirs(os.path.join(t, 'dev/dri'), exist_ok=True)
    open(os.path.join(t, 'dev/dri', name), 'w').close()


def build_tree(t):
    for sub in ('sys', 'dev', 'proc'):
        os.makedirs(os.path.join(t, sub), exist_ok=True)
    for i in range(4):   # four MI300X, each on its own root port
        port = '0000:00:%02x.0' % (i + 1)
        addr = '0000:%02x:00.0' % (0xc1 + i)
        pci(t, 'pci0000:00', port, '0x8086', '0x352a', '0x060400')
        d = pci(t, 'pci0000:00/' + port, addr, '0x1002', '0x74a1', '0x120000', 'amdgpu')
        with open(os.path.join(d, 'product_name'), 'w') as f:
            f.write('AMD Instinct MI300X OAM\n')
        with open(os.path.join(d, 'mem_info_vram_total'), 'w') as f:
            f.write('206158430208\n')
        drm(t, 'pci0000:00/' + port, addr, 'card%d' % (i + 1), i + 1)
        drm(t, 'pci0000:00/' + port, addr, 'renderD%d' % (128 + i), 128 + i)
    with open(os.path.join(t, 'proc/devices'), 'w') as f:
        f.write('Character devices:\n226 drm\n235 kfd\n')
    open(os.path.join(t, 'dev/kfd'), 'w').close()


def run(*args):
    out = subprocess.run([harness.dralet_path()] + list(args), capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, (args, out.stderr[-3000:])
    return out


def main():
    t = tempfile.mkdtemp(prefix='dralet-tree-')
    try:
        build_tree(t)
        roots = ['--sysfs-root', t + '/sys', '--dev-root', t + '/dev', '--proc-root', t + '/proc']
        devices = json.loads(run('discover', *roots, '-o', 'json').stdout)['devices']
        assert devices, 'discovery found nothing'
        items = json.loads(run('slices', *roots, '--node-name', NODE, '-o', 'json').stdout)['items']
        harness.check_schema(items)
        published = {}
        for s in items:
            assert s['spec']['nodeName'] == NODE and s['spec']['pool']['generation'] == 1
            for d in s['spec']['devices']:
                published[(s['spec']['driver'], d['name'])] = d
        want = {(d['driver'], d['name']): d for d in devices}
        assert sorted(published) == sorted(want), (sorted(published), sorted(want))
        for key, d in want.items():
            p = published[key]
            assert p.get('attributes', {}) == d['attributes'], key
            assert p.get('capacity', {}) == d['capacity'], key
        for s in items:
            names = [d['name'] for d in s['spec']['devices']]
            assert names == sorted(names)
        # the file store gets the same objects; a second publish writes nothing
        store = os.path.join(t, 'store')
        run('slices', *roots, '--node-name', NODE, '--publish', '--store', store)
        files = sorted(glob.glob(os.path.join(store, 'resourceslices', '*.json')))
        stored = [json.load(open(f)) for f in files]
        harness.check_schema(stored)
        assert sorted(json.dumps(s['spec'], sort_keys=True) for s in stored) == \
            sorted(json.dumps(s['spec'], sort_keys=True) for s in items)
        before = {f: os.stat(f).st_mtime_ns for f in files}
        out = run('slices', *roots, '--node-name', NODE, '--publish', '--store', store, '--stats')
        stats = json.loads(out.stderr.strip().splitlines()[-1])
        assert stats['creates'] + stats['updates'] + stats['deletes'] == 0, stats
        assert before == {f: os.stat(f).st_mtime_ns for f in files}
        print('ok: %d devices in %d slices' % (len(published), len(items)))
        return 0
    finally:
        shutil.rmtree(t, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
