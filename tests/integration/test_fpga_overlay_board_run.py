#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""`dralet run --board` on an SoC whose kernel has no fpga_manager firmware
attribute but configfs device-tree overlays (boards/zynqmp-kv260.yaml without
`firmware: true`): a claim naming a raw image whose manifest names an overlay
is loaded by applying the overlay (docs/fpga.md 4, "fpga_manager"): the item
dralet-fpga0 reads applied, fpga0 operating, the slice shows loadedBitstream;
unprepare with onUnprepare reset removes the overlay and the slice no longer
shows the image."""
import os
import struct
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib.board_agent import BoardAgent, dralet_or_skip, fail  # noqa: E402
from test_fpga_mgr_board_run import (ACCEL, BOARD, DRIVER, DEV, IFACE, NODE,  # noqa: E402
                                     add_raw, claim)


def dtbo(firmware_name):
    """A flattened device tree (the Devicetree Specification's DTB format)
    whose root node carries firmware-name."""
    strings = b"firmware-name\0"
    value = firmware_name.encode() + b"\0"
    pad = (4 - len(value) % 4) % 4
    st = (struct.pack(">I", 1) + b"\0\0\0\0"
          + struct.pack(">III", 3, len(value), 0) + value + b"\0" * pad
          + struct.pack(">II", 2, 9))
    off_struct = 40 + 16
    off_strings = off_struct + len(st)
    total = off_strings + len(strings)
    header = struct.pack(">10I", 0xd00dfeed, total, off_struct, off_strings, 40, 17, 16, 0,
                         len(strings), len(st))
    return header + b"\0" * 16 + st + strings


def main():
    dralet = dralet_or_skip()
    with BoardAgent(dralet, DRIVER, "dralet-fpga-overlay-", NODE) as agent:
        tmp, log = agent.tmp, agent.log
        board = os.path.join(tmp, "soc-overlays.yaml")
        with open(BOARD) as f:
            text = f.read()
        if ", firmware: true}" not in text:
            fail("boards/zynqmp-kv260.yaml changed: no 'firmware: true' to take away")
        with open(board, "w") as f:
            f.write(text.replace(", firmware: true}", "}"))
        bits, fw = os.path.join(tmp, "bitstreams"), os.path.join(tmp, "firmware")
        os.makedirs(fw)
        sha = add_raw(dralet, bits, tmp, "design", 2048,
                      {"interfaceID": IFACE, "acceleratorID": ACCEL,
                       "overlay": "design.dtbo", "firmwareName": "design.bin"})
        with open(os.path.join(bits, "design.dtbo"), "wb") as f:
            f.write(dtbo("design.bin"))
        config = os.path.join(tmp, "config.yaml")
        with open(config, "w") as f:
            f.write("backends:\n  fpga-region:\n    options:\n      bitstreamDir: %s\n"
                    "      firmwareDir: %s\n" % (bits, fw))
        tree = agent.start_board(board, config)
        with open(os.path.join(tree, "sys/module/firmware_class/parameters/path"), "w") as f:
            f.write(fw)
        item = os.path.join(tree, "sys/kernel/config/device-tree/overlays/dralet-fpga0")

        def published(key):
            return agent.published(DEV, key)

        def wait_for(key, want):
            agent.wait_until(lambda: published(key) == want,
                             lambda: "the slice shows %s %r, not %r" % (key, published(key), want))

        wait_for("loadMechanism", "overlay")
        c = claim("design", "7b2e1d3f-0013-4b2d-8e3f-000000000001",
                  {"bitstream": {"name": "design"}, "onUnprepare": "reset"})
        rc, res = agent.prepare(c)
        if rc != 0 or res.get("error"):
            fail("prepare: %d %r" % (rc, res), log)
        with open(os.path.join(item, "status")) as f:
            if f.read().strip() != "applied":
                fail("the overlay item does not read applied")
        with open(os.path.join(tree, "sys/class/fpga_manager/fpga0/state")) as f:
            if f.read().strip() != "operating":
                fail("fpga0 is not operating after the overlay")
        for name in ("design.bin", "design.dtbo", "dralet-fpga0.loaded"):
            if not os.path.isfile(os.path.join(fw, name)):
                fail("%s is not under the firmware search path: %r" % (name, os.listdir(fw)))
        wait_for("loadedBitstream", "design")
        r = agent.unprepare(c)
        if r.returncode != 0:
            fail("unprepare: %s %s" % (r.stdout, r.stderr), log)
        if os.path.exists(item):
            fail("onUnprepare reset: the overlay item is still there")
        wait_for("loadedBitstream", None)
        agent.stop()
        print("ok %s" % sha[:12])


if __name__ == "__main__":
    main()
