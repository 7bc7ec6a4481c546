#!/usr/bin/python3
"""Checks `dralet pci -o json` from the VM: the HAL's facts on a real kernel.

   check_pci.py OUTPUT

OUTPUT holds two JSON documents separated by a line "---": the listing at boot, and the
one after 3 VFs of the NVMe PF were enabled (with sriov_drivers_autoprobe 0). Expected
addresses are those of tests/vm/README.md. Prints every mismatch; exits 1 if there was one.
"""
import json
import sys

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def by_address(doc):
    return {f.get("address"): f for f in doc.get("functions", [])}


def expect(funcs, address, **want):
    f = funcs.get(address)
    if f is None:
        fail("%s is not listed" % address)
        return
    for key, value in want.items():
        if f.get(key) != value:
            fail("%s: %s is %r, expected %r" % (address, key, f.get(key), value))


def main():
    with open(sys.argv[1]) as out:
        parts = out.read().split("\n---\n")
    if len(parts) != 2:
        fail("expected two listings separated by ---, got %d parts" % len(parts))
        return 1
    boot, with_vfs = (by_address(json.loads(p)) for p in parts)
    print("dralet pci listed %d functions at boot, %d with VFs" % (len(boot), len(with_vfs)))

    # Every function has an IOMMU group: the VM runs with intel_iommu=on.
    for address, f in sorted(boot.items()):
        if not isinstance(f.get("iommuGroup"), int):
            fail("%s has no iommuGroup" % address)

    root = dict(numaNode=1, localCPUs="1", pcieRoot="pci0000:20")
    expect(boot, "0000:20:00.0", portType="root-port", **root)
    expect(boot, "0000:21:00.0", portType="switch-upstream", parent="0000:20:00.0", **root)
    expect(boot, "0000:22:00.0", portType="switch-downstream", parent="0000:21:00.0",
           pcieSwitch="0000:21:00.0", **root)
    expect(boot, "0000:23:00.0", id="1b36:0010", driver="nvme", portType="endpoint",
           parent="0000:22:00.0", pcieSwitch="0000:21:00.0",
           sysfsPath="devices/pci0000:20/0000:20:00.0/0000:21:00.0/0000:22:00.0/0000:23:00.0",
           sriov={"totalVFs": 4, "numVFs": 0, "offset": 1, "stride": 1, "vfDevice": "0010"},
           **root)
    expect(boot, "0000:00:02.0", id="8086:10d3", driver="e1000e", pcieRoot="pci0000:00",
           net=["eth0"], infiniband=["rxe0"])
    expect(boot, "0000:00:01.0", id="1af4:1050", driver="virtio-pci", pcieRoot="pci0000:00")
    nodes = sorted(n.get("path") for n in boot.get("0000:00:01.0", {}).get("nodes", []))
    if nodes != ["/dev/dri/card0", "/dev/dri/renderD128"]:
        fail("0000:00:01.0: nodes are %r, expected card0 and renderD128" % nodes)
    vfs = [a for a in boot if a.startswith("0000:23:00.") and a != "0000:23:00.0"]
    if vfs:
        fail("VFs listed before sriov_numvfs was written: %s" % vfs)

    # After "echo 3 > sriov_numvfs": VFs under the same parent as the PF, no driver.
    pf = with_vfs.get("0000:23:00.0", {})
    if pf.get("sriov", {}).get("numVFs") != 3:
        fail("0000:23:00.0: sriov.numVFs is %r after enabling 3" % pf.get("sriov"))
    group = pf.get("iommuGroup")
    for i in range(3):
        expect(with_vfs, "0000:23:00.%d" % (i + 1), physfn="0000:23:00.0", vfIndex=i,
               parent="0000:22:00.0", pcieSwitch="0000:21:00.0", iommuGroup=group,
               driver=None, **root)
    if "0000:23:00.4" in with_vfs:
        fail("a fourth VF 0000:23:00.4 is listed although 3 were enabled")

    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("all HAL checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
