#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Claims sharing one Intel QAT 4xxx by queues (consumable capacity),
prepared with `dralet ctl prepare` against `dralet run --board` on a small
board written here (a QAT PF without VFs reporting qat/num_rps 64, and one
on an older kernel without it): the slice publishes the first with
allowMultipleAllocations and a `queues` capacity of 64 with its
requestPolicy, the second exclusive; two shares (32 and 16 queues) prepare
with their queue counts in the environment; a third of 24 is refused with
the numbers; after a restart (the ledger rebuilt from the checkpoint) it is
still refused, and fits once a share is unprepared."""
import glob
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib.board_agent import BoardAgent, dralet_or_skip, fail  # noqa: E402

DRIVER = "accel.dralet.dev"
NODE = "node-1"
QAT = "accel-0000-6b-00-0"
OLD = "accel-0000-6b-01-0"
ENV = "DRALET_ACCEL_0000_6B_00_0_"
BOARD = """board: qat-share
description: a QAT 4xxx shared by queues, and one on a kernel without num_rps
hostname: qat-01
pci:
  - root: "0000:6b"
    devices:
      - bdf: 6b:00.0
        id: "8086:4940"
        class: 0x0b4000
        driver: 4xxx
        files: {qat/cfg_services: "sym;asym", qat/state: up, qat/num_rps: "64"}
        sriov: {total: 16, num: 0, vf_id: "8086:4941", vf_driver: 4xxxvf}
      - bdf: 6b:01.0
        id: "8086:4940"
        class: 0x0b4000
        driver: 4xxx
        files: {qat/cfg_services: dc, qat/state: up}
"""


def claim(name, n, queues):
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default",
                     "uid": "0c7f4a1e-4a7e-4b2d-8e3f-%012d" % n},
        "spec": {"devices": {"requests": [{"name": "qat", "exactly": {
            "deviceClassName": DRIVER, "capacity": {"requests": {"queues": queues}}}}]}},
        "status": {"allocation": {"devices": {"results": [{
            "request": "qat", "driver": DRIVER, "pool": NODE, "device": QAT,
            "shareID": "5a5a5a5a-4a7e-4000-8000-%012d" % n,
            "consumedCapacity": {"queues": queues}}]}}},
    }


def main():
    dralet = dralet_or_skip()
    with BoardAgent(dralet, DRIVER, "dralet-shared-accel-", NODE) as agent:
        log = agent.log
        board = agent.write("qat.yaml", BOARD)
        config = agent.write("config.yaml",
                             "backends:\n  accel:\n    options:\n      sharing: \"true\"\n")
        os.makedirs(agent.boards)
        env = dict(os.environ, TMPDIR=agent.boards)
        agent.start(["--board", board], config, env)

        agent.wait_until(lambda: agent.published_device(QAT) and agent.published_device(OLD),
                         lambda: "no slice with %s and %s in %s" % (QAT, OLD, agent.store), 60)
        qat, old = agent.published_device(QAT), agent.published_device(OLD)
        q = qat.get("capacity", {}).get("queues", {})
        if qat.get("allowMultipleAllocations") is not True or q.get("value") != "64" or \
                q.get("requestPolicy") != {"default": "64", "validRange": {
                    "min": "1", "max": "64", "step": "1"}}:
            fail("the published QAT: %r" % qat)
        if old.get("allowMultipleAllocations") or old.get("capacity"):
            fail("a QAT without num_rps is shared: %r" % old)

        def prepare(c):
            return agent.prepare(c, ".json")


        a, b, c = claim("tls", 1, "32"), claim("zip", 2, "16"), claim("vpn", 3, "24")
        for cl in (a, b):
            rc, res = prepare(cl)
            result = cl["status"]["allocation"]["devices"]["results"][0]
            if rc or res.get("error") or res["devices"][0].get("shareId") != result["shareID"]:
                fail("prepare %s: %d %r" % (cl["metadata"]["name"], rc, res), log)
            [cdi_id] = res["devices"][0]["cdiDeviceIds"]
            edits = agent.cdi_edits(cdi_id) or {}
            want = ENV + "SHARE_QUEUES=" + result["consumedCapacity"]["queues"]
            if want not in edits.get("env", []):
                fail("the container edits of %s: %r" % (cl["metadata"]["name"], edits))
        refused = "consumes 24 of capacity queues, but only 16 of its 64 are left (2 other " \
                  "share(s) hold 48); the allocation overcommits the device"
        rc, res = prepare(c)
        if rc != 1 or refused not in res.get("error", ""):
            fail("an overcommitting share: %d %r" % (rc, res), log)
        # a restart keeps the shares: the ledger comes back from the checkpoint
        agent.stop()
        agent.start(["--board", board], config, env)
        rc, res = prepare(c)
        if rc != 1 or refused not in res.get("error", ""):
            fail("after a restart, the overcommitting share: %d %r" % (rc, res), log)
        agent.unprepare_ok(b)
        rc, res = prepare(c)
        if rc or res.get("error"):
            fail("the third share after the second left: %d %r" % (rc, res), log)
        agent.unprepare_ok(a)
        agent.unprepare_ok(c)
        if glob.glob(os.path.join(agent.cdi, "*.json")):
            fail("specs left: %r" % os.listdir(agent.cdi))
        agent.stop()
        print("claims shared one QAT by queues, across a restart: ok")


main()
