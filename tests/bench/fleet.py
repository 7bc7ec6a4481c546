#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""dralet at fleet scale: many agents against one real kube-apiserver (issue 14).

    fleet.py [--version 1.37] [--agents 500] [--idle-seconds 600] [--board edge-box]
             [--keep] [--table results.json]

Root, like the e2e suite: a sandbox (tests/e2e/sandbox.py) with only etcd and
the e2e suite's kube-apiserver (no kubelet: nothing here prepares claims), its
audit log on for the agents' group. Each agent is `build/dralet run` as its
own user (a static token), with its own node name (a Node object made for
it), its own simulated board and state directories, publishing with a
kubeconfig. Phases and what is measured in each, from the audit log (one
entry per request, by the agent's user) and /proc:

  start    launch until every agent's slices are published, plus a settle
  idle     --idle-seconds with nothing happening (goal: no request beyond
           the watches, which the agents renew every 5-10 minutes)
  restart  the apiserver stopped and started; until every agent watches again
           and every slice is as before, plus a settle (goal: within 60 s of
           the new apiserver's start, at most 3 requests per agent)

Also: each agent's TCP connections to the apiserver (its fds against
/proc/net/tcp) after the start and after the restart (goal: exactly 1, the
watches and writes multiplexed on one HTTP/2 connection), the apiserver's CPU
seconds per phase and the agents' memory. Prints a Markdown table
(docs/performance.md, "Fleet"); exits 1 when a goal is missed.
"""

import argparse
import collections
import json
import os
import resource
import secrets
import signal
import statistics
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
sys.path.insert(0, os.path.join(ROOT, "tests", "peers"))

import cluster as cluster_mod  # noqa: E402
import measure as m  # noqa: E402
import sandbox  # noqa: E402
from cluster import NODE_IP  # noqa: E402

CGROUP = "dralet-fleet-"
GROUP = "dralet-fleet"
SLICES = "/apis/resource.k8s.io/v1/resourceslices"
AGENTS_DIR = "/run/fleet"        # the sandbox's tmpfs: short socket paths
APISERVER_PORT_HEX = "192B"      # 6443 in /proc/net/tcp
SETTLE_S = 15
CONVERGE_LIMIT_S = 60
RESTART_REQUEST_LIMIT = 3


def build_dir():
    b = os.environ.get("BUILD", "build")
    return b if os.path.isabs(b) else os.path.join(ROOT, b)


def agent_name(i):
    return f"fleet-{i:04d}"


class FleetCluster(cluster_mod.Cluster):
    """etcd and kube-apiserver only, with static tokens for the agents and the
    audit log of their group's requests."""

    def __init__(self, *args, tokens):
        super().__init__(*args)
        self.cgroup_root = "/" + CGROUP + self.version.replace(".", "-")
        self.audit_log = self.path("audit.log")
        self.tokens = tokens

    def apiserver_argv(self):
        policy = self.path("audit-policy.yaml")
        with open(policy, "w") as f:
            f.write("apiVersion: audit.k8s.io/v1\nkind: Policy\n"
                    "omitStages: [RequestReceived]\nrules:\n"
                    f"- level: Metadata\n  userGroups: [{GROUP}]\n"
                    "- level: None\n")
        token_file = self.path("tokens.csv")
        with open(token_file, "w") as f:
            for name, token in self.tokens.items():
                f.write(f'{token},{name},{name},"{GROUP}"\n')
        return super().apiserver_argv() + [
            "--token-auth-file", token_file,
            "--audit-policy-file", policy, "--audit-log-path", self.audit_log,
            "--audit-log-format", "json", "--audit-log-maxbackup", "0",
            # a burst of audit entries must never be dropped
            "--audit-log-mode", "blocking"]

    def start(self):
        for d in ("logs", "etcd"):
            os.makedirs(self.path(d), exist_ok=True)
        self.pki = cluster_mod.pki.Pki(self.path("pki"), cluster_mod.NODE, NODE_IP,
                                       cluster_mod.SERVICE_CIDR)
        self.pki.create()
        self.write_kubeconfigs()
        self.start_etcd()
        self.start_apiserver()

    def apiserver_pid(self):
        return self.procs["kube-apiserver"].proc.pid


def rbac_manifest():
    """deploy/rbac.yaml's ClusterRole, bound to the agents' group."""
    with open(os.path.join(ROOT, "deploy", "rbac.yaml")) as f:
        role = f.read().split("\n---\n")[0]
    return role + f"""
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {GROUP}
subjects:
- kind: Group
  name: {GROUP}
  apiGroup: rbac.authorization.k8s.io
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: dralet
"""


class Agent:
    def __init__(self, i, c, dralet, board, token, log_dir):
        self.name = agent_name(i)
        self.dir = os.path.join(AGENTS_DIR, self.name)
        for sub in ("plugins", "registry", "cdi", "tmp"):
            os.makedirs(os.path.join(self.dir, sub), exist_ok=True)
        self.kubeconfig = os.path.join(self.dir, "kubeconfig")
        with open(self.kubeconfig, "w") as f:
            f.write(f"""apiVersion: v1
kind: Config
clusters:
- name: fleet
  cluster:
    server: https://{NODE_IP}:6443
    certificate-authority: {c.pki.ca_cert}
users:
- name: {self.name}
  user:
    token: {token}
contexts:
- name: fleet
  context: {{cluster: fleet, user: {self.name}}}
current-context: fleet
""")
        self.argv = [dralet, "run", "--board", board, "--node-name", self.name,
                     "--kubeconfig", self.kubeconfig,
                     "--plugins-dir", os.path.join(self.dir, "plugins"),
                     "--registry-dir", os.path.join(self.dir, "registry"),
                     "--cdi-dir", os.path.join(self.dir, "cdi")]
        self.env = dict(os.environ, TMPDIR=os.path.join(self.dir, "tmp"))
        self.log_path = os.path.join(log_dir, self.name + ".log")
        self.proc = None

    def start(self):
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=self.env,
                                         start_new_session=True)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self):
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)

    def wait(self, timeout):
        if self.proc is None:
            return
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# ---- what the apiserver holds ---------------------------------------------------

