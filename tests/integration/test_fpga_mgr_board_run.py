#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""`dralet run --board boards/zynqmp-kv260.yaml` loads a raw image into an SoC's
FPGA manager at prepare through the board simulator's kernel model
(boards/sim/board_node_fpga_mgr.c): the Xilinx kernel's firmware attribute,
the image copied under the firmware search path first (docs/fpga.md 4,
"fpga_manager").

  1. fpga0 (no PCI function) is published with loadMechanism firmware.
  2. An image built for another region is refused before anything is
     written: no file under the firmware search path, fpga0's flags and state
     as they were.
  3. With firmwareDir set but the kernel's search path (firmware_class's
     path parameter) elsewhere, the kernel cannot find the image: the prepare
     fails with the manager's state ("firmware request error").
  4. With the search path right, a claim naming the image is prepared: the
     image is on the search path, fpga0's flags are the manifest's, its state
     reads operating; the container gets the manager and accelerator; the
     agent logs the programming time; discover and the running agent's slice
     show loadedBitstream.
  5. Unprepare with onUnprepare keep leaves the image.
  6. An image the FPGA refuses fails the prepare with the kernel's status
     text, and the previous image is put back (state operating again)."""
import json
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib.board_agent import BoardAgent, dralet_or_skip, fail  # noqa: E402
from lib.fpga_claim import DRIVER, fpga_claim  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BOARD = os.path.join(REPO, "boards", "zynqmp-kv260.yaml")
NODE = "node-1"
DEV = "fpga-fpga0"
IFACE = "6b7c2d4e8f1a3b5c9d0e2f4a6b8c1d3e"  # region0's compat_id (the board's)
ACCEL = "a1b2c3d4e5f60718293a4b5c6d7e8f90"
BAD_ACCEL = "0badbadbadbadbadbadbadbadbadbad0"


def add_raw(dralet, bits, tmp, name, size, manifest):
    path = os.path.join(tmp, name + ".bin")
    with open(path, "wb") as f:
        f.write(name.encode() + bytes((i * 7) & 0xff for i in range(size - len(name))))
    r = subprocess.run([dralet, "fpga", "add", name, path, "--dir", bits],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail("fpga add %s: %s" % (name, r.stderr))
    with open(os.path.join(bits, "index.json")) as f:
        sha = json.load(f)[name]
    with open(os.path.join(bits, sha + ".json"), "w") as f:
        json.dump(manifest, f)
    return sha


def claim(name, uid, config):
    """A claim for fpga0 with the FpgaConfig fields CONFIG."""
    return fpga_claim(name, uid, DEV, config, NODE)


def main():
    dralet = dralet_or_skip()
    with BoardAgent(dralet, DRIVER, "dralet-fpga-mgr-", NODE) as agent:
        tmp, log = agent.tmp, agent.log
        bits, fw = os.path.join(tmp, "bitstreams"), os.path.join(tmp, "firmware")
        os.makedirs(fw)
        sha = add_raw(dralet, bits, tmp, "accel", 4096,
                      {"interfaceID": IFACE, "acceleratorID": ACCEL, "flags": "1"})
        add_raw(dralet, bits, tmp, "other", 4096,
                {"interfaceID": "11112222333344445555666677778888", "acceleratorID": ACCEL})
        # 8 bytes: the simulated FPGA refuses it (write error)
        add_raw(dralet, bits, tmp, "short", 8, {"interfaceID": IFACE, "acceleratorID": BAD_ACCEL})
        config = os.path.join(tmp, "config.yaml")
        with open(config, "w") as f:
            f.write("backends:\n  fpga-region:\n    options:\n      bitstreamDir: %s\n"
                    "      firmwareDir: %s\n" % (bits, fw))
        tree = agent.start_board(BOARD, config)
        mgr = os.path.join(tree, "sys/class/fpga_manager/fpga0")

        def attr(name):
            with open(os.path.join(mgr, name)) as f:
                return f.read().strip()

        def published(key):
            return agent.published(DEV, key)

        # 1. published, the way the kernel offers
        agent.wait_until(lambda: published("loadMechanism") == "firmware",
                         lambda: "fpga0 is not published with loadMechanism firmware: %r"
                         % published("loadMechanism"))

        # 2. built for another region: refused, nothing written
        rc, res = agent.prepare(claim("other", "6a1f0c2e-0013-4b2d-8e3f-000000000001",
                                {"bitstream": {"name": "other"}}))
        if rc != 1 or "was built for interface 11112222333344445555666677778888" not in \
                res.get("error", ""):
            fail("an image for another region: %d %r" % (rc, res), log)
        if os.listdir(fw) or attr("flags") != "0" or attr("state") != "unknown":
            fail("the refused image was written: %r, flags %s, state %s"
                 % (os.listdir(fw), attr("flags"), attr("state")))

        # 3. the kernel's search path is not firmwareDir: it cannot find the image
        rc, res = agent.prepare(claim("lost", "6a1f0c2e-0013-4b2d-8e3f-000000000002",
                                {"bitstream": {"name": "accel"}}))
        err = res.get("error", "")
        if rc != 1 or "did not find dralet-%s.bin on its firmware search path" % sha[:16] not in err or \
                'the manager reads state "firmware request error"' not in err:
            fail("an image the kernel cannot find: %d %r" % (rc, res), log)

        # 4. the search path right: loaded
        with open(os.path.join(tree, "sys/module/firmware_class/parameters/path"), "w") as f:
            f.write(fw)
        c = claim("accel", "6a1f0c2e-0013-4b2d-8e3f-000000000003",
                  {"bitstream": {"name": "accel"}, "onUnprepare": "keep"})
        rc, res = agent.prepare(c)
        if rc != 0 or res.get("error"):
            fail("prepare: %d %r" % (rc, res), log)
        if not os.path.isfile(os.path.join(fw, "dralet-%s.bin" % sha[:16])):
            fail("the image is not under the firmware search path: %r" % os.listdir(fw))
        if attr("state") != "operating" or attr("flags") != "1":
            fail("fpga0 after the load: state %s, flags %s" % (attr("state"), attr("flags")))
        _, env_vars = agent.cdi_nodes_env(res["devices"][0]["cdiDeviceIds"])
        for want in ("_MANAGER=fpga0", "_ACCELERATOR_ID=" + ACCEL, "_BITSTREAM_SHA256=" + sha):
            if not any(e.endswith(want) for e in env_vars):
                fail("no %s in the container's environment: %r" % (want, env_vars))
        with open(log) as f:
            if not re.search(r"backend fpga-region: fpga_manager fpga0: programmed bitstream "
                             + sha + r" \(4096 bytes\) for claim default/accel in \d+\.\d{3} s",
                             f.read()):
                fail("the agent did not log the programming time", log)
        r = subprocess.run([dralet, "discover", "--sysfs-root", tree + "/sys", "--dev-root",
                            tree + "/dev", "--proc-root", tree + "/proc", "--config", config,
                            "-o", "json"], capture_output=True, text=True, timeout=60)
        attrs = {d["name"]: d for d in json.loads(r.stdout)["devices"]}[DEV]["attributes"]
        if attrs.get("loadedBitstream", {}).get("string") != "accel" or \
                attrs.get("acceleratorID", {}).get("string") != ACCEL:
            fail("discover: %r" % attrs)
        agent.wait_until(lambda: published("loadedBitstream") == "accel",
                         lambda: "the published slice shows loadedBitstream %r"
                         % published("loadedBitstream"))

        # 5. keep
        r = agent.unprepare(c)
        if r.returncode != 0:
            fail("unprepare: %s %s" % (r.stdout, r.stderr), log)
        if attr("state") != "operating" or \
                open(os.path.join(fw, "dralet-fpga0.loaded")).read().strip() != sha:
            fail("onUnprepare keep: the image did not stay")
        # 6. the FPGA refuses an image: the kernel's status, the previous image back
        rc, res = agent.prepare(claim("short", "6a1f0c2e-0013-4b2d-8e3f-000000000004",
                                {"bitstream": {"name": "short"}}))
        err = res.get("error", "")
        if rc != 1 or "reconfig incompatible image" not in err or \
                'state "write error"' not in err or "put back as it was" not in err:
            fail("an image the FPGA refuses: %d %r" % (rc, res), log)
        if attr("state") != "operating" or attr("status"):
            fail("fpga0 after putting it back: state %s, status %r"
                 % (attr("state"), attr("status")))

        agent.stop()
        print("ok")


if __name__ == "__main__":
    main()
