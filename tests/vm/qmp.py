#!/usr/bin/python3
"""Sends one QMP command to a QEMU monitor socket and prints the reply.

   qmp.py SOCKET '{"execute": "device_del", "arguments": {"id": "nvme0"}}'

Asynchronous events that arrive before the reply are skipped. Exit status 1 when QEMU
answers with an error.
"""
import json
import socket
import sys


def main():
    path, command = sys.argv[1], json.loads(sys.argv[2])
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(30)
    sock.connect(path)
    stream = sock.makefile("rw")

    def reply():
        while True:
            msg = json.loads(stream.readline())
            if "event" not in msg:
                return msg

    json.loads(stream.readline())  # greeting
    stream.write(json.dumps({"execute": "qmp_capabilities"}) + "\n")
    stream.flush()
    reply()
    stream.write(json.dumps(command) + "\n")
    stream.flush()
    answer = reply()
    print(json.dumps(answer))
    return 1 if "error" in answer else 0


if __name__ == "__main__":
    sys.exit(main())
