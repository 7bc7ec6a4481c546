#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""SR-IOV VFs on demand (docs/sriov.md) with `dralet run --board boards/e810.yaml`, whose
kernel model makes VFs when sriov_numvfs is written: PF1 (0000:3b:00.1, no VFs) under a
policy with onDemand: true, numVfs: 4, vfDriver: vfio-pci. The daemon leaves the count
at 0 and publishes vf-0000-3b-00-1-vf0..vf3 (not made: created false), consuming the
counter set vfs-0000-3b-00-1 of 4 published in a slice of its own (the 1.35+ layout). A
claim for vf2 makes the PF's 4 VFs and gets VF 2 on vfio-pci (its group in the CDI
spec); the rediscovery publishes it as made; unprepare gives the PF its 0 VFs back and
the devices stay published as not made. With kubernetesVersion 1.34 (gate off) the VFs
not made are left out and PF0's VFs stay. The real kernel: tests/vm/test_vf_on_demand.sh."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from lib.board_agent import BoardAgent, dralet_or_skip  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BOARD = os.path.join(REPO, "boards", "e810.yaml")
DRIVER = "sriov.dralet.dev"
PF = "0000:3b:00.1"
SET = "vfs-0000-3b-00-1"
NAMES = ["vf-0000-3b-00-1-vf%d" % i for i in range(4)]
UID = "0c7f4a1e-3000-4b2d-8e3f-000000000001"

CONFIG = """%s
sriov:
  policies:
  - name: e810-pf1-on-demand
    pfSelector: {pciAddresses: ["%s"]}
    onDemand: true
    numVfs: 4
    vfDriver: vfio-pci
"""


def check(agent, cond, what):
    if not cond:
        agent.fail(what)


def claim(device):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "vf-on-demand", "namespace": "default", "uid": UID},
            "spec": {"devices": {"requests": [{"name": "vf", "exactly": {
                "deviceClassName": "sriov.dralet.dev"}}]}},
            "status": {"allocation": {"devices": {
                "results": [{"request": "vf", "driver": DRIVER, "pool": "node-1",
                             "device": device}],
                "config": [{"source": "FromClaim", "requests": ["vf"], "opaque": {
                    "driver": DRIVER, "parameters": {
                        "apiVersion": "sriov.dralet.dev/v1alpha1", "kind": "VfConfig"}}}]}}}}


def numvfs(tree):
    with open(os.path.join(tree, "sys", "bus", "pci", "devices", PF, "sriov_numvfs")) as f:
        return int(f.read())


def counter_sets(agent):
    out = {}
    for f in os.listdir(os.path.join(agent.store, "resourceslices")):
        try:
            with open(os.path.join(agent.store, "resourceslices", f)) as fh:
                sl = json.load(fh)
        except (FileNotFoundError, ValueError):
            continue
        for s in sl["spec"].get("sharedCounters", []):
            out[s["name"]] = s["counters"]
    return out


def created(agent, name):
    d = agent.published_device(name) or {}
    return d.get("attributes", {}).get("created", {}).get("bool")


def main():
    dralet = dralet_or_skip()
    with BoardAgent(dralet, DRIVER, "dralet-vf-on-demand-") as agent:
        config = os.path.join(agent.tmp, "config.yaml")
        with open(config, "w") as f:
            f.write(CONFIG % ("", PF))
        tree = agent.start_board(BOARD, config)
        agent.wait_until(lambda: all(agent.published_device(n) for n in NAMES),
                         lambda: "the on-demand VFs are not published")
        check(agent, numvfs(tree) == 0, "the daemon changed PF1's count: %d" % numvfs(tree))
        check(agent, all(created(agent, n) is False for n in NAMES), "created is not false")
        sets = counter_sets(agent)
        check(agent, sets.get(SET) == {"vfs": {"value": "4"}}, "counter set: %s" % sets)
        st = subprocess.run([dralet, "sriov", "status", "--sysfs-root", tree + "/sys",
                             "--dev-root", tree + "/dev", "--proc-root", tree + "/proc",
                             "--config", config, "--plugins-dir", agent.plugins],
                            capture_output=True, text=True)
        check(agent, "on demand: claims' prepares make up to 4 VFs" in st.stdout,
              "sriov status: %s %s" % (st.stdout, st.stderr))
        uses = agent.published_device(NAMES[2]).get("consumesCounters")
        check(agent, uses == [{"counterSet": SET, "counters": {"vfs": {"value": "1"}}}],
              "consumesCounters of vf2: %s" % uses)

        rc, res = agent.prepare(claim(NAMES[2]), ".json")
        check(agent, rc == 0 and not res.get("error"), "prepare: %s" % res)
        check(agent, numvfs(tree) == 4, "after prepare PF1 has %d VFs" % numvfs(tree))
        nodes, env = agent.cdi_nodes_env(
            res["devices"][0]["cdiDeviceIds"])
        check(agent, any(n.startswith("/dev/vfio/") and n != "/dev/vfio/vfio" for n in nodes),
              "no vfio group node in %s" % nodes)
        vf2 = [e.split("=", 1)[1] for e in env if "_PCI_ADDRESS=" in e and "_PF_" not in e]
        check(agent, len(vf2) == 1 and vf2[0] != PF, "PCI_ADDRESS: %s" % env)
        agent.wait_until(lambda: created(agent, NAMES[2]) is True,
                         lambda: "vf2 not republished as made")
        check(agent, agent.published(NAMES[2], "resource.kubernetes.io/pciBusID") == vf2[0],
              "vf2's pciBusID: %s" % agent.published(NAMES[2],
                                                      "resource.kubernetes.io/pciBusID"))

        r = agent.unprepare(claim(NAMES[2]))
        check(agent, r.returncode == 0, "unprepare: %s %s" % (r.stdout, r.stderr))
        check(agent, numvfs(tree) == 0, "after unprepare PF1 has %d VFs" % numvfs(tree))
        check(agent, not os.path.exists(os.path.join(agent.plugins, DRIVER,
                                                     "sriov-on-demand-" + PF)),
              "the ledger is left")
        agent.wait_until(lambda: created(agent, NAMES[2]) is False,
                         lambda: "vf2 not republished as not made")
        agent.stop()

    # 1.34 without the gate: the VFs not made are partitions, left out
    with BoardAgent(dralet, DRIVER, "dralet-vf-on-demand-134-") as agent:
        config = os.path.join(agent.tmp, "config.yaml")
        with open(config, "w") as f:
            f.write(CONFIG % ('kubernetesVersion: "1.34"', PF))
        agent.start_board(BOARD, config)
        nic = BoardAgent.__new__(BoardAgent)
        nic.__dict__.update(agent.__dict__)
        nic.driver = "net.dralet.dev"
        agent.wait_until(lambda: nic.published_device("vf-0000-3b-01-0"),
                         lambda: "PF0's VFs are not published")
        check(agent, not any(agent.published_device(n) for n in NAMES),
              "VFs not made published on 1.34 without the gate")
        check(agent, SET not in counter_sets(agent), "a counter set on 1.34 without the gate")
        agent.stop()
    print("ok")


if __name__ == "__main__":
    main()
