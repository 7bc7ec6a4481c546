#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Dynamic MIG on boards/hgx-h100-mig.yaml (GPU 7 in MIG mode without
instances) with the fake NVML: the daemon publishes the GPU's
counter set in a slice of its own (the 1.35+ layout) and every MIG profile x
placement as a device consuming it; claims for two placements are prepared
through the kubelet socket (the fake NVML then holds their GPU and compute
instances, the CDI specs name the MIG devices and their capability nodes)
and unprepared (the instances go). Crashes after the GPU instance was made
(before and after the compute instance) leave nothing behind once the claim
is prepared again and unprepared. With kubernetesVersion 1.34 and the gate
off the slices carry no counters and no partitions."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import claims_kubelet as ck  # noqa: E402

BOARD = os.path.join(ck.REPO, "boards", "hgx-h100-mig.yaml")  # GPU 7: MIG, no instances
BUILD = os.environ.get("BUILD", "build")
FAKE_NVML = os.path.join(ck.REPO, BUILD, "tests", "lib", "fake-nvml.so")
DRIVER = "gpu.dralet.dev"
GPU = "0000:e3:00.0"
SET = "gpu-0000-e3-00-0"


class Run:
    def __init__(self, tmp, tree, config, store, env):
        self.tmp, self.tree, self.config, self.store, self.env = tmp, tree, config, store, env
        self.plugins = os.path.join(tmp, "plugins")
        self.cdi = os.path.join(tmp, "cdi")
        self.proc = None
        self.kubelet = None
        self.protos = ck.Protos(tmp)

    def start(self, extra_env=None):
        env = dict(self.env)
        env.update(extra_env or {})
        self.log = open(os.path.join(self.tmp, "dralet.log"), "a")
        stale = os.path.join(self.plugins, DRIVER, "dra.sock")
        if os.path.exists(stale):
            os.unlink(stale)  # a killed daemon's: wait for the new one's
        self.proc = subprocess.Popen(
            [os.environ["DRALET"], "run", "--sysfs-root", self.tree + "/sys", "--dev-root",
             self.tree + "/dev", "--proc-root", self.tree + "/proc", "--config", self.config,
             "--store", self.store, "--registry-dir", os.path.join(self.tmp, "registry"),
             "--plugins-dir", self.plugins, "--cdi-dir", self.cdi, "--node-name", "demo-node"],
            stdout=self.log, stderr=subprocess.STDOUT, env=env)
        sock = os.path.join(self.plugins, DRIVER, "dra.sock")
        deadline = time.time() + 60
        while not os.path.exists(sock):
            assert self.proc.poll() is None and time.time() < deadline, self.read_log()
            time.sleep(0.1)
        self.kubelet = ck.Kubelet(self.protos, sock)

    def read_log(self):
        with open(os.path.join(self.tmp, "dralet.log")) as f:
            return f.read()[-6000:]

    def stop(self):
        if self.kubelet:
            self.kubelet.close()
            self.kubelet = None
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=30)

    def wait_killed(self):
        self.proc.wait(timeout=30)
        assert self.proc.returncode == -signal.SIGKILL, self.proc.returncode
        self.kubelet.close()
        self.kubelet = None


def slices(store, want_devices, timeout=30):
    """The driver's slices once they hold @want_devices devices."""
    d = os.path.join(store, "resourceslices")
    deadline = time.time() + timeout
    while True:
        out = []
        # the store writes <name>.json.tmp and renames it: only whole slices,
        # and one deleted since the listing is gone
        for fn in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if not fn.endswith(".json"):
                continue
            try:
                with open(os.path.join(d, fn)) as f:
                    s = json.load(f)
            except FileNotFoundError:
                continue
            if s["spec"]["driver"] == DRIVER:
                out.append(s)
        if sum(len(s["spec"].get("devices", [])) for s in out) == want_devices:
            return out
        assert time.time() < deadline, [len(s["spec"].get("devices", [])) for s in out]
        time.sleep(0.2)


def put_claim(store, name, uid, device):
    d = os.path.join(store, "resourceclaims", "default")
    os.makedirs(d, exist_ok=True)
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": name, "namespace": "default", "uid": uid},
             "spec": {"devices": {"requests": [{"name": "mig", "exactly": {
                 "deviceClassName": "mig.gpu.dralet.dev"}}]}},
             "status": {"allocation": {"devices": {"results": [
                 {"request": "mig", "driver": DRIVER, "pool": "demo-node", "device": device}]}}}}
    with open(os.path.join(d, name + ".json"), "w") as f:
        json.dump(claim, f)
    return ("default", name, uid)


def instances(tree):
    path = os.path.join(tree, "nvml-mig-state.json")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return json.load(f)


