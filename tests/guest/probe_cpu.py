#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""CPU time of loading and unloading each RoCE driver (issue 16, a
diagnostic for `make bench`'s probe/remove CPU row; not part of any plan).

    python3 /opt/hns/probe_cpu.py dev|nodev ROUNDS SETTLE_MS

Each round loads and unloads C, Rust, C, Rust. `dev`: hns_sim is loaded
with its devices; after the load it waits for /sys/class/infiniband/hns_0,
then SETTLE_MS (0 unloads at once, as bench_probe.py does). `nodev`: no
device (rmmod hns_sim first), so only the module itself is loaded and
unloaded. One line per cycle:

    PC <mode> <c|rs> load_us=<cpu> unload_us=<cpu> vcsw=<load>,<unload>

cpu: user + system time of modprobe/insmod/rmmod from wait4(); vcsw: their
voluntary context switches. Boot with the release module
(HNS_MODULE_DIR=build/module): the KUnit build runs its suites at insmod.
"""
import os
import sys
import time

# The same commands and sysfs name as the bench's probe part.
from bench_probe import LOAD, SYSFS, UNLOAD


def run(argv):
    """Runs argv; (exit status, CPU µs, voluntary context switches)."""
    pid = os.posix_spawnp(argv[0], argv, os.environ)
    _, status, ru = os.wait4(pid, 0)
    cpu = int((ru.ru_utime + ru.ru_stime) * 1e6)
    return os.waitstatus_to_exitcode(status), cpu, ru.ru_nvcsw


def main():
    mode, rounds, settle = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    if mode not in ("dev", "nodev"):
        sys.exit(f"mode must be dev or nodev (got {mode!r})")
    for _ in range(rounds):
        for drv in ("c", "rs", "c", "rs"):
            rc, load, lv = run(LOAD[drv])
            if rc != 0:
                sys.exit(f"{' '.join(LOAD[drv])}: exit {rc}")
            if mode == "dev":
                deadline = time.monotonic() + 30
                while not os.path.exists(SYSFS):
                    if time.monotonic() > deadline:
                        sys.exit(f"{SYSFS} absent 30 s after {' '.join(LOAD[drv])}")
                    time.sleep(0.001)
            time.sleep(settle / 1000)
            rc, unload, uv = run(UNLOAD[drv])
            if rc != 0:
                sys.exit(f"{' '.join(UNLOAD[drv])}: exit {rc}")
            print(f"PC {mode} {drv} load_us={load} unload_us={unload} vcsw={lv},{uv}", flush=True)
            time.sleep(0.2)


if __name__ == "__main__":
    main()
