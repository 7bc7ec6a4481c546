#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The operator's endpoint of `dralet run --metrics-address` (docs/operations.md):
/healthz answers while the agent runs; /readyz is 503, with the driver named, until the
kubelet registered every driver, then 200; /metrics is Prometheus text that Debian's
python3-prometheus-client parses, with the devices by health, the registration, the
prepared claims and the prepare latency histogram after a real prepare; the gRPC calls by
method and code, the checkpoint write latency and the slice writes after a prepare and an
unprepare; against the test apiserver the requests by verb and code (a claim it has not:
404) and the slice writes it took; with an SR-IOV policy on a board the applies by PF and
result; unknown paths and methods are refused; a bad address stops the start with the
reason; a taken port is taken over once it is free (a rolling update's previous
instance)."""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "apiserver"))
import claims_kubelet as ck  # noqa: E402
from harness import ApiServer, wait_for  # noqa: E402
from claims_kubelet import uid  # noqa: E402
from lib import kubelet as k  # noqa: E402

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    ck.skip("python3-prometheus-client is not installed (scripts/deps.sh installs it)")


def get(port, path, method="GET"):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode(), r.headers.get("Content-Type")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), e.headers.get("Content-Type")


def port_of(node):
    deadline = time.time() + 60   # a safety net, not a goal
    while time.time() < deadline:
        m = re.search(r"serving /metrics, /healthz and /readyz on \S+ \(port (\d+)\)",
                      node.read_log())
        if m:
            return int(m.group(1))
        time.sleep(0.05)
    raise AssertionError("no metrics port in the log:\n" + node.read_log())


def samples(text):
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


PREPARE = "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources"
UNPREPARE = "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources"
NEW_FAMILIES = {"dralet_grpc_calls_total": "counter", "dralet_slice_writes_total": "counter",
                "dralet_apiserver_requests_total": "counter",
                "dralet_sriov_applies_total": "counter",
                "dralet_checkpoint_write_seconds": "histogram",
                "dralet_stale_claims_collected_total": "counter"}


def scrape(port):
    status, text, _ = get(port, "/metrics")
    assert status == 200, (status, text)
    types = {f.name: f.type for f in text_string_to_metric_families(text)}
    for name, typ in NEW_FAMILIES.items():
        # the parser names a counter family without its _total
        assert types.get(name) == typ or types.get(name[:-len("_total")]) == typ, (name, types)
    return samples(text)


def by(got, name, **labels):
    """{the remaining labels: value} of the samples of @name that carry @labels."""
    out = {}
    for (n, lab), v in got.items():
        d = dict(lab)
        if n == name and all(d.get(k) == w for k, w in labels.items()):
            out[tuple(sorted((k, w) for k, w in d.items() if k not in labels))] = v
    return out


def check(node):
    node.extra_args = ["--metrics-address", "127.0.0.1:0"]
    started = time.monotonic()
    node.start()
    port = port_of(node)
    deadline = time.time() + 60   # a safety net, not a goal
    while get(port, "/healthz")[:2] != (200, "ok\n"):   # "ok (starting)" before the loop runs
        assert get(port, "/healthz")[0] == 200 and time.time() < deadline, get(port, "/healthz")
        time.sleep(0.05)
    status, text, _ = get(port, "/readyz")
    assert status == 503 and "dralet.dev is not registered with the kubelet" in text, \
        (status, text)

    # the kubelet registers the drivers one by one: ready after the last one
    pb = k.compile_protos(node.tmp)
    sockets = sorted(os.path.join(node.registry, f) for f in os.listdir(node.registry))
    assert node.reg_socket in sockets and len(sockets) > 1, sockets
    for i, path in enumerate(sockets):
        assert get(port, "/readyz")[0] == 503, (i, get(port, "/readyz"))
        kl = k.Kubelet(pb, path)
        kl.register()
        kl.close()
    deadline = time.time() + 60   # a safety net, not a goal
    while get(port, "/readyz")[0] != 200:
        assert time.time() < deadline, get(port, "/readyz")
        time.sleep(0.05)

    node.put_claim("one", uid(1), [("gpu", 0)])
    resp = node.kubelet().prepare([("ns", "one", uid(1))])
    assert not resp[uid(1)][0], resp

    status, text, ctype = get(port, "/metrics")
    assert status == 200 and ctype.startswith("text/plain; version=0.0.4"), (status, ctype)
    got = samples(text)
    drv = (("driver", ck.DRIVER),)
    assert got[("dralet_driver_registered", drv)] == 1, got
    assert got[("dralet_prepared_claims", drv)] == 1, got
    assert got[("dralet_claim_prepare_seconds_count", drv)] == 1, got
    assert got[("dralet_claim_prepare_seconds_bucket", drv + (("le", "+Inf"),))] == 1, got
    assert got[("dralet_claim_failures_total", drv + (("operation", "prepare"),))] == 0, got
    by_health = {dict(lab)["health"]: v for (n, lab), v in got.items()
                 if n == "dralet_devices" and dict(lab)["driver"] == ck.DRIVER}
    assert sum(by_health.values()) == len(node.devices) and by_health["healthy"] >= 1, by_health
    assert any(n == "dralet_build_info" for n, _ in got), got

    # the calls, writes and requests made
    assert node.kubelet().unprepare([("ns", "one", uid(1))]) == {uid(1): ""}
    got = scrape(port)
    calls = by(got, "dralet_grpc_calls_total", driver=ck.DRIVER)
    assert calls[(("code", "OK"), ("method", PREPARE))] == 1, calls
    assert calls[(("code", "OK"), ("method", UNPREPARE))] == 1, calls
    assert calls[(("code", "OK"), ("method", "/pluginregistration.Registration/GetInfo"))] >= 1, \
        calls
    assert not [k for k in calls if dict(k)["code"] != "OK"], calls
    # the prepare writes its entry, the unprepare removes it: two writes at least
    assert got[("dralet_checkpoint_write_seconds_count", drv)] >= 2, got
    # seconds, measured: more than nothing, less than the daemon has been running
    assert 0 < got[("dralet_checkpoint_write_seconds_sum", drv)] < time.monotonic() - started, got
    assert got[("dralet_checkpoint_write_seconds_bucket", drv + (("le", "+Inf"),))] == \
        got[("dralet_checkpoint_write_seconds_count", drv)], got
    writes = by(got, "dralet_slice_writes_total")
    assert writes[(("operation", "create"), ("result", "ok"))] >= 1, writes
    assert sum(v for k, v in writes.items() if dict(k)["result"] != "ok") == 0, writes
    assert by(got, "dralet_apiserver_requests_total") == {}, "requests without an apiserver"
    assert by(got, "dralet_sriov_applies_total") == {}, "applies without a policy"

    assert get(port, "/nope")[0] == 404
    assert get(port, "/metrics", method="POST")[0] == 405
    node.stop()
    # the port is closed with the agent
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0

    # a bad address stops the start with the reason
    node.extra_args = ["--metrics-address", "nonsense"]
    node.start(wait=False)
    rc = node.wait_exit()
    assert rc == 1 and "cannot serve metrics on nonsense: not HOST:PORT or :PORT" in \
        node.read_log(), (rc, node.read_log()[-2000:])

    # a taken port (a rolling update's previous instance on the node's network):
    # the agent runs and takes the port over once it is free
    busy = socket.socket()
    busy.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    port = busy.getsockname()[1]
    node.extra_args = ["--metrics-address", "127.0.0.1:%d" % port]
    node.start()
    assert "127.0.0.1:%d is taken" % port in node.read_log(), node.read_log()[-2000:]
    busy.close()
    deadline = time.time() + 60   # a safety net, not a goal
    while True:
        try:
            if get(port, "/healthz")[0] == 200:
                break
        except OSError:
            pass
        assert time.time() < deadline, node.read_log()[-2000:]
        time.sleep(0.1)
    assert "(port %d)" % port in node.read_log()
    node.stop()


def apiserver(node):
    """Requests by verb and code, and slice writes, against the test apiserver."""
    srv = ApiServer(os.path.join(node.tmp, "srv"), nodes=(ck.NODE,)).start()
    srv.state.version = "37"     # GET /version answers: the only 404 is the claim's
    try:
        node.kubeconfig = srv.kubeconfig
        node.extra_args = ["--metrics-address", "127.0.0.1:0"]
        node.start()
        port = port_of(node)
        wait_for(lambda: srv.slices(ck.NODE, ck.DRIVER), 20, interval=0.05, what="the slices")
        # a claim the apiserver does not have: a per-claim error, the call itself OK
        resp = node.kubelet().prepare([("ns", "nowhere", uid(7))])
        assert "not found" in resp[uid(7)][0], resp
        # the failed prepare's Event goes out from a queue: a POST of its own
        wait_for(lambda: srv.k8s_events(), 20, interval=0.05, what="the PrepareFailed Event")
        events = len(srv.k8s_events())
        created = len(srv.slices(ck.NODE))

        def posts_counted():
            # the server has the Event before the agent has read its answer
            # and counted the request
            return by(scrape(port), "dralet_apiserver_requests_total").get(
                (("code", "201"), ("verb", "POST")), 0) >= created + events
        wait_for(posts_counted, 60, interval=0.05, what="the Event's POST counted")
        got = scrape(port)
        req = by(got, "dralet_apiserver_requests_total")
        assert req[(("code", "200"), ("verb", "GET"))] >= 1, req       # the node (the slices come by a streaming watch)
        assert req[(("code", "404"), ("verb", "GET"))] == 1, req       # the claim
        assert req[(("code", "201"), ("verb", "POST"))] == created + events, \
            (req, created, events)
        writes = by(got, "dralet_slice_writes_total")
        assert writes[(("operation", "create"), ("result", "ok"))] == created, writes
        calls = by(got, "dralet_grpc_calls_total", driver=ck.DRIVER)
        assert calls[(("code", "OK"), ("method", PREPARE))] == 1, calls
        node.stop()
    finally:
        srv.stop()


def sriov():
    """SR-IOV applies by PF and result: a policy on the e810 board changes the PF's count
    at start, and the daemon's second look finds it unchanged."""
    board = os.path.join(ck.REPO, "boards", "e810.yaml")
    pf = "0000:3b:00.0"
    tmp = tempfile.mkdtemp(prefix="dralet-metrics-sriov-")
    proc = None
    try:
        config = os.path.join(tmp, "config.yaml")
        with open(config, "w") as f:
            f.write("backends:\n  sriov:\n    options:\n      pfs: \"%s\"\n"
                    "sriov:\n  policies:\n  - name: e810\n"
                    "    pfSelector: {pfNames: [ens1f0np0]}\n    numVfs: 4\n" % pf)
        log_path = os.path.join(tmp, "log")
        with open(log_path, "w") as log:
            proc = subprocess.Popen(
                [os.environ["DRALET"], "run", "--board", board, "--config", config,
                 "--store", os.path.join(tmp, "store"), "--plugins-dir",
                 os.path.join(tmp, "plugins"), "--registry-dir", os.path.join(tmp, "reg"),
                 "--cdi-dir", os.path.join(tmp, "cdi"), "--node-name", "n",
                 "--metrics-address", "127.0.0.1:0"], stdout=log, stderr=subprocess.STDOUT)

        class Log:
            def read_log(self):
                with open(log_path) as f:
                    return f.read()
        port = port_of(Log())

        def applies():
            return by(scrape(port), "dralet_sriov_applies_total", pf=pf)
        wait_for(lambda: applies().get((("result", "unchanged"),), 0) >= 1, 20, interval=0.1,
                 what="the second apply")
        got = applies()
        assert got[(("result", "changed"),)] == 1, got
        assert got[(("result", "refused"),)] == 0 and got[(("result", "failed"),)] == 0, got
        proc.terminate()
        assert proc.wait(30) == 0, Log().read_log()[-2000:]
    finally:
        if proc and proc.poll() is None:
            proc.kill()
            proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    ck.run_test(check)
    ck.run_test(apiserver)
    sriov()
    print("metrics: probes, readiness after registration and Prometheus text checked")
