#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Stale claims (docs/claims.md, "Stale claims"): a prepared claim whose
ResourceClaim is gone, was replaced by one with another UID or is no longer
allocated is unprepared by the agent's periodic check (--stale-claims-interval)
through the normal unprepare path: its devices freed, its CDI spec and
checkpoint entry gone, no claim status written; the kubelet's later
NodeUnprepareResources then succeeds with nothing to do. A claim in use, and
any claim while the store cannot answer (injected 500s; the file store without
its claims directory), stays prepared."""
import json
import os
import re
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "apiserver"))
import claims_kubelet as ck  # noqa: E402
from claims_kubelet import uid  # noqa: E402
from harness import ApiServer, wait_for  # noqa: E402

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    ck.skip("python3-prometheus-client is not installed (scripts/deps.sh installs it)")

POD = [{"resource": "pods", "name": "p", "uid": "5a5a5a5a-0000-4000-8000-000000000001"}]


def claim_of(node, name):
    with open(os.path.join(node.store, "resourceclaims", "ns", name + ".json")) as f:
        c = json.load(f)
    c["status"]["reservedFor"] = POD
    return c


def prepared(node, claim_uid):
    return (claim_uid in node.checkpoint_claims() and
            node.spec_file(claim_uid) in node.spec_files() and
            claim_uid in node.hardware().values())


def collected(node, claim_uid):
    return (claim_uid not in node.checkpoint_claims() and
            node.spec_file(claim_uid) not in node.spec_files() and
            claim_uid not in node.hardware().values())


def collected_metric(node):
    """{reason: value} of dralet_stale_claims_collected_total for the test driver."""
    port = int(re.search(r"\(port (\d+)\)", node.read_log()).group(1))
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        text = r.read().decode()
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name == "dralet_stale_claims_collected_total" and \
                    s.labels["driver"] == ck.DRIVER:
                out[s.labels["reason"]] = s.value
    return out


def apiserver_store(node):
    names = {"a": 1, "b": 2, "c": 3, "d": 4}
    for name, n in names.items():
        node.put_claim(name, uid(n), [("r", n - 1)])
        node.set_ifname(n - 1, "ens%d" % n)     # network devices: their claims get a status
    srv = ApiServer(os.path.join(node.tmp, "srv"), nodes=(ck.NODE,)).start()
    try:
        for name in names:
            srv.state.claims[("ns", name)] = claim_of(node, name)
        node.kubeconfig = srv.kubeconfig
        node.extra_args = ["--stale-claims-interval", "1", "--metrics-address", "127.0.0.1:0"]
        node.start()
        kl = node.kubelet()
        got = kl.prepare([("ns", name, uid(n)) for name, n in names.items()])
        assert all(got[uid(n)][0] == "" for n in names.values()), got
        assert all(prepared(node, uid(n)) for n in names.values())
        wait_for(lambda: len(srv.state.status_applies) == 4, 20, interval=0.05,
                 what="the device status of the prepares")

        # the apiserver fails every GET: a claim it deleted meanwhile stays prepared
        srv.set_faults(rate500=1.0, verbs=["get"])
        del srv.state.claims[("ns", "a")]
        wait_for(lambda: node.read_log().count("stale claims: no answer about claim ns/a") >= 2,
                 30, interval=0.1, what="two checks without an answer")
        assert prepared(node, uid(1)), "a claim was collected on a 500"

        # definite answers: gone, replaced, deallocated; d stays in use
        replaced = claim_of(node, "b")
        replaced["metadata"]["uid"] = uid(22)
        srv.state.claims[("ns", "b")] = replaced
        del srv.state.claims[("ns", "c")]["status"]["allocation"]
        srv.set_faults()
        for n in (1, 2, 3):
            wait_for(lambda: collected(node, uid(n)), 30, interval=0.05,
                     what="claim %s collected" % uid(n))
        for name, n, reason in (("a", 1, "gone"), ("b", 2, "replaced"), ("c", 3, "deallocated")):
            line = "collected stale claim ns/%s (uid %s): %s" % (name, uid(n), reason)
            wait_for(lambda: line in node.read_log(), 10, interval=0.05, what=line)
        log = node.read_log()
        assert "replaced (uid %s now)" % uid(22) in log, log
        assert prepared(node, uid(4)), "a claim in use was collected"
        assert collected_metric(node) == {"gone": 1, "replaced": 1, "deallocated": 1,
                                          "allocated_elsewhere": 0, "unreserved": 0}, \
            collected_metric(node)
        # no status written for collected claims (gone, or another's now)
        assert len(srv.state.status_applies) == 4, srv.state.status_applies

        # the kubelet unprepares them later: nothing to do, success
        assert kl.unprepare([("ns", "a", uid(1)), ("ns", "b", uid(2)), ("ns", "c", uid(3))]) == {
            uid(1): "", uid(2): "", uid(3): ""}
        # the freed device can be prepared for the claim that replaced b
        srv.state.claims[("ns", "b")]["metadata"]["uid"] = uid(22)
        assert kl.prepare([("ns", "b", uid(22))])[uid(22)][0] == ""
        time.sleep(2.5)     # more checks: in use, so kept
        assert prepared(node, uid(22)) and prepared(node, uid(4))
        assert kl.unprepare([("ns", "b", uid(22)), ("ns", "d", uid(4))]) == {
            uid(22): "", uid(4): ""}
        assert node.hardware() == {}, node.hardware()
        kl.close()
        node.stop()
    finally:
        srv.stop()


def file_store(node):
    node.put_claim("e", uid(5), [("r", 0)])
    node.put_claim("f", uid(6), [("r", 1)])
    node.extra_args = ["--stale-claims-interval", "1"]
    node.start()
    kl = node.kubelet()
    got = kl.prepare([("ns", "e", uid(5)), ("ns", "f", uid(6))])
    assert got[uid(5)][0] == "" and got[uid(6)][0] == "", got
    # the claim file is the source of truth: removed, the claim is gone
    os.unlink(os.path.join(node.store, "resourceclaims", "ns", "e.json"))
    wait_for(lambda: collected(node, uid(5)), 30, interval=0.05, what="claim e collected")
    line = "collected stale claim ns/e (uid %s): gone" % uid(5)
    wait_for(lambda: line in node.read_log(), 10, interval=0.05, what=line)
    assert prepared(node, uid(6))
    # without its claims directory the store cannot tell: nothing is collected
    claims = os.path.join(node.store, "resourceclaims")
    os.rename(claims, claims + ".away")
    wait_for(lambda: node.read_log().count("stale claims: no answer about claim ns/f") >= 2,
             30, interval=0.1, what="two checks without an answer")
    assert prepared(node, uid(6)), "collected without a definite answer"
    os.rename(claims + ".away", claims)
    assert kl.unprepare([("ns", "e", uid(5)), ("ns", "f", uid(6))]) == {uid(5): "", uid(6): ""}
    assert node.hardware() == {}, node.hardware()
    kl.close()
    node.stop()


ck.run_test(apiserver_store)
ck.run_test(file_store)
print("claims stale: ok")