def slices_by_node(api):
    """{node: {slice name: (driver, pool generation, spec)}} of every slice."""
    out = collections.defaultdict(dict)
    cont = ""
    while True:
        path = SLICES + "?limit=500" + (f"&continue={cont}" if cont else "")
        page = api.request("GET", path, ok=(200,))
        for s in page.get("items", []):
            spec = s.get("spec", {})
            out[spec.get("nodeName", "")][s["metadata"]["name"]] = json.dumps(spec, sort_keys=True)
        cont = page.get("metadata", {}).get("continue", "")
        if not cont:
            return dict(out)


def shape(node_slices, node):
    """A node's slices with its name taken out: equal for equal boards."""
    return sorted(spec.replace(node, "<node>") for spec in node_slices.values())


# ---- the audit log ----------------------------------------------------------------

def audit_entries(path):
    """[(received wall time, user, verb, code, stage, uri)], one per stage
    logged (a watch has ResponseStarted and ResponseComplete)."""
    out = []
    try:
        f = open(path)
    except FileNotFoundError:
        return out
    with f:
        for line in f:
            try:
                ev = json.loads(line)
            except ValueError:
                continue  # a line being written
            out.append((m.parse_time(ev["requestReceivedTimestamp"]), ev["user"]["username"],
                        ev["verb"], ev.get("responseStatus", {}).get("code", 0), ev["stage"],
                        ev.get("requestURI", ""), ev["auditID"]))
    return out


