#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Two claims on one GPU of boards/hgx-h100.yaml (with the fake NVML), shared
by memory, prepared and unprepared with `dralet ctl prepare` / `ctl
unprepare` against the daemon: the slice publishes the GPU with
allowMultipleAllocations and the memory requestPolicy; each claim's result
carries its shareID and consumedCapacity as the scheduler writes them; both
prepare, each answer has its shareId and a CDI device of its own, each
container learns its share's memory; a third share that would overcommit the
GPU's memory is refused with the numbers; unpreparing one share leaves the
other's spec alone and makes room for the third."""
import glob
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib.board_agent import BoardAgent, dralet_or_skip, fail, skip  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BOARD = os.path.join(REPO, "boards", "hgx-h100.yaml")
BUILD = os.environ.get("BUILD", "build")
FAKE_NVML = os.path.join(REPO, BUILD, "tests", "lib", "fake-nvml.so")
DRIVER = "gpu.dralet.dev"
NODE = "node-1"
GPU = "gpu-0000-03-00-0"


def claim(name, n, memory):
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default",
                     "uid": "0c7f4a1e-0075-4b2d-8e3f-%012d" % n},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": DRIVER, "capacity": {"requests": {"memory": memory}}}}]}},
        "status": {"allocation": {"devices": {"results": [{
            "request": "gpu", "driver": DRIVER, "pool": NODE, "device": GPU,
            "shareID": "5a5a5a5a-0075-4000-8000-%012d" % n,
            "consumedCapacity": {"memory": memory, "shares": "1"}}]}}},
    }


def main():
    dralet = dralet_or_skip()
    if not os.path.isfile(FAKE_NVML):
        skip("the fake NVML is not built (make test-libs)")
    with BoardAgent(dralet, DRIVER, "dralet-shared-gpu-", NODE) as agent:
        tmp, log, cdi = agent.tmp, agent.log, agent.cdi
        tree = agent.materialize(BOARD)
        config = os.path.join(tmp, "config.yaml")
        with open(config, "w") as f:
            f.write("backends:\n  nvidia:\n    options:\n      nvmlLibrary: \"%s\"\n"
                    "      sharing: \"true\"\n" % FAKE_NVML)
        env = dict(os.environ, FAKE_NVML_DATA=os.path.join(tree, "nvml.json"))
        agent.start_tree(tree, config, env)

        # the published slice: the GPU is shareable by memory
        agent.wait_until(lambda: agent.published_device(GPU),
                         lambda: "no slice with %s in %s" % (GPU, agent.store), 60)
        gpu = agent.published_device(GPU)
        if gpu.get("allowMultipleAllocations") is not True or \
                gpu["capacity"]["memory"]["requestPolicy"]["validRange"] != \
                {"min": "1Gi", "max": "79Gi", "step": "1Gi"}:
            fail("the published GPU: %r" % gpu)

        def prepare(c):
            return agent.prepare(c, ".json")


        spec_edits = agent.cdi_edits

        a, b, c = claim("train", 1, "40Gi"), claim("infer", 2, "16Gi"), claim("big", 3, "32Gi")
        ids = {}
        for cl in (a, b):
            rc, res = prepare(cl)
            share = cl["status"]["allocation"]["devices"]["results"][0]["shareID"]
            if rc or res.get("error") or res["devices"][0].get("shareId") != share:
                fail("prepare %s: %d %r" % (cl["metadata"]["name"], rc, res), log)
            [ids[share]] = res["devices"][0]["cdiDeviceIds"]
            if not ids[share].endswith("-%s-%s" % (GPU, share)):
                fail("the CDI device of a share is not named after it: " + ids[share])
            edits = spec_edits(ids[share]) or {}
            env = edits.get("env", [])
            nodes = [n["path"] for n in edits.get("deviceNodes", [])]
            mem = cl["status"]["allocation"]["devices"]["results"][0]["consumedCapacity"]["memory"]
            want = "DRALET_GPU_0000_03_00_0_SHARE_MEMORY=%d" % (int(mem[:-2]) << 30)
            if want not in env or "DRALET_GPU_0000_03_00_0_SHARE_ID=" + share not in env:
                fail("the container's environment of %s: %r" % (share, env))
            if "/dev/nvidia0" not in nodes or "/dev/nvidiactl" not in nodes:
                fail("every share gets the GPU's nodes; %s got %r" % (share, nodes))
        if len(set(ids.values())) != 2:
            fail("two shares with one CDI name: %r" % ids)
        # 40Gi + 16Gi + 32Gi > the GPU's 81559Mi: refused, the others untouched
        rc, res = prepare(c)
        if rc != 1 or "overcommits the device" not in res.get("error", ""):
            fail("an overcommitting share: %d %r" % (rc, res), log)
        agent.unprepare_ok(a)
        a_share = a["status"]["allocation"]["devices"]["results"][0]["shareID"]
        b_share = b["status"]["allocation"]["devices"]["results"][0]["shareID"]
        if spec_edits(ids[a_share]) is not None or spec_edits(ids[b_share]) is None:
            fail("after unpreparing one share: %r" % sorted(os.listdir(cdi)))
        rc, res = prepare(c)
        if rc or res.get("error"):
            fail("the third share after the first left: %d %r" % (rc, res), log)
        agent.unprepare_ok(b)
        agent.unprepare_ok(c)
        if glob.glob(os.path.join(cdi, "*.json")):
            fail("specs left: %r" % os.listdir(cdi))
        agent.stop()
        print("two claims shared one GPU by memory through ctl prepare: ok")


main()
