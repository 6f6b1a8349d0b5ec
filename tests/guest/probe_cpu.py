#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""CPU time of loading and unloading each RoCE driver (a
diagnostic for `make bench`'s probe/remove CPU row; not part of any plan).

    python3 /opt/hns/probe_cpu.py dev|nodev ROUNDS SETTLE_MS

Each round loads and unloads C, Rust, C, Rust. `dev`: hns_sim is loaded
with its devices; after the load it waits for /sys/class/infiniband/hns_0,
then SETTLE_MS (0 unloads at once, as bench_probe.py does). `nodev`: no
device (rmmod hns_sim first), so only the module itself is loaded and
unloaded. One line per cycle:

    PC <mode> <c|rs> load_us=<cpu> unload_us=<cpu> vcsw=<load>,<unload>
       unload_wall_us=<wall> irqs=<unload>

cpu: user + system time of modprobe/insmod/rmmod from wait4(); vcsw: their
voluntary context switches; irqs: interrupts the guest took while rmmod
ran (/proc/stat), whose handling is charged to the task they interrupt.
In `dev` mode each cycle starts and ends by writing `clear` to hns_sim's
`fault` parameter, which the model notes in every function's trace (`#
control: clear`): with hns-sim's `--trace-time`, scripts/trace-gaps.py
splits the trace into cycles there, and the end marker times the part of
the remove that sends the model nothing (after the function clear). Boot
with the release module (HNS_MODULE_DIR=build/module): the KUnit build
runs its suites at insmod.
"""
import os
import sys
import time

# The same commands and sysfs name as the bench's probe part.
from bench_probe import LOAD, UNLOAD, run, wait_sysfs


FAULT = "/sys/module/hns_sim/parameters/fault"


def interrupts():
    """Interrupts taken since boot, all CPUs and lines (/proc/stat)."""
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("intr "):
                return int(line.split()[1])
    return 0


def mark(mode):
    """A cycle's start or end in the model's traces (`dev` mode)."""
    if mode == "dev":
        with open(FAULT, "w") as f:
            f.write("clear")


def main():
    mode, rounds, settle = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    if mode not in ("dev", "nodev"):
        sys.exit(f"mode must be dev or nodev (got {mode!r})")
    for _ in range(rounds):
        for drv in ("c", "rs", "c", "rs"):
            mark(mode)
            rc, load, lv = run(LOAD[drv])
            if rc != 0:
                sys.exit(f"{' '.join(LOAD[drv])}: exit {rc}")
            if mode == "dev":
                wait_sysfs(True, LOAD[drv], time.monotonic_ns())
            time.sleep(settle / 1000)
            irq0, t0 = interrupts(), time.monotonic_ns()
            rc, unload, uv = run(UNLOAD[drv])
            wall, irqs = (time.monotonic_ns() - t0) // 1000, interrupts() - irq0
            if rc != 0:
                sys.exit(f"{' '.join(UNLOAD[drv])}: exit {rc}")
            mark(mode)
            print(
                f"PC {mode} {drv} load_us={load // 1000} unload_us={unload // 1000} vcsw={lv},{uv} "
                f"unload_wall_us={wall} irqs={irqs}",
                flush=True,
            )
            time.sleep(0.2)


if __name__ == "__main__":
    main()
