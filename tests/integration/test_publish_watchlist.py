#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""dralet's informer starting with a streaming list (Kubernetes' WatchList: one watch with
sendInitialEvents=true whose initial ADDED events are the list, ended by a bookmark
annotated k8s.io/initial-events-end) against the test apiserver (tests/apiserver): a fresh
start sends no list at all; the initial events fill the caches as a list does (stale slices
deleted, another driver's untouched, unchanged ones not rewritten); a server without the
WatchList gate (422) gets a list and a watch, and never a streaming list again; a stream
cut before its end bookmark is retried and converges, one answered by an ERROR event gets a
plain list at once; a driver published while the initial
events come gets a second streaming list."""
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'apiserver'))
import harness  # noqa: E402
from harness import ApiServer, Dralet, converged, wait_for, write_devices  # noqa: E402

NODE = 'node-1'
GPU, NET = 'gpu.dralet.dev', 'net.dralet.dev'
TMP = tempfile.mkdtemp(prefix='dralet-watchlist-')
REFUSED = 'the server does not stream lists'


def names(n):
    return ['dev-%04d' % i for i in range(n)]


def server(**kw):
    return ApiServer(tempfile.mkdtemp(dir=TMP), **kw).start()


def writes(c):
    return sum(c.get(k, 0) for k in ('create', 'update', 'delete'))


def slice_gets(srv):
    """The GETs of the node's slices served, in order: (path, status)."""
    with srv.state.lock:
        return [(e['path'], e['status']) for e in srv.state.log
                if e['method'] == 'GET' and e['path'].startswith(
                    '/apis/resource.k8s.io/v1/resourceslices?')]


def is_streaming(path):
    return 'sendInitialEvents=true' in path


def test_fresh_start_sends_no_list():
    """One request reads the node's slices for both drivers: the streaming list, a consistent
    read (no resourceVersion) with the options the real server requires; no list."""
    srv = server()
    dev = os.path.join(TMP, 'fresh.json')
    write_devices(dev, {GPU: 300, NET: 2})
    d = Dralet(srv, dev, follow=False)
    assert d.run() == 0, d.log()
    assert converged(srv, NODE, {GPU: names(300), NET: names(2)}), json.dumps(srv.slices())[:2000]
    c = srv.counts()
    assert c.get('list', 0) == 0 and c.get('watch') == 1 and c.get('get') == 1, c
    assert c.get('create') == 4 and writes(c) == 4 and c['total'] == 6, c
    (path, code), = slice_gets(srv)
    assert code == 200 and is_streaming(path), path
    for opt in ('watch=true', 'resourceVersionMatch=NotOlderThan', 'allowWatchBookmarks=true',
                'fieldSelector=spec.nodeName%3D' + NODE):
        assert opt in path, path
    assert 'resourceVersion=' not in path and 'limit=' not in path, path
    srv.stop()


def test_initial_events_fill_the_caches():
    """The slices already on the node come as initial events: a stale pool of ours is deleted,
    another driver's slices and ours on another node are left alone, and the unchanged
    slices are not written again (the caches hold them before the first sync)."""
    srv = server()
    dev = os.path.join(TMP, 'existing.json')
    write_devices(dev, {GPU: 300, NET: 2})
    assert Dralet(srv, dev, follow=False).run() == 0
    ours = {s['metadata']['name']: s['metadata']['resourceVersion'] for s in srv.slices(NODE)}
    foreign = [srv.seed_slice('node-1-dranet-a', 'dra.net', NODE),
               srv.seed_slice('node-1-example-a', 'gpu.example.com', NODE, devices=('g-0', 'g-1')),
               srv.seed_slice('node-2-gpu-a', GPU, 'node-2')]
    srv.seed_slice('node-1-gpu-old', GPU, NODE, pool='node-1-retired')   # an old instance's
    srv.reset_counts()
    d = Dralet(srv, dev)
    d.start()
    try:
        wait_for(lambda: 'node-1-gpu-old' not in srv.state.slices, 30, what='the stale pool deleted')
        time.sleep(0.5)
        c = srv.counts()
        assert c.get('delete') == 1 and writes(c) == 1, c
        assert c.get('list', 0) == 0 and c.get('watch') == 1 and c.get('get', 0) == 0, c
        assert converged(srv, NODE, {GPU: names(300), NET: names(2)})
        now = {s['metadata']['name']: s['metadata']['resourceVersion']
               for s in srv.slices(NODE) if s['spec']['driver'] in (GPU, NET)}
        assert now == ours, (ours, now)
        for obj in foreign:
            assert srv.state.slices.get(obj['metadata']['name']) == obj, obj['metadata']['name']
        # the same stream goes on as the watch: it sees a wipe and repairs it
        srv.reset_counts()
        srv.wipe(NODE, GPU)
        wait_for(lambda: converged(srv, NODE, {GPU: names(300), NET: names(2)}), 30,
                 what='repair of a wipe')
        c = srv.counts()
        assert c.get('list', 0) == 0 and c.get('watch', 0) == 0, c
    finally:
        rc = d.stop()
        srv.stop()
    assert rc == 0, d.log()[-3000:]


def published_by_list_and_watch(srv, expected):
    """Waits for @expected published after one refused or failed streaming list, by a
    plain list and a watch from it; returns the slice GETs [(path, code)]."""
    wait_for(lambda: converged(srv, NODE, expected), 30, what='publish by list + watch')
    wait_for(lambda: srv.counts().get('watch', 0) >= 2, 30, what='the watch after the list')
    gets = slice_gets(srv)
    assert [is_streaming(p) for p, _ in gets] == [True, False, False], gets
    assert 'limit=500' in gets[1][0] and 'resourceVersion=' in gets[2][0], gets
    return gets


def test_server_without_watch_list():
    """A server without the WatchList gate answers the streaming list 422: dralet lists and
    watches instead, says so once, and lists again after a watch expiry without trying the
    streaming list again."""
    srv = server(watch_list=False)
    dev = os.path.join(TMP, 'nowl.json')
    write_devices(dev, {GPU: 300, NET: 2})
    d = Dralet(srv, dev).start()
    try:
        expected = {GPU: names(300), NET: names(2)}
        gets = published_by_list_and_watch(srv, expected)
        assert [code for _, code in gets] == [422, 200, 200], gets
        c = srv.counts()
        assert c.get('list') == 1 and c.get('watch') == 2 and c.get('status_422') == 1, c
        # the watch expires (410): a list again, no streaming list
        time.sleep(0.3)
        srv.reset_counts()
        srv.expire_watches()
        wait_for(lambda: srv.counts().get('list', 0) >= 1 and srv.counts().get('watch', 0) >= 1,
                 30, what='list + watch after the 410')
        with srv.state.lock:
            srv.state.watch_expire = False
        assert not [p for p, _ in slice_gets(srv) if is_streaming(p)], slice_gets(srv)
        assert srv.counts().get('status_422', 0) == 0, srv.counts()
        # that watch repairs a wipe
        time.sleep(0.3)
        srv.wipe(NODE)
        wait_for(lambda: converged(srv, NODE, expected), 30, what='repair after the relist')
        assert d.log().count(REFUSED) == 1, d.log()
    finally:
        rc = d.stop()
        srv.stop()
    assert rc == 0, d.log()[-3000:]


def test_stream_cut_before_its_end():
    """Streaming lists cut after 2 of their initial events (before the end bookmark) are
    failed lists: nothing is written from half a list, they are retried, and once the server
    lets one finish dralet converges with the one write the change needs."""
    srv = server()
    dev = os.path.join(TMP, 'cut.json')
    write_devices(dev, {GPU: 300, NET: 2})      # 4 slices on the node
    assert Dralet(srv, dev, follow=False).run() == 0
    write_devices(dev, {GPU: 300, NET: 3})      # one NET device more: one update
    srv.set_faults(initialCutAfter=2)
    srv.reset_counts()
    d = Dralet(srv, dev).start()
    try:
        wait_for(lambda: srv.counts().get('fault_initialcut', 0) >= 3, 30,
                 what='3 streaming lists cut')
        c = srv.counts()
        assert writes(c) == 0 and c.get('list', 0) == 0, c
        srv.set_faults()
        expected = {GPU: names(300), NET: names(3)}
        wait_for(lambda: converged(srv, NODE, expected), 30, what='convergence after the cuts')
        time.sleep(0.5)
        c = srv.counts()
        assert writes(c) == 1 and c.get('update') == 1, c
        assert c.get('list', 0) == 0, c
        assert all(is_streaming(p) for p, _ in slice_gets(srv)), slice_gets(srv)
        assert 'streaming list of the ResourceSlices of node %s failed' % NODE in d.log()
        assert REFUSED not in d.log()
    finally:
        rc = d.stop()
        srv.stop()
    assert rc == 0, d.log()[-3000:]


def test_driver_added_during_the_stream():
    """A driver published while a streaming list is in its initial events (paused by the
    server after 4 of them, among them the new driver's stale slice) missed some of them:
    the list completes for the drivers in it, then a second streaming list fills the new
    driver's cache, so its stale pool is deleted and its current slice is not written
    again."""
    srv = server()
    dev = os.path.join(TMP, 'added.json')
    write_devices(dev, {GPU: 300, NET: 2})
    assert Dralet(srv, dev, follow=False).run() == 0
    net_rv = {s['metadata']['name']: s['metadata']['resourceVersion'] for s in srv.slices(NODE, NET)}
    srv.seed_slice('node-1-net-old', NET, NODE, pool='node-1-retired')   # an old instance's
    write_devices(dev, {GPU: 300})
    srv.set_faults(initialHoldAfter=4)     # after GPU's 3 and the stale NET one
    srv.reset_counts()
    d = Dralet(srv, dev).start()
    try:
        wait_for(lambda: srv.counts().get('fault_initialhold', 0) == 1, 30,
                 what='the streaming list paused')
        write_devices(dev, {GPU: 300, NET: 2})
        d.reload()
        wait_for(lambda: 'SIGHUP: reading the devices again' in d.log(), 30, what='the reload')
        srv.set_faults()
        wait_for(lambda: 'node-1-net-old' not in srv.state.slices, 30, what='the stale pool deleted')
        time.sleep(0.5)
        c = srv.counts()
        assert c.get('delete') == 1 and writes(c) == 1, c
        assert c.get('list', 0) == 0 and c.get('watch') == 2, c
        assert all(is_streaming(p) for p, _ in slice_gets(srv)), slice_gets(srv)
        assert converged(srv, NODE, {GPU: names(300), NET: names(2)})
        now = {s['metadata']['name']: s['metadata']['resourceVersion'] for s in srv.slices(NODE, NET)}
        assert now == net_rv, (net_rv, now)
    finally:
        rc = d.stop()
        srv.stop()
    assert rc == 0, d.log()[-3000:]


def test_stream_error_lists_once():
    """An ERROR event instead of the initial events (a server whose storage cannot stream
    lists): one plain list at once and a watch from it, as client-go's reflector falls
    back; not remembered, so the relist after a watch expiry streams again."""
    srv = server()
    dev = os.path.join(TMP, 'error.json')
    write_devices(dev, {GPU: 300, NET: 2})
    srv.set_faults(initialError=True)
    d = Dralet(srv, dev).start()
    try:
        expected = {GPU: names(300), NET: names(2)}
        published_by_list_and_watch(srv, expected)
        assert 'RequestWatchProgress is disabled' in d.log()
        assert REFUSED not in d.log()
        # the watch expires (410): the relist streams again, and serves as the watch
        srv.set_faults()
        time.sleep(0.3)
        srv.reset_counts()
        srv.expire_watches()
        wait_for(lambda: [p for p, c in slice_gets(srv) if is_streaming(p) and c == 200], 30,
                 what='a streaming list after the 410')
        with srv.state.lock:
            srv.state.watch_expire = False
        time.sleep(0.3)
        srv.wipe(NODE)
        wait_for(lambda: converged(srv, NODE, expected), 30, what='repair after the relist')
        assert srv.counts().get('list', 0) == 0, srv.counts()
    finally:
        rc = d.stop()
        srv.stop()
    assert rc == 0, d.log()[-3000:]


def main():
    return harness.run_tests(harness.module_tests(globals()), TMP, only=sys.argv[1:])


if __name__ == '__main__':
    sys.exit(main())
