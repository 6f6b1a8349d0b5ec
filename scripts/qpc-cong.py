#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The congestion control fields of the QP contexts in an hns-sim trace.

    python3 scripts/qpc-cong.py TRACE

The trace is cut in parts at each driver load (a `cmq > op=8000`
header). For each part it prints one line: how many QPC contexts
in RTR (as MODIFY_QPC stored them) select each algorithm, with the
template id they name (QPC_CONG_ALGO_TMPL_ID), whether every DIP context
index is the QPN of a DIP QP of the part (the drivers key DIP contexts by
the QPN that added them; how many there are depends on which QP of a
perftest pair reaches RTR first, so they are not counted), and how many
of hns-sim's notes on the congestion fields (an algorithm the caps do not
offer, a DIP context past the QPN space or shared by two destinations)
it holds. Two drivers that
write the same fields print the same lines; make check's capsx boots
compare them and want every algorithm of the hnsdv part and no notes.
"""
import sys

# QPC word 14: QPC_QP_ST (479..477), QPC_CONG_ALGO_TMPL_ID (455..448).
ST_WORD, RTR = 14, 2
NAMES = ["DCQCN", "LDCP", "HC3", "DIP"]


def algorithm(ex0):
    """The algorithm of QPCEX word 0 (ALG_SEL, ALG_SUB_SEL, DIP_CTX_IDX_VLD)."""
    sel, sub, dip = ex0 & 1, ex0 >> 1 & 1, ex0 >> 2 & 1
    if sel == 0:
        return 3 if dip else 0
    return 2 if sub else 1


def parts(path):
    cur, out = None, []
    for line in open(path, errors="replace"):
        if line.startswith("cmq > op=8000 "):
            cur = {"alg": {}, "dip": set(), "dipqp": set(), "notes": 0}
            out.append(cur)
            continue
        if cur is None:
            continue
        if line.startswith("# ") and ("DIP context" in line or "congestion algorithm" in line):
            cur["notes"] += 1
            continue
        p = line.split()
        if p[:2] != ["ctx", "QPC"] or len(p) < 3 + 65:
            continue
        w = [int(x, 16) for x in p[3:]]
        if w[ST_WORD] >> 29 & 7 != RTR:
            continue
        a = algorithm(w[64])
        key = (NAMES[a], w[ST_WORD] & 0xff)
        cur["alg"][key] = cur["alg"].get(key, 0) + 1
        if a == 3:
            cur["dip"].add(w[64] >> 3 & 0xfffff)
            cur["dipqp"].add(int(p[2].split("=")[1], 16))
    return out


def main():
    res = parts(sys.argv[1])
    for i, r in enumerate(res):
        algs = " ".join(f"{n}(tmpl {t}):{c}" for (n, t), c in sorted(r["alg"].items()))
        print(f"part {i + 1}: RTR contexts {algs or 'none'}; "
              f"DIP indices are DIP QPNs: {'yes' if r['dip'] <= r['dipqp'] else 'no'}; "
              f"notes {r['notes']}")


if __name__ == "__main__":
    main()
