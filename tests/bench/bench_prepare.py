#!/usr/bin/python3
"""Prepare/unprepare benchmark over the DRA socket (issue 3's figures).

On the synthetic >1,000-function board, with the file store: NodePrepare-
Resources + NodeUnprepareResources latency (p50/p99) for one-device claims,
with the checkpoint on tmpfs and on disk (fsync'ed; the CDI directory is on
tmpfs in both, as /var/run/cdi is on nodes); throughput with 8
concurrent clients; an empty prepare as the floor; peak RSS of the agent
with 1,000 prepared claims. All calls go through `dralet ctl bench`, a
C client over the socket. Goals: p99 under 3 ms on disk, at least 500
claims/s, p50 within 5x the null call, RSS under 10 MiB.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import bench_idle  # its cpu_s: utime+stime of a process

DRALET = os.environ["DRALET"]
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BOARD = os.path.join(REPO, "boards", "synthetic-1k.yaml")
NODE = "bench-node"
DRIVER = "net.dralet.dev"


def claim(n, device, admin=False):
    uid = "%08x-0000-4000-8000-%012x" % (0x20000000 + n, n)
    result = {"request": "vf", "driver": DRIVER, "pool": NODE, "device": device}
    if admin:
        result["adminAccess"] = True
    exactly = {"deviceClassName": "net.dralet.dev"}
    if admin:
        exactly["adminAccess"] = True
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "claim-%d" % n, "namespace": "bench", "uid": uid},
        "spec": {"devices": {"requests": [{"name": "vf", "exactly": exactly}]}},
        "status": {"allocation": {"devices": {"results": [result]}}},
    }


def write_claims(store, claims):
    d = os.path.join(store, "resourceclaims", "bench")
    os.makedirs(d, exist_ok=True)
    for c in claims:
        with open(os.path.join(d, c["metadata"]["name"] + ".json"), "w") as f:
            json.dump(c, f)


class Agent:
    def __init__(self, tree, state, cdi):
        self.state = state
        self.store = os.path.join(state, "store")
        os.makedirs(self.store, exist_ok=True)
        self.socket = os.path.join(state, "plugins", DRIVER, "dra.sock")
        self.proc = subprocess.Popen(
            [DRALET, "run", "--sysfs-root", tree + "/sys", "--dev-root", tree + "/dev",
             "--proc-root", tree + "/proc", "--store", self.store, "--node-name", NODE,
             "--registry-dir", os.path.join(state, "registry"),
             "--plugins-dir", os.path.join(state, "plugins"),
             "--cdi-dir", cdi],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(state, "agent.log"), "w"))
        for _ in range(300):
            if os.path.exists(self.socket):
                return
            time.sleep(0.02)
        sys.exit("the agent did not start; see " + os.path.join(state, "agent.log"))

    def rss_kib(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            fields = dict(line.split(":", 1) for line in f)
        return tuple(int(fields[k].split()[0]) for k in ("VmRSS", "VmHWM", "RssAnon", "RssFile"))

    def cpu_s(self):
        return bench_idle.cpu_s(self.proc.pid)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


def ctl_bench(agent, claims_file, *args):
    out = subprocess.run([DRALET, "ctl", "bench", "--socket", agent.socket, "--timeout", "45s"]
                         + (["--claim", claims_file] if claims_file else []) + list(args),
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main():
    tmp = tempfile.mkdtemp(prefix="dralet-bench-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    disk = tempfile.mkdtemp(prefix="dralet-bench-", dir=os.path.join(REPO, "build"))
    try:
        tree = os.path.join(tmp, "node")
        subprocess.run([DRALET, "board", "materialize", BOARD, tree], check=True,
                       stdout=subprocess.DEVNULL)
        devices = json.loads(subprocess.run(
            [DRALET, "discover", "--sysfs-root", tree + "/sys", "--dev-root", tree + "/dev",
             "--proc-root", tree + "/proc", "-o", "json"], check=True, capture_output=True,
            text=True).stdout)["devices"]
        vfs = [d["name"] for d in devices if d["driver"] == DRIVER and d["kind"] == "vf"]
        exclusive = [claim(i, vfs[i]) for i in range(min(len(vfs), 400))]
        rows = []
        for label, state in (("tmpfs", os.path.join(tmp, "state")), ("disk", os.path.join(disk, "state"))):
            write_claims(os.path.join(state, "store"), exclusive)
            listf = os.path.join(state, "claims.json")
            with open(listf, "w") as f:
                json.dump({"apiVersion": "v1", "kind": "List", "items": exclusive[:200]}, f)
            eight = os.path.join(state, "claims8.json")
            with open(eight, "w") as f:
                json.dump({"apiVersion": "v1", "kind": "List", "items": exclusive}, f)
            # the CDI directory is a tmpfs on real nodes (/var/run/cdi)
            agent = Agent(tree, state, os.path.join(tmp, "cdi-" + label))
            try:
                null = ctl_bench(agent, None, "--null", "--rounds", "2000")
                one = ctl_bench(agent, listf, "--rounds", "2")
                many = ctl_bench(agent, eight, "--concurrency", "8")
            finally:
                agent.stop()
            rows.append((label, null, one, many))

        # RSS with 1,000 prepared claims (adminAccess, so devices can repeat)
        state = os.path.join(tmp, "rss")
        thousand = [claim(1000 + i, vfs[i % len(vfs)], admin=True) for i in range(1000)]
        write_claims(os.path.join(state, "store"), thousand)
        agent = Agent(tree, state, os.path.join(tmp, "cdi-rss"))
        try:
            rss_start = agent.rss_kib()
            cpu_start, t0 = agent.cpu_s(), time.monotonic()
            for i in range(0, 1000, 100):
                batch = os.path.join(state, "batch.json")
                with open(batch, "w") as f:
                    json.dump({"apiVersion": "v1", "kind": "List", "items": thousand[i:i + 100]}, f)
                subprocess.run([DRALET, "ctl", "prepare", "--socket", agent.socket, "--timeout",
                                "45s", "--claim", batch], check=True, stdout=subprocess.DEVNULL)
            rss_end = agent.rss_kib()
            thousand_s, thousand_cpu = time.monotonic() - t0, agent.cpu_s() - cpu_start
            ckpt_kib = os.path.getsize(os.path.join(state, "plugins", DRIVER,
                                                    "checkpoint.json")) / 1024
        finally:
            agent.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(disk, ignore_errors=True)

    print("prepare/unprepare over the socket, synthetic-1k, file store, %d VF devices" % len(vfs))
    print("%-6s %10s %12s %12s %12s %12s %10s" % ("state", "null p50", "prepare p50",
          "prepare p99", "unprep. p50", "unprep. p99", "claims/s"))
    for label, null, one, many in rows:
        print("%-6s %9.3fms %11.3fms %11.3fms %11.3fms %11.3fms %10.0f" % (
            label, null["nullPrepare"]["p50_ms"], one["prepare"]["p50_ms"],
            one["prepare"]["p99_ms"], one["unprepare"]["p50_ms"], one["unprepare"]["p99_ms"],
            many["claimsPerSecond"]))
        print("       (8 clients: prepare p50 %.3f ms, p99 %.3f ms; p50/null = %.1fx)" % (
            many["prepare"]["p50_ms"], many["prepare"]["p99_ms"],
            one["prepare"]["p50_ms"] / max(null["nullPrepare"]["p50_ms"], 1e-6)))
    print("agent RSS: %.2f MiB at start, %.2f MiB with 1,000 prepared claims (peak %.2f MiB); "
          "anonymous %.2f -> %.2f MiB, file-backed %.2f -> %.2f MiB" % (
              rss_start[0] / 1024, rss_end[0] / 1024, rss_end[1] / 1024, rss_start[2] / 1024,
              rss_end[2] / 1024, rss_start[3] / 1024, rss_end[3] / 1024))
    print("1,000 claims prepared 100 per call, each held until the end (the checkpoint grows "
          "to %.0f KiB): %.2f s, the agent's CPU %.2f s" % (ckpt_kib, thousand_s, thousand_cpu))
    print("goals: p99 < 3 ms on disk with fsync, >= 500 claims/s, p50 <= 5x null, RSS < 10 MiB")


if __name__ == "__main__":
    main()
