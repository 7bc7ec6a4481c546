#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The daemon against a kubelet-like gRPC client: batched prepare with the
kubelet's 45 s deadline, per-claim errors (not found, replaced UID, not
allocated, unknown device, device in use, invalid config), adminAccess,
idempotent and concurrent calls, v1beta1, multi-device rollback, unprepare,
CDI specs checked against the schema, a call whose deadline passes, and a
clean SIGTERM. Runs with --log-format json: every line the daemon writes parses
as one JSON object, and the prepares and failures carry their fields (driver,
claim, uid, pod, device, backend, err). Prints prepare latencies."""
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
import claims_kubelet as ck  # noqa: E402
from claims_kubelet import uid, CLASS, VENDOR, NODE  # noqa: E402


def cdi_id(claim_uid, device):
    return "%s/%s=%s-%s" % (VENDOR, CLASS, claim_uid, device)


def check_json_log(node, dev):
    """--log-format json: every line is one JSON object with ts and msg; the
    successful prepare of ns/good and the failed one of ns/missing carry
    their fields (docs/operations.md, "Logs")."""
    lines = [json.loads(line) for line in node.read_log().splitlines() if line.strip()]
    assert lines, "no log lines"
    for o in lines:
        assert isinstance(o, dict) and isinstance(o["ts"], float) and "msg" in o, o
        assert ("v" in o) != ("level" in o), o
    good = [o for o in lines if o.get("claim") == "ns/good" and o.get("uid") == uid(1)
            and o["msg"].startswith("prepared claim")]
    assert good, [o for o in lines if "claim" in o][:10]
    assert good[0]["driver"] == ck.DRIVER and good[0]["v"] == 0, good[0]
    assert good[0]["device"] == dev[0] and good[0]["backend"], good[0]
    assert good[0]["pod"] == "ns/pod-good", good[0]
    failed = [o for o in lines if o.get("claim") == "ns/missing"]
    assert failed and failed[0]["msg"] == "prepare failed", failed
    assert failed[0]["level"] == "warning" and failed[0]["driver"] == ck.DRIVER, failed[0]
    assert "not found" in failed[0]["err"] and failed[0]["uid"] == uid(4), failed[0]
    assert "pod" not in failed[0], failed[0]     # unknown: left out
    started = [o for o in lines if o.get("driver") == ck.DRIVER and "checkpoint" in o["msg"]]
    assert started, "no start line with the driver field"


def arrivals(gate):
    """The prepares that reached claimsfake's gateFile GATE (one file per device)."""
    d, base = os.path.split(gate)
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.startswith(base + ".arrived."))


def wait_arrived(gate, n):
    """Waits (30 s at most) until n prepares wait at the gate together."""
    deadline = time.time() + 30
    while len(arrivals(gate)) < n:
        assert time.time() < deadline, "%d of %d prepares at the gate" % (len(arrivals(gate)), n)
        time.sleep(0.02)


