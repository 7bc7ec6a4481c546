#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The operator's endpoint of `dralet run --metrics-address` (docs/operations.md):
/healthz answers while the agent runs; /readyz is 503, with the driver named, until the
kubelet registered every driver, then 200; /metrics is Prometheus text that Debian's
python3-prometheus-client parses, with the devices by health, the registration, the
prepared claims and the prepare latency histogram after a real prepare; unknown paths
and methods are refused; a bad address stops the start with the reason; a taken port is
taken over once it is free (a rolling update's previous instance)."""
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
import claims_kubelet as ck  # noqa: E402
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
    deadline = time.time() + 10
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


def check(node):
    node.extra_args = ["--metrics-address", "127.0.0.1:0"]
    node.start()
    port = port_of(node)
    deadline = time.time() + 10
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
    deadline = time.time() + 10
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
    deadline = time.time() + 10
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


if __name__ == "__main__":
    ck.run_test(check)
    print("metrics: probes, readiness after registration and Prometheus text checked")
