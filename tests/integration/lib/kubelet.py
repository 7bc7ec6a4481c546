# SPDX-License-Identifier: Apache-2.0
"""A kubelet-like gRPC client and helpers for the integration tests.

* compile_protos(): protoc --python_out for proto/*.proto into a temp dir and
  import the modules (Debian's python3-protobuf + protoc, no grpc_tools).
* TestServer: starts $BUILD/tests/integration/grpc_test_server (the real
  kubelet endpoint code plus test methods) in temp directories.
* Kubelet: what the kubelet does with a plugin: GetInfo with a 1 s deadline,
  version selection, NotifyRegistrationStatus with a 5 s deadline, DRA calls
  with 45 s deadlines on a channel to "unix:" + PluginInfo.endpoint.
* h2_*: raw HTTP/2 frames for misbehaving clients.

Always run with /usr/bin/python3 (Debian's python3-grpcio).
"""
import importlib
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parents[3]

GET_INFO = "/pluginregistration.Registration/GetInfo"
NOTIFY = "/pluginregistration.Registration/NotifyRegistrationStatus"
HEALTH_CHECK = "/grpc.health.v1.Health/Check"
V1_PREPARE = "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources"
V1_UNPREPARE = "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources"
V1BETA1_PREPARE = "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodePrepareResources"
KUBELET_SERVICES = ["v1.DRAPlugin", "v1beta1.DRAPlugin"]


def skip(reason):
    print("SKIP: " + reason)
    sys.exit(77)


def build_dir():
    b = Path(os.environ.get("BUILD", "build"))
    return b if b.is_absolute() else ROOT / b


class Protos:
    """The generated message modules: pr (pluginregistration), v1, v1beta1, health,
    dra_health, and upstream (DRA v1 in upstream shape: real map<>, proto3 optional)."""


def compile_protos(tmp):
    out = Path(tmp) / "pb"
    out.mkdir(exist_ok=True)
    protos = sorted(str(p) for p in (ROOT / "proto").glob("*.proto"))
    subprocess.run(["protoc", "--proto_path=" + str(ROOT / "proto"), "--python_out=" + str(out)]
                   + protos, check=True)
    lib = Path(__file__).resolve().parent
    subprocess.run(["protoc", "--proto_path=" + str(lib), "--python_out=" + str(out),
                    str(lib / "upstream_dra_v1.proto")], check=True)
    sys.path.insert(0, str(out))
    p = Protos()
    p.pr = importlib.import_module("pluginregistration_v1_pb2")
    p.v1 = importlib.import_module("dra_v1_pb2")
    p.v1beta1 = importlib.import_module("dra_v1beta1_pb2")
    p.health = importlib.import_module("grpc_health_v1_pb2")
    p.dra_health = importlib.import_module("dra_health_v1alpha1_pb2")
    p.upstream = importlib.import_module("upstream_dra_v1_pb2")
    return p


def unique_channel(target):
    """A channel with its own connection (grpc shares subchannels by default)."""
    return grpc.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)])


class TestServer:
    """grpc_test_server in temp dirs; use as a context manager."""

    def __init__(self, tmp, driver="gpu.test.dralet.io", args=()):
        self.tmp = Path(tmp)
        self.driver = driver
        self.args = list(args)
        self.registry_dir = self.tmp / "plugins_registry"
        self.plugins_dir = self.tmp / "plugins"
        self.log_path = self.tmp / "server.log"
        self.proc = None
        self.terminated = False
        self.reg_socket = self.dra_socket = None

    def start(self):
        binary = build_dir() / "tests" / "integration" / "grpc_test_server"
        if not binary.exists():
            raise RuntimeError("%s is missing (make check-integration builds it)" % binary)
        self.log = open(self.log_path, "w")
        # e.g. DRALET_TEST_WRAPPER="valgrind --error-exitcode=9 --leak-check=full"
        wrapper = os.environ.get("DRALET_TEST_WRAPPER", "").split()
        self.proc = subprocess.Popen(
            wrapper + [str(binary), "--driver", self.driver, "--registry-dir", str(self.registry_dir),
             "--plugins-dir", str(self.plugins_dir)] + self.args,
            stdout=subprocess.PIPE, stderr=self.log, text=True)
        ready, _, _ = select.select([self.proc.stdout], [], [], 60)
        line = self.proc.stdout.readline() if ready else ""
        if not line.startswith("READY "):
            self.proc.kill()
            raise RuntimeError("test server did not start: %r\n%s" % (line, self.logs()))
        _, self.reg_socket, self.dra_socket = line.split()
        return self

    def logs(self):
        if not self.log.closed:
            self.log.flush()
        return self.log_path.read_text()

    def terminate(self):
        """SIGTERM once (a second one may kill a server that is closing)."""
        if not self.terminated and self.proc.poll() is None:
            self.terminated = True
            self.proc.send_signal(signal.SIGTERM)

    def stop(self, timeout=60):
        """SIGTERM, wait; returns the exit status."""
        self.terminate()
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError("test server did not stop in %ss\n%s" % (timeout, self.logs()))
        self.proc.stdout.close()
        self.log.close()
        return rc

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        if self.proc and self.proc.returncode is None:
            self.stop()


