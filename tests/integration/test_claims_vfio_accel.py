#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""An accelerator's vfio form (docs/sharing.md, "Whole-device VFIO passthrough",
"Accelerators"), claimed through `dralet ctl prepare` against `dralet run --board`
on a small board written here (a QAT 4xxx PF with one VF enabled, the VF in its own
IOMMU group; a second QAT PF shared by queues): with the accel backend's options
vfio and sharing "true" the slice publishes the VF natively and as
`accel-0000-6b-00-1-vfio`, both consuming counter "accel" of one counter set, and
no vfio form of the shared PF; prepare of a claim for the vfio form moves the VF to
vfio-pci in the board's kernel model, hands over /dev/vfio/<group> and
/dev/vfio/vfio with the VF's address in the environment, and leaves the mark in the
plugin directory; unprepare gives the VF back to 4xxxvf, removes the mark, and the
native form is published again. Against a 1.34 server (kubernetesVersion) the vfio
forms are left out like every partition, the native form has no counters, and the
agent says so once for the driver."""
import glob
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib.board_agent import BoardAgent, dralet_or_skip, fail  # noqa: E402

DRIVER = "accel.dralet.dev"
NODE = "node-1"
VF = "0000:6b:00.1"
NATIVE = "accel-0000-6b-00-1"
FORM = NATIVE + "-vfio"
SHARED = "accel-0000-6c-00-0"
ENV = "DRALET_ACCEL_0000_6B_00_1_VFIO_"
BOARD = """board: qat-vfio
description: a QAT 4xxx with one VF for a VM, and one shared by queues
hostname: qat-01
pci:
  - root: "0000:6b"
    devices:
      - bdf: 6b:00.0
        id: "8086:4940"
        class: 0x0b4000
        driver: 4xxx
        iommu_group: 70
        files: {qat/cfg_services: "sym;asym", qat/state: up}
        sriov: {total: 16, num: 1, vf_id: "8086:4941", vf_driver: 4xxxvf,
                vfs: {"0-15": {iommu_group: 71}}}
  - root: "0000:6c"
    devices:
      - bdf: 6c:00.0
        id: "8086:4940"
        class: 0x0b4000
        driver: 4xxx
        iommu_group: 80
        files: {qat/cfg_services: dc, qat/state: up, qat/num_rps: "64"}
"""
CLAIM = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
    "metadata": {"name": "vm-qat", "namespace": "default",
                 "uid": "0c7f4a1e-4a7e-4b2d-8e3f-000000000071"},
    "spec": {"devices": {"requests": [{"name": "qat", "exactly": {
        "deviceClassName": "vfio." + DRIVER}}]}},
    "status": {"allocation": {"devices": {"results": [{
        "request": "qat", "driver": DRIVER, "pool": NODE, "device": FORM}]}}},
}


def driver_of(tree):
    link = os.path.join(tree, "sys", "bus", "pci", "devices", VF, "driver")
    return os.path.basename(os.readlink(link)) if os.path.islink(link) else ""


def consumes(dev):
    return [(c["counterSet"], sorted(c["counters"])) for c in dev.get("consumesCounters", [])]


def main():
    dralet = dralet_or_skip()
    with BoardAgent(dralet, DRIVER, "dralet-vfio-accel-", NODE) as agent:
        log = agent.log
        board = agent.write("qat.yaml", BOARD)
        config = agent.write("config.yaml", "backends:\n  accel:\n    options:\n"
                             "      vfio: \"true\"\n      sharing: \"true\"\n")
        tree = agent.start_board(board, config)
        mark = os.path.join(agent.plugins, DRIVER, "accel-vfio-" + VF)

        agent.wait_until(lambda: agent.published_device(FORM) and agent.published_device(SHARED),
                         lambda: "no slice with %s and %s in %s" % (FORM, SHARED, agent.store),
                         60)
        native, form = agent.published_device(NATIVE), agent.published_device(FORM)
        want = [(NATIVE, ["accel"])]
        if not native or consumes(native) != want or consumes(form) != want:
            fail("the two forms do not share one counter: %r %r" % (native, form), log)
        if agent.published(FORM, "type") != "vfio" or \
                agent.published(FORM, "nativeDriver") != "4xxxvf":
            fail("the vfio form: %r" % form, log)
        if agent.published_device(SHARED + "-vfio"):
            fail("a function shared by queues has a vfio form", log)
        if driver_of(tree) != "4xxxvf":
            fail("the VF starts on %r" % driver_of(tree), log)

        rc, res = agent.prepare(CLAIM, ".json")
        if rc or res.get("error"):
            fail("prepare: %d %r" % (rc, res), log)
        nodes, env = agent.cdi_nodes_env(res["devices"][0]["cdiDeviceIds"])
        if "/dev/vfio/71" not in nodes or "/dev/vfio/vfio" not in nodes:
            fail("the vfio nodes are not handed over: %r" % nodes, log)
        if ENV + "PCI_ADDRESS=" + VF not in env or ENV + "IOMMU_GROUP=71" not in env:
            fail("the environment: %r" % env, log)
        if driver_of(tree) != "vfio-pci" or not os.path.exists(mark):
            fail("after prepare the VF is on %r, mark %s" % (driver_of(tree),
                                                             os.path.exists(mark)), log)

        agent.unprepare_ok(CLAIM)
        if driver_of(tree) != "4xxxvf" or os.path.exists(mark):
            fail("after unprepare the VF is on %r, mark %s" % (driver_of(tree),
                                                               os.path.exists(mark)), log)
        agent.wait_until(lambda: agent.published_device(NATIVE) and agent.published_device(FORM),
                         lambda: "the native form is not back in %s" % agent.store, 60)
        if glob.glob(os.path.join(agent.cdi, "*.json")):
            fail("specs left: %r" % os.listdir(agent.cdi))
        agent.stop()

        # 1.34: no partitionable devices. The last run's slices go first: what the
        # store holds then is this run's alone (else the check below could read the
        # old ones before the new agent has replaced them)
        for f in glob.glob(os.path.join(agent.store, "resourceslices", "*.json")):
            os.unlink(f)
        with open(config, "a") as f:
            f.write("kubernetesVersion: \"1.34\"\n")
        agent.start(["--board", board], config, dict(os.environ, TMPDIR=agent.boards))
        agent.wait_until(lambda: agent.published_device(NATIVE),
                         lambda: "no slice with %s in %s" % (NATIVE, agent.store), 60)
        if any(d["name"].endswith("-vfio") or "consumesCounters" in d
               for d in agent.published_devices()):
            fail("1.34 got vfio forms or counters: %r" % agent.published_devices(), log)
        with open(log) as f:
            warned = f.read().count("vfio forms of GPUs and accelerators) not published")
        if warned != 1:
            fail("the agent warned %d times about the left-out vfio forms" % warned, log)
        agent.stop()
        print("an accelerator's vfio form: published with its native form, prepared to "
              "vfio-pci and given back: ok")


main()
