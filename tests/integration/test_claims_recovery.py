#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Recovery at start, through the daemon: a lost CDI spec is written again
without touching hardware, an orphan spec of ours is removed (others' are
not), a device that is another device now drops its claim, a reboot (new
boot ID) forgets every claim, and a corrupt checkpoint is moved aside with a
loud error and rebuilt from the CDI specs (nothing removed, devices kept
reserved) while the agent keeps serving."""
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import claims_kubelet as ck  # noqa: E402
from claims_kubelet import uid  # noqa: E402


def check(node):
    node.put_claim("a", uid(1), [("r", 0)])
    node.put_claim("b", uid(2), [("r", 1)])
    node.start()
    kl = node.kubelet()
    first = kl.prepare([("ns", "a", uid(1)), ("ns", "b", uid(2))])
    assert all(e == "" for e, _ in first.values()), first
    kl.close()
    node.stop()

    # lost spec + orphans (ours, and a foreign file that must stay)
    os.unlink(os.path.join(node.cdi, node.spec_file(uid(1))))
    orphan = os.path.join(node.cdi, node.spec_file(uid(77)))
    with open(orphan, "w") as f:
        json.dump({"cdiVersion": "0.5.0", "kind": ck.VENDOR + "/" + ck.CLASS, "devices": []}, f)
    foreign = os.path.join(node.cdi, "nvidia.com-gpu.json")
    with open(foreign, "w") as f:
        json.dump({"cdiVersion": "0.5.0", "kind": "nvidia.com/gpu", "devices": []}, f)
    hw = node.hardware()
    node.start()
    assert node.spec_files() == sorted([node.spec_file(uid(1)), node.spec_file(uid(2)),
                                        "nvidia.com-gpu.json"]), node.spec_files()
    ck.validate_cdi_spec(os.path.join(node.cdi, node.spec_file(uid(1))))
    assert node.hardware() == hw
    kl = node.kubelet()
    assert kl.prepare([("ns", "a", uid(1)), ("ns", "b", uid(2))]) == first
    kl.close()
    node.stop()

    # device 1 is another device now (same slot, other uuid): claim b dropped, hardware alone
    node.set_uuid(1, "FAKE-SWAPPED")
    node.start()
    assert sorted(node.checkpoint_claims()) == [uid(1)]
    assert node.spec_file(uid(2)) not in node.spec_files()
    assert "DROPPED" in node.read_log() and "FAKE-SWAPPED" in node.read_log()
    assert node.hardware() == hw	# nothing was unprepared on the new device
    node.stop()
    os.unlink(os.path.join(node.hw, node.devices[1]))

    # reboot: new boot ID, tmpfs CDI dir and hardware state gone
    node.set_boot_id("11111111-2222-4333-8444-555555555555")
    for f in node.spec_files():
        if f.startswith(ck.VENDOR):
            os.unlink(os.path.join(node.cdi, f))
    for f in os.listdir(node.hw):
        os.unlink(os.path.join(node.hw, f))
    node.start()
    assert node.checkpoint_claims() == {}
    assert node.checkpoint()["data"]["bootID"] == "11111111-2222-4333-8444-555555555555"
    kl = node.kubelet()
    again = kl.prepare([("ns", "a", uid(1))])
    assert again[uid(1)] == first[uid(1)], (again, first)
    assert node.hardware() == {node.devices[0]: uid(1)}
    kl.close()
    node.stop()

    # a corrupt checkpoint: moved aside, loud error, still serving
    path = node.corrupt_checkpoint()
    node.start()
    log = node.read_log()
    assert "THE CHECKPOINT" in log and "UNUSABLE" in log and "checksum" in log, log[-3000:]
    aside = [f for f in os.listdir(os.path.dirname(path)) if ".corrupt-" in f]
    assert len(aside) == 1, aside
    # nothing destroyed: claim a is rebuilt from its CDI spec, which stays, and
    # its device stays reserved until the kubelet unprepares it
    assert "1 claim(s) rebuilt from their CDI specs" in log, log[-3000:]
    assert list(node.checkpoint_claims()) == [uid(1)], node.checkpoint_claims()
    assert node.spec_file(uid(1)) in node.spec_files()
    assert os.path.exists(foreign)
    node.put_claim("c", uid(3), [("r", 0)])
    kl = node.kubelet()
    res = kl.prepare([("ns", "c", uid(3))])
    assert "in use by another claim" in res[uid(3)][0], res
    res = kl.prepare([("ns", "a", uid(1))])
    assert res[uid(1)] == first[uid(1)], (res, first)	# requests from the store
    assert kl.unprepare([("ns", "a", uid(1))]) == {uid(1): ""}
    assert node.spec_file(uid(1)) not in node.spec_files()
    assert kl.prepare([("ns", "c", uid(3))])[uid(3)][0] == ""
    assert kl.unprepare([("ns", "c", uid(3))]) == {uid(3): ""}
    assert kl.prepare([("ns", "a", uid(1))])[uid(1)] == first[uid(1)]
    kl.close()
    node.stop()

    # a second plain agent is refused by the sockets the first one serves
    # (tests/integration/test_claims_rolling.py: with --pod-uid both serve)
    node.start()
    old, old_log = node.proc_handle, node.log
    node.start(wait=False)
    assert node.wait_exit() == 1
    assert "another process is serving " in node.read_log()
    node.proc_handle, node.log = old, old_log
    node.stop()
    # with --pod-uid (rolling update) the new instance serves beside the old one
    node.use_pod_uid("pod-a")
    node.start()
    old, old_log = node.proc_handle, node.log
    node.use_pod_uid("pod-b")
    node.start()
    assert old.poll() is None
    kl = node.kubelet()
    assert kl.prepare([("ns", "a", uid(1))])[uid(1)] == first[uid(1)]
    kl.close()
    node.stop()
    node.proc_handle, node.log = old, old_log
    node.use_pod_uid("pod-a")
    node.stop()

    # a second agent with the same --registry-dir (its own --plugins-dir, so
    # not even its DRA socket collides) refuses to start and leaves the first one's
    # registration socket alone
    node.use_pod_uid(None)
    served = node.read_log().count(" driver(s) on node ")
    node.start()
    deadline = time.time() + 60	# a safety net; every driver's sockets, not only the one waited for
    while node.read_log().count(" driver(s) on node ") == served and time.time() < deadline:
        time.sleep(0.05)
    before = {f: os.stat(os.path.join(node.registry, f)).st_ino
              for f in os.listdir(node.registry)}
    other_plugins = os.path.join(node.tmp, "plugins-2")
    with open(os.path.join(node.tmp, "second.log"), "w") as log:
        rc = subprocess.call(
            [node.dralet, "run", "--sysfs-root", node.sys, "--dev-root", node.dev,
             "--proc-root", node.proc, "--config", node.config, "--backend-dir", node.backends,
             "--store", node.store, "--registry-dir", node.registry, "--plugins-dir",
             other_plugins, "--cdi-dir", node.cdi, "--node-name", ck.NODE],
            stdout=log, stderr=subprocess.STDOUT, timeout=30)
    with open(os.path.join(node.tmp, "second.log")) as f:
        second_log = f.read()
    assert rc == 1, (rc, second_log)
    assert "another process is serving " + node.registry + "/" in second_log, second_log
    assert "--registry-dir" in second_log, second_log
    assert {f: os.stat(os.path.join(node.registry, f)).st_ino
            for f in os.listdir(node.registry)} == before
    s = socket.socket(socket.AF_UNIX)
    s.connect(node.reg_socket)	# still the first agent's, still served
    s.close()
    node.stop()
    print("recovery: ok")


ck.run_test(check)
