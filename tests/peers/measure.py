# SPDX-License-Identifier: Apache-2.0
"""What the peers benchmark reads: the apiserver (a plain HTTPS client with the
admin certificate, and a watch that notes when each pod turns Ready or goes),
the kubelet's /metrics, the apiserver's audit log, and a process's RSS and CPU
time from /proc."""

import http.client
import json
import math
import os
import re
import ssl
import threading
import time
from datetime import datetime

CLK_TCK = os.sysconf("SC_CLK_TCK")


class Api:
    """One keep-alive HTTPS connection per thread to the apiserver as cluster-admin."""

    def __init__(self, c, host, port=6443):
        self.host, self.port = host, port
        self.ctx = ssl.create_default_context(cafile=c.pki.ca_cert)
        self.ctx.load_cert_chain(*c.pki.client["admin"])
        self.local = threading.local()

    def connection(self, timeout=60):
        return http.client.HTTPSConnection(self.host, self.port, context=self.ctx,
                                           timeout=timeout)

    def request(self, method, path, body=None, ok=(200, 201, 202, 404)):
        for attempt in range(3):
            conn = getattr(self.local, "conn", None)
            if conn is None:
                conn = self.local.conn = self.connection()
            try:
                data = json.dumps(body).encode() if body is not None else None
                conn.request(method, path, body=data,
                             headers={"Content-Type": "application/json"})
                r = conn.getresponse()
                text = r.read()
            except (OSError, http.client.HTTPException):
                self.local.conn = None
                if attempt == 2:
                    raise
                continue
            if r.status not in ok:
                raise RuntimeError(f"{method} {path}: {r.status} {text[:400]!r}")
            return json.loads(text) if text else {}

    def get_text(self, port, path):
        conn = http.client.HTTPSConnection(self.host, port, context=self.ctx, timeout=30)
        try:
            conn.request("GET", path)
            r = conn.getresponse()
            return r.read().decode()
        finally:
            conn.close()


def pod_is_ready(pod):
    return any(x["type"] == "Ready" and x["status"] == "True"
               for x in pod.get("status", {}).get("conditions", []))


class PodWatch:
    """Watches one namespace's pods; notes the monotonic time each pod was
    first seen Ready and when it was deleted."""

    def __init__(self, api, ns):
        self.api, self.ns = api, ns
        self.ready, self.gone, self.seen = {}, {}, set()
        self.cond = threading.Condition()
        listing = api.request("GET", f"/api/v1/namespaces/{ns}/pods")
        self.rv = listing["metadata"]["resourceVersion"]
        self.stopped = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stopped:
            conn = self.api.connection(timeout=None)
            try:
                conn.request("GET", f"/api/v1/namespaces/{self.ns}/pods?watch=1"
                             f"&allowWatchBookmarks=true&resourceVersion={self.rv}")
                r = conn.getresponse()
                while not self.stopped:
                    line = r.readline()
                    if not line:
                        break
                    self.event(json.loads(line))
            except (OSError, http.client.HTTPException, ValueError):
                time.sleep(0.2)
                self.relist()
            finally:
                conn.close()

    def relist(self):
        """After a failed watch: the current pods stand for the events missed."""
        listing = self.api.request("GET", f"/api/v1/namespaces/{self.ns}/pods")
        now = time.monotonic()
        names = set()
        for pod in listing["items"]:
            names.add(pod["metadata"]["name"])
            self.event({"type": "MODIFIED", "object": pod})
        with self.cond:
            for name in set(self.seen) - names:
                self.gone.setdefault(name, now)
            self.cond.notify_all()
        self.rv = listing["metadata"]["resourceVersion"]

    def event(self, ev):
        now = time.monotonic()
        obj = ev.get("object", {})
        rv = obj.get("metadata", {}).get("resourceVersion")
        if rv:
            self.rv = rv
        if ev["type"] == "ERROR":
            raise ValueError(obj)
        name = obj["metadata"].get("name")
        if ev["type"] == "BOOKMARK":
            return
        with self.cond:
            self.seen.add(name)
            if ev["type"] == "DELETED":
                self.gone.setdefault(name, now)
            elif ev["type"] in ("ADDED", "MODIFIED") and pod_is_ready(obj):
                self.ready.setdefault(name, now)
            self.cond.notify_all()

    def wait(self, what, names, timeout):
        deadline = time.monotonic() + timeout
        table = self.ready if what == "ready" else self.gone
        with self.cond:
            while not all(n in table for n in names):
                left = deadline - time.monotonic()
                if left <= 0:
                    missing = [n for n in names if n not in table]
                    raise RuntimeError(f"{self.ns}: {len(missing)} pods not {what} after "
                                       f"{timeout}s (e.g. {missing[:3]})")
                self.cond.wait(min(left, 1))
        return {n: table[n] for n in names}

    def stop(self):
        self.stopped = True


