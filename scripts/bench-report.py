#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The report of make bench: Rust/C per metric, from the guest's lines.

    bench-report.py GUEST_OUTPUT OUTDIR [SIZES [BOOT_OUTPUT...]]

GUEST_OUTPUT holds the bench plan's lines (tests/guest/bench-plan.sh):

    BR <round> <slot> <part>/<metric> <wall_ns> <cpu_ns or ->

slots c, rs and c2 (the C driver twice per round: the C/C rows are the
noise of a ratio). A metric only one driver has (part ceq's bh_*: the C
driver's CEQ work) gets its figures and "one driver only". SIZES (optional) holds "SIZE <section> <rust> <c>" lines
(bytes). Per slot and round, several lines of one metric (probe cycles) are
reduced to their median first. Then, over the rounds: the median and the
range (min-max) of each slot's figure, of Rust/C (rs over c of the same
round) and of C/C (c2 over c). Noise of a metric: the largest |C/C - 1| of
its rounds, at least 0.02. A Rust/C median above 1 + noise is "slower", below 1 - noise
"faster", otherwise "equal within noise".

BOOT_OUTPUTs are the outputs of further boots of the same plan (make bench
runs the kpath part alone in BENCH_KPATH_BOOTS more boots): for every
metric in them, the report adds each boot's Rust/C median and verdict
(GUEST_OUTPUT is boot 1) and a verdict across boots, "slower" or "faster"
only when every boot says so. A per-call ratio differs more between boots
than the C/C noise of one boot shows (docs/benchmarks.md).

