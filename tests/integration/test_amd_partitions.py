#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""AMD compute partitions made at prepare on boards/mi300x.yaml (the board
model switches current_compute_partition and rewrites the KFD topology like
amdgpu): with option dynamicPartitions each SPX GPU is published whole and
as its DPX, QPX and CPX partitions, consuming its XCC counter set. Two DPX
claims share the switched GPU (the second half gets its XCP render node), a
CPX claim is refused while they hold it and prepared once they left, the
last unprepare returns the GPU to SPX; a claim asking for another memory
partition mode is refused (a driver reload). Crashes right after the undo
state was recorded and after a completed prepare are undone from the
checkpoint after a restart (the board's tree is kept across restarts with
--board-tree, so the GPU stays switched while the daemon is down).""" 
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

BOARD = os.path.join(ck.REPO, "boards", "mi300x.yaml")
DRIVER = "gpu.dralet.dev"
GPU = "0000:03:00.0"
SET = "gpu-0000-03-00-0"
PART = "partition-0000-03-00-0-"


class Run:
    def __init__(self, tmp, config, store):
        self.tmp, self.config, self.store = tmp, config, store
        self.plugins = os.path.join(tmp, "plugins")
        self.cdi = os.path.join(tmp, "cdi")
        self.board_tree = os.path.join(tmp, "node")  # kept across restarts
        self.proc = None
        self.kubelet = None
        self.protos = ck.Protos(tmp)

    def start(self, extra_env=None):
        env = dict(os.environ)
        env.update(extra_env or {})
        self.log = open(os.path.join(self.tmp, "dralet.log"), "a")
        sock = os.path.join(self.plugins, DRIVER, "dra.sock")
        if os.path.exists(sock):
            os.unlink(sock)  # a killed daemon's: wait for the new one's
        self.proc = subprocess.Popen(
            [os.environ["DRALET"], "run", "--board", BOARD, "--board-tree", self.board_tree,
             "--config", self.config,
             "--store", self.store, "--registry-dir", os.path.join(self.tmp, "registry"),
             "--plugins-dir", self.plugins, "--cdi-dir", self.cdi, "--node-name", "demo-node"],
            stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.time() + 60
        while not os.path.exists(sock):
            assert self.proc.poll() is None and time.time() < deadline, self.read_log()
            time.sleep(0.1)
        self.kubelet = ck.Kubelet(self.protos, sock)

    def tree(self):
        return self.board_tree

    def mode(self):
        with open(os.path.join(self.tree(), "sys/bus/pci/devices", GPU,
                               "current_compute_partition")) as f:
            return f.read().strip()

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


def slices(store, want_devices, timeout=60):
    d = os.path.join(store, "resourceslices")
    deadline = time.time() + timeout
    while True:
        out = []
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


def put_claim(store, name, uid, device, params=None):
    d = os.path.join(store, "resourceclaims", "default")
    os.makedirs(d, exist_ok=True)
    config = []
    if params:
        config = [{"source": "FromClaim", "requests": ["part"],
                   "opaque": {"driver": DRIVER, "parameters": params}}]
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": name, "namespace": "default", "uid": uid},
             "spec": {"devices": {"requests": [{"name": "part", "exactly": {
                 "deviceClassName": "gpu.dralet.dev"}}]}},
             "status": {"allocation": {"devices": {"results": [
                 {"request": "part", "driver": DRIVER, "pool": "demo-node", "device": device}],
                 "config": config}}}}
    with open(os.path.join(d, name + ".json"), "w") as f:
        json.dump(claim, f)
    return ("default", name, uid)


def uid(n):
    return "7a3d5c1e-0000-4b2d-8e3f-%012d" % n


def spec_text(run):
    return "".join(open(os.path.join(run.cdi, f)).read() for f in sorted(os.listdir(run.cdi)))


def state(statedir):
    return sorted(f for f in os.listdir(statedir) if not f.endswith(".lock")) \
        if os.path.isdir(statedir) else []


def check_layout(sl):
    sets = [cs for s in sl for cs in s["spec"].get("sharedCounters", [])]
    (cs,) = [c for c in sets if c["name"] == SET]
    assert sorted(cs["counters"]) == ["xcc-%d" % i for i in range(8)], cs
    devs = {d["name"]: d for s in sl for d in s["spec"].get("devices", [])}
    for name, want in (("dpx-1", range(4, 8)), ("qpx-2", range(4, 6)), ("cpx-7", [7])):
        (use,) = devs[PART + name]["consumesCounters"]
        assert use["counterSet"] == SET and sorted(use["counters"]) == \
            ["xcc-%d" % i for i in want], (name, use)
    assert sorted(devs[SET]["consumesCounters"][0]["counters"]) == sorted(cs["counters"])
    return devs


def test(tmp):
    ck.need(os.environ.get("DRALET"), "DRALET is not set")
    statedir = os.path.join(tmp, "partition-state")
    config = os.path.join(tmp, "config.yaml")
    with open(config, "w") as f:
        f.write("backends:\n  amdgpu:\n    options:\n      dynamicPartitions: \"true\"\n"
                "      partitionStateDir: \"%s\"\n" % statedir)
    store = os.path.join(tmp, "store")
    run = Run(tmp, config, store)
    run.start()
    try:
        # 8 GPUs x (whole + 2 DPX + 4 QPX + 8 CPX), the BMC's VGA
        check_layout(slices(store, 8 * 15 + 1))
        assert run.mode() == "SPX"

        a = put_claim(store, "dpx-a", uid(1), PART + "dpx-0")
        b = put_claim(store, "dpx-b", uid(2), PART + "dpx-1")
        res = run.kubelet.prepare([a, b])
        for c in (a, b):
            assert res[c[2]][0] == "", res[c[2]]
        assert run.mode() == "DPX", run.mode()
        text = spec_text(run)
        # DPX half 0 keeps the GPU's render node, half 1 gets XCP 1's (after the board's 128-135)
        assert "/dev/dri/renderD128" in text and "/dev/dri/renderD136" in text, text[:3000]
        assert "/dev/kfd" in text and "COMPUTE_PARTITION=dpx" in text, text[:3000]
        assert state(statedir) == ["amdgpu-partition-%s" % GPU,
                                   "amdgpu-partition-%s.held.dpx-0" % GPU,
                                   "amdgpu-partition-%s.held.dpx-1" % GPU], state(statedir)
        print("prepared DPX halves 0 and 1: the GPU is in DPX")

        c = put_claim(store, "cpx-c", uid(3), PART + "cpx-7")
        err = run.kubelet.prepare([c])[c[2]][0]
        assert "another compute partition mode" in err, err
        assert run.mode() == "DPX"
        m = put_claim(store, "nps4", uid(4), "partition-0000-23-00-0-dpx-0",
                      {"apiVersion": "gpu.dralet.dev/v1alpha1", "kind": "GpuConfig",
                       "memoryPartition": "NPS4"})
        err = run.kubelet.prepare([m])[m[2]][0]
        assert "driver reload" in err, err
        print("refused: CPX while DPX is held; NPS4 (driver reload)")

        assert run.kubelet.unprepare([a])[a[2]] == ""
        assert run.mode() == "DPX"
        assert run.kubelet.unprepare([b])[b[2]] == ""
        assert run.mode() == "SPX", run.mode()
        assert state(statedir) == [], state(statedir)
        err, _ = run.kubelet.prepare([c])[c[2]]
        assert err == "", err
        assert run.mode() == "CPX" and "/dev/dri/renderD142" in spec_text(run)
        assert run.kubelet.unprepare([c])[c[2]] == ""
        assert run.mode() == "SPX" and state(statedir) == []
        print("last unprepare returned the GPU to SPX; CPX 7 prepared afterwards")

        # the example claim, as written
        import yaml  # python3-yaml, part of Debian's python3 install
        with open(os.path.join(ck.REPO, "deploy", "examples", "amd-partition.yaml")) as f:
            ex = yaml.safe_load(f)
        d = os.path.join(store, "resourceclaims", "default")
        with open(os.path.join(d, ex["metadata"]["name"] + ".json"), "w") as f:
            json.dump(ex, f)
        e = ("default", ex["metadata"]["name"], ex["metadata"]["uid"])
        assert run.kubelet.prepare([e])[e[2]][0] == ""
        assert run.mode() == "DPX" and "/dev/dri/renderD136" in spec_text(run)
        assert run.kubelet.unprepare([e])[e[2]] == ""
        assert run.mode() == "SPX" and state(statedir) == []
        print("deploy/examples/amd-partition.yaml prepared and unprepared")

        # a crash right after the undo state was recorded, and one after a
        # completed prepare: after a restart the claim is unprepared from
        # the checkpoint and the marks go
        for n, point in ((5, "prepare-undo-recorded"), (7, "prepare-device"), (6, None)):
            run.stop()
            run.start({"DRALET_CRASH_AT": point} if point else None)
            q = put_claim(store, "qpx-%d" % n, uid(n), PART + "qpx-2")
            if point:
                try:
                    run.kubelet.prepare_future([q]).result()
                except Exception:
                    pass
            else:
                assert run.kubelet.prepare([q])[q[2]][0] == ""
                assert run.mode() == "QPX"
                run.proc.send_signal(signal.SIGKILL)
            run.wait_killed()
            if point == "prepare-device":  # switched, not completed
                assert run.mode() == "QPX" and len(state(statedir)) == 2, state(statedir)
            if not point:
                # the GPU stays in QPX, marked and held, across the restart
                assert len(state(statedir)) == 2, state(statedir)
                assert run.mode() == "QPX"
            run.start()
            if not point:
                assert run.mode() == "QPX"
                # rediscovered as before the switch: the whole GPU and every partition
                check_layout(slices(store, 8 * 15 + 1))
            assert run.kubelet.unprepare([q])[q[2]] == ""
            assert state(statedir) == [], state(statedir)
            assert run.mode() == "SPX"
            print("crash (%s): undone after the restart" % (point or "after prepare"))
        run.stop()

        # a 1.34 server without the gate: no counters, no partitions
        shutil.rmtree(os.path.join(store, "resourceslices"))
        with open(config, "a") as f:
            f.write("kubernetesVersion: \"1.34\"\n")
        run.start()
        sl = slices(store, 8 + 1)
        assert not any(s["spec"].get("sharedCounters") for s in sl)
        assert not any("consumesCounters" in d for s in sl for d in s["spec"].get("devices", []))
        print("1.34 without the gate: 9 devices, no counters")
    except BaseException:
        sys.stderr.write("---- dralet log ----\n" + run.read_log())
        raise
    finally:
        run.stop()


def main():
    tmp = tempfile.mkdtemp(prefix="dralet-amd-partitions-")
    try:
        test(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("PASS")


if __name__ == "__main__":
    main()