# ---- the kubelet's DRA histogram -------------------------------------------

GRPC_METRIC = "dra_grpc_operations_duration_seconds"
SAMPLE = re.compile(r'^(\w+)\{([^}]*)\}\s+(\S+)')


def labels_of(text):
    return dict(re.findall(r'(\w+)="([^"]*)"', text))


def dra_histograms(metrics_text):
    """{(driver, 'prepare'|'unprepare'): {'buckets': {le: count}, 'sum', 'count'}}
    from the kubelet's dra_grpc_operations_duration_seconds (OK calls only)."""
    out = {}
    for line in metrics_text.splitlines():
        m = SAMPLE.match(line)
        if not m or not m.group(1).startswith(GRPC_METRIC):
            continue
        lab = labels_of(m.group(2))
        method = lab.get("method_name", "")
        op = ("unprepare" if "NodeUnprepareResources" in method else
              "prepare" if "NodePrepareResources" in method else None)
        if op is None or lab.get("grpc_status_code", "OK") != "OK":
            continue
        h = out.setdefault((lab["driver_name"], op), {"buckets": {}, "sum": 0.0, "count": 0})
        value = float(m.group(3))
        suffix = m.group(1)[len(GRPC_METRIC):]
        if suffix == "_bucket":
            h["buckets"][float(lab["le"])] = value
        elif suffix == "_sum":
            h["sum"] = value
        elif suffix == "_count":
            h["count"] = int(value)
    return out


def histogram_delta(after, before):
    if before is None:
        return after
    return {"buckets": {le: n - before["buckets"].get(le, 0)
                        for le, n in after["buckets"].items()},
            "sum": after["sum"] - before["sum"], "count": after["count"] - before["count"]}


def histogram_quantile(h, q):
    """The upper bound of the bucket holding quantile @q (what the histogram
    can say: nothing finer than its buckets)."""
    if not h or h["count"] == 0:
        return None
    rank = q * h["count"]
    for le in sorted(h["buckets"]):
        if h["buckets"][le] >= rank:
            return le
    return math.inf


# ---- the audit log ------------------------------------------------------------

def parse_time(stamp):
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def audit_requests(path):
    """[(wall time received, username, user agent, verb, resource)] once per
    request (a watch logs ResponseStarted and ResponseComplete)."""
    seen, out = set(), []
    with open(path) as f:
        for line in f:
            ev = json.loads(line)
            if ev["auditID"] in seen:
                continue
            seen.add(ev["auditID"])
            ref = ev.get("objectRef", {})
            resource = ref.get("resource", ev.get("requestURI", "?"))
            if ref.get("subresource"):
                resource += "/" + ref["subresource"]
            out.append((parse_time(ev["requestReceivedTimestamp"]), ev["user"]["username"],
                        ev.get("userAgent", ""), ev["verb"], resource))
    return out


# ---- a process's RSS and CPU -------------------------------------------------------

def pids_of(exe_name):
    """Every process whose argv[0] is named @exe_name."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                argv0 = f.read().split(b"\0", 1)[0].decode(errors="replace")
        except OSError:
            continue
        if os.path.basename(argv0) == exe_name:
            pids.append(int(d))
    return pids


def rss_kib(pids):
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    return total


def cpu_seconds(pids, children_only=False):
    """User + system CPU time of @pids and their waited-for children (only
    the children's with @children_only)."""
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        # utime stime cutime cstime
        total += sum(int(x) for x in fields[13 if children_only else 11:15])
    return total / CLK_TCK


def process_line(pid):
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f"{pid}: " + f.read().replace(b"\0", b" ").decode(errors="replace").strip()