Writes OUTDIR/report.md (printed too) and, when matplotlib can be imported
(Debian's python3-matplotlib, installed by `HNS_BENCH=1 scripts/setup.sh`;
this script runs under /usr/bin/python3 for it), OUTDIR/report.svg and
OUTDIR/report.png: Rust/C and C/C per metric with their ranges. No number
is judged pass or fail; exit status 1 only when there is no BR line.
"""
import os
import statistics
import sys
from collections import defaultdict


def fmt_ns(v):
    """ns with a readable unit."""
    if v is None:
        return "-"
    if v >= 1e6:
        return f"{v / 1e6:.2f} ms"
    if v >= 1e3:
        return f"{v / 1e3:.1f} µs"
    return f"{v:.0f} ns"


def parse(path):
    """{(kind, metric): {slot: {round: [values]}}} for kind wall and cpu."""
    data = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    order = []
    with open(path, errors="replace") as f:
        for line in f:
            p = line.split()
            if len(p) != 6 or p[0] != "BR":
                continue
            _, rnd, slot, metric, wall, cpu = p
            if int(rnd) < 1:
                continue  # the warm-up
            if metric not in order:
                order.append(metric)
            for kind, v in (("wall", wall), ("cpu", cpu)):
                if v != "-":
                    data[(kind, metric)][slot][int(rnd)].append(float(v))
    return data, order


def summarise(per_slot):
    """Medians, ranges and ratios of one metric; None when a slot is missing."""
    rounds = {s: {r: statistics.median(v) for r, v in rs.items()} for s, rs in per_slot.items()}
    if not all(s in rounds for s in ("c", "rs")):
        return None
    out = {}
    for s, rs in rounds.items():
        vals = list(rs.values())
        out[s] = (statistics.median(vals), min(vals), max(vals))
    common = sorted(set(rounds["c"]) & set(rounds["rs"]))
    ratio = [rounds["rs"][r] / rounds["c"][r] for r in common if rounds["c"][r] > 0]
    noise = []
    if "c2" in rounds:
        noise = [rounds["c2"][r] / rounds["c"][r] for r in sorted(set(rounds["c"]) & set(rounds["c2"]))
                 if rounds["c"][r] > 0]
    out["ratio"] = (statistics.median(ratio), min(ratio), max(ratio)) if ratio else None
    out["noise"] = (statistics.median(noise), min(noise), max(noise)) if noise else None
    out["n"] = len(common)
    # At least 2 %: a C/C that happened to agree to 0.1 % (the latency rows
    # are the scheduler tick) must not make 1.001 "slower".
    bound = max((abs(x - 1) for x in noise), default=None)
    if bound is not None:
        bound = max(bound, 0.02)
    out["bound"] = bound
    if out["ratio"] is None or bound is None:
        out["verdict"] = "?"
    elif out["ratio"][0] > 1 + bound:
        out["verdict"] = "slower"
    elif out["ratio"][0] < 1 - bound:
        out["verdict"] = "faster"
    else:
        out["verdict"] = "equal within noise"
    return out


def rng(t, f=fmt_ns):
    return f"{f(t[0])} [{f(t[1])}–{f(t[2])}]" if t else "-"


def ratio_s(x):
    return f"{x:.3f}"


def one_driver_row(m, per_slot):
    """A metric only one driver has (the C driver's CEQ BH work): its
    figures, "(none)" for the other."""
    cells = []
    for slot in ("c", "rs"):
        rounds = [statistics.median(v) for v in per_slot.get(slot, {}).values()]
        cells.append(rng((statistics.median(rounds), min(rounds), max(rounds))) if rounds else "(none)")
    return f"| {m} | {cells[0]} | {cells[1]} | | | | one driver only |"


def table(kind, data, order):
    rows = [f"| metric | C | Rust | Rust/C | C/C (noise) | rounds | verdict |",
            "|---|---|---|---|---|---|---|"]
    summary = []
    for m in order:
        if (kind, m) not in data:
            continue
        s = summarise(data[(kind, m)])
        if s is None:
            rows.append(one_driver_row(m, data[(kind, m)]))
            continue
        summary.append((m, s))
        rows.append(f"| {m} | {rng(s['c'])} | {rng(s['rs'])} | {rng(s['ratio'], ratio_s)} | "
                    f"{rng(s['noise'], ratio_s)} | {s['n']} | {s['verdict']} |")
    return rows, summary


def boots_table(paths):
    """Per metric of the later boots: each boot's Rust/C (wall) and verdict,
    and the verdict across the boots."""
    per_boot = []
    for path in paths:
        data, order = parse(path)
        per_boot.append((data, order))
    metrics = []
    for _, order in per_boot[1:]:
        metrics += [m for m in order if m not in metrics]
    if not metrics:
        return []
    n = len(per_boot)
    rows = ["## Across boots (wall)", "",
            "Rust/C median (and the boot's verdict) per boot; boot 1 is the table above. "
            "Across boots: slower or faster only when every boot says so.", "",
            "| metric | " + " | ".join(f"boot {i + 1}" for i in range(n)) + " | across boots |",
            "|---|" + "---|" * (n + 1)]
    for m in metrics:
        cells, verdicts = [], []
        for data, _ in per_boot:
            s = summarise(data[("wall", m)]) if ("wall", m) in data else None
            if s is None or s["ratio"] is None:
                cells.append("-")
                continue
            cells.append(f"{ratio_s(s['ratio'][0])} ({s['verdict']})")
            verdicts.append(s["verdict"])
        if len(verdicts) < n:
            across = "? (a boot is missing)"
        elif all(v == "slower" for v in verdicts):
            across = "slower"
        elif all(v == "faster" for v in verdicts):
            across = "faster"
        elif "slower" in verdicts or "faster" in verdicts:
            k = sum(v == "slower" for v in verdicts)
            f = sum(v == "faster" for v in verdicts)
            across = f"not consistent (slower in {k}, faster in {f} of {n})"
        else:
            across = "equal within noise"
        rows.append(f"| {m} | " + " | ".join(cells) + f" | {across} |")
    return rows + [""]


def chart(outdir, panels):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "no chart: matplotlib missing (HNS_BENCH=1 scripts/setup.sh installs python3-matplotlib)"
    n = max(len(s) for _, s in panels)
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 0.35 * n + 1.5), squeeze=False)
    for ax, (title, summary) in zip(axes[0], panels):
        names = [m for m, _ in summary][::-1]
        y = list(range(len(names)))
        for off, key, colour, label in ((0.15, "ratio", "tab:orange", "Rust/C"),
                                        (-0.15, "noise", "tab:grey", "C/C (noise)")):
            pts = [(i + off, s[key]) for i, (_, s) in enumerate(summary[::-1]) if s.get(key)]
            if not pts:
                continue
            ax.errorbar([t[0] for _, t in pts], [p for p, _ in pts],
                        xerr=[[t[0] - t[1] for _, t in pts], [t[2] - t[0] for _, t in pts]],
                        fmt="o", color=colour, label=label, capsize=2, markersize=4)
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_yticks(y)
        ax.set_yticklabels(names, fontsize=7)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("ratio (median, range over rounds; lower is faster)", fontsize=8)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "report.svg"))
    fig.savefig(os.path.join(outdir, "report.png"), dpi=90)
    return "chart: report.svg, report.png"


def main():
    src, outdir = sys.argv[1], sys.argv[2]
    sizes = sys.argv[3] if len(sys.argv) > 3 else None
    boots = sys.argv[4:]
    data, order = parse(src)
    if not order:
        print(f"no BR lines in {src}")
        return 1
    lines = ["# make bench: Rust (hns_roce_rs) against C (hns-roce-hw-v2)", "",
             "Per metric: median [min–max] over the rounds, per operation (lower is better); "
             "Rust/C and C/C are per-round ratios (C/C: the second C slot of the round over "
             "the first, the noise). See docs/benchmarks.md for the method.", ""]
    panels = []
    for kind, title in (("wall", "Wall time"), ("cpu", "CPU time of the caller (guest)")):
        rows, summary = table(kind, data, order)
        lines += [f"## {title}", ""] + rows + [""]
        panels.append((title, summary))
    if boots:
        lines += boots_table([src] + boots)
    if sizes and os.path.exists(sizes):
        lines += ["## Module size (bytes)", "", "| section | Rust | C | Rust/C |", "|---|---|---|---|"]
        with open(sizes) as f:
            for line in f:
                p = line.split()
                if len(p) == 4 and p[0] == "SIZE":
                    r, c = int(p[2]), int(p[3])
                    lines.append(f"| {p[1]} | {r} | {c} | {r / c:.2f} |" if c else f"| {p[1]} | {r} | {c} | - |")
        lines.append("")
    lines.append(chart(outdir, [p for p in panels if p[1]]))
    text = "\n".join(lines) + "\n"
    with open(os.path.join(outdir, "report.md"), "w") as f:
        f.write(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
