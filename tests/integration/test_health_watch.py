#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Device health while the daemon runs (docs/health.md), seen the way the
kubelet sees it: GetInfo advertises v1.DRAResourceHealth (1.37) and
v1alpha1.DRAResourceHealth, and NodeWatchResources streams on either the complete health
list of the driver, each status with the staleness timeout (3 health intervals) and, when
not healthy, why.

The daemon runs on boards/vm-like.yaml (net.dralet.dev: two RDMA functions,
two VFs) with a 1 s health interval and DRADeviceTaints on. The test takes
one RDMA port down in the simulated sysfs tree, expects every watcher to get
that device UNHEALTHY (and the slice taint, and a Warning Event DeviceUnhealthy
about the Node in the file store's events), prepares a claim while the
watchers are open, brings the port up again and expects HEALTHY (and a Normal Event
DeviceRecovered). Deadlines
are generous; nothing here measures latency."""
import glob
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
try:
    import grpc
except ImportError:
    print("SKIP: python3-grpcio is not installed")
    sys.exit(77)

from lib import kubelet as k  # noqa: E402
from lib.board_agent import BoardAgent  # noqa: E402
import claims_kubelet as ck  # noqa: E402

BOARD = os.path.join(ck.REPO, "boards", "vm-like.yaml")
DRIVER = "net.dralet.dev"
NODE = "health-node"
SICK = "rdma-0000-01-00-1"      # its port goes down and up again
CLAIMED = "rdma-0000-01-00-2"   # prepared while the watchers are open
CLAIM_UID = ck.uid(7)
WAIT = 60                       # seconds: generous, never a latency goal
WATCH_PATHS = ("/v1.DRAResourceHealth/NodeWatchResources",
               "/v1alpha1.DRAResourceHealth/NodeWatchResources")


class Watcher:
    """One NodeWatchResources stream on its own connection, read by a thread."""

    def __init__(self, pb, socket_path, path):
        self.channel = k.unique_channel("unix:" + socket_path)
        watch = self.channel.unary_stream(
            path,
            request_serializer=pb.dra_health.NodeWatchResourcesRequest.SerializeToString,
            response_deserializer=pb.dra_health.NodeWatchResourcesResponse.FromString)
        self.stream = watch(pb.dra_health.NodeWatchResourcesRequest())
        self.messages = queue.Queue()
        self.end = None
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        try:
            for msg in self.stream:
                self.messages.put(msg)
        except grpc.RpcError as e:
            self.end = e.code()
        else:
            self.end = grpc.StatusCode.OK
        self.messages.put(None)

    def next_matching(self, want, pb, what):
        """Waits for a message whose {device: status name} satisfies want()."""
        deadline = time.time() + WAIT
        last = None
        while time.time() < deadline:
            try:
                msg = self.messages.get(timeout=max(0.1, deadline - time.time()))
            except queue.Empty:
                break
            if msg is None:
                raise AssertionError("the watch ended (%s) while waiting for %s" % (self.end, what))
            last = health_map(msg, pb)
            if want(last):
                return msg
        raise AssertionError("no message with %s in %d s; last: %s" % (what, WAIT, last))

    def close(self):
        self.stream.cancel()
        self.thread.join(WAIT)
        self.channel.close()


def health_map(msg, pb):
    return {d.device.device_name: pb.dra_health.HealthStatus.Name(d.health) for d in msg.devices}


def port_state_file(tree, device):
    bdf = "0000:" + device[len("rdma-0000-"):].replace("-", ":", 1).replace("-", ".")
    files = glob.glob(os.path.join(tree, "sys", "bus", "pci", "devices", bdf, "infiniband",
                                   "*", "ports", "1", "state"))
    assert len(files) == 1, (bdf, files)
    return files[0]


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def put_claim(store, device):
    obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
           "metadata": {"namespace": "default", "name": "rdma", "uid": CLAIM_UID},
           "spec": {"devices": {"requests": [{"name": "rdma", "exactly": {
               "deviceClassName": "rdma.net.dralet.dev"}}]}},
           "status": {"allocation": {"devices": {"results": [
               {"request": "rdma", "driver": DRIVER, "pool": NODE, "device": device}]}}}}
    d = os.path.join(store, "resourceclaims", "default")
    os.makedirs(d, exist_ok=True)
    write(os.path.join(d, "rdma.json"), json.dumps(obj))


def unprepare(kl, pb, claim_uid):
    m = pb.upstream
    call = kl.dra.unary_unary(
        k.V1_UNPREPARE, request_serializer=m.NodeUnprepareResourcesRequest.SerializeToString,
        response_deserializer=m.NodeUnprepareResourcesResponse.FromString)
    req = m.NodeUnprepareResourcesRequest(
        claims=[m.Claim(namespace="default", uid=claim_uid, name="rdma")])
    return call(req, timeout=45).claims[claim_uid].error


def tainted_devices(agent):
    """The driver's published devices with the taint dralet.dev/unhealthy."""
    return {d["name"] for d in agent.published_devices()
            if any(t.get("key") == "dralet.dev/unhealthy" for t in d.get("taints", []))}


def node_events(store, reason):
    """The Events of @reason about the Node NODE in the file store."""
    out = []
    for f in glob.glob(os.path.join(store, "events", "*.json")):
        with open(f) as fh:
            ev = json.load(fh)
        if ev["reason"] == reason:
            assert ev["involvedObject"] == {"apiVersion": "v1", "kind": "Node", "name": NODE,
                                            "uid": NODE}, ev
            assert ev["source"] == {"component": "dralet", "host": NODE}, ev
            out.append(ev)
    return out


def wait_for(cond, what):
    deadline = time.time() + WAIT
    while time.time() < deadline:
        if cond():
            return
        time.sleep(0.1)
    raise AssertionError("timed out waiting for " + what)


def main():
    dralet = os.environ.get("DRALET")
    ck.need(dralet, "DRALET is not set")
    ck.need(shutil.which("protoc"), "protoc is not installed")
    with BoardAgent(dralet, DRIVER, "dralet-health-", NODE) as agent:
        tmp, store, log_path = agent.tmp, agent.store, agent.log
        pb = k.compile_protos(tmp)
        tree = agent.materialize(BOARD)
        config = os.path.join(tmp, "config.yaml")
        write(config, "healthCheckIntervalSeconds: 1\nfeatureGates:\n  DRADeviceTaints: true\n")
        put_claim(store, CLAIMED)
        # e.g. DRALET_TEST_WRAPPER="valgrind --error-exitcode=9 --leak-check=full"
        wrapper = os.environ.get("DRALET_TEST_WRAPPER", "").split()
        agent.start_tree(tree, config, timeout=WAIT, wrapper=wrapper)
        proc = agent.proc
        reg_sock = os.path.join(agent.registry, DRIVER + "-reg.sock")
        dra_sock = agent.sock
        wait_for(lambda: proc.poll() is not None or os.path.exists(reg_sock), "the sockets")
        assert proc.poll() is None, "the daemon exited"

        # registration advertises the health service
        kl = k.Kubelet(pb, reg_sock)
        info = kl.register()
        assert list(info.supported_versions)[2:] == ["v1.DRAResourceHealth",
                                                     "v1alpha1.DRAResourceHealth"], info
        assert info.endpoint == dra_sock, info.endpoint

        # the complete list at once, every device healthy, pool = node name
        started = int(time.time())
        watchers = [Watcher(pb, dra_sock, path) for path in WATCH_PATHS]
        names = None
        for w in watchers:
            first = w.next_matching(lambda m: True, pb, "the first list")
            got = health_map(first, pb)
            assert SICK in got and CLAIMED in got, got
            assert set(got.values()) == {"HEALTHY"}, got
            assert len(got) == len(first.devices), "a device listed twice"
            names = names or set(got)
            assert set(got) == names, (got, names)
            for d in first.devices:
                assert d.device.pool_name == NODE, d
                assert started - 3600 < d.last_updated_time <= time.time() + 5, d
                assert d.health_check_timeout_seconds == 3 and d.message == "", d
        assert not tainted_devices(agent)

        # one port goes down: every watcher hears it, the slice gets the taint
        state = port_state_file(tree, SICK)
        write(state, "1: DOWN\n")
        for w in watchers:
            msg = w.next_matching(lambda m: m.get(SICK) == "UNHEALTHY" and set(m) == names and
                                  all(v == "HEALTHY" for d, v in m.items() if d != SICK),
                                  pb, SICK + " UNHEALTHY")
            [why] = [d.message for d in msg.devices if d.device.device_name == SICK]
            assert why.endswith("port 1 is DOWN, not ACTIVE"), why
        wait_for(lambda: tainted_devices(agent) == {SICK}, "the taint on " + SICK)
        # and an Event about the Node says it (the file store writes DIR/events)
        wait_for(lambda: node_events(store, "DeviceUnhealthy"), "the DeviceUnhealthy Event")
        [ev] = node_events(store, "DeviceUnhealthy")
        assert ev["type"] == "Warning" and ev["count"] == 1, ev
        assert ev["metadata"]["namespace"] == "default", ev
        assert ev["message"].startswith("driver %s: device %s is unhealthy: " % (DRIVER, SICK))
        assert ev["message"].endswith("port 1 is DOWN, not ACTIVE"), ev

        # dralet ctl watch-health shows the same list, one JSON line a message
        out = subprocess.run([dralet, "ctl", "watch-health", "--socket", dra_sock, "--count", "2",
                              "--timeout", "%ds" % WAIT], capture_output=True, text=True,
                             timeout=WAIT + 5)
        assert out.returncode == 0, out.stderr
        lines = out.stdout.splitlines()
        assert len(lines) == 2, out.stdout
        for line in lines:
            listed = {d["device"]: d["health"] for d in json.loads(line)["devices"]}
            assert set(listed) == names and listed[SICK] == "UNHEALTHY", listed
            [sick] = [d for d in json.loads(line)["devices"] if d["device"] == SICK]
            assert sick["message"].endswith("port 1 is DOWN, not ACTIVE"), sick
            assert sick["healthCheckTimeoutSeconds"] == 3, sick
            assert all(d["pool"] == NODE for d in json.loads(line)["devices"]), line
        out = subprocess.run([dralet, "ctl", "watch-health", "--socket", dra_sock, "--count", "50",
                              "--timeout", "2s"], capture_output=True, text=True, timeout=WAIT)
        assert out.returncode == 1 and "DEADLINE_EXCEEDED" in out.stderr, (out.stdout, out.stderr)

        # claims are still served while the watchers are open
        res = kl.prepare([("default", CLAIM_UID, "rdma")]).claims[CLAIM_UID]
        assert res.error == "" and [d.device_name for d in res.devices] == [CLAIMED], res
        assert unprepare(kl, pb, CLAIM_UID) == ""
        kl.close()

        # the port comes back: HEALTHY again everywhere, the taint goes
        write(state, "4: ACTIVE\n")
        for w in watchers:
            msg = w.next_matching(lambda m: m.get(SICK) == "HEALTHY", pb, SICK + " HEALTHY")
            assert set(health_map(msg, pb).values()) == {"HEALTHY"}
        wait_for(lambda: not tainted_devices(agent), "the taint to go")
        wait_for(lambda: node_events(store, "DeviceRecovered"), "the DeviceRecovered Event")
        [ev] = node_events(store, "DeviceRecovered")
        assert ev["type"] == "Normal", ev
        assert ev["message"] == "driver %s: device %s is healthy again" % (DRIVER, SICK), ev
        assert len(node_events(store, "DeviceUnhealthy")) == 1

        # a watcher that goes away is forgotten; the other one keeps getting lists
        watchers[0].close()
        watchers[1].next_matching(lambda m: set(m) == names, pb, "a periodic list")
        watchers[1].next_matching(lambda m: set(m) == names, pb, "another periodic list")

        # SIGTERM ends the open watch with OK and the daemon exits cleanly
        agent.stop(timeout=WAIT)
        watchers[1].thread.join(WAIT)
        assert watchers[1].end == grpc.StatusCode.OK, watchers[1].end
        watchers[1].channel.close()
        text = open(log_path).read()
        assert "device %s: health Healthy -> Unhealthy" % SICK in text, text[-3000:]
        assert "device %s: health Unhealthy -> Healthy" % SICK in text, text[-3000:]
        print("health watch: %d devices, down and up again seen by 2 watchers: ok" % len(names))


main()
