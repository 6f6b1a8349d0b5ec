#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Completion-interrupt figures from a trace (make bench, part ceq).

    python3 /opt/hns/ceq_trace.py TSC_MHZ [TRACE] < trace

Reads the text of /sys/kernel/tracing/trace recorded with trace_clock
x86-tsc (timestamps in TSC cycles: the other clocks print microseconds,
too coarse for a handler of a few microseconds) with these events:

  irq:irq_handler_entry/exit   filtered to the RoCE drivers' CEQ vectors
                               (names hns-<pci>-ceq-<n>)
  workqueue:workqueue_execute_start/end
                               all of them; only the CEQ work counts (C's
                               hns_roce_ceq_work, the Rust driver's
                               rdma_shim_ceq_work, both BH work items)
  sched:sched_waking           filtered to the perftest processes

Per CEQ interrupt, in order of time:

  irq    its hard interrupt: irq_handler_exit - irq_handler_entry
  bh     the CEQ work's run that follows it, before the next interrupt
         (execute_end - execute_start of the CEQ work; none when the
         driver walks the CEQ in the hard interrupt)
  total  irq + bh: the CPU time the CEQ walk costs per interrupt
  wake   irq_handler_entry to the first sched_waking of a perftest
         process after it, before the next interrupt: the completion
         handler of uverbs (ib_uverbs_comp_handler) wakes the process
         sleeping in ibv_get_cq_event, so this is the time from the
         interrupt to the ULP's completion handler

Prints "<metric>_<p50|p99|max> <ns>" per metric that has samples (nearest
rank percentiles, nanoseconds from TSC_MHZ, the kernel's refined TSC
calibration) and one line "CEQN irq=<n> bh=<n> wake=<n>".
"""
import math
import re
import sys

LINE = re.compile(r"\]\s+\S+\s+(\d+):\s+(\w+):\s+(.*)$")
# The CEQ work's function as workqueue_execute_* print it (%ps: the name,
# then the module): the C driver's, or the Rust driver's shim function.
CEQ_WORK = re.compile(r"function (hns_roce_ceq_work|rdma_shim_ceq_work)\b")


def events(f):
    """(ts, event, rest) of each event line."""
    for line in f:
        m = LINE.search(line)
        if m:
            yield int(m.group(1)), m.group(2), m.group(3)


def intervals(evs):
    """Per CEQ interrupt: {"irq", "bh", "wake"} in cycles (None: absent)."""
    out = []
    cur = None
    bh_start = None
    for ts, ev, rest in evs:
        if ev == "irq_handler_entry":
            if "-ceq-" not in rest:
                continue
            cur = {"entry": ts, "irq": None, "bh": None, "wake": None}
            out.append(cur)
        elif ev == "irq_handler_exit":
            if cur is not None and cur["irq"] is None:
                cur["irq"] = ts - cur["entry"]
        elif ev == "workqueue_execute_start" and CEQ_WORK.search(rest):
            bh_start = ts
        elif ev == "workqueue_execute_end" and CEQ_WORK.search(rest):
            if bh_start is not None and cur is not None and cur["bh"] is None:
                cur["bh"] = ts - bh_start
            bh_start = None
        elif ev == "sched_waking":
            if cur is not None and cur["wake"] is None:
                cur["wake"] = ts - cur["entry"]
    return out


def pct(vals, p):
    """Nearest-rank percentile p (0-100) of sorted vals."""
    k = math.ceil(p * len(vals) / 100) - 1
    return vals[max(0, min(len(vals) - 1, k))]


def main():
    mhz = float(sys.argv[1])
    f = open(sys.argv[2], errors="replace") if len(sys.argv) > 2 else sys.stdin
    ints = intervals(events(f))
    per = {"irq": [], "bh": [], "total": [], "wake": []}
    for i in ints:
        if i["irq"] is None:
            continue
        per["irq"].append(i["irq"])
        if i["bh"] is not None:
            per["bh"].append(i["bh"])
        per["total"].append(i["irq"] + (i["bh"] or 0))
        if i["wake"] is not None:
            per["wake"].append(i["wake"])
    for name, vals in per.items():
        if not vals:
            continue
        vals.sort()
        for tag, v in (("p50", pct(vals, 50)), ("p99", pct(vals, 99)), ("max", vals[-1])):
            print(f"{name}_{tag} {v * 1000 / mhz:.0f}")
    print(f"CEQN irq={len(per['irq'])} bh={len(per['bh'])} wake={len(per['wake'])}")
    return 0 if per["irq"] else 1


if __name__ == "__main__":
    sys.exit(main())
