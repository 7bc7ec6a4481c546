#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""dralet publishing ResourceSlices to the test apiserver (tests/apiserver):
first publish and its request count (one streaming list of the node's slices, a watch
that lists first, for all drivers; a list in pages and a watch where the server refuses
it; the Node only to create; another driver's slices untouched; a 403 list asked again
after 5-10 s), kubelet-style wipe repaired by the watch events,
one generation bump and minimal writes when a device comes or goes, a
hot-plug burst debounced into one round, convergence under injected faults
(and staying converged once they stop), 410 relists, 422 without a loop,
dropped alpha fields, token rotation, client certificates, in-cluster
configuration, TLS verification, and no token in any log line."""
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'apiserver'))
import harness  # noqa: E402
from harness import ApiServer, Dralet, converged, wait_for, write_devices  # noqa: E402

NODE = 'node-1'
GPU, NET = 'gpu.dralet.dev', 'net.dralet.dev'
TMP = tempfile.mkdtemp(prefix='dralet-publish-')


def names(n, prefix='dev-'):
    return ['%s%04d' % (prefix, i) for i in range(n)]


def server(**kw):
    return ApiServer(tempfile.mkdtemp(dir=TMP), **kw).start()


def writes(counts):
    return sum(counts.get(k, 0) for k in ('create', 'update', 'delete'))


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


RETRY_WATCH = 'the ResourceSlices of node %s again in ' % NODE   # listing or watching


def watch_retry_delays(log):
    """The delays (ms) before dralet lists or watches again, in the order logged."""
    return [int(line.split(RETRY_WATCH, 1)[1].split()[0])
            for line in log.splitlines() if RETRY_WATCH in line]


def test_watch_cuts_do_not_add_up():
    """Watches that each deliver events before they are cut prove the server works: the
    watch backoff starts again every time, so dralet keeps watching (and repairs a wipe at
    once) instead of waiting ever longer between watches, up to the 30 s cap."""
    srv = server(bookmark_interval=0.1)
    dev = os.path.join(TMP, 'cuts.json')
    write_devices(dev, {GPU: 3})
    d = Dralet(srv, dev).start()
    try:
        expected = {GPU: names(3)}
        wait_for(lambda: converged(srv, NODE, expected), 60, what='first publish')
        # the cause, from dralet's own log: every watch it starts again after a
        # cut is scheduled with the first backoff step (100-200 ms), however many
        # cuts came before; without the reset the delays double with every cut
        # (the 8th: 12.8-25.6 s)
        logged_before = d.log().count(RETRY_WATCH)
        srv.reset_counts()
        srv.set_faults(watchCutAfter=1)
        srv.end_watches()
        wait_for(lambda: d.log().count(RETRY_WATCH) - logged_before >= 8, 60, interval=0.1,
                 what='8 watches started again after cuts')
        delays = watch_retry_delays(d.log())[logged_before:]
        print('watch retry delays after cuts: %s ms' % delays)
        assert max(delays) <= 200, delays
        c = srv.counts()
        assert c.get('fault_watchdrop', 0) >= 8, c
        assert c.get('watch', 0) >= 8, c
        srv.wipe(NODE)
        wait_for(lambda: converged(srv, NODE, expected), 60, what='repair after a wipe')
        assert d.alive()
    finally:
        d.stop()
        srv.stop()


def test_faults_converge_and_stay():
    srv = server(bookmark_interval=0.3)
    dev = os.path.join(TMP, 'faults.json')
    write_devices(dev, {GPU: 300, NET: 5})
    srv.set_faults(rate500=0.2, rate429=0.1, retryAfter=1, dropRate=0.1, rate409=0.15,
                   watchDropRate=0.3, delayMs=5)
    d = Dralet(srv, dev).start()
    try:
        expected = {GPU: names(300), NET: names(5)}
        wait_for(lambda: converged(srv, NODE, expected), 60, interval=0.1,
                 what='convergence under faults')
        # changes and wipes while faults go on
        write_devices(dev, {GPU: 290, NET: 6})
        d.reload()
        expected = {GPU: names(290), NET: names(6)}
        srv.wipe(NODE, GPU)
        wait_for(lambda: converged(srv, NODE, expected), 60, interval=0.1,
                 what='convergence after changes under faults')
        faults = {k: v for k, v in srv.counts().items() if k.startswith('fault_')}
        assert sum(faults.values()) > 0, 'no fault was injected: %s' % srv.counts()
        srv.set_faults()
        wait_for(lambda: converged(srv, NODE, expected), 30, interval=0.1,
                 what='convergence once faults stop')
        # it stays there: no more writes, and few requests (watches, no storm)
        time.sleep(1.5)
        srv.reset_counts()
        snapshot = json.dumps(sorted((s['metadata']['name'], s['metadata']['resourceVersion'])
                                     for s in srv.slices()))
        time.sleep(3)
        c = srv.counts()
        assert writes(c) == 0, c
        assert c.get('total', 0) <= 6, c
        assert snapshot == json.dumps(sorted((s['metadata']['name'],
                                              s['metadata']['resourceVersion'])
                                             for s in srv.slices()))
        assert converged(srv, NODE, expected)
        assert d.alive()
    finally:
        d.stop()
        log = d.log()
        srv.stop()
    assert srv.token() not in log
    # the faults were retried: failed writes, conflicts (read again) or lists and watches
    retries = (log.count('retrying the ResourceSlices of ') + log.count('; reading again') +
               log.count(RETRY_WATCH))
    assert retries > 0, log[-2000:]


RETRY_WRITE = 'retrying the ResourceSlices of %s in ' % GPU


def test_retry_after_paces_writes():
    """Writes the server throttles (429, Retry-After: 1) are retried after the second it asks
    for, every time: the delay does not grow with the throttled rounds before it (a backoff
    of their own would, to 1.6-3.2 s at the 5th), and it is not shorter (no storm)."""
    srv = server()
    dev = os.path.join(TMP, 'paced.json')
    write_devices(dev, {GPU: 4})
    srv.set_faults(rate429=1.0, retryAfter=1, verbs=['create'])
    d = Dralet(srv, dev).start()
    try:
        wait_for(lambda: d.log().count(RETRY_WRITE) >= 6, 60, interval=0.1,
                 what='6 throttled write rounds')
        c = srv.counts()
        delays = [int(line.split(RETRY_WRITE, 1)[1].split()[0])
                  for line in d.log().splitlines() if RETRY_WRITE in line]
        print('retry delays of throttled writes: %s ms' % delays)
        assert delays[:6] == [1000] * 6, delays
        assert c.get('fault_429', 0) >= 6 and c.get('create', 0) <= len(delays) + 1, c
        srv.set_faults()
        wait_for(lambda: converged(srv, NODE, {GPU: names(4)}), 30, what='publish once unthrottled')
        assert d.alive()
    finally:
        d.stop()
        srv.stop()


def test_failed_writes_back_off_late():
    """Writes that fail without a Retry-After (500s) are retried 100-200 ms apart at first and
    back off only after a run of them (5 ms doubling, as the upstream ResourceSlice
    controller's per-item retry): a few failures in a row, which a working server gives now
    and then, do not cost seconds; a server that keeps failing still gets ever fewer tries
    (the 10th retry waits 1.28-2.56 s, up to 30 s later)."""
    srv = server()
    dev = os.path.join(TMP, 'failing.json')
    write_devices(dev, {GPU: 4})
    srv.set_faults(rate500=1.0, verbs=['create'])
    d = Dralet(srv, dev).start()
    try:
        wait_for(lambda: d.log().count(RETRY_WRITE) >= 10, 60, interval=0.1,
                 what='10 failed write rounds')
        c = srv.counts()
        delays = [int(line.split(RETRY_WRITE, 1)[1].split()[0])
                  for line in d.log().splitlines() if RETRY_WRITE in line]
        print('retry delays of failing writes: %s ms' % delays)
        assert all(100 <= x <= 200 for x in delays[:5]), delays
        assert 1280 <= delays[9] <= 2560, delays
        assert c.get('fault_500', 0) >= 10 and c.get('create', 0) <= len(delays) + 1, c
        srv.set_faults()
        wait_for(lambda: converged(srv, NODE, {GPU: names(4)}), 30, what='publish once writes work')
        assert d.alive()
    finally:
        d.stop()
        srv.stop()


def test_no_storm_when_down():
    """Every request fails: the request rate stays low (backoff with jitter)."""
    srv = server()
    dev = os.path.join(TMP, 'down.json')
    write_devices(dev, {GPU: 4, NET: 4})
    srv.set_faults(rate500=1.0)
    d = Dralet(srv, dev).start()
    try:
        time.sleep(6)
        c = srv.counts()
        # node GET retries + 2 drivers' list retries; capped backoff keeps it small
        assert c.get('total', 0) < 60, c
        srv.set_faults()
        wait_for(lambda: converged(srv, NODE, {GPU: names(4), NET: names(4)}), 40, interval=0.1,
                 what='recovery')
    finally:
        d.stop()
        srv.stop()


def test_watch_expiry_relists():
    srv = server()
    dev = os.path.join(TMP, 'expire.json')
    write_devices(dev, {GPU: 3})
    d = Dralet(srv, dev).start()
    try:
        expected = {GPU: names(3)}
        wait_for(lambda: converged(srv, NODE, expected), 60)
        time.sleep(0.3)
        srv.reset_counts()
        srv.expire_watches()
        wait_for(lambda: streaming_lists(srv), 60, what='relist after 410')
        assert srv.counts().get('list', 0) == 0, srv.counts()
        with srv.state.lock:
            srv.state.watch_expire = False
        # the relisted informer still repairs
        time.sleep(0.3)
        srv.wipe(NODE)
        wait_for(lambda: converged(srv, NODE, expected), 60, what='repair after relist')
        assert writes(srv.counts()) == 1, srv.counts()
    finally:
        d.stop()
        srv.stop()


def test_watch_gone_after_outage_relists_at_once():
    """An apiserver restart: the watch breaks, its retries fail for a while (they
    back off), then the first watch from the old rv gets 410 (a new watch cache
    starts at the current revision). The list follows at once, not after the
    outage's backoff (docs/performance.md, "Fleet")."""
    srv = server()
    dev = os.path.join(TMP, 'outage.json')
    write_devices(dev, {GPU: 3})
    d = Dralet(srv, dev).start()
    try:
        wait_for(lambda: converged(srv, NODE, {GPU: names(3)}), 10)
        time.sleep(0.3)
        srv.set_faults(rate500=1.0)
        with srv.state.lock:
            srv.state.watch_generation += 1     # the watch ends; its retries get 500
            srv.state.lock.notify_all()
        time.sleep(5)                           # >= 4 failed tries: the backoff is >= 1.6 s
        with srv.state.lock:
            srv.state.compacted = srv.state.rv + 1
            t0 = time.monotonic()
        logged_before = len(d.log())
        srv.set_faults()

        def served(after, resume):
            """GETs of slices served: watches from an rv (@resume), or lists (streaming)."""
            with srv.state.lock:
                return [e['t'] for e in srv.state.log
                        if e['t'] > after and e['status'] == 200 and e['method'] == 'GET'
                        and 'resourceslices' in e['path']
                        and ('resourceVersion=' in e['path']) == resume]
        wait_for(lambda: served(t0, True), 60, what='the watch from the old rv')
        t_watch = served(t0, True)[0]
        wait_for(lambda: served(t_watch, False), 60, what='the list after 410')
        t_list = served(t_watch, False)[0]
        print('list %.2f s after the 410' % (t_list - t_watch))
        # the streaming list goes on as the watch: it repairs a wipe
        time.sleep(0.3)
        srv.wipe(NODE)
        wait_for(lambda: converged(srv, NODE, {GPU: names(3)}), 60, what='repair after the list')
        # the list was not put off by the outage's backoff (>= 1.6 s by now): any
        # delay scheduled for it is a fresh backoff's first step, as after a cut
        relists = [int(line.split(RETRY_WATCH, 1)[1].split()[0])
                   for line in d.log()[logged_before:].splitlines()
                   if RETRY_WATCH in line and 'listing' in line]
        assert all(ms <= 200 for ms in relists), relists
    finally:
        d.stop()
        srv.stop()


def test_forbidden_list_waits():
    """A 403 (an apiserver that has not read its RBAC yet) for the node's one streaming list:
    asked again after 5-10 s, not after the backoff's first steps (docs/performance.md,
    "Fleet"), then one streaming list serves both drivers."""
    srv = server()
    dev = os.path.join(TMP, 'forbidden.json')
    write_devices(dev, {GPU: 2, NET: 2})
    srv.set_faults(rate403=1.0, verbs=['watch'])
    d = Dralet(srv, dev).start()
    try:
        wait_for(lambda: RETRY_WATCH in d.log(), 30, what='the list refused')
        delays = watch_retry_delays(d.log())
        assert len(delays) == 1 and 5000 <= delays[0] <= 10000, delays
        assert srv.counts().get('fault_403') == 1, srv.counts()
        srv.set_faults()
        wait_for(lambda: converged(srv, NODE, {GPU: names(2), NET: names(2)}), 30,
                 what='published after the 403')
        c = srv.counts()
        assert c.get('list', 0) == 0 and c.get('watch') == 2, c     # the 403, then one
    finally:
        d.stop()
        srv.stop()


def test_throttled_list_paced():
    """The node's streaming list answered 429 with Retry-After: 1, again and again: asked
    again after the second the server asks for, every time (client-go's requests wait so),
    not after a backoff that grows with every 429 (the 6th: 3.2-6.4 s); then one streaming
    list serves both drivers."""
    srv = server()
    dev = os.path.join(TMP, 'throttled-list.json')
    write_devices(dev, {GPU: 2, NET: 2})
    srv.set_faults(rate429=1.0, retryAfter=1, verbs=['watch'])
    d = Dralet(srv, dev).start()
    try:
        wait_for(lambda: d.log().count(RETRY_WATCH) >= 6, 60, interval=0.1,
                 what='6 throttled lists')
        c = srv.counts()
        delays = watch_retry_delays(d.log())
        print('retry delays of throttled lists: %s ms' % delays)
        assert delays[:6] == [1000] * 6, delays
        assert c.get('fault_429', 0) >= 6 and c.get('watch', 0) <= len(delays) + 1, c
        assert c.get('list', 0) == 0, c
        srv.set_faults()
        wait_for(lambda: converged(srv, NODE, {GPU: names(2), NET: names(2)}), 30,
                 what='published once the lists are served')
    finally:
        d.stop()
        srv.stop()


def test_paged_list_split_by_driver():
    """The node's list in pages of 2 (a server may return fewer items than asked; a server
    without WatchList, which refuses the streaming list): the pages hold both of our
    drivers' slices and another driver's, interleaved; one list (four pages) fills both
    caches, so the only write is the one change (no slice created twice), and the other
    driver's slices are left alone."""
    srv = server(watch_list=False)
    dev = os.path.join(TMP, 'paged.json')
    write_devices(dev, {GPU: 300, NET: 2})        # GPU: 3 slices, NET: 1
    assert Dralet(srv, dev, follow=False).run() == 0
    foreign = [srv.seed_slice('%s-other-%d' % (NODE, i), 'other.example.com', NODE)
               for i in range(3)]
    write_devices(dev, {GPU: 300, NET: 1})        # one NET device gone: one update
    with srv.state.lock:
        srv.state.page_limit = 2
    srv.reset_counts()
    d = Dralet(srv, dev).start()
    try:
        wait_for(lambda: converged(srv, NODE, {GPU: names(300), NET: names(1)}), 30,
                 what='the NET slice updated')
        time.sleep(0.3)
        c = srv.counts()
        # 7 slices on the node: pages of 2, 2, 2, 1; the refused streaming list, the watch
        assert c.get('list') == 4 and c.get('update') == 1 and writes(c) == 1, c
        assert c.get('watch') == 2 and c.get('status_422') == 1, c
        for obj in foreign:
            assert srv.state.slices.get(obj['metadata']['name']) == obj, obj['metadata']['name']
    finally:
        d.stop()
        srv.stop()


def test_rejected_is_not_retried():
    srv = server()
    dev = os.path.join(TMP, 'reject.json')
    write_devices(dev, {GPU: 3})
    srv.set_faults(reject=True)
    d = Dralet(srv, dev).start()
    try:
        wait_for(lambda: srv.counts().get('fault_422', 0) >= 1, 60, what='a rejected create')
        time.sleep(2)
        c = srv.counts()
        assert c.get('fault_422') == 1, c     # logged once, not looped
        assert 'injected rejection' in d.log() and 'spec.devices[0].name' in d.log()
        # the next change tries again
        srv.set_faults()
        write_devices(dev, {GPU: 4})
        d.reload()
        wait_for(lambda: converged(srv, NODE, {GPU: names(4)}), 60)
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


def streaming_lists(srv, after=0):
    """The streaming lists (watches with sendInitialEvents) served since @after."""
    with srv.state.lock:
        return [e for e in srv.state.log
                if e['t'] > after and e['method'] == 'GET' and e['status'] == 200
                and 'sendInitialEvents=true' in e['path']]


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
