#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""dralet on a real GPU node, without Kubernetes: what the node is, what
discovery finds (with NVML through dlopen), the slices it would publish,
then the agent with a file store preparing and unpreparing claims through
its kubelet socket, as the kubelet would.

    realnode.py DRALET OUTDIR [--board FILE]

Steps (each one recorded, a failing one does not stop the rest):
  facts      kernel, driver version, nvidia-smi, /dev/nvidia*, PCI functions
             of vendor 0x10de, where libnvidia-ml and libcuda live
  discover   as shipped (no configuration, unless $REALNODE_CONFIG names one)
  slices     the ResourceSlices `dralet slices` prints
  agent      `dralet run --store`: registration socket info, device health
  gpu        a claim for the first full NVIDIA GPU: prepare, the CDI spec's
             device nodes (char devices of that major:minor) and mounts
             (files that exist; libcuda and libnvidia-ml among them when the
             node's loader finds them), unprepare, the spec gone
  container  the CDI spec as a container gets it: in a private mount
             namespace, a root on tmpfs with only the C library, /dev, /proc,
             /sys and the spec's mounts; cuinit (tests/realnode/cuinit.c, beside
             this script) must load libcuda.so.1 there, cuInit and count the GPU
  timeslice  the same GPU with GpuConfig time-slicing Long: nvidia-smi's
             compute policy after prepare, and back to Default after unprepare
  restart    prepare, SIGKILL the agent, start it again, unprepare from its
             checkpoint
  bench      `dralet ctl bench` on the GPU claim (20 rounds)
  memory     the agent's VmRSS / RssAnon / RssFile with one claim prepared

