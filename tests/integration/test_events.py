#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Events on the ResourceClaim, with the apiserver store (docs/operations.md,
"Events"): a prepare that fails records one Warning Event PrepareFailed about
the claim (involvedObject resource.k8s.io/v1 ResourceClaim with namespace, name
and uid, in the claim's namespace), which the test apiserver checks as the real
one's legacy validation does; the kubelet's retries of the same failure are
repeats: PATCHes of the same Event's count (merge patch), no new Event, and
rate-limited as client-go's recorder is (25 per object and reason, then one
every 5 minutes). The failing prepares answer at once while Events wait to be
sent (the apiserver answers Events slowly here); beyond 100 waiting, Events are
dropped and the drop is logged."""
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "apiserver"))
import claims_kubelet as ck  # noqa: E402
from claims_kubelet import uid  # noqa: E402
from harness import ApiServer, wait_for  # noqa: E402

BURST = 25      # client-go defaultSpamBurst (agent/kube/event_recorder.h)
TRIES = 40


def claim_events(srv):
    return [e for e in srv.k8s_events() if e["involvedObject"]["kind"] == "ResourceClaim"]


def check(node):
    srv = ApiServer(os.path.join(node.tmp, "srv"), nodes=(ck.NODE,)).start()
    try:
        node.put_claim("bad", uid(1), [("r", 0)],
                       config=[{"source": "FromClaim", "opaque": {
                           "driver": ck.DRIVER, "parameters": {"colour": "red"}}}])
        with open(os.path.join(node.store, "resourceclaims", "ns", "bad.json")) as f:
            srv.state.claims[("ns", "bad")] = json.load(f)
        node.kubeconfig = srv.kubeconfig
        node.start()
        kl = node.kubelet()

        res = kl.prepare([("ns", "bad", uid(1))])
        assert 'unknown field "colour"' in res[uid(1)][0], res
        wait_for(lambda: claim_events(srv), 20, interval=0.05, what="the Event on the claim")
        [ev] = claim_events(srv)
        assert ev["type"] == "Warning" and ev["reason"] == "PrepareFailed", ev
        assert ev["metadata"]["namespace"] == "ns", ev
        assert ev["metadata"]["name"].startswith("bad."), ev
        assert ev["involvedObject"] == {"apiVersion": "resource.k8s.io/v1",
                                        "kind": "ResourceClaim", "namespace": "ns",
                                        "name": "bad", "uid": uid(1)}, ev
        assert ev["source"] == {"component": "dralet", "host": ck.NODE}, ev
        assert ev["reportingComponent"] == "dralet", ev
        assert ev["message"].startswith("driver %s: claim ns/bad" % ck.DRIVER), ev
        assert 'unknown field "colour"' in ev["message"], ev
        assert ev["count"] == 1, ev
        assert not [e for e in srv.k8s_events() if e["involvedObject"]["kind"] == "Node"]

        # the kubelet retries: each answer comes while the apiserver holds every
        # Event request (until set_faults() below); a prepare that waited for its
        # Event would run into its 45 s deadline
        srv.set_faults(hold=True, verbs=["createevent", "patchevent"])
        for _ in range(TRIES - 1):
            assert 'unknown field "colour"' in kl.prepare([("ns", "bad", uid(1))])[uid(1)][0]
        srv.set_faults()
        wait_for(lambda: claim_events(srv)[0]["count"] == BURST, 60, interval=0.1,
                 what="the repeats' count (%s)" % claim_events(srv)[0]["count"])
        time.sleep(1)   # nothing more comes: the rest is rate-limited
        [ev] = claim_events(srv)
        assert ev["count"] == BURST, ev
        assert srv.state.k8s_event_patches == BURST - 1, srv.state.k8s_event_patches
        assert ev["firstTimestamp"] <= ev["lastTimestamp"], ev

        # a full queue: 120 claims fail at once while the apiserver holds the first
        # Event; 100 wait, the rest are dropped (counted, logged), and the prepares
        # answer while it is still held
        srv.set_faults(hold=True, verbs=["createevent"])
        batch = [("ns", "gone-%d" % i, uid(1000 + i)) for i in range(120)]
        res = kl.prepare(batch)
        assert all("not found" in res[u][0] for _, _, u in batch), res
        srv.set_faults()
        expect = 1 + 1 + 100     # "bad", the one in flight, the queue
        wait_for(lambda: len(claim_events(srv)) == expect, 60, interval=0.2,
                 what="%d Events (%d)" % (expect, len(claim_events(srv))))
        time.sleep(1)
        assert len(claim_events(srv)) == expect, len(claim_events(srv))
        log = node.read_log()
        assert "dropping the Event PrepareFailed about ResourceClaim" in log, log[-3000:]
        assert "(1 dropped so far)" in log, log[-3000:]
        kl.close()
        node.stop()
    finally:
        srv.stop()
    print("events: ok")


ck.run_test(check)
