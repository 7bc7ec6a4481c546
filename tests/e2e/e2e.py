#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""dralet under real Kubernetes: one version's cluster, then every scenario.

    e2e.py --version 1.37 [--only NAME[,NAME...]] [--shell [--board NAME]] [--keep]

Run as root (the sandbox needs namespaces, mounts and cgroups). The binaries
come from tests/e2e/build.sh (make e2e builds them): $BUILD/e2e/<version>/k8s,
$BUILD/e2e/runtime/{containerd,containerd-shim-runc-v2,ctr,helm}, the test
images and dralet's own image (make image).

--shell leaves the cluster up with dralet deployed and opens a shell inside
the sandbox (KUBECONFIG set, kubectl, ctr and helm on PATH); the cluster goes
when the shell exits. --only runs the named scenarios (after the deployment).
"""

import argparse
import os
import shutil
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import cluster as cluster_mod  # noqa: E402
import deploy  # noqa: E402
import sandbox  # noqa: E402
import scenarios  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))


def build_dir():
    b = os.environ.get("BUILD", "build")
    return b if os.path.isabs(b) else os.path.join(ROOT, b)


def outside(args):
    """Prepares the run directory and re-runs this script inside a sandbox."""
    if os.geteuid() != 0:
        sys.exit("e2e: must run as root (namespaces, mounts and cgroups)")
    for tool in ("unshare", "tini", "ip", "iptables", "openssl", "umoci"):
        if not shutil.which(tool):
            sys.exit(f"e2e: {tool} is missing (make deps installs it)")
    e2e = os.path.join(build_dir(), "e2e")
    needed = [os.path.join(e2e, args.version, "k8s"),
              *(os.path.join(e2e, "runtime", b) for b in
                ("containerd", "containerd-shim-runc-v2", "ctr", "helm")),
              *(os.path.join(e2e, "images", i + ".tar") for i in ("pause", "busybox")),
              deploy.image_archive(build_dir())]
    missing = [p for p in needed if not os.path.exists(p)]
    if missing:
        sys.exit("e2e: not built (run make e2e): " + ", ".join(missing))
    run_dir = os.path.join(e2e, "run-" + args.version)
    if os.path.exists(run_dir):
        subprocess.run(["rm", "-rf", "--one-file-system", run_dir], check=True)
    os.makedirs(run_dir)
    argv = [sys.executable, os.path.abspath(__file__), "--inside", run_dir, *sys.argv[1:]]
    status = sandbox.run(argv, sandbox.cgroup_name(args.version),
                         dict(os.environ, BUILD=build_dir()))
    if status == 0 and not args.keep:
        subprocess.run(["rm", "-rf", "--one-file-system", run_dir])
    elif status != 0:
        print(f"e2e: logs are in {run_dir}/logs")
    return status


def inside(args):
    sandbox.enter(args.inside)
    e2e = os.path.join(build_dir(), "e2e")
    c = cluster_mod.Cluster(args.version, os.path.join(e2e, args.version),
                            os.path.join(e2e, "runtime"), args.inside)
    started = time.monotonic()
    try:
        c.start()
        for image in ("pause", "busybox"):
            c.import_image(os.path.join(e2e, "images", image + ".tar"))
        print(f"e2e {args.version}: cluster up in {time.monotonic() - started:.0f}s", flush=True)
        if args.shell:
            try:
                scenarios.Env(c, build_dir(), ROOT).use_board(args.board)
            except Exception as ex:  # the shell is for finding out why
                print(f"e2e: deploying dralet failed: {ex}")
            return shell(c, e2e)
        only = args.only.split(",") if args.only else None
        return scenarios.run_all(c, build_dir(), ROOT, only)
    except Exception:
        traceback.print_exc()
        return 1
    finally:
        try:
            deploy.save_logs(c)
        except Exception as ex:
            print(f"e2e: could not save dralet's logs: {ex}")
        c.stop()


def shell(c, e2e):
    env = dict(os.environ, KUBECONFIG=c.kubeconfig, PS1=f"e2e-{c.version}# ",
               PATH=":".join([c.path("bin"), os.path.join(e2e, "runtime"),
                              os.environ["PATH"]]))
    os.makedirs(c.path("bin"), exist_ok=True)
    for tool in ("kubectl", "kube-apiserver", "kubelet"):
        link = c.path("bin", tool)
        if not os.path.exists(link):
            os.symlink(c.bin, link)
    print("e2e: cluster up, dralet deployed; kubectl/ctr/helm work here. exit to stop it.")
    return subprocess.call(["/bin/bash", "--norc", "-i"], env=env)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", required=True, choices=sorted(cluster_mod.FEATURE_GATES))
    p.add_argument("--only")
    p.add_argument("--shell", action="store_true")
    p.add_argument("--board", default="hgx-h100", help="the node's board with --shell")
    p.add_argument("--keep", action="store_true", help="keep the run directory")
    p.add_argument("--inside", help=argparse.SUPPRESS)
    args = p.parse_args()
    sys.exit(inside(args) if args.inside else outside(args))


if __name__ == "__main__":
    main()
