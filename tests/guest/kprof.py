#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Where the CPU time of loading or unloading each RoCE driver goes, by
kernel function (a diagnostic for `make bench`'s probe/remove
CPU row; not part of any plan).

    python3 /opt/hns/kprof.py load|unload ROUNDS [PERIOD_US]

A sampling profiler without the perf tool: perf_event_open(2) on the
modprobe/insmod/rmmod process (software CPU clock, kernel side only, with
the kernel call chain), read from the event's ring buffer and named from
/proc/kallsyms (read while the driver is loaded, so its own functions are
named). The test kernel has no high-resolution timers, so the clock's
timer fires on the 4 ms tick however short PERIOD_US (default 100) is: a
sample is the tick's view of what ran, as the kernel's own CPU accounting
is, and each function's time is its share of the samples times the
process's CPU time (wait4). Each round profiles C, then Rust. Prints per
driver the CPU time by leaf function, by function on the chain
(inclusive) and with the driver's module on the chain; then the
functions whose inclusive time differs most between the two drivers.
Boot with the release module (HNS_MODULE_DIR=build/module) and hns_sim's
devices (`--sim 2`): `make kprof`.
"""
import bisect
import collections
import ctypes
import mmap
import os
import struct
import sys
import time

from bench_probe import LOAD, UNLOAD, wait_sysfs

MODULE = {"c": "hns_roce_hw_v2", "rs": "hns_roce_rs"}
NR_PERF_EVENT_OPEN = 298  # x86_64
PERF_TYPE_SOFTWARE = 1
PERF_COUNT_SW_CPU_CLOCK = 0
PERF_SAMPLE_IP = 1 << 0
PERF_SAMPLE_CALLCHAIN = 1 << 5
PERF_RECORD_LOST = 2
PERF_RECORD_SAMPLE = 9
PERF_CONTEXT_MAX = 2**64 - 4095  # callchain context markers are above this
# perf_event_attr flag bits
DISABLED, EXCLUDE_USER, EXCLUDE_HV, ENABLE_ON_EXEC = 1 << 0, 1 << 4, 1 << 6, 1 << 12
EXCLUDE_CALLCHAIN_USER = 1 << 22
PAGES = 512  # ring buffer data pages (2 MiB)

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def perf_open(pid, period_ns):
    """A disabled CPU-clock sampling event on pid, enabled at its exec."""
    attr = bytearray(128)
    struct.pack_into("<IIQQQQQ", attr, 0, PERF_TYPE_SOFTWARE, 128, PERF_COUNT_SW_CPU_CLOCK,
                     period_ns, PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN, 0,
                     DISABLED | EXCLUDE_USER | EXCLUDE_HV | ENABLE_ON_EXEC | EXCLUDE_CALLCHAIN_USER)
    buf = (ctypes.c_char * len(attr)).from_buffer(attr)
    fd = libc.syscall(NR_PERF_EVENT_OPEN, buf, pid, -1, -1, 0)
    if fd < 0:
        e = ctypes.get_errno()
        sys.exit(f"perf_event_open: {os.strerror(e)}")
    return fd


def profile(argv, period_ns):
    """Runs argv under the profiler; (exit status, CPU µs, [(ip, chain)], lost)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(w)
        os.read(r, 1)
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    os.close(r)
    fd = perf_open(pid, period_ns)
    ring = mmap.mmap(fd, (1 + PAGES) * mmap.PAGESIZE, mmap.MAP_SHARED,
                     mmap.PROT_READ | mmap.PROT_WRITE)
    os.write(w, b"x")
    os.close(w)
    _, status, ru = os.wait4(pid, 0)
    head, = struct.unpack_from("<Q", ring, 1024)
    off, size = struct.unpack_from("<QQ", ring, 1040)
    if off == 0:
        off, size = mmap.PAGESIZE, PAGES * mmap.PAGESIZE
    data = ring[off:off + size]
    samples, lost, pos = [], 0, 0
    if head > size:
        sys.exit(f"ring buffer wrapped ({head} bytes > {size}): raise PAGES or PERIOD_US")
    while pos < head:
        typ, _, rsize = struct.unpack_from("<IHH", data, pos)
        if rsize == 0:
            break
        if typ == PERF_RECORD_SAMPLE:
            ip, nr = struct.unpack_from("<QQ", data, pos + 8)
            chain = struct.unpack_from(f"<{nr}Q", data, pos + 24)
            samples.append((ip, [a for a in chain if a < PERF_CONTEXT_MAX]))
        elif typ == PERF_RECORD_LOST:
            lost += struct.unpack_from("<Q", data, pos + 16)[0]
        pos += rsize
    ring.close()
    os.close(fd)
    cpu = int((ru.ru_utime + ru.ru_stime) * 1e6)
    return os.waitstatus_to_exitcode(status), cpu, samples, lost


class Symbols:
    """/proc/kallsyms as it is now: text symbols by address."""

    def __init__(self):
        syms = []
        with open("/proc/kallsyms") as f:
            for line in f:
                p = line.split()
                if len(p) >= 3 and p[1] in "tTwW":
                    mod = p[3].strip("[]") if len(p) > 3 else ""
                    syms.append((int(p[0], 16), p[2], mod))
        syms.sort()
        if not syms or syms[-1][0] == 0:
            sys.exit("/proc/kallsyms shows no addresses (kptr_restrict?)")
        self.addrs = [s[0] for s in syms]
        self.syms = syms

    def name(self, ip):
        """(function, module) of ip."""
        i = bisect.bisect_right(self.addrs, ip) - 1
        if i < 0:
            return ("?", "")
        _, name, mod = self.syms[i]
        return (short(name), mod)


