# SPDX-License-Identifier: Apache-2.0
"""Support for the claims integration and crash tests (test_claims*.py,
test_crash*.py): a simulated node with the claimsfake test backend
(tests/lib/claimsfake), the daemon, and a kubelet-like gRPC client.

The client is Debian's python3-grpcio with message classes that protoc
generates at test time from the kubelet's DRA API as written here from the
contract (real map<> fields, both the v1 and the v1beta1 package), so the
daemon is checked against an independent encoding of the wire format.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DRIVER = "claims.test.dralet.dev"
VENDOR = "k8s." + DRIVER
CLASS = "accel"
NODE = "node-1"
BOOT_ID = "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0"
SKIP = 77

PROTO = """
syntax = "proto3";
package k8s.io.kubelet.pkg.apis.dra.%(pkg)s;
service DRAPlugin {
  rpc NodePrepareResources(NodePrepareResourcesRequest) returns (NodePrepareResourcesResponse) {}
  rpc NodeUnprepareResources(NodeUnprepareResourcesRequest) returns (NodeUnprepareResourcesResponse) {}
}
message NodePrepareResourcesRequest { repeated Claim claims = 1; }
message NodePrepareResourcesResponse { map<string, NodePrepareResourceResponse> claims = 1; }
message NodePrepareResourceResponse { repeated Device devices = 1; string error = 2; }
message Device {
  repeated string request_names = 1;
  string pool_name = 2;
  string device_name = 3;
  repeated string cdi_device_ids = 4;
  optional string share_id = 5;
}
message NodeUnprepareResourcesRequest { repeated Claim claims = 1; }
message NodeUnprepareResourcesResponse { map<string, NodeUnprepareResourceResponse> claims = 1; }
message NodeUnprepareResourceResponse { string error = 1; }
message Claim { string namespace = 1; string uid = 2; string name = 3; }
"""


def skip(why):
    print("SKIP: " + why)
    sys.exit(SKIP)


def need(condition, why):
    if not condition:
        skip(why)


def uid(n):
    """A claim UID that starts with a digit, as most do."""
    return "%08x-0000-4000-8000-%012x" % (0x10000000 + n, n)


class Protos:
    def __init__(self, tmp):
        need(shutil.which("protoc"), "protoc is not installed")
        try:
            import grpc  # noqa: F401
            import google.protobuf  # noqa: F401
        except ImportError as e:
            skip("python3-grpcio/python3-protobuf missing: %s" % e)
        out = os.path.join(tmp, "pb")
        os.makedirs(out, exist_ok=True)
        for pkg in ("v1", "v1beta1"):
            with open(os.path.join(out, "dra_%s.proto" % pkg), "w") as f:
                f.write(PROTO % {"pkg": pkg})
            subprocess.check_call(["protoc", "--proto_path", out, "--python_out", out,
                                   "dra_%s.proto" % pkg])
        sys.path.insert(0, out)
        import dra_v1_pb2
        import dra_v1beta1_pb2
        self.pb = {"v1": dra_v1_pb2, "v1beta1": dra_v1beta1_pb2}


class Kubelet:
    """Calls the DRA socket the way the kubelet does: one channel, 45 s deadlines."""

    def __init__(self, protos, socket_path):
        import grpc
        self.grpc = grpc
        self.protos = protos
        self.channel = grpc.insecure_channel("unix:" + socket_path)

    def close(self):
        self.channel.close()

    def _call(self, api, method, req_cls, resp_cls, claims, timeout):
        pb = self.protos.pb[api]
        path = "/k8s.io.kubelet.pkg.apis.dra.%s.DRAPlugin/%s" % (api, method)
        req = getattr(pb, req_cls)(claims=[pb.Claim(namespace=c[0], name=c[1], uid=c[2])
                                           for c in claims])
        stub = self.channel.unary_unary(path, request_serializer=lambda m: m.SerializeToString(),
                                        response_deserializer=getattr(pb, resp_cls).FromString)
        return stub(req, timeout=timeout)

    def prepare(self, claims, api="v1", timeout=45):
        """claims: [(namespace, name, uid)] -> {uid: (error, [device dicts])}"""
        resp = self._call(api, "NodePrepareResources", "NodePrepareResourcesRequest",
                          "NodePrepareResourcesResponse", claims, timeout)
        out = {}
        for key, value in resp.claims.items():
            devs = []
            for d in value.devices:
                devs.append({"request_names": list(d.request_names), "pool": d.pool_name,
                             "device": d.device_name, "cdi_ids": list(d.cdi_device_ids)})
                if d.HasField("share_id"):   # a share of a shared device
                    devs[-1]["share_id"] = d.share_id
            out[key] = (value.error, devs)
        return out

    def prepare_future(self, claims, api="v1", timeout=45):
        pb = self.protos.pb[api]
        path = "/k8s.io.kubelet.pkg.apis.dra.%s.DRAPlugin/NodePrepareResources" % api
        req = pb.NodePrepareResourcesRequest(
            claims=[pb.Claim(namespace=c[0], name=c[1], uid=c[2]) for c in claims])
        stub = self.channel.unary_unary(
            path, request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=pb.NodePrepareResourcesResponse.FromString)
        return stub.future(req, timeout=timeout)

    def unprepare(self, claims, api="v1", timeout=45):
        resp = self._call(api, "NodeUnprepareResources", "NodeUnprepareResourcesRequest",
                          "NodeUnprepareResourcesResponse", claims, timeout)
        return {k: v.error for k, v in resp.claims.items()}


class Node:
    """A simulated node with n claimsfake functions, a store and the daemon's directories."""

    def __init__(self, n_devices=6, keep=False):
        self.dralet = os.environ.get("DRALET")
        need(self.dralet and os.access(self.dralet, os.X_OK), "DRALET is not set")
        self.tmp = tempfile.mkdtemp(prefix="dralet-claims-")
        self.keep = keep
        self.sys = os.path.join(self.tmp, "sys")
        self.dev = os.path.join(self.tmp, "dev")
        self.proc = os.path.join(self.tmp, "proc")
        self.store = os.path.join(self.tmp, "store")
        self.registry = os.path.join(self.tmp, "registry")
        self.plugins = os.path.join(self.tmp, "plugins")
        self.cdi = os.path.join(self.tmp, "cdi")
        self.hw = os.path.join(self.tmp, "hw")
        self.backends = os.path.join(self.tmp, "backends")
        for d in (self.dev, self.hw, self.backends, os.path.join(self.sys, "bus/pci/devices")):
            os.makedirs(d, exist_ok=True)
        self.devices = []
        for i in range(n_devices):
            self.add_function(i)
        self.set_boot_id(BOOT_ID)
        self.config = os.path.join(self.tmp, "config.yaml")
        with open(self.config, "w") as f:
            f.write("backends:\n  claimsfake:\n    options:\n      stateDir: %s\n" % self.hw)
        self.build_backend()
        self.protos = Protos(self.tmp)
        self.proc_handle = None
        self.log_path = os.path.join(self.tmp, "dralet.log")
        self.pod_uid = None
        self.use_pod_uid(None)
        self.kubeconfig = None  # set: the apiserver store instead of the file store
        self.extra_args = []    # more `dralet run` options for the next start

    def add_function(self, i):
        addr = "0000:00:%02x.0" % (0x0a + i)
        path = os.path.join(self.sys, "devices/pci0000:00", addr)
        os.makedirs(path, exist_ok=True)
        for name, value in (("vendor", "0x1234"), ("device", "0xd7a0"), ("class", "0x120000"),
                            ("revision", "0x01"), ("subsystem_vendor", "0x1234"),
                            ("subsystem_device", "0x0001"), ("fake_uuid", "FAKE-%04d" % i)):
            with open(os.path.join(path, name), "w") as f:
                f.write(value + "\n")
        link = os.path.join(self.sys, "bus/pci/devices", addr)
        if not os.path.lexists(link):
            os.symlink("../../../devices/pci0000:00/" + addr, link)
        self.devices.append("fake-" + addr.replace(":", "-").replace(".", "-"))

    def make_shared(self, i):
        """Function i's device allows multiple allocations (16Gi of memory)."""
        addr = "0000:00:%02x.0" % (0x0a + i)
        with open(os.path.join(self.sys, "devices/pci0000:00", addr, "fake_shared"), "w") as f:
            f.write("1\n")

    def set_ifname(self, i, value):
        """Function i's device is a network device with interface VALUE."""
        addr = "0000:00:%02x.0" % (0x0a + i)
        with open(os.path.join(self.sys, "devices/pci0000:00", addr, "fake_ifname"), "w") as f:
            f.write(value + "\n")

    def set_uuid(self, i, value):
        addr = "0000:00:%02x.0" % (0x0a + i)
        with open(os.path.join(self.sys, "devices/pci0000:00", addr, "fake_uuid"), "w") as f:
            f.write(value + "\n")

    def set_boot_id(self, boot_id):
        d = os.path.join(self.proc, "sys/kernel/random")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "boot_id"), "w") as f:
            f.write(boot_id + "\n")

    def build_backend(self):
        """The claimsfake backend (tests/lib/claimsfake), as make test-libs built it,
        or compiled here against the SDK headers; alone in its --backend-dir."""
        target = os.path.join(self.backends, "claimsfake.so")
        built = os.path.join(REPO, os.environ.get("BUILD", "build"), "tests/lib/claimsfake.so")
        src = os.path.join(REPO, "tests/lib/claimsfake/claimsfake.c")
        if os.path.isfile(built) and os.path.getmtime(built) >= os.path.getmtime(src):
            shutil.copy(built, target)
            return
        need(shutil.which("cc"), "no C compiler for the test backend")
        flags = subprocess.check_output(["pkg-config", "--cflags", "--libs", "json-c"],
                                        text=True).split()
        subprocess.check_call(["cc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-fPIC",
                               "-shared", "-I" + os.path.join(REPO, "include"), "-o", target,
                               src] + flags)

    # ---- claims in the file store ----

    def put_claim(self, name, claim_uid, results, config=None, namespace="ns", allocated=True):
        """results: [(request, device index or name, adminAccess, {more result fields})]"""
        res = []
        for r in results:
            dev = self.devices[r[1]] if isinstance(r[1], int) else r[1]
            item = {"request": r[0], "driver": DRIVER, "pool": NODE, "device": dev}
            if len(r) > 2 and r[2]:
                item["adminAccess"] = True
            if len(r) > 3:
                item.update(r[3])   # shareID, consumedCapacity
            res.append(item)
        obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
               "metadata": {"namespace": namespace, "name": name, "uid": claim_uid},
               "spec": {"devices": {"requests": [{"name": "r", "exactly": {
                   "deviceClassName": "fake.dralet.dev"}}]}},
               "status": {}}
        if allocated:
            obj["status"]["allocation"] = {"devices": {"results": res, "config": config or []}}
        d = os.path.join(self.store, "resourceclaims", namespace)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, name + ".json"), "w") as f:
            json.dump(obj, f)

    # ---- the daemon ----

    def use_pod_uid(self, pod_uid):
        """Rolling-update socket names (--pod-uid) for the next start; None: off."""
        self.pod_uid = pod_uid
        if pod_uid:
            self.dra_socket = os.path.join(self.plugins, DRIVER, "dra-%s.sock" % pod_uid)
            self.reg_socket = os.path.join(self.registry, "%s-%s-reg.sock" % (DRIVER, pod_uid))
        else:
            self.dra_socket = os.path.join(self.plugins, DRIVER, "dra.sock")
            self.reg_socket = os.path.join(self.registry, DRIVER + "-reg.sock")

    def start(self, env=None, wait=True):
        e = dict(os.environ)
        e.update(env or {})
        e.pop("NODE_NAME", None)
        self.log = open(self.log_path, "a")
        self.proc_handle = subprocess.Popen(
            [self.dralet, "run", "--sysfs-root", self.sys, "--dev-root", self.dev,
             "--proc-root", self.proc, "--config", self.config, "--backend-dir", self.backends,
             "--registry-dir", self.registry, "--plugins-dir",
             self.plugins, "--cdi-dir", self.cdi, "--node-name", NODE] +
            (["--kubeconfig", self.kubeconfig] if self.kubeconfig else ["--store", self.store]) +
            (["--pod-uid", self.pod_uid] if self.pod_uid else []) + self.extra_args,
            stdout=self.log, stderr=subprocess.STDOUT, env=e)
        if wait:
            self.wait_ready()
        return self.proc_handle

    def wait_ready(self, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc_handle.poll() is not None:
                raise AssertionError("dralet exited with %s:\n%s" % (self.proc_handle.returncode,
                                                                      self.read_log()))
            if os.path.exists(self.dra_socket) and os.path.exists(self.reg_socket):
                s = socket.socket(socket.AF_UNIX)
                try:
                    s.connect(self.dra_socket)
                    return
                except OSError:
                    pass
                finally:
                    s.close()
            time.sleep(0.05)
        raise AssertionError("dralet did not open its sockets:\n" + self.read_log())

    def stop(self, signal_sent=False):
        p = self.proc_handle
        if not signal_sent:
            p.send_signal(signal.SIGTERM)
        rc = p.wait(timeout=30)
        self.log.close()
        assert rc == 0, "dralet exited with %s:\n%s" % (rc, self.read_log())
        assert not os.path.exists(self.dra_socket), "DRA socket left behind"
        assert not os.path.exists(self.reg_socket), "registration socket left behind"

    def kill(self):
        p = self.proc_handle
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
        self.log.close()

    def wait_exit(self, timeout=30):
        rc = self.proc_handle.wait(timeout=timeout)
        self.log.close()
        return rc

    def read_log(self):
        try:
            with open(self.log_path) as f:
                return f.read()
        except OSError:
            return ""

    def kubelet(self):
        return Kubelet(self.protos, self.dra_socket)

    # ---- state on disk ----

    def checkpoint(self):
        with open(os.path.join(self.plugins, DRIVER, "checkpoint.json")) as f:
            return json.load(f)

    def corrupt_checkpoint(self):
        """Damages the checkpoint so that its checksum no longer matches
        (one state name changed in place)."""
        path = os.path.join(self.plugins, DRIVER, "checkpoint.json")
        with open(path, "r+") as f:
            text = f.read()
            f.seek(0)
            f.write(text.replace("PrepareCompleted", "PrepareCompletes"))
        return path

    def checkpoint_claims(self):
        return {c["uid"]: c for c in self.checkpoint()["data"]["claims"]}

    def spec_files(self):
        if not os.path.isdir(self.cdi):
            return []
        return sorted(f for f in os.listdir(self.cdi) if f.endswith(".json"))

    def spec_file(self, claim_uid):
        return "%s-%s_%s.json" % (VENDOR, CLASS, claim_uid)

    def hardware(self):
        """device name -> claim UID holding it (the backend's state files)."""
        out = {}
        for name in os.listdir(self.hw):
            with open(os.path.join(self.hw, name)) as f:
                out[name] = f.read()
        return out

    def cleanup(self):
        if self.proc_handle and self.proc_handle.poll() is None:
            self.proc_handle.kill()
            self.proc_handle.wait()
        if not self.keep:
            shutil.rmtree(self.tmp, ignore_errors=True)


# ---- CDI checks ----

def schema_dir():
    for d in (os.environ.get("DRALET_SCHEMAS"), os.path.join(REPO, "..", "shared", "schemas"),
              os.path.join(REPO, "shared", "schemas"), "/work/shared/schemas"):
        if d and os.path.isfile(os.path.join(d, "cdi", "schema.json")):
            return os.path.join(d, "cdi")
    return None


def validate_cdi_spec(path):
    """Validates a spec file against the CDI JSON schema, the name rules and the
    minimum version rule (cdi.md sections 1-3). Returns the spec."""
    import re
    import jsonschema
    with open(path) as f:
        spec = json.load(f)
    d = schema_dir()
    assert d, "the CDI schema is not found (set DRALET_SCHEMAS)"
    with open(os.path.join(d, "schema.json")) as f:
        schema = json.load(f)
    with open(os.path.join(d, "defs.json")) as f:
        defs = json.load(f)
    resolver = jsonschema.RefResolver(base_uri="file://" + d + "/", referrer=schema,
                                      store={"defs.json": defs,
                                             "file://" + d + "/defs.json": defs})
    jsonschema.Draft7Validator(schema, resolver=resolver).validate(spec)
    vendor, cls = spec["kind"].split("/", 1)
    assert re.fullmatch(r"[A-Za-z]([A-Za-z0-9_.-]*[A-Za-z0-9])?", vendor), vendor
    assert re.fullmatch(r"[A-Za-z]([A-Za-z0-9_.-]*[A-Za-z0-9])?", cls), cls
    names = [dev["name"] for dev in spec["devices"]]
    assert len(names) == len(set(names)), names
    need_050 = False
    for dev in spec["devices"]:
        assert re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9_.:-]*[A-Za-z0-9])?", dev["name"]), dev
        assert dev["containerEdits"], dev
        need_050 |= dev["name"][0].isdigit()
        for env in dev["containerEdits"].get("env", []):
            assert env.index("=") > 0, env
        for n in dev["containerEdits"].get("deviceNodes", []):
            need_050 |= "hostPath" in n
    assert "annotations" not in spec and "." not in cls
    want = "0.5.0" if need_050 else "0.3.0"
    assert spec["cdiVersion"] == want, (spec["cdiVersion"], want)
    mode = os.stat(path).st_mode & 0o777
    assert mode == 0o644, oct(mode)
    return spec


def run_test(fn):
    """Runs fn(node) and cleans up; prints the daemon's log on failure."""
    node = None
    try:
        node = Node()
        fn(node)
    except SystemExit:
        raise
    except BaseException:
        if node:
            sys.stderr.write("---- dralet log ----\n" + node.read_log()[-20000:])
        raise
    finally:
        if node:
            node.cleanup()
