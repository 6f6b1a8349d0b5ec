#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Compare the outcomes of one guest plan run on the C driver and on Rust.

Usage: compare-outcomes.py RESULTS C_GROUP RS_GROUP

RESULTS is make check's results file ("TEST <group>/<name> PASS|FAIL|SKIP
[detail]" lines). Prints the two groups side by side and exits 1 when a
check that passed on C did not pass on Rust (a SKIP included: nothing of
the plans is left out on Rust since the XRC lines run there), or when C
itself failed a check (a harness defect to report, not an equality).
"""
import sys


def outcomes(path, group):
    res = {}
    for line in open(path):
        parts = line.rstrip("\n").split(" ", 3)
        if len(parts) < 3 or parts[0] != "TEST" or not parts[1].startswith(group + "/"):
            continue
        res[parts[1][len(group) + 1:]] = (parts[2], parts[3] if len(parts) > 3 else "")
    return res


def main():
    path, cg, rg = sys.argv[1:4]
    c, r = outcomes(path, cg), outcomes(path, rg)
    if not c:
        print(f"no {cg}/ lines in {path}")
        return 1
    bad = 0
    width = max(len(n) for n in list(c) + list(r))
    print(f"{'check':<{width}}  C     Rust")
    for name in list(c) + [n for n in r if n not in c]:
        co = c.get(name, ("-", ""))[0]
        ro, rdetail = r.get(name, ("-", ""))
        note = ""
        if co == "FAIL":
            note = "  <- fails on C: harness defect"
            bad += 1
        elif co == "PASS" and ro != "PASS":
            note = "  <- passes on C only" + (f" ({rdetail})" if rdetail else "")
            bad += 1
        print(f"{name:<{width}}  {co:<5} {ro:<5}{note}")
    same = sum(1 for n in c if c[n][0] == "PASS" and r.get(n, ("-",))[0] == "PASS")
    print(f"{same} of {sum(1 for v in c.values() if v[0] == 'PASS')} C passes pass on Rust, "
          f"{bad} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