class Kubelet:
    """What the kubelet does with a DRA plugin's sockets."""

    def __init__(self, pb, reg_socket):
        self.pb = pb
        self.reg_socket = reg_socket
        self.reg = grpc.insecure_channel("unix:" + reg_socket)
        self.dra = None
        self.info = None
        self.service = None

    # deadlines here are safety nets, not goals (the kubelet's own are 1-5 s;
    # timings: make bench)
    def get_info(self, timeout=30.0):
        call = self.reg.unary_unary(GET_INFO,
                                    request_serializer=self.pb.pr.InfoRequest.SerializeToString,
                                    response_deserializer=self.pb.pr.PluginInfo.FromString)
        return call(self.pb.pr.InfoRequest(), timeout=timeout)

    def notify(self, registered, error="", timeout=30.0):
        call = self.reg.unary_unary(
            NOTIFY, request_serializer=self.pb.pr.RegistrationStatus.SerializeToString,
            response_deserializer=self.pb.pr.RegistrationStatusResponse.FromString)
        return call(self.pb.pr.RegistrationStatus(plugin_registered=registered, error=error),
                    timeout=timeout)

    def register(self):
        """GetInfo, validate like pluginwatcher + the DRA handler, notify."""
        info = self.get_info()
        if info.type != "DRAPlugin":
            self.notify(False, "no handler registered for plugin type: " + info.type)
            raise AssertionError("type " + info.type)
        picked = [v for v in info.supported_versions if v in KUBELET_SERVICES]
        if not picked:
            self.notify(False, "none of services supported by the plugin are supported")
            raise AssertionError("versions %s" % list(info.supported_versions))
        self.info, self.service = info, picked[0]
        self.notify(True)
        self.dra = grpc.insecure_channel("unix:" + (info.endpoint or self.reg_socket))
        return info

    def prepare(self, claims, api="v1", timeout=45.0):
        """NodePrepareResources with the upstream-shaped messages (response.claims
        is a real map); v1 and v1beta1 are wire-identical."""
        m = self.pb.upstream
        path = V1_PREPARE if api == "v1" else V1BETA1_PREPARE
        call = self.dra.unary_unary(
            path, request_serializer=m.NodePrepareResourcesRequest.SerializeToString,
            response_deserializer=m.NodePrepareResourcesResponse.FromString)
        req = m.NodePrepareResourcesRequest(
            claims=[m.Claim(namespace=ns, uid=uid, name=name) for ns, uid, name in claims])
        return call(req, timeout=timeout)

    def close(self):
        self.reg.close()
        if self.dra:
            self.dra.close()


# ---- raw HTTP/2 for misbehaving clients ----

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def h2_frame(ftype, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + \
        struct.pack(">I", stream & 0x7fffffff) + payload


def _hpack_int(value, prefix_bits, first=0):
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first | value])
    out = bytearray([first | limit])
    value -= limit
    while value >= 128:
        out.append((value & 0x7f) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def hpack_literal(headers):
    """Literal header fields without indexing, new names, no Huffman."""
    out = b""
    for name, value in headers:
        n, v = name.encode(), value.encode()
        out += b"\x00" + _hpack_int(len(n), 7) + n + _hpack_int(len(v), 7) + v
    return out


def h2_settings(**kw):
    ids = {"initial_window_size": 4, "max_frame_size": 5, "enable_push": 2}
    payload = b"".join(struct.pack(">HI", ids[k], v) for k, v in kw.items())
    return h2_frame(4, 0, 0, payload)


def h2_window_update(stream, increment):
    return h2_frame(8, 0, stream, struct.pack(">I", increment))


def h2_grpc_request(stream, path, message=b"", timeout=None):
    headers = [(":method", "POST"), (":scheme", "http"), (":path", path),
               (":authority", "localhost"), ("content-type", "application/grpc"),
               ("te", "trailers")]
    if timeout:
        headers.append(("grpc-timeout", timeout))
    body = b"\x00" + struct.pack(">I", len(message)) + message
    return h2_frame(1, 0x4, stream, hpack_literal(headers)) + h2_frame(0, 0x1, stream, body)


def raw_connect(path, timeout=5):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(path)
    except OSError:
        s.close()
        raise
    return s


def read_until_closed(sock, timeout=5):
    """Reads until EOF; returns the bytes, or None when still open after timeout."""
    sock.settimeout(timeout)
    data = b""
    deadline = time.time() + timeout
    try:
        while time.time() < deadline:
            chunk = sock.recv(65536)
            if not chunk:
                return data
            data += chunk
    except socket.timeout:
        return None
    except ConnectionResetError:
        return data
    return None


def tempdir():
    return tempfile.TemporaryDirectory(prefix="dralet-it-")
