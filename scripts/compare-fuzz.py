#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Compare the uverbs fuzzer's errno tables of the C and the Rust driver
(tests/guest/uverbs_fuzz.py through tests/guest/fuzz-plan.sh, run by
scripts/fuzz.sh).

  compare-fuzz.py C_OUTPUT RS_OUTPUT [REPORT]

Both runs must have used the same seed and call count (the "FUZZ seed"
line) and must have sent every call (no time-limit stop). For every call
class ("FUZZ <class> calls N errno {...}") the counts per errno must be
equal. Prints one row per class that differs (C first) and
`TEST equivalence/fuzz PASS|FAIL`; writes the whole table to REPORT as
Markdown if given. Exit status 1 on a difference, 2 when a run has no
tables (no reference).
"""
import ast
import re
import sys

ROW = re.compile(r"^FUZZ (\S+) calls (\d+) errno (\{.*\})$")
HEAD = re.compile(r"^FUZZ seed (\S+) calls (\S+) ")


def tables(path):
    """(head, stopped, {class: {errno: count}}) of one run's output."""
    head, stopped, res = None, False, {}
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = HEAD.match(line)
            if m:
                head = m.groups()
            if line.startswith("FUZZ stopped"):
                stopped = True
            m = ROW.match(line)
            if m:
                res[m.group(1)] = ast.literal_eval(m.group(3))
    return head, stopped, res


def fmt(t):
    return "-" if t is None else "{" + ", ".join(f"{k}: {t[k]}" for k in sorted(t)) + "}"


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__)
        return 2
    ch, cstop, c = tables(sys.argv[1])
    rh, rstop, r = tables(sys.argv[2])
    if not c or not r:
        print("TEST equivalence/fuzz FAIL no tables (C %d classes, Rust %d)" % (len(c), len(r)))
        return 2
    problems = []
    if ch != rh:
        problems.append(f"runs differ: C seed/calls {ch}, Rust {rh}")
    if cstop or rstop:
        problems.append(f"time limit reached (C {cstop}, Rust {rstop}): the sequences differ")
    rows = []
    for cls in sorted(set(c) | set(r)):
        same = c.get(cls) == r.get(cls)
        rows.append((cls, same, c.get(cls), r.get(cls)))
    diff = [x for x in rows if not x[1]]
    print(f"fuzz: {len(rows)} classes, {len(diff)} differ")
    if diff:
        w = max(len(x[0]) for x in diff)
        print(f"  {'class':{w}}  C | Rust")
        for cls, _, ct, rt in diff:
            print(f"  {cls:{w}}  {fmt(ct)} | {fmt(rt)}")
    for p in problems:
        print("  " + p)
    if len(sys.argv) == 4:
        with open(sys.argv[3], "w") as f:
            f.write(f"# uverbs fuzz, C vs Rust (seed/calls {ch})\n\n")
            f.write("| class | same | C | Rust |\n|---|---|---|---|\n")
            for cls, same, ct, rt in rows:
                f.write(f"| {cls} | {'yes' if same else 'NO'} | {fmt(ct)} | {fmt(rt)} |\n")
            for p in problems:
                f.write(f"\n{p}\n")
    ok = not diff and not problems
    detail = "" if ok else f" {len(diff)} of {len(rows)} classes differ"
    print(f"TEST equivalence/fuzz {'PASS' if ok else 'FAIL'}{detail}")
    print(f"equivalence/fuzz {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
