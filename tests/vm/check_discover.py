#!/usr/bin/python3
"""Checks `dralet discover -o json` from the VM against the emulated topology.

   check_discover.py OUTPUT

OUTPUT is the discover JSON, optionally followed by a line "---" and `dralet pci -o json`
from the same boot: a missing device is then reported with what discovery did with its
function (the "note" of dralet pci, e.g. "no backend claims it").

The expected addresses are those of tests/vm/README.md. Attribute names without a domain
belong to the driver's domain, which may also be spelled out ("<domain>/numaNode"), so a
plain name matches either form. Prints every mismatch and exits 1 if there was one.
"""
import json
import sys

NVME_PF = "0000:23:00.0"
SWITCH_USP = "0000:21:00.0"
PCIE_ROOT = "pci0000:20"
NIC = "0000:00:02.0"
GPU = "0000:00:01.0"

failures = []
pci_notes = {}


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def attr(dev, name):
    """The value of attribute `name` ({"int": 1} -> 1), or None when absent."""
    for key, value in dev.get("attributes", {}).items():
        if key == name or ("/" not in name and key.rsplit("/", 1)[-1] == name
                           and not key.startswith("resource.kubernetes.io/")):
            return next(iter(value.values())) if isinstance(value, dict) and value else value
    return None


def strings(dev):
    """Every string the device carries: its name and its string attribute values."""
    out = [dev.get("name", "")]
    for value in dev.get("attributes", {}).values():
        out += [v for v in value.values() if isinstance(v, str)]
    return out


def missing(what, address, found):
    note = pci_notes.get(address)
    fail("expected one device for %s %s, found %d%s" % (
        what, address, found, " (dralet pci: %s)" % note if note else ""))


def expect_attr(dev, name, want):
    got = attr(dev, name)
    if got != want:
        fail("%s: attribute %s is %r, expected %r" % (dev.get("name"), name, got, want))


def describe(devices):
    for d in devices:
        print("  %-36s kind=%-10s driver=%-24s pci=%s" % (
            d.get("name"), d.get("kind"), d.get("driver"), d.get("pciAddress")))


def main():
    with open(sys.argv[1]) as f:
        parts = f.read().split("\n---\n")
    doc = json.loads(parts[0])
    if len(parts) > 1:
        for func in json.loads(parts[1]).get("functions", []):
            pci_notes[func.get("address")] = func.get("note") or "owned by %s" % func.get("backend")
    devices = doc.get("devices")
    if not isinstance(devices, list):
        fail("no \"devices\" list in the output")
        return 1
    print("discover reported %d devices:" % len(devices))
    describe(devices)

    # The SR-IOV NVMe PF behind the switch on the second root complex (NUMA node 1).
    pfs = [d for d in devices if d.get("pciAddress") == NVME_PF]
    if len(pfs) != 1:
        missing("the NVMe PF", NVME_PF, len(pfs))
    for pf in pfs:
        expect_attr(pf, "numaNode", 1)
        expect_attr(pf, "resource.kubernetes.io/pcieRoot", PCIE_ROOT)
        expect_attr(pf, "resource.kubernetes.io/pciBusID", NVME_PF)
        if attr(pf, "resource.kubernetes.io/numaNode") is not None:
            expect_attr(pf, "resource.kubernetes.io/numaNode", 1)
        expect_attr(pf, "pcieSwitch", SWITCH_USP)
        expect_attr(pf, "sriovTotalVFs", 4)
        expect_attr(pf, "vendorID", "0x1b36")
        expect_attr(pf, "deviceID", "0x0010")
        if attr(pf, "iommuGroup") is None:
            fail("%s: no iommuGroup although the VM runs with intel_iommu=on" % pf.get("name"))

    # Soft-RoCE rxe0 over eth0: its PCI parent is the e1000e function of the netdev.
    rdma = [d for d in devices if "rxe0" in strings(d)]
    if len(rdma) != 1:
        missing("the RDMA device rxe0 on", NIC, len(rdma))
    for d in rdma:
        if d.get("pciAddress") != NIC:
            fail("%s: pciAddress is %r, expected the e1000e function %s (rxe0's netdev eth0 "
                 "sits on it)" % (d.get("name"), d.get("pciAddress"), NIC))
        if "eth0" not in strings(d):
            fail("%s: no attribute names the netdev eth0; attributes: %s"
                 % (d.get("name"), json.dumps(d.get("attributes"))))

    # The virtio GPU on the first root complex.
    gpus = [d for d in devices if d.get("pciAddress") == GPU]
    if len(gpus) != 1:
        missing("the virtio GPU", GPU, len(gpus))
    for g in gpus:
        expect_attr(g, "resource.kubernetes.io/pcieRoot", "pci0000:00")
        expect_attr(g, "vendorID", "0x1af4")

    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("all discover checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