def check_layout(sl):
    counters = [s for s in sl if s["spec"].get("sharedCounters")]
    assert len(counters) == 1, [s["spec"].keys() for s in sl]
    spec = counters[0]["spec"]
    assert "devices" not in spec or not spec["devices"], "a counter slice carries devices"
    (cs,) = spec["sharedCounters"]
    assert cs["name"] == SET, cs
    assert cs["counters"]["memory-slice-7"] == {"value": "1"}, cs
    for s in sl:
        assert s["spec"]["pool"]["resourceSliceCount"] == len(sl)
        devs = s["spec"].get("devices", [])
        assert len(devs) <= 64, len(devs)
    devs = {d["name"]: d for s in sl for d in s["spec"].get("devices", [])}
    part = devs["mig-0000-e3-00-0-3g-40gb-4"]
    (use,) = part["consumesCounters"]
    assert use["counterSet"] == SET
    assert sorted(k for k in use["counters"] if k.startswith("memory-slice")) == \
        ["memory-slice-%d" % i for i in range(4, 8)], use
    assert len(devs[SET]["consumesCounters"][0]["counters"]) == len(cs["counters"])
    return devs


def test(tmp):
    dralet = os.environ.get("DRALET")
    ck.need(dralet, "DRALET is not set")
    ck.need(os.path.isfile(FAKE_NVML), "the fake NVML is not built")
    tree = os.path.join(tmp, "node")
    r = subprocess.run([dralet, "board", "materialize", "--quiet", BOARD, tree],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-500:]
    config = os.path.join(tmp, "config.yaml")
    with open(config, "w") as f:
        f.write("backends:\n  nvidia:\n    options:\n      nvmlLibrary: \"%s\"\n"
                "      migStateDir: \"%s\"\n" % (FAKE_NVML, os.path.join(tmp, "mig-state")))
    env = dict(os.environ, FAKE_NVML_DATA=os.path.join(tree, "nvml.json"))
    store = os.path.join(tmp, "store")
    run = Run(tmp, tree, config, store, env)
    run.start()
    try:
        # 8 full GPUs, the BMC's VGA, 25 partitions of the MIG GPU
        devs = check_layout(slices(store, 34))
        print("slices: %d devices, counter set %s" % (len(devs), SET))

        a = put_claim(store, "mig-a", "0c7f4a1e-1000-4b2d-8e3f-00000000000a",
                      "mig-0000-e3-00-0-3g-40gb-4")
        b = put_claim(store, "mig-b", "0c7f4a1e-1000-4b2d-8e3f-00000000000b",
                      "mig-0000-e3-00-0-1g-10gb-0")
        res = run.kubelet.prepare([a, b])
        for c in (a, b):
            err, d = res[c[2]]
            assert err == "", err
        made = instances(tree)
        assert sorted((m["profileId"], m["start"], m["ci"]) for m in made) == [(0, 0, 0), (2, 4, 0)], made
        specs = sorted(os.listdir(run.cdi))
        text = "".join(open(os.path.join(run.cdi, f)).read() for f in specs)
        for f in specs:
            ck.validate_cdi_spec(os.path.join(run.cdi, f))
        assert "_UUID=MIG-" in text and "/dev/nvidia-caps/nvidia-cap" in text, text[:2000]
        print("prepared: %d GPU instances, CDI %s" % (len(made), specs))
        for c in (a, b):
            assert run.kubelet.unprepare([c])[c[2]] == ""
        assert instances(tree) == [], instances(tree)
        assert os.listdir(run.cdi) == []

        # crashes after the GPU instance (2nd undo record) and after the
        # compute instance (3rd): preparing again and unpreparing leaves nothing
        for n in (2, 3):
            run.stop()
            run.start({"DRALET_CRASH_AT": "prepare-undo-recorded:%d" % n})
            c = put_claim(store, "mig-crash-%d" % n, "0c7f4a1e-2000-4b2d-8e3f-00000000000%d" % n,
                          "mig-0000-e3-00-0-2g-20gb-2")
            fut = run.kubelet.prepare_future([c])
            try:
                fut.result()
            except Exception:
                pass
            run.wait_killed()
            left = instances(tree)
            assert len(left) == 1 and left[0]["ci"] == (-1 if n == 2 else 0), left
            run.start()
            deadline = time.time() + 30
            while True:
                err, d = run.kubelet.prepare([c])[c[2]]
                if err == "":
                    break
                assert time.time() < deadline, err
                time.sleep(0.5)
            assert len(instances(tree)) == 1, instances(tree)
            assert run.kubelet.unprepare([c])[c[2]] == ""
            assert instances(tree) == [], instances(tree)
            print("crash after undo record %d: recovered" % n)
        run.stop()

        # a 1.34 server without the gate: no counters, no partitions
        shutil.rmtree(os.path.join(store, "resourceslices"))
        with open(config, "a") as f:
            f.write("kubernetesVersion: \"1.34\"\n")
        run.start()
        sl = slices(store, 9)
        assert not any(s["spec"].get("sharedCounters") for s in sl)
        assert not any("consumesCounters" in d for s in sl for d in s["spec"].get("devices", []))
        print("1.34 without the gate: %d devices, no counters" % 9)
    except BaseException:
        sys.stderr.write("---- dralet log ----\n" + run.read_log())
        raise
    finally:
        run.stop()


def main():
    tmp = tempfile.mkdtemp(prefix="dralet-mig-dynamic-")
    try:
        test(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("PASS")


if __name__ == "__main__":
    main()
