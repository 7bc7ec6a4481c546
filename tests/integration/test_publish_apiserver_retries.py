#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""dralet publishing ResourceSlices to the test apiserver (tests/apiserver) when the
server misbehaves: convergence under injected faults (and staying converged once they
stop), watch cuts and 410s relisted without adding up, writes paced by Retry-After and
backed off late, no storm while the server is down, a list in pages and a watch where the
server refuses it, a 403 list asked again after 5-10 s, a throttled list paced, and 422
without a loop."""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'apiserver'))
import harness  # noqa: E402
from harness import Dralet, converged, wait_for, write_devices  # noqa: E402
from publish_common import GPU, NET, NODE, TMP, names, server, streaming_lists, writes  # noqa: E402


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


def write_retry_delays(log):
    """The delays (ms) before dralet writes the GPU driver's slices again, in the order logged."""
    return [int(line.split(RETRY_WRITE, 1)[1].split()[0])
            for line in log.splitlines() if RETRY_WRITE in line]


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
        delays = write_retry_delays(d.log())
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
        delays = write_retry_delays(d.log())
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


def main():
    return harness.run_tests(harness.module_tests(globals()), TMP, only=sys.argv[1:])


if __name__ == '__main__':
    sys.exit(main())