def requests_in(entries, t0, t1):
    """{user: Counter(verb)} of the requests received in [t0, t1), once each."""
    seen, per_user = set(), collections.defaultdict(collections.Counter)
    for t, user, verb, code, stage, uri, aid in entries:
        if t0 <= t < t1 and aid not in seen:
            seen.add(aid)
            per_user[user][verb] += 1
    return per_user


def watching_since(entries, t0):
    """Users with a watch established (ResponseStarted, 200) received after t0."""
    return {user for t, user, verb, code, stage, uri, aid in entries
            if t >= t0 and verb == "watch" and stage == "ResponseStarted" and code == 200}


def per_agent_summary(per_user, names):
    """{verb: (mean, max)} per agent, agents without requests counted as 0."""
    verbs = sorted({v for c in per_user.values() for v in c})
    out = {}
    for v in verbs + ["all"]:
        vals = [sum(per_user.get(n, {}).values()) if v == "all" else per_user.get(n, {}).get(v, 0)
                for n in names]
        out[v] = (statistics.mean(vals) if vals else 0, max(vals) if vals else 0)
    return out


# ---- /proc ----------------------------------------------------------------------------

def apiserver_sockets():
    """Inodes of the established TCP sockets to the apiserver's port."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    fields = line.split()
                    remote, state, inode = fields[2], fields[3], fields[9]
                    if state == "01" and remote.endswith(":" + APISERVER_PORT_HEX):
                        inodes.add(inode)
        except FileNotFoundError:
            pass
    return inodes


def connections_of(pid, inodes):
    n = 0
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return -1
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:[") and target[8:-1] in inodes:
            n += 1
    return n


def connection_counts(agents):
    """Counter {connections to the apiserver: agents}."""
    inodes = apiserver_sockets()
    return collections.Counter(connections_of(a.proc.pid, inodes) for a in agents)


def cpu_of(pid):
    return m.cpu_seconds([pid])


def memory_kib(pids):
    """(total RSS, total PSS) in KiB: RSS counts the shared pages once per agent."""
    rss = pss = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1])
        except OSError:
            pass
    return rss, pss


# ---- outside the sandbox -------------------------------------------------------------

def outside(args):
    if os.geteuid() != 0:
        sys.exit("bench-fleet: must run as root (the e2e sandbox)")
    b = build_dir()
    needed = [os.path.join(b, "e2e", args.version, "k8s"), os.path.join(b, "dralet")]
    missing = [p for p in needed if not os.path.exists(p)]
    if missing:
        sys.exit("bench-fleet: not built (make bench-fleet builds dralet; the Kubernetes "
                 "binaries come from make e2e-build): " + ", ".join(missing))
    run_dir = os.path.join(b, "fleet", "run-" + args.version)
    if os.path.exists(run_dir):
        subprocess.run(["rm", "-rf", "--one-file-system", run_dir], check=True)
    os.makedirs(run_dir)
    argv = [sys.executable, os.path.abspath(__file__), "--inside", run_dir, *sys.argv[1:]]
    status = sandbox.run(argv, CGROUP + args.version.replace(".", "-"), dict(os.environ, BUILD=b))
    if status not in (0, 1):
        print(f"bench-fleet: logs are in {run_dir}/logs")
    elif not args.keep:
        for name in os.listdir(run_dir):
            if name not in ("results.json", "table.md", "logs", "audit.log"):
                subprocess.run(["rm", "-rf", "--one-file-system", os.path.join(run_dir, name)])
    return status


# ---- inside -----------------------------------------------------------------------------

def log(text):
    print(f"bench-fleet: {text}", flush=True)


def wait_for(what, check, timeout, interval=2.0):
    deadline = time.monotonic() + timeout
    while True:
        r = check()
        if r:
            return r
        if time.monotonic() >= deadline:
            raise RuntimeError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


def inside(args):
    sandbox.enter(args.inside)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the apiserver's sockets
    b = build_dir()
    e2e = os.path.join(b, "e2e")
    names = [agent_name(i) for i in range(args.agents)]
    tokens = {n: secrets.token_hex(16) for n in names}
    c = FleetCluster(args.version, os.path.join(e2e, args.version),
                     os.path.join(e2e, "runtime"), args.inside, tokens=tokens)
    agents = []
    r = {"version": args.version, "agents": args.agents, "idle_s": args.idle_seconds,
         "board": args.board, "dralet": subprocess.run([os.path.join(b, "dralet"), "version"],
                                                      capture_output=True, text=True).stdout.strip()}
    ok = True
    try:
        c.start()
        r["kubernetes"] = c.kubectl("version", "-o", "json")
        r["kubernetes"] = json.loads(r["kubernetes"]).get("serverVersion", {}).get("gitVersion")
        log(f"apiserver {r['kubernetes']} up")
        c.apply(rbac_manifest())
        nodes = {"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n}} for n in names]}
        c.kubectl("create", "-f", "-", input=json.dumps(nodes), timeout=600)
        api = m.Api(c, NODE_IP)
        board = os.path.join(ROOT, "boards", args.board + ".yaml")
        agent_logs = os.path.join(c.logs, "agents")
        os.makedirs(agent_logs, exist_ok=True)
        agents = [Agent(i, c, os.path.join(b, "dralet"), board, tokens[n], agent_logs)
                  for i, n in enumerate(names)]

        # ---- start ----
        cpu0 = cpu_of(c.apiserver_pid())
        t_start = time.time()
        for a in agents:
            a.start()
        log(f"{len(agents)} agents launched in {time.time() - t_start:.1f}s")

        def all_published():
            dead = [a.name for a in agents if not a.alive()]
            if dead:
                raise RuntimeError(f"agents exited: {dead[:5]} (logs in {agent_logs})")
            by_node = slices_by_node(api)
            have = sum(1 for n in names if by_node.get(n))
            log(f"  {have}/{len(names)} agents have slices")
            return by_node if have == len(names) else None
        by_node = wait_for("every agent's slices", all_published, 900, interval=5)
        r["start_to_published_s"] = time.time() - t_start
        time.sleep(SETTLE_S)
        by_node = slices_by_node(api)
        shapes = collections.Counter(json.dumps(shape(by_node[n], n)) for n in names)
        r["slices_per_agent"] = len(by_node[names[0]])
        r["distinct_slice_shapes"] = len(shapes)
        t_idle = time.time()
        cpu1 = cpu_of(c.apiserver_pid())
        r["apiserver_cpu_s"] = {"start": cpu1 - cpu0}
        conns = connection_counts(agents)
        r["connections_after_start"] = dict(conns)
        log(f"published in {r['start_to_published_s']:.0f}s; connections per agent "
            f"{dict(conns)}")

        # ---- idle ----
        log(f"idle for {args.idle_seconds}s")
        time.sleep(args.idle_seconds)
        t_restart = time.time()
        r["apiserver_cpu_s"]["idle"] = cpu_of(c.apiserver_pid()) - cpu1
        rss, pss = memory_kib([a.proc.pid for a in agents])
        r["agents_rss_kib"], r["agents_pss_kib"] = rss, pss
        r["connections_after_idle"] = dict(connection_counts(agents))
        snapshot = slices_by_node(api)

        # ---- restart ----
        log("restarting the apiserver")
        old_cpu = cpu_of(c.apiserver_pid())
        reaped0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        c.procs["kube-apiserver"].stop()
        reaped1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        shutdown_cpu = (reaped1.ru_utime + reaped1.ru_stime -
                        reaped0.ru_utime - reaped0.ru_stime) - old_cpu
        t_up0 = time.time()
        r["apiserver_stop_s"] = t_up0 - t_restart
        c.procs["kube-apiserver"].start()
        c.wait_apiserver()
        r["apiserver_down_s"] = time.time() - t_restart
        new_pid = c.apiserver_pid()

        def converged():
            watching = watching_since(audit_entries(c.audit_log), t_up0)
            missing = [n for n in names if n not in watching]
            if missing:
                log(f"  {len(names) - len(missing)}/{len(names)} agents watch again")
                return None
            now = slices_by_node(api)
            wrong = [n for n in names if now.get(n) != snapshot.get(n)]
            if wrong:
                log(f"  {len(wrong)} agents' slices differ from before the restart")
                return None
            return time.time()
        try:
            t_conv = wait_for("every agent watching again with its slices", converged,
                              CONVERGE_LIMIT_S * 3, interval=1)
            r["restart_converged_s"] = t_conv - t_restart
            r["restart_converged_after_ready_s"] = t_conv - (t_restart + r["apiserver_down_s"])
        except RuntimeError as e:
            log(str(e))
            r["restart_converged_s"] = None
        time.sleep(SETTLE_S)
        t_end = time.time()
        r["apiserver_cpu_s"]["restart"] = max(shutdown_cpu, 0) + cpu_of(new_pid)
        r["connections_after_restart"] = dict(connection_counts(agents))
        rss2, pss2 = memory_kib([a.proc.pid for a in agents])
        r["agents_rss_kib_end"], r["agents_pss_kib_end"] = rss2, pss2

        # ---- the audit log ----
        entries = audit_entries(c.audit_log)
        phases = {"start": (t_start, t_idle), "idle": (t_idle, t_restart),
                  "restart": (t_restart, t_end)}
        r["requests"] = {}
        for phase, (t0, t1) in phases.items():
            per_user = requests_in(entries, t0, t1)
            r["requests"][phase] = {"per_agent": per_agent_summary(per_user, names),
                                    "total": sum(sum(v.values()) for v in per_user.values())}
        # idle requests other than watches, in detail (there should be none)
        r["idle_non_watch"] = sorted({(verb, uri.split("?")[0]) for t, u, verb, code, st, uri, aid
                                      in entries if t_idle <= t < t_restart and verb != "watch"})
        r["restart_answers"] = dict(collections.Counter(
            f"{verb} {code}" for t, u, verb, code, st, uri, aid in entries
            if t_restart <= t < t_end and st == "ResponseComplete"))
        # the reconnects' spread (jittered backoff): each agent's first request
        # the new apiserver received, in seconds after it was started
        firsts = {}
        for t, u, verb, code, st, uri, aid in entries:
            if t >= t_up0 and (u not in firsts or t < firsts[u]):
                firsts[u] = t
        spread = sorted(t - t_up0 for t in firsts.values())
        if spread:
            r["restart_first_request_s"] = [spread[0], spread[len(spread) // 2], spread[-1]]
        r["timeline"] = {"start": t_start, "idle": t_idle, "restart": t_restart, "end": t_end}
    except Exception:
        traceback.print_exc()
        ok = False
    finally:
        for a in agents:
            a.stop()
        for a in agents:
            a.wait(30)
        c.stop()
    with open(os.path.join(args.inside, "results.json"), "w") as f:
        json.dump(r, f, indent=1, sort_keys=True)
    if not ok:
        return 2
    text = table(r)
    with open(os.path.join(args.inside, "table.md"), "w") as f:
        f.write(text)
    print(text)
    missed = goals_missed(r)
    for g in missed:
        log("goal missed: " + g)
    return 1 if missed else 0


def goals_missed(r):
    missed = []
    for key in ("connections_after_start", "connections_after_idle", "connections_after_restart"):
        if set(r[key]) != {1} and set(r[key]) != {"1"}:
            missed.append(f"{key}: {r[key]} (want every agent at 1)")
    idle = r["requests"]["idle"]["per_agent"]
    beyond = {v: s for v, s in idle.items() if v not in ("watch", "all") and s[1] > 0}
    if beyond:
        missed.append(f"requests beyond watches while idle: {beyond}")
    # from the new apiserver's start: the old one's graceful stop is its own
    conv = r.get("restart_converged_s")
    if conv is not None:
        conv -= r.get("apiserver_stop_s", 0)
    if conv is None or conv > CONVERGE_LIMIT_S:
        missed.append(f"converged {conv} s after the apiserver started again "
                      f"(want <= {CONVERGE_LIMIT_S})")
    worst = r["requests"]["restart"]["per_agent"].get("all", (0, 0))[1]
    if worst > RESTART_REQUEST_LIMIT:
        missed.append(f"up to {worst} requests per agent after the restart "
                      f"(want <= {RESTART_REQUEST_LIMIT})")
    return missed


def table(r):
    def reqs(phase):
        pa = r["requests"][phase]["per_agent"]
        verbs = ", ".join(f"{v} {mean:.2f}/{mx}" for v, (mean, mx) in pa.items() if v != "all")
        mean, mx = pa.get("all", (0, 0))
        return f"{mean:.2f} / {mx} ({verbs or 'none'})"

    def conns(key):
        return ", ".join(f"{k}: {v}" for k, v in sorted(r[key].items(), key=lambda kv: str(kv[0])))

    n = r["agents"]
    cpu = r["apiserver_cpu_s"]
    conv = r.get("restart_converged_s")
    rows = [
        ("agents (board, slices each)", f"{n} ({r['board']}, {r['slices_per_agent']}; "
         f"{r['distinct_slice_shapes']} distinct shape(s))"),
        ("launch to every agent's slices published", f"{r['start_to_published_s']:.1f} s"),
        ("requests per agent at start, mean / max (by verb, mean/max)", reqs("start")),
        (f"requests per agent idle {r['idle_s']} s, mean / max", reqs("idle")),
        ("non-watch requests while idle", ", ".join(f"{v} {p}" for v, p in r["idle_non_watch"])
         or "none"),
        ("apiserver restart: stop (SIGTERM; SIGKILL after 30 s) / stop to /readyz",
         f"{r.get('apiserver_stop_s', 0):.1f} s / {r['apiserver_down_s']:.1f} s"),
        ("restart: every agent watching again, slices as before",
         f"{conv - r.get('apiserver_stop_s', 0):.1f} s after the apiserver started again "
         f"({conv:.1f} s after the stop, {r['restart_converged_after_ready_s']:.1f} s after "
         "/readyz)"
         if conv is not None else "not within 180 s"),
        ("each agent's first request after the apiserver started: min / median / max",
         " / ".join(f"{x:.1f} s" for x in r.get("restart_first_request_s", [])) or "?"),
        ("requests per agent after the restart, mean / max", reqs("restart")),
        ("their answers (all agents)", ", ".join(f"{k}: {v}" for k, v in
                                                 sorted(r.get("restart_answers", {}).items()))),
        ("TCP connections to the apiserver per agent (connections: agents)",
         f"after start {conns('connections_after_start')}; after idle "
         f"{conns('connections_after_idle')}; after restart {conns('connections_after_restart')}"),
        ("apiserver CPU s: start / idle / restart",
         f"{cpu['start']:.1f} / {cpu['idle']:.1f} / {cpu['restart']:.1f}"),
        ("agents' memory, total RSS (PSS)",
         f"{r['agents_rss_kib'] / 1024:.0f} MiB ({r['agents_pss_kib'] / 1024:.0f} MiB); "
         f"{r['agents_rss_kib'] / 1024 / n:.1f} MiB RSS per agent"),
    ]
    lines = [f"| fleet: dralet {r['dralet']}, Kubernetes {r['kubernetes']} | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in rows]
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", default="1.37", choices=sorted(cluster_mod.FEATURE_GATES))
    p.add_argument("--agents", type=int, default=500)
    p.add_argument("--idle-seconds", type=int, default=600)
    p.add_argument("--board", default="edge-box", help="a board of boards/ (its name)")
    p.add_argument("--keep", action="store_true", help="keep the whole run directory")
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
