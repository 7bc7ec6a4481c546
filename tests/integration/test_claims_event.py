#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""An unreadable checkpoint, with the apiserver store: the agent records a
core/v1 Warning Event about its Node (reason CheckpointUnreadable, in
namespace "default", involvedObject the Node with its name as uid, the way
the kubelet does), and keeps serving: the
kubelet's next prepare reads the claim from the apiserver."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "apiserver"))
import claims_kubelet as ck  # noqa: E402
from claims_kubelet import uid  # noqa: E402
from harness import ApiServer, wait_for  # noqa: E402


def check(node):
    node.put_claim("a", uid(1), [("r", 0)])
    node.start()
    kl = node.kubelet()
    first = kl.prepare([("ns", "a", uid(1))])
    assert first[uid(1)][0] == "", first
    kl.close()
    node.stop()

    path = os.path.join(node.plugins, ck.DRIVER, "checkpoint.json")
    with open(path, "r+") as f:
        text = f.read()
        f.seek(0)
        f.write(text.replace("PrepareCompleted", "PrepareCompletes"))

    srv = ApiServer(os.path.join(node.tmp, "srv"), nodes=(ck.NODE,)).start()
    try:
        with open(os.path.join(node.store, "resourceclaims", "ns", "a.json")) as f:
            srv.state.claims[("ns", "a")] = json.load(f)
        node.kubeconfig = srv.kubeconfig
        node.start()
        wait_for(lambda: srv.k8s_events(), 20, interval=0.05, what="the Event")
        events = srv.k8s_events()
        assert len(events) == 1, events
        ev = events[0]
        assert ev["type"] == "Warning" and ev["reason"] == "CheckpointUnreadable", ev
        assert ev["metadata"]["namespace"] == "default", ev
        assert ev["metadata"]["name"].startswith(ck.NODE + "."), ev
        assert ev["involvedObject"] == {"apiVersion": "v1", "kind": "Node", "name": ck.NODE,
                                        "uid": ck.NODE}, ev
        assert ev["source"] == {"component": "dralet", "host": ck.NODE}, ev
        msg = ev["message"]
        assert "driver " + ck.DRIVER + ": the checkpoint " + path in msg, msg
        assert "checkpoint.json.corrupt-" in msg, msg
        assert "1 prepared claim(s) rebuilt from their CDI specs" in msg, msg
        assert "0 CDI spec(s) kept" in msg, msg

        kl = node.kubelet()
        assert kl.prepare([("ns", "a", uid(1))]) == first	# the requests from the apiserver
        assert kl.unprepare([("ns", "a", uid(1))]) == {uid(1): ""}
        kl.close()
        node.stop()
    finally:
        srv.stop()
    print("claims event: ok")


ck.run_test(check)
