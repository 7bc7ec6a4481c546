#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Claim device status (KEP-4817; docs/claims.md, "Device status"): after a
prepare of network devices (NICs, VFs, RDMA: devices with an interface) the
agent writes one Ready entry with its networkData per prepared device into the
claim's status.devices; a claim of devices without network data gets no write
(a Ready condition alone says what the running pod says). After the unprepare
they go: the file store removes them, the
apiserver store sends nothing (the real apiserver drops the entries of devices
that leave the allocation, which the resourceclaim controller clears after the
last pod; the e2e scenario `claim_device_status` shows it).

File store: DIR/resourceclaimstatus/<ns>/<name>/<driver>.json.
Apiserver store (the test apiserver, which applies like the real one: keyed
entries per field manager): a server-side apply under the driver's name as
field manager, which leaves another driver's entry alone; a failing apiserver
never fails the kubelet's call."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "apiserver"))
import claims_kubelet as ck  # noqa: E402
from claims_kubelet import uid  # noqa: E402
from harness import ApiServer, wait_for  # noqa: E402

OTHER = {"driver": "other.example.com", "pool": "elsewhere", "device": "d0",
         "conditions": [{"type": "Ready", "status": "True", "reason": "ByOther",
                         "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}


def check_entry(entry, node, device, ifname):
    assert entry["driver"] == ck.DRIVER and entry["pool"] == ck.NODE, entry
    assert entry["device"] == device, entry
    assert entry["networkData"] == {"interfaceName": ifname}, entry
    [cond] = entry["conditions"]
    assert (cond["type"], cond["status"], cond["reason"]) == ("Ready", "True", "Prepared"), cond
    assert cond["message"] == "prepared on node " + ck.NODE, cond
    assert cond["lastTransitionTime"].endswith("Z"), cond


def file_store(node):
    node.set_ifname(0, "ens1f0v0")
    node.set_ifname(1, "ens1f0v1")
    node.put_claim("a", uid(1), [("r", 0), ("r", 1)])
    node.put_claim("plain", uid(4), [("r", 4)])
    node.start()
    kl = node.kubelet()
    prepared = kl.prepare([("ns", "a", uid(1)), ("ns", "plain", uid(4))])
    assert prepared[uid(1)][0] == "" and prepared[uid(4)][0] == "", prepared
    path = os.path.join(node.store, "resourceclaimstatus", "ns", "a", ck.DRIVER + ".json")
    with open(path) as f:
        entries = json.load(f)
    assert len(entries) == 2, entries
    check_entry(entries[0], node, node.devices[0], "ens1f0v0")
    check_entry(entries[1], node, node.devices[1], "ens1f0v1")
    assert not os.path.exists(os.path.join(node.store, "resourceclaimstatus", "ns", "plain")), \
        "a claim without network devices got a status"
    assert kl.unprepare([("ns", "plain", uid(4))]) == {uid(4): ""}
    assert kl.unprepare([("ns", "a", uid(1))]) == {uid(1): ""}
    assert not os.path.exists(path), "the status file outlived the unprepare"
    kl.close()
    node.stop()


def apiserver_store(node):
    node.set_ifname(2, "ens2f0")
    node.set_ifname(3, "ens3f0")
    node.put_claim("b", uid(2), [("r", 2)])
    srv = ApiServer(os.path.join(node.tmp, "srv"), nodes=(ck.NODE,)).start()
    try:
        with open(os.path.join(node.store, "resourceclaims", "ns", "b.json")) as f:
            claim = json.load(f)
        # another driver's device in the same claim, with its status
        claim["status"]["allocation"]["devices"]["results"].append(
            {"request": "r", "driver": OTHER["driver"], "pool": OTHER["pool"],
             "device": OTHER["device"]})
        claim["status"]["devices"] = [OTHER]
        srv.state.claims[("ns", "b")] = claim
        srv.state.status_owners[("ns", "b")] = {
            (OTHER["driver"], OTHER["pool"], OTHER["device"], None): OTHER["driver"]}
        node.kubeconfig = srv.kubeconfig
        node.start()
        kl = node.kubelet()
        assert kl.prepare([("ns", "b", uid(2))])[uid(2)][0] == ""

        def devices():
            return srv.state.claims[("ns", "b")].get("status", {}).get("devices", [])
        wait_for(lambda: len(devices()) == 2, 20, interval=0.05, what="the device status")
        ours = [d for d in devices() if d["driver"] == ck.DRIVER]
        assert len(ours) == 1, devices()
        check_entry(ours[0], node, node.devices[2], "ens2f0")
        assert OTHER in devices(), devices()
        applies = srv.state.status_applies
        assert [a["manager"] for a in applies] == [ck.DRIVER], applies

        assert kl.unprepare([("ns", "b", uid(2))]) == {uid(2): ""}

        # an apiserver that refuses every status write: the prepare still succeeds
        node.put_claim("c", uid(3), [("r", 3)])
        with open(os.path.join(node.store, "resourceclaims", "ns", "c.json")) as f:
            srv.state.claims[("ns", "c")] = json.load(f)
        srv.set_faults(rate500=1.0, verbs=["applystatus"])
        assert kl.prepare([("ns", "c", uid(3))])[uid(3)][0] == ""
        wait_for(lambda: "cannot write the device status of claim ns/c" in node.read_log(), 60,
                 interval=0.2, what="the logged failure")
        srv.set_faults()
        # the unprepare of b, before c's writes on the same loop, sent no apply
        assert [a["claim"] for a in srv.state.status_applies] == ["ns/b"], srv.state.status_applies
        assert OTHER in devices() and len(devices()) == 2, devices()
        assert kl.unprepare([("ns", "c", uid(3))]) == {uid(3): ""}
        kl.close()
        node.stop()
    finally:
        srv.stop()


ck.run_test(file_store)
ck.run_test(apiserver_store)
print("claims status: ok")
