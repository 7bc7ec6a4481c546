#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the seed corpora for tests/fuzz/fuzz_*.c (make -f tests/fuzz/fuzz.mk seeds).

  corpus/grpc_frame/   1 control byte (chunk size) + Length-Prefixed-Messages
  corpus/grpc_server/  2 control bytes (push-back period, split point) + HTTP/2
                       frames as a gRPC client sends them after the preface
"""
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from lib.kubelet import (h2_frame, h2_grpc_request, h2_settings, h2_window_update,  # noqa: E402
                         hpack_literal)


def msg(body, flag=0):
    return bytes([flag]) + struct.pack(">I", len(body)) + body


def write(dirname, name, data):
    d = Path(sys.argv[1]) / dirname
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data)


def frame_seeds():
    write("grpc_frame", "one", b"\x00" + msg(b"hello"))
    write("grpc_frame", "three", b"\x03" + msg(b"") + msg(b"abc") + msg(b"z" * 40))
    write("grpc_frame", "compressed", b"\x01" + msg(b"x", 1))
    write("grpc_frame", "oversize", b"\x05" + b"\x00\x00\x01\x00\x00")
    write("grpc_frame", "timeout", b"\x00" + b"44997970u")
    write("grpc_frame", "percent", b"\x02" + "100% \"done\"\n\u00e9".encode())


def request(stream, path, body=b"", timeout=None, ctype="application/grpc", end=True,
            flag=0):
    headers = [(":method", "POST"), (":scheme", "http"), (":path", path),
               (":authority", "/var/lib/kubelet/plugins_registry/x-reg.sock"),
               ("content-type", ctype), ("te", "trailers")]
    if timeout:
        headers.append(("grpc-timeout", timeout))
    return h2_frame(1, 0x4, stream, hpack_literal(headers)) + \
        h2_frame(0, 0x1 if end else 0, stream, msg(body, flag))


def server_seeds():
    s = h2_settings(initial_window_size=1 << 20)
    write("grpc_server", "echo", b"\x00\x10" + s + request(1, "/f.F/Echo", b"hi"))
    write("grpc_server", "hold_stream", b"\x02\x30" + s + h2_window_update(0, 1 << 20) +
          request(1, "/f.F/Hold", b"x", timeout="1m") + request(3, "/f.F/Stream", b"abcd"))
    write("grpc_server", "errors", b"\x00\x05" + s + request(1, "/f.F/Error", b"why") +
          request(3, "/f.F/Echo", b"z", flag=1) + request(5, "/nope/Nope") +
          request(7, "/f.F/Echo", b"j", ctype="application/json") +
          request(9, "/f.F/Echo", b"t", timeout="123456789S"))
    pings = b"".join(h2_frame(6, 0, 0, bytes(8)) for _ in range(4))
    write("grpc_server", "pings_reset", b"\x01\x07" + s + pings +
          request(1, "/f.F/Hold", b"x") + h2_frame(3, 0, 1, struct.pack(">I", 8)))
    hdrs = hpack_literal([(":method", "POST"), (":scheme", "http"), (":path", "/f.F/Echo"),
                          (":authority", "localhost"), ("content-type", "application/grpc")])
    write("grpc_server", "continuation", b"\x00\x20" + s + h2_frame(1, 0, 1, hdrs[:20]) +
          h2_frame(9, 0x4, 1, hdrs[20:]) + h2_frame(0, 1, 1, msg(b"cont")))
    write("grpc_server", "split_data", b"\x03\x40" + s + request(1, "/f.F/Echo", b"a" * 100,
                                                                  end=False)[:-50] +
          h2_frame(0, 1, 1, b"b" * 10))
    write("grpc_server", "goaway", b"\x00\x08" + s + request(1, "/f.F/Hold", b"") +
          h2_frame(7, 0, 0, struct.pack(">II", 1, 0)))


if __name__ == "__main__":
    frame_seeds()
    server_seeds()
