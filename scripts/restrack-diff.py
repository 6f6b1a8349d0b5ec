#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Compare what `rdma res show {cq,qp,mr,srq}` printed on the C driver and on
hns_roce_rs (tests/guest/restrack.py's "HNS-RESTRACK TAG KIND MODE JSON"
lines in two guest logs).

Per line, the objects must be the same after masking what differs between
two boots for reasons no driver decides: process ids, user virtual
addresses (an MR's iova), and inside the raw context images (-r: the bytes
the engine returned for QUERY_CQC/QPC/SCCC/MPT/SRQC) the DMA address fields,
found by name in the generated field maps as scripts/trace-diff.py does.
The C log must hold every line, none of them an error, each with at least
one object of this device carrying the driver's details (-dd: "drv_*"
keys) or a raw image (-r: "data"), so a comparison of nothing cannot pass.

  restrack-diff.py C_LOG RS_LOG

Prints "N lines, M objects equal" and exits 0, or the differences and 1.
"""
import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("trace_diff", os.path.join(HERE, "trace-diff.py"))
trace_diff = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(trace_diff)

# Raw image layout per kind: (field module, first word) as in trace-diff.
RAW_LAYOUTS = {"cq": [("cqc", 0)], "mr": [("mpt", 0)], "qp": [("qpc", 0), ("qpcex", 64)],
               "srq": [("srqc", 0)]}
MASKED_KEYS = {"pid", "iova"}


def lines(path):
    """{(tag, kind, mode): json text}, in order of appearance."""
    out = {}
    for line in open(path, errors="replace"):
        parts = line.rstrip("\n").split(" ", 4)
        if len(parts) == 5 and parts[0] == "HNS-RESTRACK":
            out[tuple(parts[1:4])] = parts[4]
    return out


def mask_raw(kind, data):
    """The raw bytes as little-endian words, address fields zeroed."""
    words = [int.from_bytes(bytes(data[i:i + 4]), "little") for i in range(0, len(data) - 3, 4)]
    for mod, base in RAW_LAYOUTS.get(kind, []):
        for h, lo in trace_diff.ADDR_FIELDS.get(mod, []):
            for bit in range(lo, h + 1):
                w = base + bit // 32
                if w < len(words):
                    words[w] &= ~(1 << (bit % 32))
    return ["%08x" % w for w in words]


def normalise(kind, text):
    objs = json.loads(text)
    out = []
    for o in objs:
        n = {}
        for k, v in o.items():
            if k in MASKED_KEYS:
                v = "MASKED"
            elif k == "data" and isinstance(v, list):
                v = mask_raw(kind, v)
            n[k] = v
        out.append(n)
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    c, rs = lines(sys.argv[1]), lines(sys.argv[2])
    errors, nobj = [], 0
    if not c:
        errors.append("no HNS-RESTRACK lines in the C log")
    for key, ctext in c.items():
        name = " ".join(key)
        if ctext.startswith("ERROR"):
            errors.append(f"{name}: C: {ctext}")
            continue
        cn = normalise(key[1], ctext)
        want = "data" if key[2] == "r" else "drv_"
        if not any(k.startswith(want) for o in cn for k in o):
            errors.append(f"{name}: C printed no {want!r} for any object: {ctext[:200]}")
        rtext = rs.get(key)
        if rtext is None:
            errors.append(f"{name}: missing on Rust")
            continue
        if rtext.startswith("ERROR"):
            errors.append(f"{name}: Rust: {rtext}")
            continue
        rn = normalise(key[1], rtext)
        nobj += len(cn)
        if cn != rn:
            errors.append(f"{name}: differs")
            for i in range(max(len(cn), len(rn))):
                a = cn[i] if i < len(cn) else None
                b = rn[i] if i < len(rn) else None
                if a != b:
                    keys = sorted(set(a or {}) | set(b or {}))
                    for k in keys:
                        va, vb = (a or {}).get(k), (b or {}).get(k)
                        if va != vb:
                            errors.append(f"    object {i} {k}: C {va} / Rust {vb}")
    for key in rs:
        if key not in c:
            errors.append(f"{' '.join(key)}: only on Rust")
    if errors:
        print("\n".join(errors))
        sys.exit(1)
    print(f"{len(c)} lines, {nobj} objects equal")


if __name__ == "__main__":
    main()
