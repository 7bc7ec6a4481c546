#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# libudev, redirected into a materialized board by umockdev's preload
# library, enumerates pci, net, infiniband, infiniband_verbs, drm, block and
# vfio devices with the right PCI parents, drivers and device nodes, and
# stat() sees the nodes as char/block devices with the right numbers.
# (udevadm is statically tied to udevd, so a small C program built here
# does the enumerating.)
#   env: DRALET (absolute path of the binary; default build/dralet)
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
dralet=${DRALET:-$root/build/dralet}
preload=libumockdev-preload.so.0
cc=${CC:-cc}
if ! command -v "$cc" >/dev/null 2>&1 || ! pkg-config --exists libudev; then
    echo "needs a C compiler and libudev-dev"
    exit 77
fi
if ! ldconfig -p 2>/dev/null | grep -q "$preload"; then
    echo "needs umockdev ($preload)"
    exit 77
fi
[ -x "$dralet" ] || { echo "no dralet binary at $dralet"; exit 1; }

# trees are tens of thousands of tiny files: tmpfs when TMPDIR is unset
base=${TMPDIR:-}
if [ -z "$base" ] && [ -w /dev/shm ] &&
   [ "$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 {print $4}')" -ge 524288 ] 2>/dev/null; then
    base=/dev/shm
fi
tmp=$(mktemp -d "${base:-/tmp}/dralet-test-udev.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

cat >"$tmp/enumerate.c" <<'EOF'
/* Prints "subsystem sysname driver devnode pci-parent S_IFMT major:minor"
 * for every device of the subsystems named on the command line. */
#include <libudev.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

static const char *or_dash(const char *s) { return s && s[0] ? s : "-"; }

int main(int argc, char **argv)
{
	struct udev *u = udev_new();

	if (!u)
		return 1;
	for (int i = 1; i < argc; i++) {
		struct udev_enumerate *e = udev_enumerate_new(u);
		struct udev_list_entry *l;

		udev_enumerate_add_match_subsystem(e, argv[i]);
		udev_enumerate_scan_devices(e);
		udev_list_entry_foreach(l, udev_enumerate_get_list_entry(e)) {
			struct udev_device *d = udev_device_new_from_syspath(u, udev_list_entry_get_name(l));
			struct udev_device *p;
			const char *node;
			struct stat st;
			char type = '-', num[32] = "-";

			if (!d) {
				printf("%s %s unreadable\n", argv[i], udev_list_entry_get_name(l));
				continue;
			}
			p = udev_device_get_parent_with_subsystem_devtype(d, "pci", NULL);
			node = udev_device_get_devnode(d);
			if (node && stat(node, &st) == 0) {
				type = S_ISCHR(st.st_mode) ? 'c' : S_ISBLK(st.st_mode) ? 'b' : 'f';
				snprintf(num, sizeof(num), "%u:%u", major(st.st_rdev), minor(st.st_rdev));
			}
			printf("%s %s %s %s %s %c %s\n", argv[i], udev_device_get_sysname(d),
			       or_dash(udev_device_get_driver(d)), or_dash(node),
			       p ? udev_device_get_sysname(p) : "-", type, num);
			udev_device_unref(d);
		}
		udev_enumerate_unref(e);
	}
	udev_unref(u);
	return 0;
}
EOF
# shellcheck disable=SC2046
"$cc" -o "$tmp/enumerate" "$tmp/enumerate.c" $(pkg-config --cflags --libs libudev)

fail=0
for name in vm-like hgx-h100 e810 mi300x intel-max fpga-server edge-box; do
    dir=$tmp/$name
    sys=$dir/sys
    "$dralet" board materialize --quiet "$root/boards/$name.yaml" "$dir"
    UMOCKDEV_DIR=$dir LD_PRELOAD=$preload "$tmp/enumerate" \
        pci net infiniband infiniband_verbs drm block vfio >"$tmp/udev" 2>"$tmp/err" || {
        echo "FAIL $name: the enumerator failed:"; sed 's/^/    /' "$tmp/err"; fail=1; continue; }

    # what the plain tree says, worked out without libudev
    /usr/bin/python3 - "$sys" >"$tmp/want" <<'EOF'
import os, sys
root = sys.argv[1]
out = []
def pci_parent(path):
    up = os.path.dirname(path)
    while up.startswith(root + "/devices"):
        sub = os.path.join(up, "subsystem")
        if os.path.islink(sub) and os.path.basename(os.readlink(sub)) == "pci":
            return os.path.basename(up)
        up = os.path.dirname(up)
    return "-"
devs = os.path.join(root, "bus/pci/devices")
for bdf in os.listdir(devs):
    real = os.path.realpath(os.path.join(devs, bdf))
    drv = os.path.join(real, "driver")
    drv = os.path.basename(os.readlink(drv)) if os.path.islink(drv) else "-"
    out.append("pci %s %s - %s - -" % (bdf, drv, pci_parent(real)))
for cls in ("net", "infiniband", "infiniband_verbs", "drm", "block", "vfio"):
    cdir = os.path.join(root, "class", cls)
    if not os.path.isdir(cdir):
        continue
    for name in os.listdir(cdir):
        link = os.path.join(cdir, name)
        if not os.path.islink(link):
            continue
        real = os.path.realpath(link)
        node, kind, num = "-", "-", "-"
        if os.path.exists(os.path.join(real, "dev")):
            num = open(os.path.join(real, "dev")).read().strip()
            for line in open(os.path.join(real, "uevent")):
                if line.startswith("DEVNAME="):
                    node = "/dev/" + line.strip()[len("DEVNAME="):]
            kind = "b" if cls == "block" else "c"
        out.append("%s %s - %s %s %s %s" % (cls, name, node, pci_parent(real), kind, num))
print("\n".join(sorted(out)))
EOF
    LC_ALL=C sort "$tmp/udev" >"$tmp/got"
    LC_ALL=C sort -o "$tmp/want" "$tmp/want"
    if ! diff -u "$tmp/want" "$tmp/got" >"$tmp/diff"; then
        echo "FAIL $name: libudev under umockdev disagrees with the tree (tree -, libudev +):"
        head -30 "$tmp/diff" | sed 's/^/    /'; fail=1
        continue
    fi
    echo "ok   $name: $(awk '{print $1}' "$tmp/got" | sort | uniq -c | awk '{printf "%s %s, ", $1, $2}' | sed 's/, $//')"
    rm -rf "$dir"
done

[ $fail -eq 0 ] || exit 1
echo "libudev saw every board's devices with the right parents and nodes"