def short(name):
    """A Rust v0 symbol's last two identifiers (`_RNv...` is unreadable)."""
    if not name.startswith("_R"):
        return name
    ids, i = [], 2
    while i < len(name):
        if name[i].isdigit():
            j = i
            while j < len(name) and name[j].isdigit():
                j += 1
            n = int(name[i:j])
            if j < len(name) and name[j] == "_":
                j += 1
            ident = name[j:j + n]
            if not ident.startswith("Cs") and ident:
                ids.append(ident)
            i = j + n
        else:
            i += 1
    return "rs::" + "::".join(ids[-2:]) if ids else name


def step(argv, profiled, present, period_ns):
    """Runs argv, under the profiler if `profiled`, and waits for SYSFS to
    be present (or gone); the profile's (CPU µs, samples, lost), or None."""
    if profiled:
        rc, *prof = profile(argv, period_ns)
    else:
        rc, prof = os.spawnvp(os.P_WAIT, argv[0], argv), None
    if rc != 0:
        sys.exit(f"{' '.join(argv)}: exit {rc}")
    wait_sysfs(present, argv, time.monotonic_ns())
    return prof


def unthrottle(period_us):
    """Lets every sample through: the kernel lowers the sample rate when
    sampling takes long, which it does under TCG."""
    # The kernel refuses a new rate while the percentage is 0 (or 100), as
    # an earlier run in the same boot leaves it: back to its default first.
    for name, value in (("perf_cpu_time_max_percent", "25"),
                        ("perf_event_max_sample_rate", str(max(1000, 2 * 1000000 // period_us))),
                        ("perf_cpu_time_max_percent", "0")):
        with open(f"/proc/sys/kernel/{name}", "w") as f:
            f.write(value)


def main():
    what, rounds = sys.argv[1], int(sys.argv[2])
    period_us = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    if what not in ("load", "unload"):
        sys.exit(f"what must be load or unload (got {what!r})")
    unthrottle(period_us)
    drivers = ("c", "rs")
    leaf = {d: collections.Counter() for d in drivers}
    incl = {d: collections.Counter() for d in drivers}
    in_mod = {d: 0 for d in drivers}
    total = {d: 0 for d in drivers}
    cpu = {d: [] for d in drivers}
    lost = {d: 0 for d in drivers}
    for _ in range(rounds):
        for d in drivers:
            # The driver's symbols are read while it is loaded: after a
            # profiled load, before a profiled unload.
            p = step(LOAD[d], what == "load", True, period_us * 1000)
            syms = Symbols()
            c, samples, lo = step(UNLOAD[d], what == "unload", False, period_us * 1000) or p
            cpu[d].append(c)
            lost[d] += lo
            for ip, chain in samples:
                total[d] += 1
                leaf[d][syms.name(ip)] += 1
                names = {syms.name(a) for a in chain} | {syms.name(ip)}
                for n in names:
                    incl[d][n] += 1
                if any(m == MODULE[d] for _, m in names):
                    in_mod[d] += 1
            time.sleep(0.2)
    # ms a cycle that one sample stands for: the mean CPU time of a cycle
    # shared out over its samples.
    ms = {d: sum(cpu[d]) / 1000 / max(1, total[d]) / rounds for d in drivers}

    def fmt(n):
        return f"{n[0]}{' [' + n[1] + ']' if n[1] else ''}"

    for d in drivers:
        cpus = sorted(cpu[d])
        print(f"KP {d}: {what} CPU mean {sum(cpus) / len(cpus) / 1000:.1f} ms, median "
              f"{cpus[len(cpus) // 2] / 1000:.1f} ms; {total[d]} samples in {rounds} cycles; "
              f"{in_mod[d] * ms[d]:.1f} ms a cycle with {MODULE[d]} on the chain; lost {lost[d]}")
        print(f"KP {d}: leaf functions, ms a cycle:")
        for n, k in leaf[d].most_common(25):
            print(f"KP {d}   {k * ms[d]:7.2f}  {fmt(n)}")
        print(f"KP {d}: inclusive, ms a cycle:")
        for n, k in incl[d].most_common(50):
            print(f"KP {d}   {k * ms[d]:7.2f}  {fmt(n)}")
    keys = set(incl["c"]) | set(incl["rs"])
    diff = sorted((incl["rs"][k] * ms["rs"] - incl["c"][k] * ms["c"], k) for k in keys)
    for title, rows in (("rs - c, ms a cycle (largest first)", diff[::-1][:30]),
                        ("c - rs", diff[:20])):
        print(f"KP inclusive, {title}:")
        for v, k in rows:
            print(f"KP   {v:+7.2f}  c {incl['c'][k] * ms['c']:7.2f}  "
                  f"rs {incl['rs'][k] * ms['rs']:7.2f}  {fmt(k)}")


if __name__ == "__main__":
    main()
