#!/usr/bin/python3
"""Discovery benchmark: dralet discover vs lspci on the same simulated tree.

Runs both commands alternately (so machine noise hits both alike), several
times each, and prints the median wall time and the peak RSS of each, and
their ratios. Goals (issue 2): discovery at most 1.0x lspci's time, peak RSS
at most 8 MiB.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

RUNS = int(os.environ.get("BENCH_RUNS", "15"))


def run_once(argv):
    """Wall seconds and peak RSS (KiB) of one run of argv.

    The peak RSS comes from GNU time: a child forked from this Python
    process would inherit Python's own high-water mark across exec."""
    with tempfile.NamedTemporaryFile("r") as rss:
        start = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-o", rss.name, "-f", "%M"] + argv,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        elapsed = time.perf_counter() - start
        if proc.returncode != 0:
            sys.exit(f"benchmark command failed: {' '.join(argv)}")
        return elapsed, int(rss.read().split()[-1])


def main():
    dralet = os.environ["DRALET"]
    board = sys.argv[1] if len(sys.argv) > 1 else "boards/synthetic-1k.yaml"
    with tempfile.TemporaryDirectory() as tree:
        subprocess.run([dralet, "board", "materialize", board, tree], check=True)
        nfuncs = len(os.listdir(f"{tree}/sys/bus/pci/devices"))
        commands = {
            "dralet discover": [dralet, "discover", "--sysfs-root", f"{tree}/sys",
                                "--dev-root", f"{tree}/dev", "--proc-root", f"{tree}/proc",
                                "-o", "json"],
            "lspci -vmm -D -nn": ["lspci", "-vmm", "-D", "-nn", "-A", "linux-sysfs",
                                  "-O", f"sysfs.path={tree}/sys/bus/pci"],
        }
        times = {k: [] for k in commands}
        rss = {k: [] for k in commands}
        for name, argv in commands.items():      # warm the page cache
            run_once(argv)
        for _ in range(RUNS):
            for name, argv in commands.items():
                t, r = run_once(argv)
                times[name].append(t)
                rss[name].append(r)
    print(f"discovery on {board} ({nfuncs} PCI functions), median of {RUNS} runs")
    print(f"{'command':<22} {'time (ms)':>10} {'peak RSS (KiB)':>15}")
    med = {}
    for name in commands:
        med[name] = (statistics.median(times[name]) * 1000, max(rss[name]))
        print(f"{name:<22} {med[name][0]:>10.2f} {med[name][1]:>15d}")
    ratio = med["dralet discover"][0] / med["lspci -vmm -D -nn"][0]
    print(f"time ratio dralet/lspci: {ratio:.2f} (goal <= 1.00)")
    print(f"dralet peak RSS: {med['dralet discover'][1] / 1024:.2f} MiB (goal <= 8 MiB)")


if __name__ == "__main__":
    main()