def check(node):
    node.extra_args = ["--log-format", "json"]
    node.start()
    kl = node.kubelet()
    dev = node.devices

    # empty requests (the example driver's liveness probe sends one)
    assert kl.prepare([]) == {}
    assert kl.unprepare([]) == {}

    node.put_claim("good", uid(1), [("gpu", 0)])
    # reserved for a pod, as the scheduler leaves it: the log lines name the pod
    good_path = os.path.join(node.store, "resourceclaims", "ns", "good.json")
    with open(good_path) as f:
        good = json.load(f)
    good["status"]["reservedFor"] = [{"resource": "pods", "name": "pod-good",
                                      "uid": "20000000-0000-4000-8000-000000000001"}]
    with open(good_path, "w") as f:
        json.dump(good, f)
    node.put_claim("sub", uid(2), [("fast/big", 1)],
                   config=[{"source": "FromClass", "opaque": {"driver": ck.DRIVER,
                            "parameters": {"mode": "class", "apiVersion": "x/v1"}}},
                           {"source": "FromClaim", "requests": ["fast/big"], "opaque": {
                               "driver": ck.DRIVER, "parameters": {"mode": "claim"}}},
                           {"source": "FromClaim", "opaque": {"driver": "other.example.com",
                                                              "parameters": {"junk": 1}}}])
    node.put_claim("monitor", uid(3), [("mon", 0, True)])
    node.put_claim("replaced", uid(99), [("gpu", 2)])
    node.put_claim("unallocated", uid(5), [], allocated=False)
    node.put_claim("nodevice", uid(6), [("gpu", "fake-0000-00-7f-0")])
    node.put_claim("badconfig", uid(7), [("gpu", 3)],
                   config=[{"source": "FromClaim", "opaque": {"driver": ck.DRIVER,
                                                             "parameters": {"colour": "red"}}}])
    batch = [("ns", "good", uid(1)), ("ns", "sub", uid(2)), ("ns", "monitor", uid(3)),
             ("ns", "missing", uid(4)), ("ns", "replaced", uid(8)),
             ("ns", "unallocated", uid(5)), ("ns", "nodevice", uid(6)),
             ("ns", "badconfig", uid(7))]
    t0 = time.monotonic()
    res = kl.prepare(batch, timeout=45)
    batch_ms = (time.monotonic() - t0) * 1000
    assert sorted(res) == sorted(c[2] for c in batch), res
    err, devs = res[uid(1)]
    assert err == "", err
    assert devs == [{"request_names": ["gpu"], "pool": NODE, "device": dev[0],
                     "cdi_ids": [cdi_id(uid(1), dev[0])]}], devs
    err, devs = res[uid(2)]
    assert err == "" and devs[0]["request_names"] == ["fast"], res[uid(2)]
    assert res[uid(3)][0] == "" and res[uid(3)][1][0]["device"] == dev[0], res[uid(3)]
    expect = {
        uid(4): ["claim ns/missing", "not found"],
        uid(8): ["claim ns/replaced", "got replaced", uid(99)],
        uid(5): ["claim ns/unallocated", "not allocated"],
        uid(6): ["claim ns/nodevice", "fake-0000-00-7f-0", "unknown"],
        uid(7): ["claim ns/badconfig", "invalid config", 'unknown field "colour"'],
    }
    for u, words in expect.items():
        e = res[u][0]
        for w in words:
            assert w in e, (u, w, e)
        assert res[u][1] == [], res[u]
    # hardware: the two exclusive claims only; the monitor took nothing
    assert node.hardware() == {dev[0]: uid(1), dev[1]: uid(2)}, node.hardware()

    # the CDI specs: schema, names, minimum version, content
    assert node.spec_files() == sorted(node.spec_file(u) for u in (uid(1), uid(2), uid(3)))
    for u in (uid(1), uid(2), uid(3)):
        spec = ck.validate_cdi_spec(os.path.join(node.cdi, node.spec_file(u)))
        assert spec["kind"] == VENDOR + "/" + CLASS
    spec = ck.validate_cdi_spec(os.path.join(node.cdi, node.spec_file(uid(2))))
    edits = spec["devices"][0]["containerEdits"]
    assert spec["devices"][0]["name"] == "%s-%s" % (uid(2), dev[1])
    assert "FAKE_MODE=claim" in edits["env"], edits
    assert {"path": "/dev/fake", "type": "c", "major": 511, "minor": 0xb,
            "permissions": "rw"} in edits["deviceNodes"], edits
    mon = ck.validate_cdi_spec(os.path.join(node.cdi, node.spec_file(uid(3))))
    assert "DRA_ADMIN_ACCESS=true" in mon["devices"][0]["containerEdits"]["env"], mon

    # a device in use by another claim
    node.put_claim("thief", uid(10), [("gpu", 1)])
    res = kl.prepare([("ns", "thief", uid(10))])
    assert "claim ns/thief" in res[uid(10)][0] and "in use by another claim, ns/sub" in \
        res[uid(10)][0], res

    # idempotent: same answer, no hardware touched (even if the claim object is gone)
    before = node.hardware()
    os.unlink(os.path.join(node.store, "resourceclaims/ns/good.json"))
    again = kl.prepare(batch[:3])
    assert again[uid(1)] == ("", [{"request_names": ["gpu"], "pool": NODE, "device": dev[0],
                                   "cdi_ids": [cdi_id(uid(1), dev[0])]}]), again
    assert node.hardware() == before
    # v1beta1 answers the same
    beta = kl.prepare(batch[:3], api="v1beta1")
    assert beta == again, (beta, again)
    # a lost spec (tmpfs) comes back on the next prepare
    os.unlink(os.path.join(node.cdi, node.spec_file(uid(1))))
    assert kl.prepare(batch[:1])[uid(1)][0] == ""
    ck.validate_cdi_spec(os.path.join(node.cdi, node.spec_file(uid(1))))

    # multi-device claim where the last device fails: nothing left behind
    node.put_claim("multi", uid(11), [("a", 2), ("a", 3), ("b", 4)],
                   config=[{"source": "FromClaim", "requests": ["b"], "opaque": {
                       "driver": ck.DRIVER, "parameters": {"failPrepare": True}}}])
    res = kl.prepare([("ns", "multi", uid(11))])
    e = res[uid(11)][0]
    assert "claim ns/multi" in e and dev[4] in e and "failPrepare" in e, e
    assert set(node.hardware()) == {dev[0], dev[1]}, node.hardware()
    assert node.spec_file(uid(11)) not in node.spec_files()
    assert uid(11) not in node.checkpoint_claims()
    # fixed config: the same claim now succeeds with three devices
    node.put_claim("multi", uid(11), [("a", 2), ("a", 3), ("b", 4)])
    res = kl.prepare([("ns", "multi", uid(11))])
    assert res[uid(11)][0] == "" and len(res[uid(11)][1]) == 3, res
    ck.validate_cdi_spec(os.path.join(node.cdi, node.spec_file(uid(11))))

    # concurrent calls, overlapping claims, from several kubelet threads
    for i in range(20, 26):
        node.put_claim("c%d" % i, uid(i), [("gpu", 5, True)])
    results, errors = [], []

    def worker(k):
        try:
            claims = [("ns", "c%d" % i, uid(i)) for i in range(20, 26) if (i + k) % 2 == 0]
            for _ in range(3):
                results.append(kl.prepare(claims))
        except Exception as ex:  # noqa: BLE001
            errors.append(ex)
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert not errors, errors
    seen = {}
    for r in results:
        for u, (err, devs) in r.items():
            assert err == "", err
            assert seen.setdefault(u, devs) == devs, (u, devs, seen[u])
    assert len(seen) == 6

    # a call whose deadline passes still finishes and is recorded: its backend
    # work waits at a gate (claimsfake's gateFile) that opens only after the
    # kubelet gave up
    gate = os.path.join(node.tmp, "gate-slow")
    node.put_claim("slow", uid(30), [("gpu", 5)],
                   config=[{"source": "FromClaim", "opaque": {"driver": ck.DRIVER,
                                                             "parameters": {"gateFile": gate}}}])
    import grpc
    try:
        kl.prepare([("ns", "slow", uid(30))], timeout=0.3)
        raise AssertionError("expected DEADLINE_EXCEEDED")
    except grpc.RpcError as ex:
        assert ex.code() == grpc.StatusCode.DEADLINE_EXCEEDED, ex
    wait_arrived(gate, 1)
    open(gate, "w").close()
    deadline = time.time() + 30
    while time.time() < deadline:
        c = node.checkpoint_claims().get(uid(30))
        if c and c["state"] == "PrepareCompleted":
            break
        time.sleep(0.05)
    # the repeat is answered from the checkpoint: the backend does not run
    # again (it would mark a new arrival and wait at the closed gate into the
    # call's deadline)
    for f in arrivals(gate) + [gate]:
        os.unlink(f)
    res = kl.prepare([("ns", "slow", uid(30))], timeout=60)
    assert res[uid(30)][0] == "", res
    assert arrivals(gate) == [], arrivals(gate)

    # latency of single-claim prepares (fresh claims) and of repeats
    lat, rep = [], []
    for i in range(40, 60):
        node.put_claim("l%d" % i, uid(i), [("gpu", 5, True)])
        t0 = time.monotonic()
        r = kl.prepare([("ns", "l%d" % i, uid(i))])
        lat.append((time.monotonic() - t0) * 1000)
        assert r[uid(i)][0] == "", r
        t0 = time.monotonic()
        kl.prepare([("ns", "l%d" % i, uid(i))])
        rep.append((time.monotonic() - t0) * 1000)
    print("prepare latency: first %.2f ms median, %.2f ms max; repeat %.2f ms median; "
          "batch of 8 %.1f ms" % (statistics.median(lat), max(lat), statistics.median(rep),
                                  batch_ms))

    # parallel: four claims in one call are in their backend at the same time:
    # each waits at one gate, opened only once all four arrived (serialized,
    # the second would never arrive and wait_arrived fails)
    gate = os.path.join(node.tmp, "gate-par")
    for i in range(70, 74):
        node.put_claim("p%d" % i, uid(i), [("gpu", 2 + i - 70, True)],
                       config=[{"source": "FromClaim", "opaque": {
                           "driver": ck.DRIVER, "parameters": {"gateFile": gate}}}])
    t0 = time.monotonic()
    fut = kl.prepare_future([("ns", "p%d" % i, uid(i)) for i in range(70, 74)], timeout=60)
    wait_arrived(gate, 4)
    assert not fut.done()
    open(gate, "w").close()
    r = fut.result()
    par_ms = (time.monotonic() - t0) * 1000
    assert all(v.error == "" for v in r.claims.values()), r
    print("4 claims in one call, all in the backend at once: %.0f ms" % par_ms)

    # invalid claim references: a per-claim error naming the field, before the
    # store or a backend sees them (the long UID's claim is in the store)
    long_uid = "a" * 300
    node.put_claim("bad-uid", long_uid, [("gpu", 4)])
    bad = [("ns", "bad-uid", long_uid), ("ns", "slash", "a/b"), ("ns", "space", "a b"),
           ("ns", "upper", "AB-CD"), ("Bad_NS", "x", uid(90)), ("ns", "n" * 254, uid(91))]
    fields = ["uid", "uid", "uid", "uid", "namespace", "name"]
    prepared = node.checkpoint_claims()
    for res in (kl.prepare(bad), kl.unprepare(bad)):
        assert sorted(res) == sorted(c[2] for c in bad), res
        for (_, _, u), field in zip(bad, fields):
            e = res[u] if isinstance(res[u], str) else res[u][0]
            assert e.startswith('claim %s "' % field), (u, e)
            assert "out of memory" not in e and len(e) < 300, e
    assert node.checkpoint_claims() == prepared
    assert not any(long_uid in f for f in node.spec_files())

    # unprepare everything, twice; unknown claims succeed too
    claims = [(u_ns, n, u) for (u_ns, n, u) in
              [("ns", c["name"], c["uid"]) for c in node.checkpoint_claims().values()]]
    res = kl.unprepare(claims + [("ns", "never", uid(999))])
    assert all(e == "" for e in res.values()), res
    assert len(res) == len(claims) + 1
    assert node.hardware() == {}, node.hardware()
    assert node.spec_files() == [], node.spec_files()
    assert node.checkpoint_claims() == {}
    assert all(e == "" for e in kl.unprepare(claims).values())

    # dralet ctl bench refuses a claim that is prepared already (it would
    # unprepare it under its pod) and touches nothing; a free claim it benches
    node.put_claim("held", uid(70), [("gpu", 4)])
    node.put_claim("free", uid(71), [("gpu", 3)])
    assert kl.prepare([("ns", "held", uid(70))])[uid(70)][0] == ""
    held_hw = node.hardware()
    lists = {}
    for name, u in (("held", uid(70)), ("free", uid(71))):
        lists[name] = os.path.join(node.tmp, name + ".json")
        with open(lists[name], "w") as f:
            json.dump({"apiVersion": "v1", "kind": "List", "items": [{"metadata": {
                "namespace": "ns", "name": name, "uid": u}}]}, f)
    out = subprocess.run([node.dralet, "ctl", "bench", "--socket", node.dra_socket, "--claim",
                          lists["held"]], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1, out
    assert "claim ns/held (uid %s) is prepared already" % uid(70) in out.stderr, out.stderr
    assert uid(70) in node.checkpoint_claims()
    assert node.hardware() == held_hw
    out = subprocess.run([node.dralet, "ctl", "bench", "--socket", node.dra_socket, "--claim",
                          lists["free"]], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out
    assert json.loads(out.stdout)["unprepare"]["calls"] == 1, out.stdout
    assert uid(71) not in node.checkpoint_claims()
    assert kl.unprepare([("ns", "held", uid(70))]) == {uid(70): ""}

    # SIGTERM while a prepare runs: the call still gets its answer, the claim is
    # recorded, then the sockets go and the daemon exits 0
    # (held at a gate until the daemon has logged the signal)
    gate = os.path.join(node.tmp, "gate-term")
    node.put_claim("term", uid(80), [("gpu", 5)],
                   config=[{"source": "FromClaim", "opaque": {"driver": ck.DRIVER,
                                                             "parameters": {"gateFile": gate}}}])
    fut = kl.prepare_future([("ns", "term", uid(80))], timeout=60)
    wait_arrived(gate, 1)
    node.proc_handle.send_signal(signal.SIGTERM)
    deadline = time.time() + 30
    while "removing the sockets, finishing calls in flight" not in node.read_log():
        assert time.time() < deadline, node.read_log()[-2000:]
        time.sleep(0.02)
    assert not fut.done()
    open(gate, "w").close()
    res = fut.result()
    assert res.claims[uid(80)].error == "", res
    assert node.checkpoint_claims()[uid(80)]["state"] == "PrepareCompleted"
    kl.close()
    node.stop(signal_sent=True)
    check_json_log(node, dev)
    print("claims prepare/unprepare: ok")


ck.run_test(check)
