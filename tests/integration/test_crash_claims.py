#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Crash tests: the daemon is killed with SIGKILL at each crash point inside
prepare and unprepare (DRALET_CRASH_AT, a test-only seam), then restarted.
After the restart the state must be consistent: only PrepareCompleted
entries in the checkpoint, hardware prepared for exactly those claims, a
valid CDI spec for each and no other spec of ours, and a repeated prepare
(or unprepare) gives the same CDI IDs as a prepare that never crashed."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import claims_kubelet as ck  # noqa: E402
from claims_kubelet import uid, CLASS, VENDOR  # noqa: E402

PREPARE_POINTS = ["prepare-started", "prepare-undo-recorded", "prepare-undo-recorded:2",
                  "prepare-device", "prepare-device:2", "prepare-cdi-written", "prepare-completed"]
UNPREPARE_POINTS = ["unprepare-started", "unprepare-devices", "unprepare-cdi-removed"]


def expected_ids(node, claim_uid, devices):
    return sorted("%s/%s=%s-%s" % (VENDOR, CLASS, claim_uid, node.devices[d]) for d in devices)


def check_consistent(node):
    """The invariant after any restart."""
    claims = node.checkpoint_claims()
    for c in claims.values():
        assert c["state"] == "PrepareCompleted", c
    held = {}
    for c in claims.values():
        for d in c["devices"]:
            if not d["adminAccess"]:
                held[d["device"]] = c["uid"]
    assert node.hardware() == held, ("hardware", node.hardware(), "checkpoint", held)
    want = sorted(node.spec_file(u) for u in claims)
    assert node.spec_files() == want, ("specs", node.spec_files(), "want", want)
    for f in want:
        ck.validate_cdi_spec(os.path.join(node.cdi, f))
    stray = [f for f in os.listdir(node.cdi) if f.startswith(".")]
    assert not stray, stray


def prepare_all(kl, node, claims):
    res = kl.prepare([("ns", n, u) for n, u, _ in claims])
    for n, u, devs in claims:
        err, got = res[u]
        assert err == "", (n, err)
        assert sorted(i for d in got for i in d["cdi_ids"]) == expected_ids(node, u, devs), got
    return res


def crash_call(node, kl, fn):
    """Runs fn (a call that must crash the daemon) and waits for the SIGKILL."""
    import grpc
    try:
        fn()
        raise AssertionError("the call returned; the daemon should have died")
    except grpc.RpcError as ex:
        assert ex.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED,
                             grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL), ex
    rc = node.wait_exit()
    assert rc == -9, "dralet exited with %s, not SIGKILL:\n%s" % (rc, node.read_log()[-4000:])


def check(node):
    # a claim that stays prepared across all crashes, to see it survive
    node.put_claim("steady", uid(1), [("r", 0)])
    node.start()
    kl = node.kubelet()
    prepare_all(kl, node, [("steady", uid(1), [0])])
    kl.close()
    node.stop()

    n = 100
    for point in PREPARE_POINTS:
        n += 1
        claim = ("c%d" % n, uid(n), [1, 2])
        node.put_claim(claim[0], claim[1], [("r", 1), ("r", 2)])
        node.start(env={"DRALET_CRASH_AT": point})
        kl = node.kubelet()
        crash_call(node, kl, lambda: kl.prepare([("ns", claim[0], claim[1])], timeout=45))
        kl.close()
        node.start()
        check_consistent(node)
        state = node.checkpoint_claims()
        if point == "prepare-completed":
            assert claim[1] in state, point	# completed before the crash: kept
        else:
            assert claim[1] not in state, point	# rolled back at start
        kl = node.kubelet()
        prepare_all(kl, node, [claim, ("steady", uid(1), [0])])
        check_consistent(node)
        assert node.hardware()[node.devices[1]] == claim[1]
        assert kl.unprepare([("ns", claim[0], claim[1])])[claim[1]] == ""
        check_consistent(node)
        kl.close()
        node.stop()
        print("prepare crash at %-22s consistent after restart" % point)

    for point in UNPREPARE_POINTS:
        n += 1
        claim = ("c%d" % n, uid(n), [3, 4])
        node.put_claim(claim[0], claim[1], [("r", 3), ("r", 4)])
        node.start(env={"DRALET_CRASH_AT": point})
        kl = node.kubelet()
        prepare_all(kl, node, [claim])
        crash_call(node, kl, lambda: kl.unprepare([("ns", claim[0], claim[1])], timeout=45))
        kl.close()
        node.start()
        check_consistent(node)
        # every unprepare crash point is after UnprepareStarted: finished at start
        assert claim[1] not in node.checkpoint_claims(), point
        kl = node.kubelet()
        assert kl.unprepare([("ns", claim[0], claim[1])])[claim[1]] == ""
        # and the claim can be prepared again with the same ids
        prepare_all(kl, node, [claim])
        assert kl.unprepare([("ns", claim[0], claim[1])])[claim[1]] == ""
        check_consistent(node)
        kl.close()
        node.stop()
        print("unprepare crash at %-20s consistent after restart" % point)

    assert uid(1) in node.checkpoint_claims()
    print("crash tests: ok")


ck.run_test(check)
