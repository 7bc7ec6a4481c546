#!/usr/bin/python3
"""Start, idle and memory of `dralet run` (issue 15's CPU and RSS rows, without a cluster).

`dralet run --board boards/hgx-h100.yaml` (the simulated board the peers run used) against
the test apiserver (tests/apiserver): the process's utime+stime from launch until its
slices are published (start: the simulator's tree, discovery, the first publish),
then over IDLE seconds of idle (health rounds every 10 s), and /proc/<pid>/smaps_rollup
(Rss, Pss, anonymous, file-backed) at the end. Each extra argument NAME=VALUE[,NAME=VALUE]
runs the agent once more with those variables in its environment (e.g.
GNUTLS_NO_IMPLICIT_INIT=1 or UV_THREADPOOL_SIZE=4), to compare in the same run.
Environment: DRALET (the binary), BENCH_IDLE (seconds, default 60).
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "apiserver"))
from apiserver import ApiServer  # noqa: E402
import harness  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BOARD = os.path.join(REPO, "boards", "hgx-h100.yaml")
NODE = "node-1"  # the test apiserver's Node
SLICES = 3  # hgx-h100's: gpu.dralet.dev one, net.dralet.dev two (136 devices)
IDLE = float(os.environ.get("BENCH_IDLE", "60"))
HZ = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / HZ  # utime, stime (fields 14, 15)


def rollup(pid):
    out = {}
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("Rss", "Pss", "Anonymous", "Pss_File", "Pss_Anon"):
                out[key] = int(value.split()[0]) / 1024
    out["File"] = out["Rss"] - out["Anonymous"]
    return out


def run(tmp, srv, extra_env):
    for d in ("registry", "plugins", "cdi"):
        os.makedirs(os.path.join(tmp, d), exist_ok=True)
    log = os.path.join(tmp, "agent.log")
    env = dict(os.environ, **extra_env)
    env.pop("TMPDIR", None)  # where the agent puts the board itself (/dev/shm here)
    proc = subprocess.Popen(
        [harness.dralet_path(), "run", "--board", BOARD, "--node-name", NODE,
         "--kubeconfig", srv.kubeconfig, "--registry-dir", os.path.join(tmp, "registry"),
         "--plugins-dir", os.path.join(tmp, "plugins"), "--cdi-dir", os.path.join(tmp, "cdi")],
        stdout=subprocess.DEVNULL, stderr=open(log, "w"), env=env)
    try:
        while True:
            if proc.poll() is not None:
                sys.exit("the agent stopped; see " + log)
            if len(srv.slices(NODE)) >= SLICES:
                break
            time.sleep(0.02)
        start = cpu_s(proc.pid)
        time.sleep(IDLE)
        idle = cpu_s(proc.pid) - start
        return start, idle, rollup(proc.pid)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)


def main():
    variants = [{}] + [dict(kv.split("=", 1) for kv in a.split(",")) for a in sys.argv[1:]]
    tmp = tempfile.mkdtemp(prefix="dralet-bench-idle-")
    rows = []
    try:
        for i, v in enumerate(variants):  # a fresh apiserver each: no slices left over
            srv = ApiServer(os.path.join(tmp, "srv%d" % i), bookmark_interval=30).start()
            try:
                rows.append((v, run(os.path.join(tmp, "a%d" % i), srv, v)))
            finally:
                srv.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("dralet run --board %s, test apiserver; CPU s (utime+stime), memory MiB "
          "(smaps_rollup after %.0f s idle)" % (os.path.basename(BOARD), IDLE))
    print("%-36s %7s %9s %6s %6s %6s %6s" % ("environment", "start", "idle", "Rss", "Pss",
                                           "anon", "file"))
    for v, (start, idle, m) in rows:
        label = ",".join("%s=%s" % kv for kv in v.items()) or "(as shipped)"
        print("%-36s %7.2f %9.2f %6.1f %6.1f %6.1f %6.1f" % (
            label, start, idle, m["Rss"], m["Pss"], m["Anonymous"], m["File"]))


if __name__ == "__main__":
    main()
