#!/usr/bin/python3
"""System calls per prepare and per unprepare (issue 15's strace count, reproducible).

The agent runs as in bench_prepare.py (synthetic-1k board, file store, one-device
claims on VFs, checkpoint on disk, CDI directory on tmpfs) under `strace -f`
attached after start. Three phases, each N calls made by separate `dralet ctl`
processes (one connection per call): health checks over the DRA socket (the
floor: a connection and one call that never leaves the event loop), N prepares,
N unprepares. A phase's calls minus the floor's, divided by N, is what one
prepare or unprepare costs in the agent, by system call and, for calls that name
a file, by where the file is (sysfs/devfs tree, checkpoint directory, CDI
directory, device metadata, store). Counts, not times: strace slows the agent.
Prints nothing but a note when strace is not installed (apt-get install strace).
BENCH_SYSCALLS_N sets N (default 20); BENCH_SYSCALLS_KEEP=DIR keeps the traces.
"""
import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_prepare as bp  # noqa: E402

N = int(os.environ.get("BENCH_SYSCALLS_N", "20"))
LINE = re.compile(r"^(\d+)\s+(?:<\.\.\. )?([a-z_0-9]+)(?:\(| resumed>)(.*)$")


def classify(rest, where):
    """Where the first path (or fd path, strace -y) of a call's arguments lies."""
    m = re.match(r'\s*(?:AT_FDCWD(?:<[^>]*>)?|\d+<([^>]*)>)?,?\s*"([^"]*)"', rest)
    if m:
        path = m.group(2) if m.group(2).startswith("/") or not m.group(1) \
            else m.group(1) + "/" + m.group(2)
    else:
        m = re.match(r'\s*\d+<([^>]*)>', rest)
        if not m:
            return "-"
        path = m.group(1)
    for label, prefix in where:
        if path.startswith(prefix):
            return label
    return "other"


def count(trace, where):
    calls, by_place = collections.Counter(), collections.Counter()
    with open(trace) as f:
        for line in f:
            if " resumed>" in line or "+++" in line or "---" in line:
                continue
            m = LINE.match(line)
            if not m:
                continue
            name, rest = m.group(2), m.group(3)
            calls[name] += 1
            if name in ("openat", "open", "readlinkat", "readlink", "mkdir", "mkdirat",
                        "unlink", "unlinkat", "rename", "renameat", "renameat2", "fsync",
                        "fdatasync", "newfstatat", "statx", "access", "faccessat2", "rmdir"):
                by_place[(name, classify(rest, where))] += 1
    return calls, by_place


def traced(agent, where, work, out):
    trace = out + ".trace"
    st = subprocess.Popen(["strace", "-f", "-y", "-qq", "-s", "200", "-o", trace, "-p",
                           str(agent.proc.pid)], stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # attached to every thread
    work()
    time.sleep(0.3)
    st.send_signal(signal.SIGINT)
    st.wait(30)
    return count(trace, where)


def ctl(agent, cmd, c=None):
    argv = [bp.DRALET, "ctl", cmd, "--socket", agent.socket, "--timeout", "30s"]
    if c:
        argv += ["--uid", c["metadata"]["uid"], "--namespace", c["metadata"]["namespace"],
                 "--name", c["metadata"]["name"]]
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)


def main():
    if not shutil.which("strace"):
        print("strace is not installed (apt-get install strace): no system call counts")
        return
    tmp = tempfile.mkdtemp(prefix="dralet-sys-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    disk = tempfile.mkdtemp(prefix="dralet-sys-", dir=os.path.join(bp.REPO, "build"))
    try:
        tree = os.path.join(tmp, "node")
        subprocess.run([bp.DRALET, "board", "materialize", bp.BOARD, tree], check=True,
                       stdout=subprocess.DEVNULL)
        import json
        devices = json.loads(subprocess.run(
            [bp.DRALET, "discover", "--sysfs-root", tree + "/sys", "--dev-root", tree + "/dev",
             "--proc-root", tree + "/proc", "-o", "json"], check=True, capture_output=True,
            text=True).stdout)["devices"]
        vfs = [d["name"] for d in devices if d["driver"] == bp.DRIVER and d["kind"] == "vf"]
        claims = [bp.claim(i, vfs[i]) for i in range(N + 4)]
        warm, claims = claims[N:], claims[:N]
        state = os.path.join(disk, "state")
        cdi = os.path.join(tmp, "cdi")
        bp.write_claims(os.path.join(state, "store"), claims + warm)
        agent = bp.Agent(tree, state, cdi)
        plugins = os.path.join(state, "plugins", bp.DRIVER)
        where = [("metadata", os.path.join(plugins, "dra-device-metadata")),
                 ("checkpoint dir", plugins), ("store", os.path.join(state, "store")),
                 ("cdi", cdi), ("sysfs/devfs", tree), ("state (above)", disk)]
        out = os.path.join(disk, "sys")
        try:
            # the worker threads start at the first prepares; the start-up is over
            time.sleep(1.0)
            for c in warm:
                ctl(agent, "prepare", c)
                ctl(agent, "unprepare", c)
            floor = traced(agent, where, lambda: [ctl(agent, "health") for _ in range(N)],
                           out + "-floor")
            prep = traced(agent, where, lambda: [ctl(agent, "prepare", c) for c in claims],
                          out + "-prepare")
            unprep = traced(agent, where, lambda: [ctl(agent, "unprepare", c) for c in claims],
                            out + "-unprepare")
        finally:
            agent.stop()
    finally:
        keep = os.environ.get("BENCH_SYSCALLS_KEEP")
        if keep:
            os.makedirs(keep, exist_ok=True)
            for phase in ("floor", "prepare", "unprepare"):
                if os.path.exists(out + "-" + phase + ".trace"):
                    shutil.copy(out + "-" + phase + ".trace", keep)
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(disk, ignore_errors=True)

    def per_op(phase, key, table):
        return (phase[table][key] - floor[table][key]) / N

    names = sorted(set(prep[0]) | set(unprep[0]) | set(floor[0]),
                   key=lambda k: -(prep[0][k] + unprep[0][k]))
    print("system calls per call in the agent, %d calls each (strace -f; minus the floor)" % N)
    print("%-16s %8s %8s %10s" % ("syscall", "prepare", "unprep.", "floor/call"))
    tot = [0.0, 0.0, 0.0]
    for k in names:
        p, u, fl = per_op(prep, k, 0), per_op(unprep, k, 0), floor[0][k] / N
        tot[0] += p
        tot[1] += u
        tot[2] += fl
        if abs(p) >= 0.05 or abs(u) >= 0.05:
            print("%-16s %8.1f %8.1f %10.1f" % (k, p, u, fl))
    print("%-16s %8.1f %8.1f %10.1f" % ("total", tot[0], tot[1], tot[2]))
    print("by file place (prepare / unprepare):")
    places = sorted(set(prep[1]) | set(unprep[1]))
    for k in places:
        p, u = per_op(prep, k, 1), per_op(unprep, k, 1)
        if abs(p) >= 0.05 or abs(u) >= 0.05:
            print("  %-12s %-16s %6.1f %6.1f" % (k[0], k[1], p, u))


if __name__ == "__main__":
    main()
