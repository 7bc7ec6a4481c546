#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Claims sharing one NIC VF of boards/e810.yaml by bandwidth (consumable
capacity), prepared with `dralet ctl prepare` against `dralet run --board`
(the board simulator's kernel model, which keeps the VF's rate): the slice
publishes the VF with allowMultipleAllocations and a `bandwidth` capacity
of the PF's 25 Gb/s with its requestPolicy; two shares prepare, each with
its shareId, a CDI device of its own and its bandwidth in the environment;
a third that would overcommit the link is refused with the numbers. Then
the daemon is killed (SIGKILL) in the middle of a share's prepare, after
the backend raised the VF's cap: after the restart the interrupted share is
rolled back, the prepared one is still held (the ledger, rebuilt from the
checkpoint, still refuses an overcommitting share), and unpreparing makes
room again. The rate arithmetic itself: tests/unit/test_share_bandwidth.c."""
import glob
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib.board_agent import BoardAgent, dralet_or_skip, fail  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BOARD = os.path.join(REPO, "boards", "e810.yaml")
DRIVER = "net.dralet.dev"
NODE = "node-1"
VF = "vf-0000-3b-01-0"          # VF 0 of ens1f0np0 (25 Gb/s), on iavf
ENV = "DRALET_VF_0000_3B_01_0_"


def claim(name, n, bandwidth):
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default",
                     "uid": "0c7f4a1e-5075-4b2d-8e3f-%012d" % n},
        "spec": {"devices": {"requests": [{"name": "vf", "exactly": {
            "deviceClassName": DRIVER,
            "capacity": {"requests": {"bandwidth": bandwidth}}}}]}},
        "status": {"allocation": {"devices": {"results": [{
            "request": "vf", "driver": DRIVER, "pool": NODE, "device": VF,
            "shareID": "5a5a5a5a-5075-4000-8000-%012d" % n,
            "consumedCapacity": {"bandwidth": bandwidth}}]}}},
    }


def share_of(c):
    return c["status"]["allocation"]["devices"]["results"][0]["shareID"]


def main():
    dralet = dralet_or_skip()
    with BoardAgent(dralet, DRIVER, "dralet-shared-nic-", NODE) as agent:
        log = agent.log
        config = agent.write("config.yaml",
                             "backends:\n  nic-vf:\n    options:\n      sharing: \"true\"\n")
        os.makedirs(agent.boards)
        board_env = dict(os.environ, TMPDIR=agent.boards)
        agent.start(["--board", BOARD], config, board_env)

        agent.wait_until(lambda: agent.published_device(VF),
                         lambda: "no slice with %s in %s" % (VF, agent.store), 60)
        vf = agent.published_device(VF)
        bw = vf.get("capacity", {}).get("bandwidth", {})
        if vf.get("allowMultipleAllocations") is not True or bw.get("value") != "25G" or \
                bw.get("requestPolicy") != {"default": "25G", "validRange": {
                    "min": "100M", "max": "25G", "step": "100M"}}:
            fail("the published VF: %r" % vf)

        def prepare(c):
            return agent.prepare(c, ".json")


        a, b, c = claim("web", 1, "10G"), claim("batch", 2, "10G"), claim("bulk", 3, "8G")
        ids = {}
        for cl in (a, b):
            rc, res = prepare(cl)
            share = share_of(cl)
            if rc or res.get("error") or res["devices"][0].get("shareId") != share:
                fail("prepare %s: %d %r" % (cl["metadata"]["name"], rc, res), log)
            [ids[share]] = res["devices"][0]["cdiDeviceIds"]
            env = (agent.cdi_edits(ids[share]) or {}).get("env", [])
            if ENV + "SHARE_BANDWIDTH=10000000000" not in env or \
                    ENV + "SHARE_ID=" + share not in env or ENV + "NETDEV=ens1f0np0v0" not in env:
                fail("the container's environment of %s: %r" % (share, env))
        if len(set(ids.values())) != 2:
            fail("two shares with one CDI name: %r" % ids)
        # 10G + 10G + 8G > 25G: refused with the numbers, the others untouched
        rc, res = prepare(c)
        err = res.get("error", "")
        if rc != 1 or "overcommits the device" not in err or \
                "only 5000000000 of its 25G are left" not in err:
            fail("an overcommitting share: %d %r" % (rc, res), log)
        agent.unprepare_ok(b)
        if agent.cdi_edits(ids[share_of(b)]) is not None or \
                agent.cdi_edits(ids[share_of(a)]) is None:
            fail("after unpreparing one share: %r" % sorted(os.listdir(agent.cdi)))

        # killed after the backend raised the cap for b, before it completed
        agent.stop()
        agent.start(["--board", BOARD], config,
                    dict(board_env, DRALET_CRASH_AT="prepare-device"))
        path = os.path.join(agent.store, "resourceclaims", "default", "batch.json")
        with open(path, "w") as f:
            json.dump(b, f)
        r = subprocess.run([dralet, "ctl", "prepare", "--socket", agent.sock, "--claim", path],
                           capture_output=True, text=True, timeout=60)
        if agent.proc.wait(timeout=60) != -9:
            fail("the daemon was not killed at prepare-device: %s" % r.stdout, log)
        os.unlink(agent.sock)
        agent.start(["--board", BOARD], config, board_env)
        # b was rolled back (its backend unprepare ran from the undo state),
        # a kept; a still holds 10G, so 8G more fits but 16G does not
        with open(log) as f:
            started = [ln for ln in f if "driver net.dralet.dev: " in ln and "after start" in ln]
        if not started or "1 prepared claim(s) after start (kept 1" not in started[0] or \
                "rolled back 1" not in started[0]:
            fail("the restart after the crash: %r" % started, log)
        if glob.glob(os.path.join(agent.cdi, "*%s*" % share_of(b))) or \
                agent.cdi_edits(ids[share_of(a)]) is None:
            fail("after the restart: %r" % sorted(os.listdir(agent.cdi)), log)
        big = claim("huge", 4, "16G")
        rc, res = prepare(big)
        if rc != 1 or "only 15000000000 of its 25G are left (1 other share(s) hold " \
                "10000000000)" not in res.get("error", ""):
            fail("after the restart the ledger forgot share a: %d %r" % (rc, res), log)
        rc, res = prepare(c)
        if rc or res.get("error"):
            fail("the 8G share after the restart: %d %r" % (rc, res), log)
        agent.unprepare_ok(a)
        agent.unprepare_ok(c)
        if glob.glob(os.path.join(agent.cdi, "*.json")):
            fail("specs left: %r" % os.listdir(agent.cdi))
        agent.stop()
        print("claims shared one NIC VF by bandwidth, across a crash: ok")


main()
