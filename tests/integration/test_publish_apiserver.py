#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""dralet publishing ResourceSlices to the test apiserver (tests/apiserver):
first publish and its request count (one streaming list of the node's slices, a watch
that lists first, for all drivers; the Node only to create; another driver's slices
untouched), kubelet-style wipe repaired by the watch events, one generation bump and
minimal writes when a device comes or goes, a hot-plug burst debounced into one round,
dropped alpha fields, token rotation, client certificates, in-cluster configuration,
TLS verification, and no token in any log line. Faults, retries and backoff:
test_publish_apiserver_retries.py."""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'apiserver'))
import harness  # noqa: E402
from apiserver import make_certs  # noqa: E402
from harness import Dralet, converged, wait_for, write_devices  # noqa: E402
from publish_common import GPU, NET, NODE, TMP, names, server, writes  # noqa: E402

def wipe_repaired_by_watch(srv, expected, what='repair of a wipe'):
    """Wipes the node's slices as the kubelet does and waits until they are back.
    The cause is asserted, not a time (the repair time is in make bench): dralet
    has no periodic resync, so only the watch's DELETED events can start the
    repair, on the watch that was open (no list, no new watch). Returns how
    many slices the wipe deleted."""
    srv.reset_counts()
    n = srv.wipe(NODE)
    took = wait_for(lambda: converged(srv, NODE, expected), 60, what=what)
    c = srv.counts()
    assert writes(c) >= 1 and c.get('list', 0) == 0 and c.get('watch', 0) == 0, c
    print('%s: %.2fs' % (what, took))
    return n


def test_first_publish_and_requests():
    srv = server()
    dev = os.path.join(TMP, 'first.json')
    write_devices(dev, {GPU: 300, NET: 2})
    d = Dralet(srv, dev, follow=False, extra=['--stats'])
    rc = d.run()
    assert rc == 0, d.log()
    expected = {GPU: names(300), NET: names(2)}
    assert converged(srv, NODE, expected), json.dumps(srv.slices())[:2000]
    slices = srv.slices()
    harness.check_schema(slices)
    node_uid = srv.state.nodes[NODE]['metadata']['uid']
    for s in slices:
        assert s['metadata']['name'].startswith('%s-%s-' % (NODE, s['spec']['driver']))
        ref = s['metadata']['ownerReferences'][0]
        assert ref == {'apiVersion': 'v1', 'kind': 'Node', 'name': NODE, 'uid': node_uid,
                       'controller': True}, ref
        assert s['spec']['nodeName'] == NODE and s['spec']['pool']['name'] == NODE
        assert s['spec']['pool']['generation'] == 1
    c = srv.counts()
    # slices + one streaming list (a watch) for both drivers + the node (new
    # slices are owned by it): the informer is per node, not per driver
    assert c.get('create') == 4 and writes(c) == 4, c
    assert c.get('list', 0) == 0 and c.get('watch') == 1 and c.get('get') == 1, c
    assert c['total'] == 4 + 1 + 1, c
    assert c.get('unauthorized', 0) == 0, c
    ua = {e['ua'] for e in srv.state.log}
    assert all(u.startswith('dralet/') for u in ua), ua
    # a second run against the published state writes nothing
    srv.reset_counts()
    rc = Dralet(srv, dev, follow=False).run()
    assert rc == 0
    c = srv.counts()
    assert writes(c) == 0, c
    # nothing to create: the Node is not read either
    assert c.get('list', 0) == 0 and c.get('watch') == 1 and c.get('get', 0) == 0, c
    srv.stop()


def test_wipe_and_device_changes():
    srv = server()
    dev = os.path.join(TMP, 'follow.json')
    write_devices(dev, {GPU: 200, NET: 4})
    d = Dralet(srv, dev).start()
    try:
        expected = {GPU: names(200), NET: names(4)}
        wait_for(lambda: converged(srv, NODE, expected), 60, what='first publish')
        time.sleep(0.3)
        # kubelet-style wipe: deletecollection by node; repaired within 2 s
        for rnd in range(3):
            assert wipe_repaired_by_watch(srv, expected) == 3
            time.sleep(0.3)
        # somebody deletes or edits one slice: repaired too
        victim = srv.slices(NODE, GPU)[0]['metadata']['name']
        srv.state.lock.acquire()
        try:
            obj = srv.state.slices.pop(victim)
            obj['metadata']['resourceVersion'] = srv.state.next_rv()
            srv.state.emit('DELETED', obj)
        finally:
            srv.state.lock.release()
        wait_for(lambda: converged(srv, NODE, expected), 60, what='repair of one slice')
        time.sleep(0.3)
        # a device appears: one generation bump, writes = the pool's slices (updates)
        gen_before = srv.slices(NODE, GPU)[0]['spec']['pool']['generation']
        srv.reset_counts()
        write_devices(dev, {GPU: 201, NET: 4})
        d.reload()
        expected = {GPU: names(201), NET: names(4)}
        wait_for(lambda: converged(srv, NODE, expected), 60, what='device added')
        time.sleep(0.5)
        c = srv.counts()
        gens = {s['spec']['pool']['generation'] for s in srv.slices(NODE, GPU)}
        assert gens == {gen_before + 1}, (gen_before, gens)
        assert c.get('update') == 2 and c.get('create', 0) == 0 and c.get('delete', 0) == 0, c
        net_gen = {s['spec']['pool']['generation'] for s in srv.slices(NODE, NET)}
        assert net_gen == {1}, net_gen     # the untouched driver: no write, no bump
        # a device disappears (single-slice pool): one bump, one update
        srv.reset_counts()
        write_devices(dev, {GPU: 201, NET: 3})
        d.reload()
        expected = {GPU: names(201), NET: names(3)}
        wait_for(lambda: converged(srv, NODE, expected), 60, what='device removed')
        time.sleep(0.5)
        c = srv.counts()
        assert writes(c) == 1 and c.get('update') == 1, c
        assert {s['spec']['pool']['generation'] for s in srv.slices(NODE, NET)} == {2}
        # a driver goes away: its slices are deleted
        write_devices(dev, {GPU: 201})
        d.reload()
        wait_for(lambda: not srv.slices(NODE, NET), 60, what='driver removed')
        assert d.alive()
    finally:
        rc = d.stop()
        log = d.log()
        srv.stop()
    assert rc == 0, log
    assert srv.token() not in log


def test_burst_is_one_round():
    """A hot-plug burst (5 changes in quick succession) is published in one round."""
    srv = server()
    dev = os.path.join(TMP, 'burst.json')
    write_devices(dev, {GPU: 201, NET: 3})
    # a longer quiet time than the default 100 ms, so that slow (sanitizer) builds,
    # which need longer to re-read the devices, still see one burst
    d = Dralet(srv, dev, extra=['--debounce', '600']).start()
    try:
        wait_for(lambda: converged(srv, NODE, {GPU: names(201), NET: names(3)}), 60)
        time.sleep(0.8)
        srv.reset_counts()
        for i in range(5):
            write_devices(dev, {GPU: 201, NET: 3 + i + 1})
            d.reload()
            time.sleep(0.01)
        expected = {GPU: names(201), NET: names(8)}
        wait_for(lambda: converged(srv, NODE, expected), 60, what='burst')
        time.sleep(0.8)
        c = srv.counts()
        assert writes(c) == 1, c
        assert {s['spec']['pool']['generation'] for s in srv.slices(NODE, NET)} == {2}
    finally:
        d.stop()
        srv.stop()


def test_dropped_alpha_fields():
    srv = server()
    dev = os.path.join(TMP, 'taints.json')
    doc = harness.devices_doc({GPU: 3})
    doc['devices'][1]['health'] = 'Unhealthy'
    write_devices(dev, doc=doc)
    cfg = os.path.join(TMP, 'taints-config.yaml')
    with open(cfg, 'w') as f:
        f.write('featureGates:\n  DRADeviceTaints: true\n')
    d = Dralet(srv, dev, extra=['--config', cfg]).start()
    try:
        wait_for(lambda: converged(srv, NODE, {GPU: names(3)}), 60)
        time.sleep(1)
        c = srv.counts()
        assert writes(c) == 1, c              # no update loop over the dropped taint
        log = d.log()
        assert log.count('feature gate DRADeviceTaints is probably disabled') == 1, log
    finally:
        d.stop()
        srv.stop()
    # with the gate on, the taint is stored (timeAdded set by the server)
    srv = server()
    with srv.state.lock:
        srv.state.gates['DRADeviceTaints'] = True
    d = Dralet(srv, dev, extra=['--config', cfg]).start()
    try:
        wait_for(lambda: converged(srv, NODE, {GPU: names(3)}), 60)
        time.sleep(0.5)
        devs = [x for s in srv.slices() for x in s['spec']['devices']]
        tainted = [x for x in devs if x.get('taints')]
        assert len(tainted) == 1 and tainted[0]['name'] == 'dev-0001', devs
        assert tainted[0]['taints'][0]['key'] == 'dralet.dev/unhealthy'
        assert 'timeAdded' in tainted[0]['taints'][0]
        assert writes(srv.counts()) == 1, srv.counts()   # timeAdded is no difference
        assert 'probably disabled' not in d.log()
    finally:
        d.stop()
        srv.stop()


def test_dropped_consumable_capacity():
    """A shared device on a server without DRAConsumableCapacity (1.34): the
    server drops allowMultipleAllocations and requestPolicy; one write, one
    warning, no loop. With the gate on, both are stored as sent."""
    dev = os.path.join(TMP, 'shared.json')
    doc = harness.devices_doc({GPU: 2})
    shared = doc['devices'][0]
    shared['allowMultipleAllocations'] = True
    shared['capacity'] = {
        'memory': {'value': '80Gi', 'requestPolicy': {
            'default': '1Gi', 'validRange': {'min': '1Gi', 'max': '80Gi', 'step': '1Gi'}}},
        'shares': {'value': '100', 'requestPolicy': {
            'default': '10', 'validValues': ['10', '25', '50', '100']}}}
    write_devices(dev, doc=doc)
    srv = server()
    d = Dralet(srv, dev).start()
    try:
        wait_for(lambda: converged(srv, NODE, {GPU: names(2)}), 10)
        time.sleep(1.5)
        c = srv.counts()
        assert writes(c) == 1, c              # no update loop over the dropped fields
        devs = [x for s in srv.slices() for x in s['spec']['devices']]
        assert not any('allowMultipleAllocations' in x for x in devs), devs
        log = d.log()
        assert log.count('feature gate DRAConsumableCapacity is probably disabled') == 1, log
    finally:
        d.stop()
        srv.stop()
    srv = server()
    with srv.state.lock:
        srv.state.gates['DRAConsumableCapacity'] = True
    d = Dralet(srv, dev).start()
    try:
        wait_for(lambda: converged(srv, NODE, {GPU: names(2)}), 10)
        time.sleep(0.5)
        harness.check_schema(srv.slices())
        devs = {x['name']: x for s in srv.slices() for x in s['spec']['devices']}
        x = devs['dev-0000']
        assert x['allowMultipleAllocations'] is True, x
        assert x['capacity']['memory']['requestPolicy'] == {
            'default': '1Gi', 'validRange': {'min': '1Gi', 'max': '80Gi', 'step': '1Gi'}}, x
        assert x['capacity']['shares']['requestPolicy']['validValues'] == ['10', '25', '50', '100']
        assert 'allowMultipleAllocations' not in devs['dev-0001']
        assert writes(srv.counts()) == 1, srv.counts()
        assert 'probably disabled' not in d.log()
    finally:
        d.stop()
        srv.stop()


def test_token_rotation_and_secrets():
    srv = server()
    dev = os.path.join(TMP, 'token.json')
    write_devices(dev, {GPU: 2})
    d = Dralet(srv, dev, verbosity=10).start()
    tokens = [srv.token()]
    try:
        wait_for(lambda: converged(srv, NODE, {GPU: names(2)}), 60)
        for i in range(3):
            srv.rotate_token()
            tokens.append(srv.token())
            srv.wipe(NODE)
            wait_for(lambda: converged(srv, NODE, {GPU: names(2)}), 60,
                     what='publish with a rotated token')
        c = srv.counts()
        assert c.get('bad_token', 0) <= 6, c
        assert d.alive()
    finally:
        d.stop()
        log = d.log()
        srv.stop()
    for t in tokens:
        assert t not in log, 'token in the log'
        assert t[len('test-token-'):] not in log
    assert 'Bearer' not in log and 'Authorization' not in log


def test_static_token_client_cert_and_in_cluster():
    srv = server()
    dev = os.path.join(TMP, 'cert.json')
    write_devices(dev, {GPU: 2})
    # a client certificate and key instead of a token
    d = Dralet(srv, dev, kubeconfig=srv.kubeconfig_cert, follow=False)
    assert d.run() == 0, d.log()
    assert converged(srv, NODE, {GPU: names(2)})
    # a static token in the kubeconfig, at the highest verbosity: never logged
    with open(srv.kubeconfig) as f:
        kc = json.load(f)
    kc['users'][0]['user'] = {'token': srv.token()}
    static = os.path.join(srv.dir, 'kubeconfig-static')
    with open(static, 'w') as f:
        json.dump(kc, f)
    srv.wipe(NODE)
    d = Dralet(srv, dev, kubeconfig=static, follow=False, verbosity=10)
    assert d.run() == 0, d.log()
    assert srv.token() not in d.log()
    # in-cluster: KUBERNETES_SERVICE_HOST/PORT and the service-account files
    sa = os.path.join(srv.dir, 'sa')
    os.makedirs(sa)
    shutil.copy(srv.token_file, os.path.join(sa, 'token'))
    shutil.copy(srv.ca, os.path.join(sa, 'ca.crt'))
    srv.wipe(NODE)
    d = Dralet(srv, dev, kubeconfig=False, follow=False,
               extra=['--service-account-dir', sa],
               env={'KUBERNETES_SERVICE_HOST': '127.0.0.1',
                    'KUBERNETES_SERVICE_PORT': str(srv.port)})
    assert d.run() == 0, d.log()
    assert converged(srv, NODE, {GPU: names(2)})
    assert 'in-cluster' in d.log()
    # TLS is verified: a kubeconfig trusting another CA publishes nothing
    kc['clusters'][0]['cluster']['certificate-authority'] = '/etc/ssl/certs/ca-certificates.crt'
    wrong = os.path.join(srv.dir, 'kubeconfig-wrong-ca')
    with open(wrong, 'w') as f:
        json.dump(kc, f)
    srv.wipe(NODE)
    srv.reset_counts()
    d = Dralet(srv, dev, kubeconfig=wrong, follow=False, extra=['--timeout', '3'])
    assert d.run() == 1
    assert srv.counts().get('total', 0) == 0, srv.counts()
    assert 'certificate' in d.log().lower(), d.log()
    srv.stop()


def test_node_uid_from_token():
    """In a pod, the new slices' owner (the Node's UID) comes from the ServiceAccount token
    (kubernetes.io.node): no GET of the Node. A token of a pod on another node, or one
    without those claims (every other test here), and the Node is read instead."""
    for bound, node_gets in ((NODE, 0), ('node-elsewhere', 1)):
        srv = server(bound_node=bound)
        dev = os.path.join(TMP, 'bound.json')
        write_devices(dev, {GPU: 2})
        d = Dralet(srv, dev, follow=False, verbosity=10)
        assert d.run() == 0, d.log()
        assert converged(srv, NODE, {GPU: names(2)})
        node_uid = srv.state.nodes[NODE]['metadata']['uid']
        for sl in srv.slices(NODE, GPU):
            assert sl['metadata']['ownerReferences'][0]['uid'] == node_uid, sl['metadata']
        assert len(served_gets(srv, '/api/v1/nodes/')) == node_gets, (bound, srv.counts())
        assert ('from the service account token' in d.log()) == (node_gets == 0), d.log()
        assert srv.token() not in d.log()
        srv.stop()


def test_only_the_configured_ca():
    """A kubeconfig's CA is the only one trusted, as in client-go: libcurl's default CA
    directory (/etc/ssl/certs) is not consulted besides it. Here the test server's CA is in
    that directory (bind-mounted in a private mount namespace), and a kubeconfig naming
    another CA, as a file and as certificate-authority-data, publishes nothing; the right
    CA, in the same namespace, publishes."""
    srv = server()
    dev = os.path.join(TMP, 'ca.json')
    write_devices(dev, {GPU: 2})
    capath = tempfile.mkdtemp(dir=TMP)
    subject_hash = subprocess.check_output(['openssl', 'x509', '-hash', '-noout', '-in', srv.ca],
                                           text=True).strip()
    shutil.copy(srv.ca, os.path.join(capath, subject_hash + '.0'))
    other = make_certs(tempfile.mkdtemp(dir=TMP))   # another test CA
    with open(srv.kubeconfig) as f:
        kc = json.load(f)
    cluster = kc['clusters'][0]['cluster']
    with open(other, 'rb') as f:
        other_data = base64.b64encode(f.read()).decode()
    variants = {'right': dict(cluster),
                'file': dict(cluster, **{'certificate-authority': other}),
                'data': {k: v for k, v in dict(cluster, **{'certificate-authority-data':
                                                            other_data}).items()
                         if k != 'certificate-authority'}}
    for name, c in variants.items():
        kc['clusters'][0]['cluster'] = c
        path = os.path.join(srv.dir, 'kubeconfig-ca-' + name)
        with open(path, 'w') as f:
            json.dump(kc, f)
        srv.wipe(NODE)
        srv.reset_counts()
        d = Dralet(srv, dev, kubeconfig=path, follow=False, extra=['--timeout', '3'])
        d.args = ['unshare', '--mount', '--map-root-user', 'sh', '-c',
                  'mount --bind "$0" /etc/ssl/certs && exec "$@"', capath] + d.args
        rc = d.run()
        if name == 'right':
            assert rc == 0 and converged(srv, NODE, {GPU: names(2)}), d.log()
            continue
        assert rc == 1, (name, d.log())
        assert srv.counts().get('total', 0) == 0, (name, srv.counts())
        assert 'certificate' in d.log().lower(), d.log()
    srv.stop()


def test_many_functions_split():
    """A node with more than 1,000 functions: correctly split, schema-valid slices."""
    srv = server()
    dev = os.path.join(TMP, 'big.json')
    spec = {GPU: 64, NET: 700, 'sriov.dralet.dev': 1100 - 64 - 700 + 100,
            'accel.dralet.dev': 8}
    write_devices(dev, spec)
    d = Dralet(srv, dev, follow=False)
    assert d.run() == 0, d.log()
    expected = {k: names(v) for k, v in spec.items()}
    assert converged(srv, NODE, expected)
    slices = srv.slices()
    harness.check_schema(slices)
    by_driver = {}
    for s in slices:
        by_driver.setdefault(s['spec']['driver'], []).append(len(s['spec']['devices']))
    for driver, n in spec.items():
        sizes = sorted(by_driver[driver], reverse=True)
        assert sum(sizes) == n and all(x <= 128 for x in sizes), (driver, sizes)
        assert len(sizes) == (n + 127) // 128, (driver, sizes)
    srv.stop()


FPGA = 'fpga.dralet.dev'      # served by the daemon on hgx-h100, without devices there


def clone_json(obj):
    return json.loads(json.dumps(obj))


def served_gets(srv, prefix):
    with srv.state.lock:
        return [e for e in srv.state.log if e['method'] == 'GET' and e['path'].startswith(prefix)]


def test_daemon_publishes_and_repairs():
    """`dralet run` (the daemon) publishes a board's slices through the apiserver store and
    repairs a kubelet-style wipe. One streaming list (a watch that lists first) of the
    node's slices serves all its five drivers; it deletes the stale slices of a driver it serves without devices (an
    old instance's, at start and when they come back during a rolling update) and never
    touches another driver's slices on the node nor its own driver's on another node."""
    import signal
    import subprocess
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    board = os.path.join(top, 'boards', 'hgx-h100.yaml')
    if not os.path.exists(board):
        print('(no boards/hgx-h100.yaml: daemon check skipped)')
        return
    out = subprocess.run([harness.dralet_path(), 'slices', '--board', board, '--node-name', NODE,
                          '-o', 'json'], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    expected = {}
    items = json.loads(out.stdout)['items']
    # GET /version only for a layout of counters (partitionable devices)
    with_counters = any(s['spec'].get('sharedCounters') for s in items)
    for s in items:
        expected.setdefault(s['spec']['driver'], []).extend(d['name'] for d in s['spec']['devices'])
    srv = server()
    foreign = [srv.seed_slice('node-1-dranet-a', 'dra.net', NODE),
               srv.seed_slice('node-1-example-a', 'gpu.example.com', NODE, devices=('gpu-0', 'gpu-1')),
               srv.seed_slice('node-2-gpu-a', 'gpu.dralet.dev', 'node-2')]
    srv.seed_slice('node-1-fpga-old', FPGA, NODE)     # an old instance's
    run_dir = tempfile.mkdtemp(dir=TMP)
    log = open(os.path.join(run_dir, 'daemon.log'), 'w')
    proc = subprocess.Popen([harness.dralet_path(), 'run', '--board', board, '--node-name', NODE,
                             '--kubeconfig', srv.kubeconfig,
                             '--registry-dir', os.path.join(run_dir, 'registry'),
                             '--plugins-dir', os.path.join(run_dir, 'plugins'),
                             '--cdi-dir', os.path.join(run_dir, 'cdi')],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        expected[FPGA] = []
        wait_for(lambda: converged(srv, NODE, expected), 30, what='the daemon publishing')
        harness.check_schema(srv.slices(NODE, 'gpu.dralet.dev') + srv.slices(NODE, 'net.dralet.dev'))
        wait_for(lambda: srv.counts().get('watch', 0) >= 1, 30, what='the watch')
        time.sleep(0.3)
        c = srv.counts()
        # one streaming list of the node's slices for all five drivers, the Node
        # (the new slices' owner), the stale slice deleted and no other
        lists = served_gets(srv, '/apis/resource.k8s.io/v1/resourceslices?')
        assert c.get('list', 0) == 0 and c.get('watch') == 1, c
        assert all('fieldSelector=spec.nodeName%3D' + NODE in e['path'] and 'spec.driver' not in
                   e['path'] for e in lists), [e['path'] for e in lists]
        assert len(served_gets(srv, '/api/v1/nodes/')) == 1, c
        assert len(served_gets(srv, '/version')) == int(with_counters), c
        assert c.get('total') == 1 + 1 + int(with_counters) + c['delete'] + c['create'], c
        assert c.get('delete') == 1 and c.get('update', 0) == 0, c
        assert c.get('create') == sum(len(srv.slices(NODE, d)) for d in expected), c
        # the others' slices: untouched (same resourceVersion), still there
        for obj in foreign:
            assert srv.state.slices.get(obj['metadata']['name']) == obj, obj['metadata']['name']
        # during a rolling update the old instance publishes the driver again: the
        # watch sees it and deletes it; another driver's new or changed slice is left
        srv.reset_counts()
        srv.seed_slice('node-1-fpga-old-2', FPGA, NODE)
        foreign.append(srv.seed_slice('node-1-dranet-b', 'dra.net', NODE))
        foreign[0] = srv.seed_slice('node-1-dranet-a', 'dra.net', NODE, devices=('x-0', 'x-1'))
        wait_for(lambda: not srv.slices(NODE, FPGA), 30, what='the stale slice deleted again')
        time.sleep(0.3)
        c = srv.counts()
        assert c.get('delete') == 1 and writes(c) == 1, c
        assert c.get('list', 0) == 0 and c.get('watch', 0) == 0, c
        for obj in foreign:
            assert srv.state.slices.get(obj['metadata']['name']) == obj, obj['metadata']['name']
        harness.check_schema(srv.slices(NODE, 'gpu.dralet.dev') + srv.slices(NODE, 'net.dralet.dev'))
        time.sleep(0.3)
        wipe_repaired_by_watch(srv, expected, 'the daemon repairing')
    finally:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(30)
        log.close()
        srv.stop()
    with open(os.path.join(run_dir, 'daemon.log')) as f:
        text = f.read()
    assert rc == 0, text[-3000:]
    assert srv.token() not in text


def main():
    return harness.run_tests(harness.module_tests(globals()), TMP, only=sys.argv[1:])


if __name__ == '__main__':
    sys.exit(main())
