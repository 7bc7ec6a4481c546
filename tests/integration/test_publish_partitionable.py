#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Partitionable devices (dynamic MIG on boards/hgx-h100-mig.yaml, fake NVML) published
by the daemon through the test apiserver, by the server's version (GET
/version): 1.37 with the gate gets a counters-only slice and the partitions;
1.36 with the gate off (the server drops the fields) gets one warning, the
partitions taken away and no write loop; 1.34 gets neither counters nor
partitions from the start; a server without /version is taken for the
newest."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'apiserver'))
import harness  # noqa: E402
from harness import ApiServer, wait_for  # noqa: E402

NODE = 'node-1'
GPU = 'gpu.dralet.dev'
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get('BUILD', 'build')
FAKE_NVML = os.path.join(TOP, BUILD, 'tests', 'lib', 'fake-nvml.so')
TMP = tempfile.mkdtemp(prefix='dralet-partitionable-')
WARNING = 'feature gate DRAPartitionableDevices is probably disabled'


def node_tree():
    board = os.path.join(TOP, 'boards', 'hgx-h100-mig.yaml')
    tree = os.path.join(TMP, 'node')
    r = subprocess.run([harness.dralet_path(), 'board', 'materialize', '--quiet', board, tree],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return tree


def gpu_slices(srv):
    return [s for s in srv.slices() if s['spec']['driver'] == GPU]


def writes(srv):
    c = srv.counts()
    return sum(c.get(k, 0) for k in ('create', 'update', 'delete'))


def shape(srv):
    sl = gpu_slices(srv)
    devs = [d for s in sl for d in s['spec'].get('devices', [])]
    sets = [c['name'] for s in sl for c in s['spec'].get('sharedCounters', [])]
    counts = {s['spec']['pool']['resourceSliceCount'] for s in sl}
    return len(devs), sets, counts, sum('consumesCounters' in d for d in devs)


def run(tree, minor, gates, config_extra=''):
    srv = ApiServer(tempfile.mkdtemp(dir=TMP)).start()
    with srv.state.lock:
        srv.state.version = minor
        srv.state.gates.update(gates or {})
    d = tempfile.mkdtemp(dir=TMP)
    config = os.path.join(d, 'config.yaml')
    with open(config, 'w') as f:
        f.write('backends:\n  nvidia:\n    options:\n      nvmlLibrary: "%s"\n'
                '      migStateDir: "%s"\n%s' % (FAKE_NVML, os.path.join(d, 'mig'), config_extra))
    log = open(os.path.join(d, 'daemon.log'), 'w')
    env = dict(os.environ, FAKE_NVML_DATA=os.path.join(tree, 'nvml.json'),
               FAKE_NVML_STATE=os.path.join(d, 'nvml-state.json'))
    proc = subprocess.Popen([harness.dralet_path(), 'run', '--sysfs-root', tree + '/sys',
                             '--dev-root', tree + '/dev', '--proc-root', tree + '/proc',
                             '--config', config, '--node-name', NODE,
                             '--kubeconfig', srv.kubeconfig,
                             '--registry-dir', os.path.join(d, 'registry'),
                             '--plugins-dir', os.path.join(d, 'plugins'),
                             '--cdi-dir', os.path.join(d, 'cdi')],
                            stdout=log, stderr=subprocess.STDOUT, env=env)
    return srv, proc, log, os.path.join(d, 'daemon.log')


def stop(srv, proc, log, path):
    proc.send_signal(signal.SIGTERM)
    rc = proc.wait(30)
    log.close()
    srv.stop()
    with open(path) as f:
        text = f.read()
    assert rc == 0, text[-3000:]
    return text


def settle(srv, want):
    """Waits for @want(shape) and for the writes to stop; returns the shape."""
    wait_for(lambda: gpu_slices(srv) and want(shape(srv)), 30, interval=0.1,
             what='the slices')
    # every driver's slices written, then quiet: a write loop never gets quiet
    deadline = time.time() + 15
    while True:
        w = writes(srv)
        time.sleep(1.5)
        if writes(srv) == w:
            break
        assert time.time() < deadline, 'still writing after 15 s: %s' % srv.counts()
    assert want(shape(srv)), shape(srv)
    return shape(srv)


def test_newest_with_gate(tree):
    srv, proc, log, path = run(tree, '37', {'DRAPartitionableDevices': True})
    try:
        n, sets, counts, consumers = settle(srv, lambda s: s[0] == 34)
        assert sets == ['gpu-0000-e3-00-0'], sets
        assert counts == {len(gpu_slices(srv))}, counts
        assert consumers == 26, consumers
        harness.check_schema(srv.slices())
        only = [s for s in gpu_slices(srv) if s['spec'].get('sharedCounters')]
        assert len(only) == 1 and not only[0]['spec'].get('devices'), only
        # the layout of counters needs the version: asked once, with the one
        # streaming list of the node's slices (a watch that lists first: no list)
        with srv.state.lock:
            gets = [e['path'] for e in srv.state.log if e['method'] == 'GET']
        assert gets.count('/version') == 1, gets
        slices = [p for p in gets if p.startswith('/apis/resource.k8s.io/v1/resourceslices?')]
        assert len(slices) == 1 and 'sendInitialEvents=true' in slices[0], gets
    finally:
        text = stop(srv, proc, log, path)
    assert 'Kubernetes 1.37' in text and WARNING not in text, text[-3000:]


def test_gate_off_drops_partitions_once(tree):
    srv, proc, log, path = run(tree, '36', None)   # beta, on by default, but off here
    try:
        n, sets, counts, consumers = settle(srv, lambda s: s[0] == 9 and not s[1])
        assert consumers == 0 and counts == {len(gpu_slices(srv))}, (consumers, counts)
    finally:
        text = stop(srv, proc, log, path)
    assert text.count(WARNING) == 1, text[-3000:]
    assert 'publishing without partitionable devices' in text


def test_134_without_counters(tree):
    srv, proc, log, path = run(tree, '34', None)
    try:
        n, sets, counts, consumers = settle(srv, lambda s: s[0] == 9)
        assert not sets and consumers == 0
        c = srv.counts()
        # no counters were ever sent: one create per slice, nothing else
        assert c.get('update', 0) == 0 and c.get('delete', 0) == 0, c
    finally:
        text = stop(srv, proc, log, path)
    assert WARNING not in text and 'Kubernetes 1.34' in text


def test_unknown_version_is_newest(tree):
    srv, proc, log, path = run(tree, None, {'DRAPartitionableDevices': True})
    try:
        settle(srv, lambda s: s[0] == 34 and s[1])
    finally:
        text = stop(srv, proc, log, path)
    assert 'version is unknown' in text


def test_cli_publish_gate_off(tree):
    """`dralet slices --publish` (no version asked: the newest) to a server
    without the gate: warned once, published again without partitions."""
    from harness import Dralet
    srv = ApiServer(tempfile.mkdtemp(dir=TMP)).start()
    cfg = os.path.join(TMP, 'cli-config.yaml')
    with open(cfg, 'w') as f:
        f.write('backends:\n  nvidia:\n    options:\n      nvmlLibrary: "%s"\n'
                '      migStateDir: "%s"\n' % (FAKE_NVML, os.path.join(TMP, 'cli-mig')))
    d = Dralet(srv, None, node=NODE, extra=['--sysfs-root', tree + '/sys', '--dev-root',
                                            tree + '/dev', '--proc-root', tree + '/proc',
                                            '--config', cfg],
               env={'FAKE_NVML_DATA': os.path.join(tree, 'nvml.json'),
                    'FAKE_NVML_STATE': os.path.join(TMP, 'cli-nvml-state.json')}).start()
    try:
        settle(srv, lambda s: s[0] == 9 and not s[1] and s[3] == 0)
    finally:
        d.stop()
        srv.stop()
    log = d.log()
    assert log.count(WARNING) == 1, log[-3000:]
    assert 'publishing again without partitionable devices' in log


def main():
    if not os.path.isfile(FAKE_NVML):
        harness.skip('the fake NVML is not built (make test-libs)')
    tree = node_tree()
    sys.exit(harness.run_tests((test_newest_with_gate, test_gate_off_drops_partitions_once,
                                test_134_without_counters, test_unknown_version_is_newest,
                                test_cli_publish_gate_off), TMP, args=(tree,)))


if __name__ == '__main__':
    main()
