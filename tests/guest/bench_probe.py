#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Probe and remove times of a RoCE driver (make bench).

    python3 /opt/hns/bench_probe.py c|rs CYCLES

hns_sim must be loaded and no RoCE driver. Each cycle loads the driver
(c: modprobe hns-roce-hw-v2, rs: insmod hns_roce_rs.ko), waits until
/sys/class/infiniband/hns_0 exists, then unloads it (rmmod) and waits until
it is gone. One line per measurement:

    BP probe|remove <wall_ns> <cpu_ns>

wall: from the spawn of modprobe/insmod (rmmod) to the sysfs directory's
appearance (disappearance), polled every millisecond (a sleep of 1 ms
takes about 3 ms in this guest, which bounds the resolution). cpu: user +
system time of the modprobe/insmod/rmmod process from wait4(): the
driver's probe and remove run in that process's context (the hnae3 client
registration calls init_instance synchronously), so this is the kernel's
own cost of them, without the device's latency while the process sleeps.
After the last cycle the driver is loaded again (not measured) and left
loaded for the rest of the plan. Exit status 1 on any failure.
"""
import os
import sys
import time

SYSFS = "/sys/class/infiniband/hns_0"
LOAD = {
    "c": ["modprobe", "hns-roce-hw-v2"],
    "rs": ["insmod", "/opt/run/modules/hns_roce_rs.ko"],
}
UNLOAD = {"c": ["rmmod", "hns_roce_hw_v2"], "rs": ["rmmod", "hns_roce_rs"]}


def run(argv):
    """Runs argv; returns (exit status, CPU ns of the process, its
    voluntary context switches)."""
    pid = os.posix_spawnp(argv[0], argv, os.environ)
    _, status, ru = os.wait4(pid, 0)
    return (os.waitstatus_to_exitcode(status), int((ru.ru_utime + ru.ru_stime) * 1e9),
            ru.ru_nvcsw)


def wait_sysfs(present, argv, t0):
    """Waits for SYSFS to be present (or gone), polling every ms; exits if
    it is not 30 s after t0 (monotonic ns, when argv was started)."""
    deadline = t0 + 30 * 10**9
    while os.path.exists(SYSFS) != present:
        if time.monotonic_ns() > deadline:
            sys.exit(f"{SYSFS} {'absent' if present else 'present'} 30 s after {' '.join(argv)}")
        time.sleep(0.001)


def timed(argv, present):
    """Runs argv and waits for SYSFS to be present (or gone); (wall, cpu) in ns."""
    t0 = time.monotonic_ns()
    rc, cpu, _ = run(argv)
    if rc != 0:
        sys.exit(f"{' '.join(argv)}: exit {rc}")
    wait_sysfs(present, argv, t0)
    return time.monotonic_ns() - t0, cpu


def main():
    drv, cycles = sys.argv[1], int(sys.argv[2])
    if drv not in LOAD:
        sys.exit(f"driver must be c or rs (got {drv!r})")
    for _ in range(cycles):
        wall, cpu = timed(LOAD[drv], True)
        print(f"BP probe {wall} {cpu}", flush=True)
        wall, cpu = timed(UNLOAD[drv], False)
        print(f"BP remove {wall} {cpu}", flush=True)
    timed(LOAD[drv], True)


if __name__ == "__main__":
    main()
