#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Shared devices (consumable capacity) through the kubelet's gRPC calls and
across crashes: two claims hold shares of one device (the test backend's
device with allowMultipleAllocations and 16Gi of memory), each prepared and
unprepared on its own, with share_id in the reply and the share in the CDI
device name; a share that would overcommit the memory and an exclusive
claim on the shared device are refused. Then the daemon is killed with
SIGKILL at each prepare and unprepare crash point of a third share while the
second stays prepared: after the restart each share is where it should be
(the prepared one untouched, the crashed one rolled back or finished) and
preparing it again gives the same CDI IDs."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import claims_kubelet as ck  # noqa: E402
from claims_kubelet import uid, CLASS, VENDOR  # noqa: E402

PREPARE_POINTS = ["prepare-started", "prepare-undo-recorded", "prepare-device",
                  "prepare-cdi-written", "prepare-completed"]
UNPREPARE_POINTS = ["unprepare-started", "unprepare-devices", "unprepare-cdi-removed"]
SHARE = {n: "5%07x-0000-4000-8000-%012x" % (n, n) for n in range(1, 40)}


def crash_call(node, kl, fn):
    """Runs fn (a call that must crash the daemon) and waits for the SIGKILL."""
    import grpc
    try:
        fn()
        raise AssertionError("the call returned; the daemon should have died")
    except grpc.RpcError:
        pass
    rc = node.wait_exit()
    assert rc == -9, "dralet exited with %s, not SIGKILL:\n%s" % (rc, node.read_log()[-4000:])


def share_result(n, memory):
    return ("r", 0, False, {"shareID": SHARE[n], "consumedCapacity": {"memory": memory}})


def cdi_id(node, claim_uid, n):
    return "%s/%s=%s-%s-%s" % (VENDOR, CLASS, claim_uid, node.devices[0], SHARE[n])


def prepare_share(kl, node, name, claim_uid, n):
    err, devs = kl.prepare([("ns", name, claim_uid)])[claim_uid]
    assert err == "", (name, err)
    assert len(devs) == 1 and devs[0]["share_id"] == SHARE[n], devs
    assert devs[0]["cdi_ids"] == [cdi_id(node, claim_uid, n)], devs
    return devs


def held(node):
    """share ID -> claim UID, from the backend's state files D@<share>."""
    out = {}
    for name, claim_uid in node.hardware().items():
        dev, _, share = name.partition("@")
        assert share and dev == node.devices[0], name   # nothing exclusive here
        out[share] = claim_uid
    return out


def check_consistent(node, want):
    """want: {share n: claim uid} exactly what is prepared."""
    claims = node.checkpoint_claims()
    for c in claims.values():
        assert c["state"] == "PrepareCompleted", c
    in_ckpt = {d["shareID"]: c["uid"] for c in claims.values() for d in c["devices"]}
    expect = {SHARE[n]: u for n, u in want.items()}
    assert in_ckpt == expect, ("checkpoint", in_ckpt, "want", expect)
    assert held(node) == expect, ("hardware", held(node), "want", expect)
    assert node.spec_files() == sorted(node.spec_file(u) for u in set(want.values()))
    for f in node.spec_files():
        ck.validate_cdi_spec(os.path.join(node.cdi, f))


def check(node):
    node.make_shared(0)
    node.put_claim("a", uid(1), [share_result(1, "6Gi")])
    node.put_claim("b", uid(2), [share_result(2, "8Gi")])
    node.put_claim("big", uid(3), [share_result(3, "4Gi")])
    node.put_claim("whole", uid(4), [("r", 0)])
    node.start()
    kl = node.kubelet()
    prepare_share(kl, node, "a", uid(1), 1)
    prepare_share(kl, node, "b", uid(2), 2)
    check_consistent(node, {1: uid(1), 2: uid(2)})
    err, _ = kl.prepare([("ns", "big", uid(3))])[uid(3)]
    assert "overcommits the device" in err and "capacity memory" in err, err
    err, _ = kl.prepare([("ns", "whole", uid(4))])[uid(4)]
    assert "in use by another claim" in err, err
    # the shares are independent: a goes, b stays; then there is room for big
    assert kl.unprepare([("ns", "a", uid(1))])[uid(1)] == ""
    check_consistent(node, {2: uid(2)})
    prepare_share(kl, node, "big", uid(3), 3)
    assert kl.unprepare([("ns", "big", uid(3))])[uid(3)] == ""
    check_consistent(node, {2: uid(2)})
    kl.close()
    node.stop()
    print("two claims on one shared device: prepared and unprepared independently")

    n = 10
    for point in PREPARE_POINTS:
        n += 1
        node.put_claim("c%d" % n, uid(n), [share_result(n, "4Gi")])
        node.start(env={"DRALET_CRASH_AT": point})
        kl = node.kubelet()
        crash_call(node, kl, lambda: kl.prepare([("ns", "c%d" % n, uid(n))], timeout=45))
        kl.close()
        node.start()
        if point == "prepare-completed":
            check_consistent(node, {2: uid(2), n: uid(n)})
        else:
            check_consistent(node, {2: uid(2)})     # rolled back at start
        kl = node.kubelet()
        prepare_share(kl, node, "c%d" % n, uid(n), n)
        check_consistent(node, {2: uid(2), n: uid(n)})
        assert kl.unprepare([("ns", "c%d" % n, uid(n))])[uid(n)] == ""
        check_consistent(node, {2: uid(2)})
        kl.close()
        node.stop()
        print("prepare crash at %-22s: both shares consistent after restart" % point)

    for point in UNPREPARE_POINTS:
        n += 1
        node.put_claim("c%d" % n, uid(n), [share_result(n, "8Gi")])
        node.start(env={"DRALET_CRASH_AT": point})
        kl = node.kubelet()
        prepare_share(kl, node, "c%d" % n, uid(n), n)
        crash_call(node, kl, lambda: kl.unprepare([("ns", "c%d" % n, uid(n))], timeout=45))
        kl.close()
        node.start()
        check_consistent(node, {2: uid(2)})         # finished at start
        kl = node.kubelet()
        assert kl.unprepare([("ns", "c%d" % n, uid(n))])[uid(n)] == ""
        prepare_share(kl, node, "c%d" % n, uid(n), n)
        assert kl.unprepare([("ns", "c%d" % n, uid(n))])[uid(n)] == ""
        check_consistent(node, {2: uid(2)})
        kl.close()
        node.stop()
        print("unprepare crash at %-20s: both shares consistent after restart" % point)
    print("shared-device crash tests: ok")


ck.run_test(check)
