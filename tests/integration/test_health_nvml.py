#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""NVML events as a health source, end to end (docs/health.md, "NVIDIA GPUs: NVML
events"): the daemon on boards/vm-like.yaml with the fake NVML (its H100 in MIG mode:
MIG devices in GPU instances 1 and 2), a 1 s health interval and DRADeviceTaints on.
Events are appended to the tree's nvml-events file, as the driver would report them:

- an application XID (13) of the whole GPU changes nothing;
- XID 79 in GPU instance 1 makes that MIG device alone Unhealthy, its slice entry
  tainted dralet.dev/xid, the kubelet's list saying "XID 79 (GPU has fallen off the bus)";
- a recovery action (node reboot) makes both Unhealthy with dralet.dev/gpu-recovery;
- the action back to none: the XID's hold remains on the first, the second is healthy.

The order proves the first point: had XID 13 counted, the second device would be tainted
when XID 79 shows. Deadlines are generous; nothing here measures latency."""
import json
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib.board_agent import BoardAgent, fail, test_lib  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BOARD = os.path.join(REPO, "boards", "vm-like.yaml")
DRIVER = "gpu.dralet.dev"
NODE = "nvml-node"
GPU = "0000:02:00.0"
IN_GI1 = "mig-0000-02-00-0-3g-40gb-0"   # GPU instance 1
IN_GI2 = "mig-0000-02-00-0-1g-10gb-4"   # GPU instance 2
VFIO_GPU = "gpu-0000-04-00-0"  # the L40S on vfio-pci
WAIT = 60


def taints(agent):
    """{device: [taint keys]} of the driver's published slices."""
    return {d["name"]: sorted(t["key"] for t in d.get("taints", []))
            for d in agent.published_devices()}


def wait_for(cond, what, proc):
    deadline = time.time() + WAIT
    last = None
    while time.time() < deadline:
        if proc.poll() is not None:
            raise AssertionError("the daemon exited while waiting for " + what)
        last = cond()
        if last is True:
            return
        time.sleep(0.1)
    raise AssertionError("timed out waiting for %s (last: %s)" % (what, last))


def main():
    dralet = os.environ.get("DRALET")
    if not dralet:
        fail("DRALET is not set")
    fake = test_lib("fake-nvml")
    with BoardAgent(dralet, DRIVER, "dralet-nvml-", NODE) as agent:
        tmp, log_path = agent.tmp, agent.log
        tree = agent.materialize(BOARD)
        events = os.path.join(tree, "nvml-events")

        def inject(line):
            with open(events, "a") as f:
                f.write("%s %s\n" % (GPU, line))

        config = os.path.join(tmp, "config.yaml")
        with open(config, "w") as f:
            f.write("healthCheckIntervalSeconds: 1\nfeatureGates:\n  DRADeviceTaints: true\n"
                    "backends:\n  nvidia:\n    options:\n      nvmlLibrary: \"%s\"\n" % fake)
        env = dict(os.environ, FAKE_NVML_DATA=os.path.join(tree, "nvml.json"))
        env.pop("FAKE_NVML_EVENTS", None)
        agent.start_tree(tree, config, env)
        proc = agent.proc
        # the board's L40S on vfio-pci (no NVML) never takes the H100's taints
        both = {IN_GI1: [], IN_GI2: [], VFIO_GPU: []}
        wait_for(lambda: taints(agent) == both or taints(agent), "both MIG devices published, "
                 "untainted", proc)
        assert taints(agent) == both, taints(agent)

        inject("xid 13")
        inject("xid 79 1 0")
        wait_for(lambda: taints(agent)[IN_GI1] == ["dralet.dev/xid"] or taints(agent),
                 IN_GI1 + " tainted dralet.dev/xid", proc)
        assert taints(agent) == {IN_GI1: ["dralet.dev/xid"], IN_GI2: [], VFIO_GPU: []}, \
            taints(agent)

        # what the kubelet sees: the message of the NodeWatchResources list
        out = subprocess.run([dralet, "ctl", "watch-health", "--socket", agent.sock, "--count", "1",
                              "--timeout", "%ds" % WAIT], capture_output=True, text=True,
                             timeout=WAIT + 5)
        assert out.returncode == 0, out.stderr
        listed = {d["device"]: d for d in json.loads(out.stdout.splitlines()[0])["devices"]}
        assert listed[IN_GI1]["health"] == "UNHEALTHY", listed
        assert "NVML: XID 79 (GPU has fallen off the bus)" in listed[IN_GI1]["message"], listed
        assert listed[IN_GI2]["health"] == "HEALTHY", listed

        inject("recovery 2")
        recovery = {IN_GI1: ["dralet.dev/gpu-recovery"], IN_GI2: ["dralet.dev/gpu-recovery"],
                    VFIO_GPU: []}
        wait_for(lambda: taints(agent) == recovery or taints(agent), "the recovery taint", proc)
        inject("recovery 0")
        wait_for(lambda: taints(agent) == {IN_GI1: ["dralet.dev/xid"], IN_GI2: [], VFIO_GPU: []} or
                 taints(agent), "the XID hold alone", proc)
        # a clean exit (under ASan: no leak of the event sets)
        agent.stop()
        with open(log_path) as log:
            text = log.read()
        assert "device %s: health Healthy -> Unhealthy: NVML: XID 79" % IN_GI1 in text, text[-3000:]
        print("ok: XID 13 ignored, XID 79 on its MIG instance, recovery action on the GPU")


if __name__ == "__main__":
    main()
