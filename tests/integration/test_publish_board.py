#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Slices of the simulated boards (boards/*.yaml): `dralet slices --board` gives schema-valid,
correctly split slices for every board; the >1,000-function board (synthetic-1k) is published
to the test apiserver and to the file store, and both hold the same slices. Skipped until the
boards are there."""
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, 'tests', 'apiserver'))
import harness  # noqa: E402
from harness import ApiServer, converged, wait_for  # noqa: E402

NODE = 'node-1'


def slices_of(board):
    out = subprocess.run([harness.dralet_path(), 'slices', '--board', board, '--node-name', NODE,
                          '-o', 'json'], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, '%s: %s' % (board, out.stderr[-2000:])
    doc = json.loads(out.stdout)
    assert doc['apiVersion'] == 'v1' and doc['kind'] == 'List'
    return doc['items']


def check_split(board, items):
    harness.check_schema(items)
    by_driver = {}
    for s in items:
        assert s['spec']['nodeName'] == NODE and s['spec']['pool']['name'] == NODE
        assert s['metadata']['generateName'] == '%s-%s-' % (NODE, s['spec']['driver'])
        assert 0 < len(s['spec']['devices']) <= 128
        by_driver.setdefault(s['spec']['driver'], []).append(s)
    for driver, slices in by_driver.items():
        names = [d['name'] for s in slices for d in s['spec']['devices']]
        assert names == sorted(names), '%s %s: devices not sorted' % (board, driver)
        assert len(names) == len(set(names)), '%s %s: duplicate devices' % (board, driver)
        assert all(s['spec']['pool']['resourceSliceCount'] == len(slices) for s in slices)
        full = [len(s['spec']['devices']) for s in slices[:-1]]
        assert all(n == full[0] for n in full), (board, driver, full)   # only the last is short
    return {d: [x['name'] for s in sl for x in s['spec']['devices']]
            for d, sl in by_driver.items()}


def main():
    boards = sorted(glob.glob(os.path.join(TOP, 'boards', '*.yaml')))
    if not boards:
        harness.skip('no boards in boards/ yet')
    for b in boards:
        check_split(os.path.basename(b), slices_of(b))
    big = os.path.join(TOP, 'boards', 'synthetic-1k.yaml')
    if not os.path.exists(big):
        print('checked %d boards; boards/synthetic-1k.yaml not there yet' % len(boards))
        return 0
    expected = check_split('synthetic-1k', slices_of(big))
    # every discovered device is published, in its driver's pool
    out = subprocess.run([harness.dralet_path(), 'discover', '--board', big, '-o', 'json'],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    discovered = {}
    for d in json.loads(out.stdout)['devices']:
        discovered.setdefault(d['driver'], []).append(d['name'])
    assert {k: sorted(v) for k, v in discovered.items()} == expected
    out = subprocess.run([harness.dralet_path(), 'pci', '--board', big], capture_output=True,
                         text=True, timeout=300)
    functions = [line for line in out.stdout.splitlines() if line[:1].isdigit()]
    assert len(functions) > 1000, len(functions)
    tmp = tempfile.mkdtemp(prefix='dralet-board-')
    srv = ApiServer(os.path.join(tmp, 'srv')).start()
    with srv.state.lock:    # a 1.36+ server: the shared GPUs and HCAs keep their fields
        srv.state.gates['DRAConsumableCapacity'] = True
    try:
        out = subprocess.run([harness.dralet_path(), 'slices', '--board', big, '--node-name', NODE,
                              '--publish', '--kubeconfig', srv.kubeconfig], capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-3000:]
        wait_for(lambda: converged(srv, NODE, expected), 10)
        harness.check_schema(srv.slices())
        store = os.path.join(tmp, 'store')
        out = subprocess.run([harness.dralet_path(), 'slices', '--board', big, '--node-name', NODE,
                              '--publish', '--store', store], capture_output=True, text=True,
                             timeout=300)
        assert out.returncode == 0, out.stderr[-3000:]
        files = []
        for f in glob.glob(os.path.join(store, 'resourceslices', '*.json')):
            with open(f) as fh:
                files.append(json.load(fh))
        harness.check_schema(files)

        def shape(slices):
            return sorted((s['spec']['driver'], s['spec']['pool']['generation'],
                           json.dumps(s['spec']['devices'], sort_keys=True)) for s in slices)
        assert shape(files) == shape(srv.slices()), 'file store and apiserver differ'
    finally:
        srv.stop()
    print('checked %d boards; synthetic-1k published: %d devices' %
          (len(boards), sum(len(v) for v in expected.values())))
    return 0


if __name__ == '__main__':
    sys.exit(main())
