#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""`dralet run --board boards/fpga-server.yaml` programs a DFL port at prepare
through the board simulator's kernel model (boards/sim/board_node_ops.h), as
the e2e suite's simulatedBoard does: a GBS added to the store with `dralet
fpga add`, a claim whose FpgaConfig names it, prepared through the driver's
DRA socket (`dralet ctl prepare`). The CDI spec hands over the port node; the
port's afu_id in the simulated tree is the image's accelerator ID afterwards;
the agent logs the programming time; `dralet discover` on that tree shows
afuID and loadedBitstream; unprepare with onUnprepare keep leaves the image.
The board's Alveo U55C loads an xclbin the same way through the board XRT
(tests/lib/fake-xrt, option xrtLibrary), which the agent points at the
board's tree itself (FAKE_XRT_SYSFS, as the image's simulatedBoard needs): its
user PF's xclbinuuid is the image's UUID afterwards, and the published slice
shows it (xclbinUUID, loadedBitstream).
A second claim naming an image too large for the kubelet's deadline (at the
configured programming rate) is refused with the reason, nothing written."""
import json
import os
import re
import struct
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib.board_agent import BoardAgent, dralet_or_skip, fail, skip, test_lib  # noqa: E402
from lib.fpga_claim import DRIVER, fpga_claim as claim  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BOARD = os.path.join(REPO, "boards", "fpga-server.yaml")
NODE = "node-1"
PORT_DEV = "fpga-0000-5e-00-0-port0"   # the N6001's port, dfl-port.0 below dfl-fme.0
IFACE = "2f3b8c6e1d4a5b7c9e0f1a2b3c4d5e6f"  # its PR region's compat_id (the board's)
OLD_AFU = "00f5ea8b5a8d4c5fa9e9fe0c9e6a3a1c"
NEW_AFU = "f7df405cbd7acf7222f144b0b93acd18"
ALVEO_DEV = "fpga-0000-3b-00-1"        # the U55C's user PF
ALVEO_IFACE = "5a4ab2ef5c8b4d62a1e7f3d8b2c09e61"   # its mgmt PF's interface_uuids
NEW_XCLBIN = "7e0b3a1c5d2f4e6a8b9c0d1e2f3a4b5c"


def dashed(h):
    return "-".join((h[0:8], h[8:12], h[12:16], h[16:20], h[20:32]))


def gbs(path, iface, afu, pr_size):
    """An OPAE green bitstream (docs/fpga.md 1.2) whose PR data starts with
    the AFU ID's bytes: what the board model's FPGA loads as its afu_id."""
    meta = json.dumps({"version": 1, "afu-image": {
        "magic-no": 488605312, "interface-uuid": dashed(iface),
        "accelerator-clusters": [{"name": "nlb3", "total-contexts": 1,
                                  "accelerator-type-uuid": dashed(afu)}]}}).encode()
    pr = bytes.fromhex(afu) + bytes(i & 0xff for i in range(pr_size - 16))
    with open(path, "wb") as f:
        f.write(bytes.fromhex("58656f6e46504741b747425376303031") + struct.pack("<I", len(meta))
                + meta + pr)


def xclbin(path, iface, uuid):
    """An axlf (docs/fpga.md 1.3): the 456-byte header, no sections."""
    axlf = bytearray(4096)
    axlf[0:8] = b"xclbin2\0"
    axlf[304:312] = struct.pack("<Q", len(axlf))
    axlf[336:352] = bytes.fromhex(iface)
    axlf[352:352 + 31] = b"xilinx_u55c_gen3x16_xdma_base_3"
    axlf[416:432] = bytes.fromhex(uuid)
    with open(path, "wb") as f:
        f.write(axlf)


def main():
    dralet = dralet_or_skip()
    if not os.path.isfile(BOARD):
        skip("boards/fpga-server.yaml is not in the tree")
    fake_xrt = test_lib("fake-xrt")
    with BoardAgent(dralet, DRIVER, "dralet-fpga-run-", NODE) as agent:
        tmp, log = agent.tmp, agent.log
        bits = os.path.join(tmp, "bitstreams")
        gbs(os.path.join(tmp, "nlb3.gbs"), IFACE, NEW_AFU, 4096)
        # 3 MiB of PR data: 48 s at 64 KiB/s (below), more than programming may take
        # of the kubelet's 45 s
        gbs(os.path.join(tmp, "huge.gbs"), IFACE, "11112222333344445555666677778888", 3 << 20)
        xclbin(os.path.join(tmp, "vadd.xclbin"), ALVEO_IFACE, NEW_XCLBIN)
        for name, ext in (("nlb3", ".gbs"), ("huge", ".gbs"), ("vadd", ".xclbin")):
            r = subprocess.run([dralet, "fpga", "add", name, os.path.join(tmp, name + ext),
                                "--dir", bits], capture_output=True, text=True)
            if r.returncode != 0:
                fail("fpga add %s: %s" % (name, r.stderr))
        config = os.path.join(tmp, "config.yaml")
        with open(config, "w") as f:
            # the deadline is the kubelet's; the rate is set low so that 3 MiB
            # exceed it, and the 4 KiB of nlb3 do not (docs/fpga.md, "Programming time")
            f.write("backends:\n  dfl:\n    options:\n      bitstreamDir: %s\n"
                    "      programBytesPerSecond: \"65536\"\n"
                    "  xrt:\n    options:\n      bitstreamDir: %s\n      xrtLibrary: %s\n"
                    % (bits, bits, fake_xrt))
        env = dict(os.environ)
        env.pop("FAKE_XRT_SYSFS", None)   # the agent sets it for its board
        tree = agent.start_board(BOARD, config, env)
        afu_file = os.path.join(tree, "sys/bus/platform/devices/dfl-port.0/afu_id")
        with open(afu_file) as f:
            if f.read().strip() != OLD_AFU:
                fail("the board's port does not start with its own AFU")

        # a bitstream the kubelet's deadline cannot wait for: refused, nothing written
        big = claim("huge", "0c7f4a1e-0013-4b2d-8e3f-000000000002", PORT_DEV,
                    {"bitstream": {"name": "huge"}})
        rc, res = agent.prepare(big)
        if rc != 1 or "NodePrepareResources deadline" not in res.get("error", "") or \
                "65536 bytes/s (option programBytesPerSecond)" not in res["error"]:
            fail("a bitstream too slow to program: %d %r" % (rc, res), log)
        with open(afu_file) as f:
            if f.read().strip() != OLD_AFU:
                fail("the refused bitstream was written")

        c = claim("nlb3", "0c7f4a1e-0013-4b2d-8e3f-000000000001", PORT_DEV,
                  {"bitstream": {"name": "nlb3"}, "onUnprepare": "keep"})
        rc, res = agent.prepare(c)
        if rc != 0 or res.get("error"):
            fail("prepare: %d %r" % (rc, res), log)
        nodes, env_vars = agent.cdi_nodes_env(res["devices"][0]["cdiDeviceIds"])
        if "/dev/dfl-port.0" not in nodes:
            fail("the CDI spec hands over %r, not /dev/dfl-port.0" % nodes)
        if not any(e.endswith("_AFU_ID=" + NEW_AFU) for e in env_vars):
            fail("no AFU ID %s in the container's environment: %r" % (NEW_AFU, env_vars))
        with open(afu_file) as f:
            afu = f.read().strip()
        if afu != NEW_AFU:
            fail("the port shows %s after prepare, the image brings %s" % (afu, NEW_AFU), log)
        with open(log) as f:
            text = f.read()
        if not re.search(r"backend dfl: DFL port dfl-port.0 of 0000:5e:00.0: programmed "
                         r"bitstream [0-9a-f]{64} \(\d+ bytes\) for claim default/nlb3 in "
                         r"\d+\.\d{3} s", text):
            fail("the agent did not log the programming time", log)

        # the tree as it is now, discovered again: the loaded image is published
        r = subprocess.run([dralet, "discover", "--sysfs-root", tree + "/sys", "--dev-root",
                            tree + "/dev", "--proc-root", tree + "/proc", "--config", config,
                            "-o", "json"], capture_output=True, text=True, timeout=60)
        devs = {d["name"]: d for d in json.loads(r.stdout)["devices"]}
        attrs = devs[PORT_DEV]["attributes"]
        if attrs["afuID"]["string"] != NEW_AFU or \
                attrs.get("loadedBitstream", {}).get("string") != "nlb3":
            fail("discover: %r" % attrs)

        # the running agent discovers again after the programming: its published
        # slice shows the image (a selector can prefer the programmed region)
        def published(device=PORT_DEV, key="loadedBitstream"):
            return agent.published(device, key)
        agent.wait_until(lambda: published() == "nlb3",   # 60 s: a safety net, not a goal
                         lambda: "the published slice shows loadedBitstream %r, not nlb3"
                         % published(), 60)

        # the Alveo: the xclbin is loaded through the board XRT
        xfile = os.path.join(tree, "sys/bus/pci/devices/0000:3b:00.1/xclbinuuid")
        with open(xfile) as f:
            if f.read().strip() == NEW_XCLBIN:
                fail("the board's U55C starts with the image already")
        xc = claim("vadd", "0c7f4a1e-0013-4b2d-8e3f-000000000003", ALVEO_DEV,
                   {"bitstream": {"name": "vadd"}, "onUnprepare": "keep"})
        rc, res = agent.prepare(xc)
        if rc != 0 or res.get("error"):
            fail("prepare the xclbin: %d %r" % (rc, res), log)
        with open(xfile) as f:
            got = f.read().strip()
        if got != NEW_XCLBIN:
            fail("the U55C shows xclbinuuid %s after prepare, the image brings %s"
                 % (got, NEW_XCLBIN), log)
        _, env_vars = agent.cdi_nodes_env(res["devices"][0]["cdiDeviceIds"])
        if not any(e.endswith("_XCLBIN_UUID=" + NEW_XCLBIN) for e in env_vars):
            fail("no XCLBIN_UUID %s in the container's environment: %r"
                 % (NEW_XCLBIN, env_vars))
        agent.wait_until(lambda: published(ALVEO_DEV) == "vadd" and
                         published(ALVEO_DEV, "xclbinUUID") == NEW_XCLBIN,
                         lambda: "the published slice shows the U55C with %r / %r, not vadd / %s"
                         % (published(ALVEO_DEV), published(ALVEO_DEV, "xclbinUUID"), NEW_XCLBIN))
        r = agent.unprepare(xc)
        if r.returncode != 0:
            fail("unprepare the xclbin: %s %s" % (r.stdout, r.stderr), log)

        r = agent.unprepare(c)
        if r.returncode != 0:
            fail("unprepare: %s %s" % (r.stdout, r.stderr), log)
        with open(afu_file) as f:
            if f.read().strip() != NEW_AFU:
                fail("onUnprepare keep: the image did not stay")
        agent.stop()
        print("ok")


if __name__ == "__main__":
    main()
