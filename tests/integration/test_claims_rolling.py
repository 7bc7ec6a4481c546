#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A rolling update's two instances (--pod-uid) on one node, serving at once:
the second starts and serves while the first runs, and
prepares and unprepares driven concurrently on both with `dralet ctl` (slow
prepares, two claims per device racing on the two instances) leave every
claim in the checkpoint once, no device given to two claims, repeats
answered from the checkpoint by either instance, and claims one instance
prepared unprepared by the other. Then the first instance is killed in the
middle of a prepare (the test-only crash seam): the other one takes the
claim over, and the first one's restart, recovering while the other serves,
keeps it. Each instance removes only its own sockets."""
import json
import os
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(__file__))
import claims_kubelet as ck  # noqa: E402
from claims_kubelet import uid  # noqa: E402

SLOW = [{"source": "FromClaim", "opaque": {"driver": ck.DRIVER, "parameters": {"sleepMs": 150}}}]


class Instance:
    """One `dralet run --pod-uid` of the node (the Node helper drives one at a time)."""

    def __init__(self, node, pod_uid, env=None):
        node.use_pod_uid(pod_uid)
        self.node, self.pod_uid = node, pod_uid
        node.log_path = os.path.join(node.tmp, "dralet-%s.log" % pod_uid)
        self.log_path = node.log_path
        self.proc = node.start(env=env)
        self.log = node.log
        self.dra_socket, self.reg_socket = node.dra_socket, node.reg_socket

    def read_log(self):
        with open(self.log_path) as f:
            return f.read()

    def ctl(self, verb, name, claim_uid):
        out = subprocess.run([self.node.dralet, "ctl", verb, "--socket", self.dra_socket,
                              "--namespace", "ns", "--name", name, "--uid", claim_uid,
                              "--timeout", "45s"],
                             capture_output=True, text=True, timeout=60)
        try:
            return json.loads(out.stdout)["claims"][claim_uid]
        except (ValueError, KeyError):
            raise AssertionError("dralet ctl %s %s: %s" % (verb, name, out))

    def stop(self, other_sockets):
        self.proc.terminate()
        assert self.proc.wait(timeout=30) == 0, self.read_log()[-5000:]
        self.log.close()
        assert not os.path.exists(self.dra_socket) and not os.path.exists(self.reg_socket)
        for s in other_sockets:	# only its own sockets
            assert os.path.exists(s), s


def concurrently(calls):
    """Runs fn(*args) for each (fn, args) in its own thread; their results in order."""
    results = [None] * len(calls)

    def one(i, fn, args):
        results[i] = fn(*args)
    threads = [threading.Thread(target=one, args=(i, fn, args)) for i, (fn, args) in
               enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return results


def check_consistent(node):
    """Every claim in the checkpoint once, its devices' hardware state naming it,
    no device in two claims, a spec for each, none for others."""
    ckpt = node.checkpoint()["data"]["claims"]
    uids = [c["uid"] for c in ckpt]
    assert len(uids) == len(set(uids)), uids
    owner = {}
    for c in ckpt:
        assert c["state"] == "PrepareCompleted", c
        for d in c["devices"]:
            assert d["device"] not in owner, (d["device"], owner[d["device"]], c["uid"])
            owner[d["device"]] = c["uid"]
    assert node.hardware() == owner, (node.hardware(), owner)
    specs = [f for f in node.spec_files() if f.startswith(ck.VENDOR)]
    assert sorted(specs) == sorted(node.spec_file(u) for u in uids), (specs, uids)
    return owner


def check(node):
    n = len(node.devices)
    a = Instance(node, "pod-a")
    b = Instance(node, "pod-b")	# serves at once: the first one is still running
    assert a.proc.poll() is None
    assert a.proc.poll() is None, a.read_log()[-3000:]
    assert "serving " + b.dra_socket in b.read_log()

    # two claims per device, each pair racing on the two instances
    for i in range(n):
        node.put_claim("x%d" % i, uid(i), [("r", i)], config=SLOW)
        node.put_claim("y%d" % i, uid(100 + i), [("r", i)], config=SLOW)
    calls = []
    for i in range(n):	# started in an order that lets either instance come first
        pair = [(a.ctl, ("prepare", "x%d" % i, uid(i))),
                (b.ctl, ("prepare", "y%d" % i, uid(100 + i)))]
        calls += pair if i % 2 == 0 else pair[::-1]
    res = concurrently(calls)
    won = {}
    for i in range(n):
        rx, ry = res[2 * i: 2 * i + 2] if i % 2 == 0 else res[2 * i: 2 * i + 2][::-1]
        assert (rx["error"] == "") != (ry["error"] == ""), (i, rx, ry)
        loser = ry if rx["error"] == "" else rx
        assert "in use by another claim" in loser["error"], loser
        won[i] = ("x%d" % i, uid(i), a) if rx["error"] == "" else ("y%d" % i, uid(100 + i), b)
    owner = check_consistent(node)
    assert len(owner) == n
    print("rolling: %d of %d won by the first instance" %
          (sum(1 for w in won.values() if w[2] is a), n))

    # repeats on the other instance: the same answer, nothing prepared again
    hw = node.hardware()
    again = concurrently([((b if w[2] is a else a).ctl, ("prepare", w[0], w[1]))
                          for w in won.values()])
    for w, r in zip(won.values(), again):
        assert r["error"] == "", r
        assert r["devices"][0]["cdiDeviceIds"] == [
            "%s/%s=%s-%s" % (ck.VENDOR, ck.CLASS, w[1], r["devices"][0]["deviceName"])], r
    assert node.hardware() == hw
    check_consistent(node)

    # unprepares on the instance that did not prepare; then the losers'
    # prepares, spread over both, get the devices
    losers = [("y%d" % i, uid(100 + i)) if w[2] is a else ("x%d" % i, uid(i))
              for i, w in sorted(won.items())]
    calls = [((b if w[2] is a else a).ctl, ("unprepare", w[0], w[1])) for w in won.values()]
    res = concurrently(calls)
    assert all(r["error"] == "" for r in res), res
    assert node.checkpoint_claims() == {} and node.hardware() == {}
    res = concurrently([((a, b)[i % 2].ctl, ("prepare", name, u))
                        for i, (name, u) in enumerate(losers)])
    assert all(r["error"] == "" for r in res), res
    assert sorted(check_consistent(node).values()) == sorted(u for _, u in losers)
    res = concurrently([((b, a)[i % 2].ctl, ("unprepare", name, u))
                        for i, (name, u) in enumerate(losers)])
    assert all(r["error"] == "" for r in res), res
    assert node.checkpoint_claims() == {} and node.hardware() == {}
    assert [f for f in node.spec_files() if f.startswith(ck.VENDOR)] == []

    # the first instance dies in the middle of a prepare (its undo state on
    # disk, PrepareStarted): the kernel drops its lock, the other instance
    # takes the claim over (the kubelet's retry), and the first one's restart,
    # recovering while the other serves, keeps it
    a.stop([b.dra_socket, b.reg_socket])
    a = Instance(node, "pod-a", env={"DRALET_CRASH_AT": "prepare-device"})
    node.put_claim("crash", uid(50), [("r", 0)])
    out = subprocess.run([node.dralet, "ctl", "prepare", "--socket", a.dra_socket,
                          "--namespace", "ns", "--name", "crash", "--uid", uid(50)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode != 0, out
    assert a.proc.wait(timeout=30) == -9, a.read_log()[-3000:]
    a.log.close()
    entry = node.checkpoint_claims()[uid(50)]
    assert entry["state"] == "PrepareStarted", entry
    r = b.ctl("prepare", "crash", uid(50))
    assert r["error"] == "", r
    assert check_consistent(node) == {node.devices[0]: uid(50)}
    for f in (a.dra_socket, a.reg_socket):	# a killed instance's sockets stay behind
        if os.path.exists(f):
            os.unlink(f)
    a = Instance(node, "pod-a")
    assert check_consistent(node) == {node.devices[0]: uid(50)}
    r = a.ctl("prepare", "crash", uid(50))
    assert r["error"] == "" and r["devices"][0]["deviceName"] == node.devices[0], r
    r = a.ctl("unprepare", "crash", uid(50))
    assert r["error"] == "", r
    assert node.checkpoint_claims() == {} and node.hardware() == {}
    a.stop([b.dra_socket, b.reg_socket])
    b.stop([])
    print("rolling: ok")


ck.run_test(check)
