#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The daemon on the default demo board (boards/hgx-h100.yaml) with the
in-tree backends, preparing the example claims of deploy/examples/claims
through each driver's socket: GPU, MIG (with the fake NVML), GPU+NIC
aligned, RDMA NIC, RDMA VF, adminAccess monitoring, and time-slicing, which
must fail with a clear error because the NVIDIA tools are absent. Every CDI
spec written is checked against the schema. SKIPs until the board and its
backends are in the tree."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import claims_kubelet as ck  # noqa: E402
from lib.board_agent import BoardAgent  # noqa: E402

BOARD = os.path.join(ck.REPO, "boards", "hgx-h100.yaml")
EXAMPLES = os.path.join(ck.REPO, "deploy", "examples", "claims")
BUILD = os.environ.get("BUILD", "build")
FAKE_NVML = os.path.join(ck.REPO, BUILD, "tests", "lib", "fake-nvml.so")


def load_yaml(path):
    import yaml  # python3-yaml, part of Debian's python3 install
    with open(path) as f:
        return yaml.safe_load(f)


def main():
    dralet = os.environ.get("DRALET")
    ck.need(dralet, "DRALET is not set")
    ck.need(os.path.isfile(BOARD), "boards/hgx-h100.yaml is not in the tree yet")
    try:
        import yaml  # noqa: F401
    except ImportError:
        ck.skip("python3-yaml is missing")
    with BoardAgent(dralet, "gpu.dralet.dev", "dralet-claims-board-", "demo-node") as agent:
        tmp, store, cdi = agent.tmp, agent.store, agent.cdi
        tree = agent.materialize(BOARD)
        config = os.path.join(tmp, "config.yaml")
        env = dict(os.environ)
        with open(config, "w") as f:
            if os.path.isfile(FAKE_NVML):
                # as make run's demo: GPUs shareable (deploy/examples' gpu-shared.yaml)
                f.write("backends:\n  nvidia:\n    options:\n      nvmlLibrary: \"%s\"\n"
                        "      sharing: \"true\"\n" % FAKE_NVML)
                env["FAKE_NVML_DATA"] = os.path.join(tree, "nvml.json")
        disc = subprocess.run([dralet, "discover", "--sysfs-root", tree + "/sys", "--dev-root",
                               tree + "/dev", "--proc-root", tree + "/proc", "--config", config,
                               "-o", "json"], capture_output=True, text=True, env=env)
        names = {d["name"] for d in json.loads(disc.stdout or '{"devices":[]}')["devices"]}
        ck.need("gpu-0000-03-00-0" in names and "rdma-0000-24-00-0" in names,
                "the GPU and RDMA backends are not in the tree yet")
        claims = {}
        for fn in sorted(os.listdir(EXAMPLES)):
            c = load_yaml(os.path.join(EXAMPLES, fn))
            md = c["metadata"]
            d = os.path.join(store, "resourceclaims", md["namespace"])
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, md["name"] + ".json"), "w") as f:
                json.dump(c, f)
            claims[fn] = c
        agent.start_tree(tree, config, env)
        protos = ck.Protos(tmp)
        sockets = {drv: os.path.join(agent.plugins, drv, "dra.sock")
                   for drv in ("gpu.dralet.dev", "net.dralet.dev")}
        agent.wait_until(lambda: all(os.path.exists(s) for s in sockets.values()),
                         lambda: "the daemon did not open %r" % sockets, 60)
        kubelets = {drv: ck.Kubelet(protos, s) for drv, s in sockets.items()}
        have_mig = "mig-0000-e3-00-0-1g-10gb-6" in names
        for fn, c in claims.items():
            md = c["metadata"]
            drivers = sorted({r["driver"] for r in c["status"]["allocation"]["devices"]["results"]})
            for drv in drivers:
                if drv not in kubelets:
                    continue	# fpga.yaml: another board
                res = kubelets[drv].prepare([(md["namespace"], md["name"], md["uid"])])
                err, devs = res[md["uid"]]
                if fn == "gpu-timeslicing.yaml":
                    assert "nvidia-smi" in err and "claim default/gpu-timeslicing" in err, err
                    continue
                if fn == "mig.yaml" and not have_mig:
                    assert "unknown" in err, err
                    continue
                assert err == "", (fn, err)
                want = [r["device"] for r in c["status"]["allocation"]["devices"]["results"]
                        if r["driver"] == drv]
                assert [d["device"] for d in devs] == want, (fn, devs)
                print("%-22s %-15s %s" % (fn, drv, devs[0]["cdi_ids"][0]))
        specs = sorted(os.listdir(cdi))
        assert specs, "no CDI spec written"
        for f in specs:
            ck.validate_cdi_spec(os.path.join(cdi, f))
        # unprepare everything through each driver
        for fn, c in claims.items():
            md = c["metadata"]
            for k in kubelets.values():
                assert k.unprepare([(md["namespace"], md["name"], md["uid"])])[md["uid"]] == ""
        assert os.listdir(cdi) == [], os.listdir(cdi)
        for k in kubelets.values():
            k.close()
        agent.stop()
        print("%d CDI specs valid; example claims on hgx-h100: ok" % len(specs))


main()
