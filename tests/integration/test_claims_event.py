#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""An unreadable checkpoint, with the apiserver store: the agent records a
core/v1 Warning Event about its Node (reason CheckpointUnreadable, in
namespace "default", involvedObject the Node with its name as uid, the way
the kubelet does), says so in the grpc.health.v1 answers of the driver's
sockets (`dralet ctl health`: "degraded") until the rebuilt claim is
unprepared, and keeps serving: the
kubelet's next prepare reads the claim from the apiserver."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "apiserver"))
import claims_kubelet as ck  # noqa: E402
from claims_kubelet import uid  # noqa: E402
from harness import ApiServer, wait_for  # noqa: E402


def ctl_health(node, socket_path):
    out = subprocess.run([node.dralet, "ctl", "health", "--socket", socket_path,
                          "--timeout", "5s"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, (out.returncode, out.stdout, out.stderr)
    return json.loads(out.stdout)


def check(node):
    node.put_claim("a", uid(1), [("r", 0)])
    node.start()
    kl = node.kubelet()
    first = kl.prepare([("ns", "a", uid(1))])
    assert first[uid(1)][0] == "", first
    assert ctl_health(node, node.dra_socket) == {"status": "SERVING"}
    kl.close()
    node.stop()

    path = node.corrupt_checkpoint()

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

        # health: both sockets say it and stay SERVING (a liveness probe must
        # not restart an agent for what a restart cannot mend)
        for sock in (node.dra_socket, node.reg_socket):
            h = ctl_health(node, sock)
            assert h["status"] == "SERVING", h
            assert h.get("degraded") == ("checkpoint was unreadable: 1 claim(s) rebuilt from "
                                         "CDI specs, 1 still prepared"), h

        kl = node.kubelet()
        assert kl.prepare([("ns", "a", uid(1))]) == first	# the requests from the apiserver
        assert "degraded" in ctl_health(node, node.dra_socket)	# still prepared
        assert kl.unprepare([("ns", "a", uid(1))]) == {uid(1): ""}
        assert ctl_health(node, node.dra_socket) == {"status": "SERVING"}
        kl.close()
        node.stop()
    finally:
        srv.stop()
    print("claims event: ok")


ck.run_test(check)
