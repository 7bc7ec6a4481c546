#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""`dralet sriov status|apply` on the E810 board (boards/e810.yaml: 64 VFs, 48 on iavf,
16 on vfio-pci) against SR-IOV policies: every PF listed with its policy, counts and VF
drivers; a VF prepared for a claim (a claims checkpoint in --plugins-dir) named with its
claim; what an apply would do (--dry-run), and its refusal when the count would remove
a prepared VF (also by the daemon, which records a Warning Event SriovNumVfsRefused about
the Node); strict configuration errors from `sriov status` and from `dralet run`;
another plugin's checkpoint in the plugins directory is not read. The real-kernel side
is tests/vm/test_sriov.sh."""
import json
import os
import subprocess
import sys
import tempfile
import time
import zlib

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BOARD = os.path.join(REPO, "boards", "e810.yaml")
PF = "0000:3b:00.0"


def skip(why):
    print(why)
    sys.exit(77)


def check(cond, what):
    if not cond:
        print("FAIL: " + what)
        sys.exit(1)


def write_checkpoint(plugins, driver, claims):
    """A claims checkpoint as the daemon writes it (docs/claims.md)."""
    data = {"driver": driver, "bootID": "", "claims": claims}
    text = json.dumps(data, separators=(",", ":"))
    ck = {"kind": "DraletCheckpoint", "version": 1,
          "checksum": "crc32:%08x" % (zlib.crc32(text.encode()) & 0xffffffff), "data": data}
    os.makedirs(os.path.join(plugins, driver), exist_ok=True)
    with open(os.path.join(plugins, driver, "checkpoint.json"), "w") as f:
        json.dump(ck, f, indent=2)


def vf_claim(address, device):
    return {"uid": "0c7f4a1e-2000-4b2d-8e3f-000000000001", "namespace": "team-a",
            "name": "dpdk", "state": "PrepareCompleted",
            "devices": [{"pool": "node", "device": device, "requests": ["vf"],
                         "adminAccess": False, "prepared": True, "cdiClass": "sriov",
                         "cdiID": "k8s.sriov.dralet.dev/sriov=x",
                         "identity": {"pciAddress": address, "vendorID": "0x8086",
                                      "deviceID": "0x1889", "subsystemVendorID": "0x0000",
                                      "subsystemDeviceID": "0x0000"},
                         "edits": {"env": [], "nodes": [], "mounts": []},
                         "undo": {"pciAddress": address, "driver": "iavf",
                                  "rebound": "vfio-pci", "driverOverride": "none"}}]}


def main():
    dralet = os.environ.get("DRALET")
    if not dralet:
        skip("DRALET is not set")
    if not os.path.isfile(BOARD):
        skip("boards/e810.yaml is not in the tree")
    tmp = tempfile.mkdtemp(prefix="dralet-sriov-cli-")
    config = os.path.join(tmp, "config.yaml")
    plugins = os.path.join(tmp, "plugins")
    os.makedirs(plugins)

    def run(*args, policy=None):
        if policy is not None:
            with open(config, "w") as f:
                f.write(policy)
        return subprocess.run([dralet, "sriov", *args, "--board", BOARD, "--config", config,
                               "--plugins-dir", plugins], capture_output=True, text=True)

    policy = ("backends:\n  sriov:\n    options:\n      pfs: \"%s\"\n"
              "sriov:\n  policies:\n"
              "  - name: e810\n    pfSelector: {pfNames: [ens1f0np0]}\n"
              "    numVfs: %d\n    vfDriver: vfio-pci\n"
              "  - name: shadowed\n    pfSelector: {vendor: \"8086\", drivers: [ice]}\n"
              "    numVfs: 2\n"
              "  - name: nothing-here\n    pfSelector: {drivers: [mlx5_core]}\n    numVfs: 2\n")

    # status: the PF, its policy, counts, every VF with its driver
    r = run("status", "-o", "json", policy=policy % (PF, 64))
    check(r.returncode == 0, "sriov status failed: " + r.stderr[-500:])
    st = json.loads(r.stdout)
    pfs = {p["address"]: p for p in st["pfs"]}
    check(PF in pfs, "the E810 PF is not listed: %s" % list(pfs))
    pf = pfs[PF]
    check(pf["policy"] == "e810", "policy %r" % pf.get("policy"))
    check(pf.get("alsoSelectedBy") == "shadowed", "alsoSelectedBy %r" % pf.get("alsoSelectedBy"))
    check(pf["interface"] == "ens1f0np0", "interface %r" % pf.get("interface"))
    check(pf["wantedVfs"] == 64 and pf["actualVfs"] == 64, "counts %r" % pf)
    check(pf["totalVfs"] == 128, "totalVfs %r" % pf.get("totalVfs"))
    check("pending" not in pf, "pending %r" % pf.get("pending"))
    check(len(pf["vfs"]) == 64, "%d VFs" % len(pf["vfs"]))
    drivers = [v["driver"] for v in pf["vfs"]]
    check(drivers.count("iavf") == 48 and drivers.count("vfio-pci") == 16,
          "VF drivers %r" % sorted(set(drivers)))
    check(st["unusedPolicies"] == ["nothing-here"], "unused %r" % st["unusedPolicies"])

    # a VF prepared for a claim (and another plugin's file of its own, never read)
    write_checkpoint(plugins, "sriov.dralet.dev", [vf_claim("0000:3b:01.2", "vf-0000-3b-01-2")])
    os.makedirs(os.path.join(plugins, "gpu.example.com"))
    with open(os.path.join(plugins, "gpu.example.com", "checkpoint.json"), "w") as f:
        f.write('{"v1": {"preparedClaims": {}}}\n')
    r = run("status", "-o", "json")
    check(r.returncode == 0, "sriov status with a checkpoint failed: " + r.stderr[-500:])
    vfs = {v["address"]: v for v in json.loads(r.stdout)["pfs"][0]["vfs"]}
    check(vfs["0000:3b:01.2"].get("claim") == "team-a/dpdk", "claim %r" % vfs["0000:3b:01.2"])
    check(vfs["0000:3b:01.2"].get("claimDriver") == "sriov.dralet.dev", "claimDriver")
    check(vfs["0000:3b:01.3"].get("claim") is None, "an unclaimed VF has a claim")
    r = run("status")
    check("VF 2    0000:3b:01.2   iavf       prepared for claim team-a/dpdk (sriov.dralet.dev)"
          in r.stdout, "text status:\n" + r.stdout[:2000])
    check("policy nothing-here selects no SR-IOV PF" in r.stdout, "unused policy in text")
    check("note: policy shadowed selects it too" in r.stdout, "shadowed policy in text")

    # 8 VFs wanted: refused while VF 2 is prepared (the count goes through 0)
    r = run("apply", "--dry-run", policy=policy % (PF, 8))
    check(r.returncode == 1, "a refused apply exits %d:\n%s" % (r.returncode, r.stdout))
    check("refused" in r.stdout and "VF 2 (0000:3b:01.2) prepared for claim team-a/dpdk"
          in r.stdout, "refusal:\n" + r.stdout)
    r = run("status", "-o", "json")
    check("refused: PF %s" % PF in json.loads(r.stdout)["pfs"][0].get("pending", ""),
          "pending refusal in status")
    # the daemon refuses the same count and says it with a Warning Event about the
    # Node (the file store writes it to DIR/events; docs/operations.md, "Events")
    # (a claim the daemon's recovery keeps: its pool is the node's name, its identity the
    # board's VF, and no VF driver to change on the other VFs)
    tree = os.path.join(tmp, "tree")
    r = subprocess.run([dralet, "board", "materialize", "--quiet", BOARD, tree],
                       capture_output=True, text=True)
    check(r.returncode == 0, "board materialize: " + r.stderr[-500:])
    claim = vf_claim("0000:3b:01.2", "vf-0000-3b-01-2")
    ident = claim["devices"][0]["identity"]
    for key, name in (("subsystemVendorID", "subsystem_vendor"),
                      ("subsystemDeviceID", "subsystem_device")):
        with open(os.path.join(tree, "sys", "bus", "pci", "devices", "0000:3b:01.2", name)) as f:
            ident[key] = f.read().strip()
    write_checkpoint(plugins, "sriov.dralet.dev", [claim])
    with open(config, "w") as f:
        f.write((policy % (PF, 8)).replace("    vfDriver: vfio-pci\n", ""))
    store = os.path.join(tmp, "events-store")
    events = os.path.join(store, "events")
    proc = subprocess.Popen([dralet, "run", "--board", BOARD, "--config", config, "--store", store,
                             "--plugins-dir", plugins, "--registry-dir", os.path.join(tmp, "reg1"),
                             "--cdi-dir", os.path.join(tmp, "cdi1"), "--node-name", "node"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    refused = []
    deadline = time.time() + 30
    while not refused and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
        for name in os.listdir(events) if os.path.isdir(events) else []:
            with open(os.path.join(events, name)) as f:
                ev = json.load(f)
            if ev["reason"] == "SriovNumVfsRefused":
                refused.append(ev)
    proc.terminate()
    err = proc.communicate(timeout=30)[1]
    check(proc.returncode == 0, "dralet run exited %s:\n%s" % (proc.returncode, err[-2000:]))
    check(len(refused) == 1, "no SriovNumVfsRefused Event:\n" + err[-2000:])
    ev = refused[0]
    check(ev["type"] == "Warning" and ev["involvedObject"]["kind"] == "Node" and
          ev["involvedObject"]["name"] == "node", "the Event %r" % ev)
    check("VF 2 (0000:3b:01.2) prepared for claim team-a/dpdk" in ev["message"] and PF in
          ev["message"], "the Event's message %r" % ev["message"])
    check("DROPPED" not in err, "the daemon dropped the claim:\n" + err[-2000:])

    # no claim: an apply would change it
    os.remove(os.path.join(plugins, "sriov.dralet.dev", "checkpoint.json"))
    r = run("apply", "--dry-run", "-o", "json")
    check(r.returncode == 0, "dry run failed: " + r.stdout + r.stderr[-300:])
    rep = json.loads(r.stdout)["pfs"][0]
    check(rep["outcome"] == "changed" and rep["vfsBefore"] == 64 and rep["vfsAfter"] == 8,
          "dry-run report %r" % rep)

    # a corrupt checkpoint of ours: apply refuses to touch anything
    os.makedirs(os.path.join(plugins, "sriov.dralet.dev"), exist_ok=True)
    with open(os.path.join(plugins, "sriov.dralet.dev", "checkpoint.json"), "w") as f:
        f.write("{garbage")
    r = run("apply")
    check(r.returncode == 1 and "cannot tell which VFs are prepared" in r.stderr,
          "corrupt checkpoint: %d %s" % (r.returncode, r.stderr[-500:]))
    os.remove(os.path.join(plugins, "sriov.dralet.dev", "checkpoint.json"))

    # strict configuration
    bad = "sriov:\n  policies:\n  - name: e810\n    pfSelector: {pfNames: [x]}\n    numVfs: 70000\n"
    r = run("status", policy=bad)
    check(r.returncode != 0 and "sriov.policies[0].numVfs: must be between 0 and 65535"
          in r.stderr, "bad config: %d %s" % (r.returncode, r.stderr[-500:]))
    r = subprocess.run([dralet, "run", "--board", BOARD, "--config", config, "--store",
                        os.path.join(tmp, "store"), "--plugins-dir", plugins, "--registry-dir",
                        os.path.join(tmp, "reg"), "--cdi-dir", os.path.join(tmp, "cdi"),
                        "--node-name", "n"], capture_output=True, text=True, timeout=60)
    check(r.returncode != 0 and "numVfs" in r.stderr,
          "dralet run with a bad policy: %d %s" % (r.returncode, r.stderr[-500:]))
    r = subprocess.run([dralet, "sriov", "frobnicate"], capture_output=True, text=True)
    check(r.returncode == 2 and "unknown command" in r.stderr, "unknown sriov command")
    print("ok")


if __name__ == "__main__":
    main()
