#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""dralet side by side with the peers on one e2e cluster (issue 15).

    bench.py --version 1.37 [--counts 1,10,100] [--idle 300] [--keep]

Root, like the e2e suite (tests/e2e): one sandboxed cluster, dralet deployed
from deploy/ on the hgx-h100 board, the upstream example driver and DRANET
as host processes on the same node (peers.py). Then, for every count and
mode (all pods created at once, or one at a time), interleaved over the
drivers, with a claim-less pod as the baseline: pods with one claim each from
a ResourceClaimTemplate of the driver's DeviceClass, Ready, then deleted.
Prints one table (docs/performance.md, "Side by side with the peers").
"""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
sys.path.insert(0, HERE)

import cluster as cluster_mod  # noqa: E402
import deploy  # noqa: E402
import measure as m  # noqa: E402
import peers  # noqa: E402
import sandbox  # noqa: E402
import scenarios  # noqa: E402
import workload  # noqa: E402
from cluster import NODE_IP, PAUSE_IMAGE  # noqa: E402

BOARD = "hgx-h100"
CGROUP = "dralet-peers-"


def build_dir():
    b = os.environ.get("BUILD", "build")
    return b if os.path.isabs(b) else os.path.join(ROOT, b)


class BenchCluster(cluster_mod.Cluster):
    """The e2e cluster with the apiserver's audit log: who sent how many
    requests (apiserver_request_total has no user or user-agent label)."""

    users = []

    def __init__(self, *args):
        super().__init__(*args)
        self.cgroup_root = "/" + CGROUP + self.version.replace(".", "-")
        self.audit_log = self.path("audit.log")

    def apiserver_argv(self):
        policy = self.path("audit-policy.yaml")
        with open(policy, "w") as f:
            f.write("apiVersion: audit.k8s.io/v1\nkind: Policy\n"
                    "omitStages: [RequestReceived]\nrules:\n"
                    f"- level: Metadata\n  users: {json.dumps(self.users)}\n"
                    "- level: None\n")
        return super().apiserver_argv() + [
            "--audit-policy-file", policy, "--audit-log-path", self.audit_log,
            "--audit-log-format", "json", "--audit-log-maxbackup", "0"]


class SharingEnv(scenarios.Env):
    """The e2e suite's agent configuration with the GPUs shareable by memory
    (the nvidia backend's opt-in option "sharing", docs/sharing.md)."""

    def config(self, board):
        cfg = super().config(board)
        cfg["backends"]["nvidia"]["options"]["sharing"] = "true"
        return cfg


class Dralet:
    """dralet as the e2e suite deploys it (its DaemonSet, deploy/), its pods'
    claims on the VFs of net.dralet.dev: each prepare also writes the claim's
    device status (networkData), as DRANET does."""

    name = "dralet"
    driver = "net.dralet.dev"
    device_class = "net.dralet.dev"
    capacity = None
    namespace, sa = "dralet", "dralet"
    exe = "dralet"

    def __init__(self, c, build, root):
        self.env = SharingEnv(c, build, root)

    def start(self, devices):
        self.env.use_board(BOARD)

    def pids(self):
        return m.pids_of(self.exe)


class DraletGpuShares(Dralet):
    """The same dralet process, its pods' claims on a 1Gi memory share of an H100
    (gpu.dralet.dev; hgx-h100 has 8 GPUs, the bench needs 110 allocations): what
    the example driver's claims are, a GPU without network data. A second column
    of the same process: its start, idle and RSS at idle are dralet's."""

    name = "dralet GPU shares"
    driver = "gpu.dralet.dev"
    device_class = "gpu.dralet.dev"
    capacity = {"memory": "1Gi"}

    def __init__(self, process):
        self.env = process.env

    def start(self, devices):
        pass


DRIVERS = (Dralet, peers.ExampleDriver, peers.Dranet)


def user_of(d):
    return f"system:serviceaccount:{d.namespace}:{d.sa}"


# ---- outside the sandbox -------------------------------------------------------

def outside(args):
    if os.geteuid() != 0:
        sys.exit("bench-peers: must run as root (the e2e sandbox)")
    b = build_dir()
    needed = [os.path.join(b, "e2e", args.version, "k8s"),
              os.path.join(b, "e2e", "images", "pause.tar"),
              os.path.join(b, "peers", "dra-example-kubeletplugin"),
              os.path.join(b, "peers", "dranet"), deploy.image_archive(b)]
    missing = [p for p in needed if not os.path.exists(p)]
    if missing:
        sys.exit("bench-peers: not built (make bench-peers builds them): " + ", ".join(missing))
    run_dir = os.path.join(b, "peers", "run-" + args.version)
    if os.path.exists(run_dir):
        subprocess.run(["rm", "-rf", "--one-file-system", run_dir], check=True)
    os.makedirs(run_dir)
    argv = [sys.executable, os.path.abspath(__file__), "--inside", run_dir, *sys.argv[1:]]
    status = sandbox.run(argv, CGROUP + args.version.replace(".", "-"),
                         dict(os.environ, BUILD=b))
    if status != 0:
        print(f"bench-peers: logs are in {run_dir}/logs")
    elif not args.keep:
        for name in os.listdir(run_dir):
            if name not in ("results.json", "table.md", "logs") and \
                    not name.startswith(("strace-", "perf-")):
                subprocess.run(["rm", "-rf", "--one-file-system", os.path.join(run_dir, name)])
    return status


# ---- inside -----------------------------------------------------------------------

class Probe:
    """A driver's process: CPU and RSS samples, and its time windows."""

    def __init__(self, driver):
        self.d = driver
        self.windows = {"start": [], "idle": [], "run": []}
        self.cpu = {"start": 0.0, "idle": 0.0, "run": 0.0}
        self.rss = {}
        self.cpu_children = {}  # the part of cpu its exited children used
        self.pid_list = []
        self._t = self._cpu = None

    def begin(self):
        self._t, self._cpu = time.time(), m.cpu_seconds(self.d.pids())
        self._children = m.cpu_seconds(self.d.pids(), children_only=True)

    def of_same_process(self, driver):
        """A probe for another column of this process: its start and idle
        (windows, CPU, RSS) are this one's; its workload steps its own."""
        p = Probe(driver)
        for phase in ("start", "idle"):
            p.windows[phase], p.cpu[phase] = self.windows[phase], self.cpu[phase]
        p.rss["idle"], p.pid_list = self.rss["idle"], self.pid_list
        return p

    def end(self, phase):
        self.windows[phase].append((self._t, time.time()))
        self.cpu[phase] += m.cpu_seconds(self.d.pids()) - self._cpu
        self.cpu_children[phase] = self.cpu_children.get(phase, 0.0) + \
            m.cpu_seconds(self.d.pids(), children_only=True) - self._children


def pod_body(name, template):
    spec = {"terminationGracePeriodSeconds": 1,
            "containers": [{"name": "pause", "image": PAUSE_IMAGE,
                            "imagePullPolicy": "Never"}]}
    if template:
        spec["resourceClaims"] = [{"name": "dev", "resourceClaimTemplateName": template}]
        spec["containers"][0]["resources"] = {"claims": [{"name": "dev"}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


SELECTORS = {"dra.net": ['"ifName" in device.attributes["dra.net"] && '
                         'device.attributes["dra.net"].ifName.startsWith("bench")']}


class Target:
    """Where one column's pods go: a namespace, its template, its watch."""

    def __init__(self, c, api, name, driver=None):
        self.name, self.driver, self.api = name, driver, api
        self.ns = "bench-" + "-".join(name.lower().split()[:2])
        workload.namespace(c, self.ns)
        self.template = None
        if driver:
            self.template = "one"
            req = workload.request("dev", driver.device_class,
                                   SELECTORS.get(driver.driver, ()))
            if getattr(driver, "capacity", None):
                req["exactly"]["capacity"] = {"requests": driver.capacity}
            workload.create_template(c, self.ns, "one", workload.claim_spec([req]))
        self.watch = m.PodWatch(api, self.ns)
        self.ready, self.gone = {}, {}  # (count, mode) -> [seconds]

    def create(self, name):
        self.api.request("POST", f"/api/v1/namespaces/{self.ns}/pods",
                         pod_body(name, self.template))
        return time.monotonic()

    def delete(self, name):
        self.api.request("DELETE", f"/api/v1/namespaces/{self.ns}/pods/{name}")
        return time.monotonic()

    def claims_left(self):
        return self.api.request("GET", f"/apis/resource.k8s.io/v1/namespaces/{self.ns}"
                                "/resourceclaims")["items"]

    def step(self, count, mode, probe, rss_at_full, trace=None):
        """trace: (tool, directory) of a diagnostic run, or None."""
        names = [f"p{count}-{mode[0]}-{i}" for i in range(count)]
        timeout = 120 + 5 * count
        created, deleted = {}, {}
        tracer = None
        if probe and trace:
            tool, where = trace
            tracer = TRACERS[tool](probe.d, os.path.join(
                where, f"{tool}-{self.ns}-{count}-{mode[0]}"))
        if probe:
            probe.begin()
        if mode == "at once":
            for n in names:
                created[n] = self.create(n)
            ready = self.watch.wait("ready", names, timeout)
            if probe and rss_at_full:
                probe.rss[f"{count} prepared"] = m.rss_kib(probe.d.pids())
            for n in names:
                deleted[n] = self.delete(n)
            gone = self.watch.wait("gone", names, timeout)
        else:
            ready, gone = {}, {}
            for n in names:
                created[n] = self.create(n)
                ready.update(self.watch.wait("ready", [n], 120))
            for n in names:
                deleted[n] = self.delete(n)
                gone.update(self.watch.wait("gone", [n], 120))
        cluster_mod.wait_until(f"{self.ns}: the claims deleted",
                               lambda: not self.claims_left(), timeout=timeout, interval=0.5)
        if probe:
            probe.end("run")
        if tracer:
            tracer.stop()
        self.ready[(count, mode)] = [ready[n] - created[n] for n in names]
        self.gone[(count, mode)] = [gone[n] - deleted[n] for n in names]


class Tracer:
    """A diagnostic tool attached to a driver's processes for one step (tracing
    slows the driver: such a run's figures are not the table's)."""

    def __init__(self, argv, report=None):
        self.report = report
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        time.sleep(1)  # attached

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(60)
        if self.report:
            self.report()


def strace(driver, out):
    """strace -c of every thread: system calls by count and time (strace-*.txt)."""
    argv = ["strace", "-f", "-c", "-S", "time", "-o", out + ".txt"]
    for pid in driver.pids():
        argv += ["-p", str(pid)]
    return Tracer(argv)


def perf(driver, out):
    """perf record of every thread with call graphs (perf-*.data), and its
    report by library and function (perf-*.txt)."""
    def report():
        with open(out + ".txt", "w") as f:
            subprocess.run(["perf", "report", "-i", out + ".data", "--stdio", "--no-children",
                            "--sort", "dso,sym", "-g", "none", "--percent-limit", "0.5"],
                           stdout=f, stderr=subprocess.DEVNULL)
    pids = ",".join(str(p) for p in driver.pids())
    return Tracer(["perf", "record", "-g", "-F", "999", "-o", out + ".data", "-p", pids],
                  report)


TRACERS = {"strace": strace, "perf": perf}


def requests_in(reqs, user, windows):
    return sum(1 for t, u, *_ in reqs if u == user and any(a <= t < b for a, b in windows))


def quantile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else None


def inside(args):
    sandbox.enter(args.inside)
    b = build_dir()
    e2e = os.path.join(b, "e2e")
    BenchCluster.users = [user_of(d) for d in DRIVERS]
    c = BenchCluster(args.version, os.path.join(e2e, args.version),
                     os.path.join(e2e, "runtime"), args.inside)
    counts = [int(x) for x in args.counts.split(",")]
    devices = max(counts) + 10
    started = time.monotonic()
    try:
        c.start()
        c.import_image(os.path.join(e2e, "images", "pause.tar"))
        print(f"bench-peers {args.version}: cluster up in {time.monotonic() - started:.0f}s",
              flush=True)
        drivers = [d(c, b, ROOT) for d in DRIVERS]
        probes = {d.name: Probe(d) for d in drivers}
        for d in drivers:
            p = probes[d.name]
            p.begin()
            d.start(devices)
            time.sleep(10)  # what it does right after publishing belongs to its start
            p.end("start")
            print(f"bench-peers: {d.name} up ({p.windows['start'][0][1] - p.windows['start'][0][0]:.0f}s)",
                  flush=True)
        print(f"bench-peers: idle for {args.idle}s", flush=True)
        for p in probes.values():
            p.begin()
        time.sleep(args.idle)
        for p in probes.values():
            p.end("idle")
            p.rss["idle"] = m.rss_kib(p.d.pids())
            p.pid_list = [m.process_line(pid) for pid in p.d.pids()]

        # dralet's second column: the same process, its GPU-share claims
        gpu = DraletGpuShares(drivers[0])
        probes[gpu.name] = probes[drivers[0].name].of_same_process(gpu)
        drivers.insert(1, gpu)
        api = m.Api(c, NODE_IP)
        targets = [Target(c, api, "no claim")] + [Target(c, api, d.name, d) for d in drivers]
        before = m.dra_histograms(api.get_text(10250, "/metrics"))
        steps = [(n, "at once") for n in counts]
        steps += [(n, "one at a time") for n in counts if n > 1]
        for count, mode in steps:
            for t in targets:
                t0 = time.monotonic()
                t.step(count, mode, probes.get(t.driver.name) if t.driver else None,
                       rss_at_full=count == max(counts),
                       trace=(args.trace, args.inside) if args.trace else None)
                print(f"bench-peers: {count} {mode}, {t.name}: {time.monotonic() - t0:.1f}s, "
                      f"ready p50 {statistics.median(t.ready[(count, mode)]):.2f}s", flush=True)
        after = m.dra_histograms(api.get_text(10250, "/metrics"))
        time.sleep(2)
        reqs = m.audit_requests(c.audit_log)
        results = collect(args, counts, drivers, probes, targets, before, after, reqs)
        with open(os.path.join(args.inside, "results.json"), "w") as f:
            json.dump(results, f, indent=1)
        text = table(results)
        with open(os.path.join(args.inside, "table.md"), "w") as f:
            f.write(text)
        print(text)
        return 0
    except Exception:
        traceback.print_exc()
        return 1
    finally:
        try:
            deploy.save_logs(c)
        except Exception as ex:
            print(f"bench-peers: could not save dralet's logs: {ex}")
        for d in locals().get("drivers", []):
            if getattr(d, "proc", None):
                d.proc.stop()
        c.stop()


def collect(args, counts, drivers, probes, targets, before, after, reqs):
    out = {"version": args.version, "counts": counts, "idle_s": args.idle,
           "columns": {}, "no claim": {}}
    big = max(counts)
    for t in targets:
        lat = {f"{k[0]} {k[1]}": {"ready_p50": quantile(v, .5), "ready_p99": quantile(v, .99),
                                   "gone_p50": quantile(t.gone[k], .5)}
               for k, v in t.ready.items()}
        if not t.driver:
            out["no claim"] = lat
            continue
        d, p = t.driver, probes[t.driver.name]
        col = {"driver": d.driver, "ready": lat, "rss_kib": p.rss, "cpu_s": p.cpu,
               "cpu_children_s": p.cpu_children, "pids": p.pid_list}
        for op in ("prepare", "unprepare"):
            h = m.histogram_delta(after.get((d.driver, op), {"buckets": {}, "sum": 0, "count": 0}),
                                  before.get((d.driver, op)))
            col[op] = {"count": h["count"], "mean_s": h["sum"] / h["count"] if h["count"] else None,
                       "p50_le": m.histogram_quantile(h, .5), "p99_le": m.histogram_quantile(h, .99)}
        user = user_of(d)
        col["requests"] = {ph: requests_in(reqs, user, p.windows[ph]) for ph in p.windows}
        col["window_s"] = {ph: sum(b - a for a, b in p.windows[ph]) for ph in p.windows}
        col["user_agents"] = sorted({ua for _, u, ua, *_ in reqs if u == user})
        verbs = {}
        for tm, u, _, verb, res in reqs:
            if u == user and any(a <= tm < b for a, b in p.windows["run"]):
                verbs[f"{verb} {res}"] = verbs.get(f"{verb} {res}", 0) + 1
        col["run_requests_by_verb"] = verbs
        out["columns"][d.name] = col
    out["big"] = big
    return out


def fmt(x, unit="", digits=2):
    if x is None:
        return "n/a"
    if x == float("inf"):
        return "> 40 s"
    return f"{x:.{digits}f}{unit}"


def table(r):
    names = list(r["columns"])
    cols = [r["columns"][n] for n in names]
    big, seq = r["big"], f"{r['big']} one at a time"
    once = f"{r['big']} at once"
    rows = []

    ours = [i for i, n in enumerate(names) if n.startswith("dralet")]
    theirs = [i for i in range(len(names)) if i not in ours]

    def row(label, values, show, ratio_of=True):
        vals = [show(v) for v in values]
        ratios = ["n/a"] * len(ours)
        nums = values
        if ratio_of and all(isinstance(v, (int, float)) and v is not None for v in nums) and theirs:
            best = min(nums[i] for i in theirs)
            ratios = [f"{nums[i] / best:.2f}" if best else ("1.00" if nums[i] == 0 else "inf")
                      for i in ours]
        rows.append((label, vals, ratios))

    for op in ("prepare", "unprepare"):
        row(f"{op}: calls (kubelet histogram count)", [c[op]["count"] for c in cols],
            lambda v: str(v), ratio_of=False)
        row(f"{op} p50 (bucket bound)", [c[op]["p50_le"] for c in cols],
            lambda v: "≤ " + fmt(v, " s", 1), ratio_of=False)
        row(f"{op} p99 (bucket bound)", [c[op]["p99_le"] for c in cols],
            lambda v: "≤ " + fmt(v, " s", 1), ratio_of=False)
        row(f"{op} mean (histogram sum/count)",
            [c[op]["mean_s"] * 1000 if c[op]["mean_s"] is not None else None for c in cols],
            lambda v: fmt(v, " ms", 1))
    for key in (once, seq):
        nc = r["no claim"].get(key, {})
        for q in ("p50", "p99"):
            row(f"pod ready {q}, {key} (no claim: {fmt(nc.get('ready_' + q), ' s')})",
                [c["ready"].get(key, {}).get("ready_" + q) for c in cols],
                lambda v: fmt(v, " s"))
    row("RSS idle", [c["rss_kib"].get("idle", 0) / 1024 for c in cols],
        lambda v: fmt(v, " MiB", 1))
    row(f"RSS with {big} prepared claims",
        [c["rss_kib"].get(f"{big} prepared", 0) / 1024 for c in cols],
        lambda v: fmt(v, " MiB", 1))
    row("CPU s: start (launch to published + 10 s)", [c["cpu_s"]["start"] for c in cols],
        lambda v: fmt(v, " s"))
    row(f"CPU s: idle {r['idle_s']} s", [c["cpu_s"]["idle"] for c in cols],
        lambda v: fmt(v, " s"))
    row("CPU s: workload (its own steps)", [c["cpu_s"]["run"] for c in cols],
        lambda v: fmt(v, " s"))
    row("CPU s: whole run (start + idle + workload)",
        [sum(c["cpu_s"].values()) for c in cols], lambda v: fmt(v, " s"))
    row("apiserver requests: start", [c["requests"]["start"] for c in cols], str)
    row(f"apiserver requests: idle {r['idle_s']} s", [c["requests"]["idle"] for c in cols], str)
    row("apiserver requests: workload", [c["requests"]["run"] for c in cols], str)
    head = f"| metric (Kubernetes {r['version']}) | " + " | ".join(names) + " | " + \
        " | ".join(f"{names[i]} / best peer" for i in ours) + " |"
    lines = [head, "|" + "---|" * (len(names) + len(ours) + 1)]
    for label, vals, ratios in rows:
        lines.append(f"| {label} | " + " | ".join(vals + ratios) + " |")
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", default="1.37", choices=sorted(cluster_mod.FEATURE_GATES))
    p.add_argument("--counts", default="1,10,100")
    p.add_argument("--idle", type=int, default=300, help="seconds all drivers idle")
    p.add_argument("--keep", action="store_true", help="keep the whole run directory")
    p.add_argument("--trace", choices=sorted(TRACERS),
                   help="diagnostics: strace -c or perf record each driver during its steps "
                        "(slows them)")
    p.add_argument("--table", help="print the table of a results.json and exit")
    p.add_argument("--inside", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.table:
        with open(args.table) as f:
            print(table(json.load(f)))
        return
    sys.exit(inside(args) if args.inside else outside(args))


if __name__ == "__main__":
    main()