OUTDIR gets log.txt (everything), results.json (one verdict per step),
discover.json, slices.json, pci.json, cdi.json (the first spec) and
agent.log. --board FILE runs the same steps on a simulated board (with
$REALNODE_CONFIG pointing the nvidia backend at the fake NVML), to try the
script without hardware.
The exit status is 0 when every step that applies passed.
"""
import glob
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time

DRIVER = "gpu.dralet.dev"
NODE = "realnode"
LIB_DIRS = ("usr/lib/x86_64-linux-gnu", "usr/lib64", "usr/lib", "lib64", "lib")
DRIVER_ROOTS = ("/", "/usr/local/nvidia", "/run/nvidia/driver", "/home/kubernetes/bin/nvidia")


class Run:
    def __init__(self, dralet, out, board):
        self.dralet, self.out, self.board = dralet, out, board
        self.tmp = tempfile.mkdtemp(prefix="dralet-realnode-")
        self.results = {}
        self.log = open(os.path.join(out, "log.txt"), "w")
        self.agent = None
        self.config = None
        self.env = dict(os.environ)

    def say(self, *parts):
        line = " ".join(str(p) for p in parts)
        print(line, flush=True)
        self.log.write(line + "\n")
        self.log.flush()

    def sh(self, argv, timeout=60, check=False):
        """Runs ARGV, logs it with its output; (rc, stdout, stderr)."""
        self.say("$", " ".join(argv))
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                               env=self.env)
        except (OSError, subprocess.TimeoutExpired) as e:
            self.say("  ->", e)
            if check:
                raise AssertionError("%s: %s" % (argv[0], e))
            return 127, "", str(e)
        for name, text in (("stdout", r.stdout), ("stderr", r.stderr)):
            if text.strip():
                shown = text if len(text) < 6000 else text[:3000] + "\n...\n" + text[-3000:]
                self.say("  [%s]\n%s" % (name, shown.rstrip()))
        self.say("  -> rc", r.returncode)
        if check and r.returncode:
            raise AssertionError("%s failed (rc %d): %s" % (" ".join(argv[:3]), r.returncode,
                                                           r.stderr.strip()[-400:]))
        return r.returncode, r.stdout, r.stderr

    def step(self, name, fn):
        self.say("\n==== %s" % name)
        t = time.monotonic()
        try:
            detail = fn()
            verdict = "n/a" if detail == "n/a" else "pass"
        except AssertionError as e:
            verdict, detail = "FAIL", str(e)
        except Exception as e:  # a bug in this script: recorded, the rest still runs
            verdict, detail = "FAIL", "%s: %s" % (type(e).__name__, e)
        self.results[name] = {"verdict": verdict, "detail": detail,
                              "seconds": round(time.monotonic() - t, 3)}
        self.say("---- %s: %s %s" % (name, verdict, json.dumps(detail)[:2000]))

    def node_args(self):
        return ["--board", self.board] if self.board else []

    # ---- facts -------------------------------------------------------

    def facts(self):
        f = {"kernel": os.uname().release}
        try:
            with open("/etc/os-release") as fh:
                f["os"] = [l.split("=", 1)[1].strip().strip('"') for l in fh
                           if l.startswith("PRETTY_NAME=")][0]
        except (OSError, IndexError):
            pass
        try:
            with open("/proc/driver/nvidia/version") as fh:
                f["procDriverVersion"] = fh.readline().strip()
        except OSError as e:
            f["procDriverVersion"] = str(e)
        smi = shutil.which("nvidia-smi") or next(
            (p for r in DRIVER_ROOTS for p in (os.path.join(r, "bin/nvidia-smi"),
                                               os.path.join(r, "usr/bin/nvidia-smi"))
             if os.access(p, os.X_OK)), None)
        f["nvidiaSmi"] = smi
        if smi:
            self.sh([smi, "-L"])
            rc, out, _ = self.sh([smi, "--query-gpu=name,uuid,pci.bus_id,driver_version,"
                                  "mig.mode.current,compute_mode", "--format=csv,noheader"])
            f["nvidiaSmiQuery"] = out.strip()
        f["devNodes"] = sorted(os.path.basename(p) for p in glob.glob("/dev/nvidia*"))
        nv = []
        for d in sorted(glob.glob("/sys/bus/pci/devices/*")):
            try:
                with open(d + "/vendor") as fh:
                    if fh.read().strip() != "0x10de":
                        continue
                with open(d + "/class") as fh:
                    cls = fh.read().strip()
                drv = os.path.basename(os.readlink(d + "/driver")) if \
                    os.path.exists(d + "/driver") else None
                nv.append({"address": os.path.basename(d), "class": cls, "driver": drv})
            except OSError:
                continue
        f["nvidiaPciFunctions"] = nv
        rc, out, _ = self.sh(["sh", "-c", "ldconfig -p | grep -E 'libnvidia-ml|libcuda\\.'"])
        f["ldconfigNvml"] = "libnvidia-ml.so.1" in out and "libcuda.so.1" in out
        f["driverFiles"] = {p: os.readlink(p) if os.path.islink(p) else "file" for p in sorted(set(
            p for root in DRIVER_ROOTS for d in LIB_DIRS
            for p in glob.glob(os.path.join(root, d, "libnvidia-ml.so*"))
            + glob.glob(os.path.join(root, d, "libcuda.so*"))))}
        rc, out, _ = self.sh(["sh", "-c", "cat /etc/ld.so.conf /etc/ld.so.conf.d/*.conf"])
        self.facts_ = f
        if not self.board:
            assert nv, "no PCI function of vendor 0x10de in /sys/bus/pci/devices"
        return f

    # ---- discovery ---------------------------------------------------

    def discover(self):
        shipped = None
        if not self.board:
            rc, out, err = self.sh([self.dralet, "discover", "-o", "json", "--v", "4"])
            shipped = json.loads(out)["devices"] if rc == 0 else None
        self.config = os.environ.get("REALNODE_CONFIG")
        cfg = ["--config", self.config] if self.config else []
        rc, out, err = self.sh([self.dralet, "discover", "-o", "json"] + self.node_args() + cfg
                               + ["--v", "4"], check=True)
        with open(os.path.join(self.out, "discover.json"), "w") as fh:
            fh.write(out)
        devs = json.loads(out)["devices"]
        self.sh([self.dralet, "discover"] + self.node_args() + cfg)
        rc, out, _ = self.sh([self.dralet, "pci", "-o", "json"] + self.node_args() + cfg)
        with open(os.path.join(self.out, "pci.json"), "w") as fh:
            fh.write(out)
        gpus = [d for d in devs if d.get("driver") == DRIVER and d.get("backend") == "nvidia"]
        assert gpus, "discovery found no NVIDIA device (%d devices in all)" % len(devs)
        self.gpu = next((d for d in gpus if d["attributes"].get("type", {}).get("string")
                         == "gpu"), None)
        attrs = lambda d: {k: list(v.values())[0] for k, v in d["attributes"].items()}
        detail = {"devices": len(devs), "nvidia": [
            {"name": d["name"], "attributes": attrs(d), "capacity": d.get("capacity"),
             "health": d.get("health"), "deviceNodes": d.get("deviceNodes")} for d in gpus]}
        if shipped is not None:
            g = [d for d in shipped if d.get("backend") == "nvidia"]
            detail["asShipped"] = {"nvidiaDevices": len(g), "withNvml": any(
                "uuid" in d["attributes"] and "architecture" in d["attributes"] for d in g)}
        assert self.gpu, "no full GPU among the NVIDIA devices"
        a = attrs(self.gpu)
        if not self.board:
            assert "architecture" in a and "cudaComputeCapability" in a, \
                "NVML attributes missing: %s" % sorted(a)
        return detail

    def slices(self):
        cfg = ["--config", self.config] if self.config else []
        rc, out, _ = self.sh([self.dralet, "slices", "-o", "json", "--node-name", NODE]
                             + self.node_args() + cfg, check=True)
        with open(os.path.join(self.out, "slices.json"), "w") as fh:
            fh.write(out)
        items = json.loads(out)["items"]
        return [{"generateName": s["metadata"].get("generateName"), "driver": s["spec"]["driver"],
                 "pool": s["spec"].get("pool"), "devices": len(s["spec"].get("devices", []))}
                for s in items]

    # ---- the agent ---------------------------------------------------

    def paths(self):
        t = self.tmp
        return {k: os.path.join(t, k) for k in ("store", "plugins", "registry", "cdi")}

    def start(self):
        p = self.paths()
        os.makedirs(os.path.join(p["store"], "resourceclaims", "default"), exist_ok=True)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.metrics_port = s.getsockname()[1]
        argv = [self.dralet, "run"] + self.node_args() + (
            ["--config", self.config] if self.config else []) + [
            "--store", p["store"], "--plugins-dir", p["plugins"], "--registry-dir",
            p["registry"], "--cdi-dir", p["cdi"], "--node-name", NODE,
            "--metrics-address", "127.0.0.1:%d" % self.metrics_port, "--v", "4"]
        self.say("$", " ".join(argv), "&")
        logf = open(os.path.join(self.out, "agent.log"), "a")
        t = time.monotonic()
        self.agent = subprocess.Popen(argv, stdout=logf, stderr=subprocess.STDOUT, env=self.env)
        self.sock = os.path.join(p["plugins"], DRIVER, "dra.sock")
        while not self.serving(self.sock):	# a killed agent leaves its socket file
            assert self.agent.poll() is None, "the agent exited with %d" % self.agent.returncode
            assert time.monotonic() - t < 60, "%s not served after 60 s" % self.sock
            time.sleep(0.05)
        return round(time.monotonic() - t, 3)

    @staticmethod
    def serving(path):
        with socket.socket(socket.AF_UNIX) as s:
            try:
                s.connect(path)
                return True
            except OSError:
                return False

    def stop(self, sig=signal.SIGTERM):
        if not self.agent:
            return None
        self.agent.send_signal(sig)
        try:
            rc = self.agent.wait(30)
        except subprocess.TimeoutExpired:
            self.agent.kill()
            rc = self.agent.wait()
        self.agent = None
        return rc

    def agent_step(self):
        started = self.start()
        reg = os.path.join(self.paths()["registry"], DRIVER + "-reg.sock")
        rc, info, _ = self.sh([self.dralet, "ctl", "info", "--socket", reg], check=True)
        rc, health, _ = self.sh([self.dralet, "ctl", "watch-health", "--socket", self.sock,
                                 "--count", "1"], check=True)
        return {"socketAfterSeconds": started, "info": json.loads(info),
                "health": json.loads(health.splitlines()[0])}

    def claim(self, name, uid, device, config=None):
        c = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": name, "namespace": "default", "uid": uid},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                 "deviceClassName": DRIVER}}]}},
             "status": {"allocation": {"devices": {"results": [
                 {"request": "gpu", "driver": DRIVER, "pool": NODE, "device": device}]}}}}
        if config:
            cfg = {"requests": ["gpu"], "opaque": {"driver": DRIVER, "parameters": config}}
            c["spec"]["devices"]["config"] = [cfg]
            c["status"]["allocation"]["devices"]["config"] = [dict(cfg, source="FromClaim")]
        path = os.path.join(self.paths()["store"], "resourceclaims", "default", name + ".json")
        with open(path, "w") as fh:
            json.dump(c, fh)
        return path

    def ctl(self, verb, claim):
        t = time.monotonic()
        rc, out, err = self.sh([self.dralet, "ctl", verb, "--socket", self.sock,
                                "--claim", claim, "--timeout", "60s"])
        ms = round((time.monotonic() - t) * 1000, 1)
        assert rc == 0, "%s failed (rc %d): %s %s" % (verb, rc, out.strip()[-600:],
                                                     err.strip()[-300:])
        return json.loads(out), ms

    def check_spec(self):
        """Every device node the spec names is a char device of its
        major:minor; every mount's host path exists."""
        specs = sorted(glob.glob(os.path.join(self.paths()["cdi"], "*")))
        assert specs, "no CDI spec written"
        with open(specs[0]) as fh:
            spec = json.load(fh)
        if not os.path.exists(os.path.join(self.out, "cdi.json")):
            shutil.copy(specs[0], os.path.join(self.out, "cdi.json"))
        edits = [spec.get("containerEdits", {})] + [d.get("containerEdits", {})
                                                     for d in spec.get("devices", [])]
        nodes = [n for e in edits for n in e.get("deviceNodes", [])]
        mounts = [m for e in edits for m in e.get("mounts", [])]
        env = [v for e in edits for v in e.get("env", [])]
        bad = []
        for n in nodes:
            host = n.get("hostPath", n["path"])
            if self.board:
                continue
            try:
                st = os.stat(host)
            except OSError as e:
                bad.append("%s: %s" % (host, e.strerror))
                continue
            if not stat.S_ISCHR(st.st_mode):
                bad.append("%s: not a char device" % host)
            elif "major" in n and (os.major(st.st_rdev), os.minor(st.st_rdev)) != \
                    (n["major"], n["minor"]):
                bad.append("%s: %d:%d on the node, %d:%d in the spec" % (
                    host, os.major(st.st_rdev), os.minor(st.st_rdev), n["major"], n["minor"]))
        for m in mounts:
            if not self.board and not os.path.exists(m["hostPath"]):
                bad.append("mount %s: no such file" % m["hostPath"])
        names = {os.path.basename(m["containerPath"]) for m in mounts}
        if self.facts_.get("ldconfigNvml"):	# the node's loader finds the driver
            bad += ["no mount of %s" % n for n in ("libcuda.so.1", "libnvidia-ml.so.1")
                    if n not in names]
        assert not bad, "CDI spec %s: %s" % (os.path.basename(specs[0]), bad)
        return {"spec": os.path.basename(specs[0]), "deviceNodes": [n["path"] for n in nodes],
                "mounts": [m["containerPath"] for m in mounts], "env": env}

    def gpu_step(self):
        c = self.claim("gpu", "7e3a0c1d-0001-4000-8000-000000000001", self.gpu["name"])
        res, prep_ms = self.ctl("prepare", c)
        spec = self.check_spec()
        mem = self.memory()
        res2, unprep_ms = self.ctl("unprepare", c)
        left = os.listdir(self.paths()["cdi"])
        assert not left, "CDI specs left after unprepare: %s" % left
        return {"prepare": res, "prepareMs": prep_ms, "unprepareMs": unprep_ms,
                "cdi": spec, "memoryWithClaim": mem}

    # the C library a dynamically linked program needs, bound into the root by soname
    LIBC = ("libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1")
    LOADER = "/lib64/ld-linux-x86-64.so.2"

    def container_root_script(self, spec, root, cuinit):
        """The shell script that builds the container's root in a private mount
        namespace and runs cuinit in it (chroot), with LD_LIBRARY_PATH the
        directories of the spec's libraries, as a CUDA image sets it."""
        edits = [spec.get("containerEdits", {})] + [d.get("containerEdits", {})
                                                     for d in spec.get("devices", [])]
        mounts = [m for e in edits for m in e.get("mounts", [])]
        out = subprocess.run(["sh", "-c", "ldconfig -p"], capture_output=True, text=True).stdout
        libc = {}
        for line in out.splitlines():
            name = line.strip().split(" ", 1)[0]
            if name in self.LIBC and "x86-64" in line and name not in libc:
                libc[name] = line.rsplit("=> ", 1)[1].strip()
        binds = [(self.LOADER, self.LOADER)] + [
            (path, "/lib/x86_64-linux-gnu/" + name) for name, path in libc.items()] + [
            (m["hostPath"], m["containerPath"]) for m in mounts]
        q = lambda p: "'" + p.replace("'", "'\\''") + "'"
        lines = ["set -e", "r=" + q(root), "mount -t tmpfs tmpfs \"$r\"",
                 "mkdir \"$r/dev\" \"$r/proc\" \"$r/sys\"",
                 "mount --rbind /dev \"$r/dev\"", "mount --rbind /sys \"$r/sys\"",
                 "mount -t proc proc \"$r/proc\""]
        for host, container in binds:
            lines += ["mkdir -p \"$r\"" + q(os.path.dirname(container)),
                      "touch \"$r\"" + q(container),
                      "mount --bind " + q(host) + " \"$r\"" + q(container)]
        lines += ["cp " + q(cuinit) + " \"$r/cuinit\""]
        lib_dirs = sorted({os.path.dirname(m["containerPath"]) for m in mounts
                           if os.path.basename(m["containerPath"]).startswith("libcuda.so")})
        lines += ["exec env -i LD_LIBRARY_PATH=" + q(":".join(lib_dirs)) +
                  " \"$(command -v chroot)\" \"$r\" /cuinit"]
        return "\n".join(lines) + "\n", lib_dirs

    def container_step(self):
        cuinit = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cuinit")
        assert os.access(cuinit, os.X_OK), "%s is not there (tests/realnode/bundle.sh builds it)" \
            % cuinit
        c = self.claim("gpu-container", "7e3a0c1d-0005-4000-8000-000000000005", self.gpu["name"])
        self.ctl("prepare", c)
        try:
            [path] = glob.glob(os.path.join(self.paths()["cdi"], "*7e3a0c1d-0005-*"))
            with open(path) as fh:
                spec = json.load(fh)
            root = os.path.join(self.tmp, "rootfs")
            os.makedirs(root, exist_ok=True)
            script, lib_dirs = self.container_root_script(spec, root, cuinit)
            with open(os.path.join(self.tmp, "container.sh"), "w") as fh:
                fh.write(script)
            rc, out, err = self.sh(["unshare", "--mount", "--propagation", "private", "sh",
                                    os.path.join(self.tmp, "container.sh")])
        finally:
            self.ctl("unprepare", c)
        detail = {"exit": rc, "output": (out + err).strip()[-400:], "LD_LIBRARY_PATH": lib_dirs}
        if self.board:	# the board's driver files are not libraries: the root was built
            assert "dlopen libcuda.so.1" in out, detail
            return "n/a"
        assert rc == 0, detail
        return detail

    def compute_policy(self):
        smi = self.facts_.get("nvidiaSmi")
        if not smi:
            return None
        rc, out, err = self.sh([smi, "compute-policy", "-l"])
        return (out + err).strip()[-600:]

    def timeslice_step(self):
        c = self.claim("gpu-timeslicing", "7e3a0c1d-0002-4000-8000-000000000002",
                       self.gpu["name"], {"apiVersion": "gpu.dralet.dev/v1alpha1",
                                          "kind": "GpuConfig", "sharing": {
                                              "strategy": "TimeSlicing",
                                              "timeSlicingConfig": {"interval": "Long"}}})
        before = self.compute_policy()
        res, prep_ms = self.ctl("prepare", c)
        during = self.compute_policy()
        res2, _ = self.ctl("unprepare", c)
        after = self.compute_policy()
        return {"prepareMs": prep_ms, "policyBefore": before, "policyPrepared": during,
                "policyAfter": after}

    def restart_step(self):
        c = self.claim("gpu-restart", "7e3a0c1d-0003-4000-8000-000000000003", self.gpu["name"])
        self.ctl("prepare", c)
        rc = self.stop(signal.SIGKILL)
        assert os.listdir(self.paths()["cdi"]), "the CDI spec went with the agent"
        started = self.start()
        res, ms = self.ctl("unprepare", c)
        left = os.listdir(self.paths()["cdi"])
        assert not left, "CDI specs left after unprepare across a restart: %s" % left
        return {"killedWith": rc, "socketAfterSeconds": started, "unprepareMs": ms}

    def bench_step(self):
        c = self.claim("gpu-bench", "7e3a0c1d-0004-4000-8000-000000000004", self.gpu["name"])
        rc, out, _ = self.sh([self.dralet, "ctl", "bench", "--socket", self.sock, "--claim", c,
                              "--rounds", "20"], timeout=300, check=True)
        return json.loads(out)

    def memory(self):
        if not self.agent:
            return None
        with open("/proc/%d/status" % self.agent.pid) as fh:
            return {k: v.strip() for k, v in (l.split(":", 1) for l in fh)
                    if k in ("VmRSS", "RssAnon", "RssFile", "VmHWM", "Threads")}

    def metrics(self):
        import urllib.request
        url = "http://127.0.0.1:%d/metrics" % self.metrics_port
        with urllib.request.urlopen(url, timeout=10) as r:
            text = r.read().decode()
        keep = [l for l in text.splitlines() if l.startswith("dralet_") and
                ("prepare" in l or "devices" in l or "health" in l) and "_bucket" not in l]
        self.say("\n".join(keep))
        return {"lines": len(text.splitlines()), "dralet": keep[:40]}

    def stop_step(self):
        rc = self.stop()
        assert rc == 0, "the agent exited with %s on SIGTERM" % rc
        return {"exit": rc}

    def main(self):
        self.step("facts", self.facts)
        self.step("discover", self.discover)
        if self.results["discover"]["verdict"] != "pass" and not getattr(self, "gpu", None):
            return self.finish()
        self.step("slices", self.slices)
        self.step("agent", self.agent_step)
        if self.agent:
            self.step("gpu", self.gpu_step)
            self.step("container", self.container_step)
            self.step("timeslice", self.timeslice_step)
            self.step("restart", self.restart_step)
            self.step("bench", self.bench_step)
            self.step("metrics", self.metrics)
            self.step("stop", self.stop_step)
        return self.finish()

    def finish(self):
        self.stop()
        with open(os.path.join(self.out, "results.json"), "w") as fh:
            json.dump(self.results, fh, indent=1)
        self.say("\n==== summary")
        for k, v in self.results.items():
            self.say("%-10s %s" % (k, v["verdict"]))
        shutil.rmtree(self.tmp, ignore_errors=True)
        return 0 if all(v["verdict"] != "FAIL" for v in self.results.values()) else 1


def main():
    args = sys.argv[1:]
    board = None
    if "--board" in args:
        i = args.index("--board")
        board = os.path.abspath(args[i + 1])
        del args[i:i + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    dralet, out = os.path.abspath(args[0]), os.path.abspath(args[1])
    os.makedirs(out, exist_ok=True)
    sys.exit(Run(dralet, out, board).main())


if __name__ == "__main__":
    main()
