#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Where the time between a driver's commands goes, C against Rust (issue
16, a diagnostic: no plan runs it).

    scripts/trace-gaps.py [--top N] [--from J] TRACE [ORDER]

TRACE is one function's hns-sim trace written with `--trace-time` (each
line `[µs] ...`) by a boot that ran tests/guest/probe_cpu.py in `dev` mode:
its cycles start and end at `# control: clear` (the end is kept as the
cycle's last line: the time after its last command) and load and unload
the drivers in ORDER (default `c,rs`, repeated). Each cycle's lines are
aligned with the first C cycle's by their command (`cmq > op=...`, `mbx < cmd=...`: the
first three words; contexts and notes are left out), and each line gets
the time since the line before it: the model answers within one of its
passes, so a gap ending at a `>` line is the guest's time between the
previous answer and the next command (the driver and the kernel, plus up
to one idle sleep of the model, the same for both drivers).

Prints, per driver, the median cycle time from the first command to the
end marker, and from `--from J` (a line of the first C cycle, by the
number this script prints, e.g. the first command of the remove) to the
end; then the N gaps whose medians differ most between the drivers, with
their lines.
"""
import argparse
import difflib
import re
import statistics
import sys

LINE = re.compile(r"^\[(\d+)\] (.*)$")


def key(text):
    """The alignment key of a trace line: its first three words."""
    return " ".join(text.split()[:3])


def cycles(path):
    """[(key, µs, text)] per cycle, split at `# control: clear`."""
    out, cur = [], None
    with open(path) as f:
        for raw in f:
            m = LINE.match(raw.rstrip("\n"))
            if not m:
                sys.exit(f"{path}: a line without a time (hns-sim --trace-time?): {raw.strip()}")
            t, text = int(m.group(1)), m.group(2)
            if text.startswith("# control: clear"):
                if cur:
                    cur.append(("# end", t, text))
                cur = []
                out.append(cur)
            elif cur is not None and text.split()[0] in ("cmq", "mbx"):
                cur.append((key(text), t, text))
    # A cycle has its commands and its end marker; the interval between
    # one cycle's end and the next one's start has neither.
    return [c for c in out if len(c) > 1 and c[-1][0] == "# end"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--from", dest="start", type=int, default=None)
    ap.add_argument("trace")
    ap.add_argument("order", nargs="?", default="c,rs")
    a = ap.parse_args()
    order = a.order.split(",")
    cs = cycles(a.trace)
    if len(cs) < 2 * len(order):
        sys.exit(f"{a.trace}: {len(cs)} cycles, want at least two of each of {order}")
    by_drv = {d: [] for d in order}
    for i, c in enumerate(cs):
        by_drv[order[i % len(order)]].append(c)
    ref = by_drv[order[0]][0]
    refkeys = [k for k, _, _ in ref]
    # gaps[drv][j]: the gaps ending at reference line j, one per cycle.
    gaps = {d: [[] for _ in ref] for d in order}
    totals = {d: [] for d in order}
    tails = {d: [] for d in order}
    unmatched = {d: 0 for d in order}
    for d in order:
        for c in by_drv[d]:
            keys = [k for k, _, _ in c]
            blocks = difflib.SequenceMatcher(None, refkeys, keys, autojunk=False).get_matching_blocks()
            matched = 0
            for blk in blocks:
                for n in range(blk.size):
                    j, i = blk.a + n, blk.b + n
                    matched += 1
                    if i > 0:
                        gaps[d][j].append(c[i][1] - c[i - 1][1])
            unmatched[d] += len(c) - matched
            totals[d].append(c[-1][1] - c[0][1])
            if a.start is not None:
                hit = [blk.b + a.start - blk.a for blk in blocks
                       if blk.a <= a.start < blk.a + blk.size]
                if hit:
                    tails[d].append(c[-1][1] - c[hit[0]][1])
    for d in order:
        line = f"{d}: {len(by_drv[d])} cycles, {len(by_drv[d][0])} lines, first command to the end " \
            f"{statistics.median(totals[d]) / 1000:.1f} ms (median)"
        if tails[d]:
            line += f", from #{a.start} {statistics.median(tails[d]) / 1000:.1f} ms"
        line += f"; lines not aligned with {order[0]}'s first cycle: {unmatched[d]}"
        print(line)
    if len(order) < 2:
        return
    x, y = order[0], order[1]
    rows = []
    for j in range(1, len(ref)):
        if gaps[x][j] and gaps[y][j]:
            mx, my = statistics.median(gaps[x][j]), statistics.median(gaps[y][j])
            rows.append((my - mx, j, mx, my))
    rows.sort(reverse=True)
    print(f"\nsum of the aligned gaps' median differences ({y} - {x}): "
          f"{sum(r[0] for r in rows) / 1000:.1f} ms", end="")
    if a.start is not None:
        print(f", after #{a.start}: {sum(r[0] for r in rows if r[1] > a.start) / 1000:.1f} ms", end="")
    print()
    for title, part in ((f"{y} - {x}), µs; the gap ends at the line shown:", rows[: a.top]),
                        (f"{x} - {y}):", sorted(rows)[: min(5, a.top)])):
        print(f"\nlargest differences ({title}")
        for diff, j, mx, my in part:
            print(f"{diff:+9.0f}  {x} {mx:8.0f}  {y} {my:8.0f}  #{j:4d}  after: {ref[j - 1][2][:60]}")
            print(f"{'':45}  at:    {ref[j][2][:60]}")


if __name__ == "__main__":
    main()
