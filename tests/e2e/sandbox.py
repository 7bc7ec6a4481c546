# SPDX-License-Identifier: Apache-2.0
"""The e2e suite's sandbox: new network, mount and PID namespaces.

Outside (run): one cgroup per v1 hierarchy for the kubelet's cgroupRoot, the
command run under `unshare` with tini as the namespace's init (it reaps the
orphans containerd's shims leave), then every cgroup the run made removed.
When the command ends, the kernel kills whatever is left in the PID namespace,
and its mounts and network devices go with their namespaces: nothing the
cluster started outlives the run.

Inside (enter): the standard node paths are private. /run is a fresh tmpfs
(so /var/run/cdi and /run/containerd are), /var/lib and /var/log are the run
directory's own folders; the node has a veth address and a default route
that leads nowhere.
"""

import os
import signal
import subprocess

NODE_ADDR = "10.200.0.2/24"


def cgroup_name(version):
    """The kubelet's cgroupRoot below every hierarchy for one version's run."""
    return "dralet-e2e-" + version.replace(".", "-")


def sh(*argv):
    subprocess.run(argv, check=True)


def cgroup_hierarchies():
    """Mount points of the cgroup hierarchies (v1 controllers, named, and v2)."""
    with open("/proc/self/mounts") as f:
        return [line.split()[1] for line in f
                if line.split()[2] in ("cgroup", "cgroup2")]


def make_cgroups(name):
    for h in cgroup_hierarchies():
        path = os.path.join(h, name)
        os.makedirs(path, exist_ok=True)
        for knob in ("cpuset.cpus", "cpuset.mems"):  # an empty cpuset admits nobody
            if os.path.exists(os.path.join(path, knob)):
                with open(os.path.join(h, knob)) as src, \
                        open(os.path.join(path, knob), "w") as dst:
                    dst.write(src.read())


def remove_cgroups(name):
    """Removes name/ and everything below it in every hierarchy (deepest first)."""
    left = []
    for h in cgroup_hierarchies():
        top = os.path.join(h, name)
        if not os.path.isdir(top):
            continue
        for path, dirs, _ in sorted(os.walk(top), key=lambda w: -w[0].count("/")):
            try:
                os.rmdir(path)
            except OSError as e:
                left.append(f"{path}: {e.strerror}")
    return left


def run(argv, cgroup_name, env):
    """Runs argv inside a new sandbox; returns its exit status. SIGINT and
    SIGTERM end the sandbox (and so everything in it) before the cgroups go."""
    make_cgroups(cgroup_name)
    proc = subprocess.Popen(["unshare", "--fork", "--pid", "--mount-proc", "--mount", "--net",
                             "--propagation", "private", "--kill-child",
                             "tini", "-s", "-g", "--", *argv], env=env)

    def stop(signum, frame):
        proc.kill()  # --kill-child: the namespace's init goes, and all with it
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        return proc.wait()
    finally:
        proc.kill()
        proc.wait()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for line in remove_cgroups(cgroup_name):
            print(f"e2e: could not remove cgroup {line}")


def enter(run_dir):
    """Called first thing inside the sandbox: private paths and the node's network."""
    sh("mount", "-t", "tmpfs", "-o", "mode=0755", "tmpfs", "/run")
    for sub in ("var-lib", "var-log"):
        os.makedirs(os.path.join(run_dir, sub), exist_ok=True)
    sh("mount", "--bind", os.path.join(run_dir, "var-lib"), "/var/lib")
    sh("mount", "--bind", os.path.join(run_dir, "var-log"), "/var/log")
    sh("ip", "link", "set", "lo", "up")
    sh("ip", "link", "add", "e2e0", "type", "veth", "peer", "name", "e2e1")
    sh("ip", "addr", "add", NODE_ADDR, "dev", "e2e0")
    sh("ip", "link", "set", "e2e0", "up")
    sh("ip", "link", "set", "e2e1", "up")
    sh("ip", "route", "add", "default", "dev", "e2e0")
    for knob, value in (("net/ipv4/ip_forward", "1"),
                        ("net/bridge/bridge-nf-call-iptables", "1")):
        try:
            with open("/proc/sys/" + knob, "w") as f:
                f.write(value)
        except OSError:
            pass
