#!/usr/bin/python3
"""Checks `dralet discover -o json` from the VM against the emulated topology.

   check_discover.py OUTPUT

OUTPUT holds three documents separated by lines "---", all from one boot:
  1. `dralet discover -o json` at boot, default configuration;
  2. `dralet pci -o json` (what discovery did with each function: explains a missing device);
  3. `dralet discover --config sriov.yaml -o json` after 3 VFs of the NVMe PF were enabled,
     the config selecting that PF for the sriov backend (pfs: "0000:23:00.0").
Expected addresses are those of tests/vm/README.md. Attribute names without a domain
belong to the device's driver. Prints every mismatch and exits 1 if there was one.
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
    """The value of attribute `name` ({"int": 1} -> 1), or None when absent. A plain name
    is looked up as the driver's own attribute (no domain, or the driver's domain)."""
    attrs = dev.get("attributes", {})
    for key in (name, "%s/%s" % (dev.get("driver"), name)):
        if key in attrs:
            return next(iter(attrs[key].values()), None)
    return None


def expect_attr(dev, name, want):
    got = attr(dev, name)
    if got != want:
        fail("%s: attribute %s is %r, expected %r" % (dev.get("name"), name, got, want))


def expect_field(dev, name, want):
    if dev.get(name) != want:
        fail("%s: %s is %r, expected %r" % (dev.get("name"), name, dev.get(name), want))


def expect_topology(dev, address, numa, root, switch):
    """The attributes every PCI-backed device carries, from its function's topology."""
    expect_field(dev, "pciAddress", address)
    expect_attr(dev, "resource.kubernetes.io/pciBusID", address)
    expect_attr(dev, "resource.kubernetes.io/pcieRoot", root)
    expect_attr(dev, "numaNode", numa)
    expect_attr(dev, "pcieSwitch", switch)
    if attr(dev, "iommuGroup") is None:
        fail("%s: no iommuGroup although the VM runs with intel_iommu=on" % dev.get("name"))


def one(devices, what, address, pred):
    found = [d for d in devices if pred(d)]
    if len(found) != 1:
        note = pci_notes.get(address)
        fail("expected one device for %s %s, found %d%s" % (
            what, address, len(found), " (dralet pci: %s)" % note if note else ""))
    return found[:1]


def describe(title, devices):
    print("%s: %d devices" % (title, len(devices)))
    for d in devices:
        print("  %-24s kind=%-6s driver=%-18s pci=%s" % (
            d.get("name"), d.get("kind"), d.get("driver"), d.get("pciAddress")))


def check_pf(doc):
    """The SR-IOV NVMe PF behind the switch on the second root complex (NUMA node 1).
    PFs are not devices (nothing allocates an NVMe PF); discover reports them under
    "sriovPhysicalFunctions" with their topology and VF counts."""
    pfs = [p for p in doc.get("sriovPhysicalFunctions", []) if p.get("pciAddress") == NVME_PF]
    if len(pfs) != 1:
        fail("expected the NVMe PF %s in sriovPhysicalFunctions, found %d" % (NVME_PF, len(pfs)))
        return
    pf = pfs[0]
    for key, want in (("numaNode", 1), ("pcieRoot", PCIE_ROOT), ("pcieSwitch", SWITCH_USP),
                      ("totalVFs", 4), ("numVFs", 0), ("driver", "nvme")):
        if pf.get(key) != want:
            fail("NVMe PF: %s is %r, expected %r" % (key, pf.get(key), want))


def check_boot(devices):

    # Soft-RoCE rxe0 over eth0: its PCI parent is the e1000e function under eth0.
    for d in one(devices, "the RDMA device rxe0 on", NIC,
                 lambda d: d.get("kind") == "rdma" and attr(d, "ibDevice") == "rxe0"):
        expect_topology(d, NIC, None, "pci0000:00", None)
        expect_attr(d, "ifName", "eth0")
        expect_attr(d, "softRoCE", True)
        expect_attr(d, "linkLayer", "Ethernet")
        paths = [n.get("path") for n in d.get("deviceNodes", [])]
        if "/dev/infiniband/uverbs0" not in paths:
            fail("%s: no /dev/infiniband/uverbs0 among its nodes %s" % (d.get("name"), paths))

    # The virtio GPU on the first root complex.
    for g in one(devices, "the virtio GPU", GPU,
                 lambda d: d.get("kind") == "gpu" and d.get("pciAddress") == GPU):
        expect_topology(g, GPU, None, "pci0000:00", None)
        expect_attr(g, "vendorID", "0x1af4")
        expect_attr(g, "deviceID", "0x1050")
        paths = sorted(n.get("path") for n in g.get("deviceNodes", []))
        if paths != ["/dev/dri/card0", "/dev/dri/renderD128"]:
            fail("%s: device nodes are %s, expected card0 and renderD128" % (g.get("name"), paths))


def check_vfs(devices):
    # The PF's VFs, selected for the sriov backend: the NVMe functions' topology.
    for i in range(3):
        address = "0000:23:00.%d" % (i + 1)
        for vf in one(devices, "VF %d of the NVMe PF," % i, address,
                      lambda d, a=address: d.get("pciAddress") == a):
            expect_field(vf, "kind", "vf")
            expect_field(vf, "driver", "sriov.dralet.dev")
            expect_topology(vf, address, 1, PCIE_ROOT, SWITCH_USP)
            expect_attr(vf, "resource.kubernetes.io/numaNode", 1)
            expect_attr(vf, "vfID", i)
            expect_attr(vf, "pfPciAddress", NVME_PF)
            # The downstream port has no ACS: PF, VFs and port share one IOMMU group.
            expect_attr(vf, "vfioCapable", False)


def main():
    with open(sys.argv[1]) as f:
        parts = f.read().split("\n---\n")
    if len(parts) != 3:
        fail("expected three documents separated by ---, got %d" % len(parts))
        return 1
    boot, pci, with_vfs = (json.loads(p) for p in parts)
    check_pf(boot)
    for func in pci.get("functions", []):
        pci_notes[func.get("address")] = func.get("note")
    for title, doc, check in (("at boot", boot, check_boot),
                              ("with 3 VFs and pfs: 0000:23:00.0", with_vfs, check_vfs)):
        devices = doc.get("devices")
        if not isinstance(devices, list):
            fail("no \"devices\" list in the output %s" % title)
            continue
        describe("discover " + title, devices)
        check(devices)

    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("all discover checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
