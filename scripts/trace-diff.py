#!/usr/bin/env python3
"""Compare the hns-sim traces of the C driver and the Rust driver.

DMA addresses are normalised: the ones hns-sim marks with `@`, and the
address fields inside the contexts it prints (`ctx QPC/CQC/MPT/SRQC/AEQC/
CEQC` lines), found by name (`*_BA_*`, `*_ADDR_*`, `PA0/PA1`, VAs) in the
generated field maps (`hw_v2_fields.rs`). Two runs of the same driver and
workload normalise to the same trace. Notes (`# ...`) are ignored.

  trace-diff.py --full [--mask-psn] C_TRACE RS_TRACE

The traces must be equal; prints a unified diff and exits 1 on a difference.
--mask-psn also masks the QPC's packet sequence numbers (the fields whose
name ends in PSN, PSN_L or PSN_H): rdma-core's pingpongs and perftest pick their start
PSNs at random (lrand48 seeded from pid and time), so two runs of the same
workload differ there and nowhere else.
"""
import difflib
import os
import re
import sys


FIELDS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hw_v2_fields.rs")
ADDR_NAME = re.compile(r"(_BA(_[LMH])?$|_ADDR_[LH]$|^PA[01]_[LH]$|^(RX_)?VA$)")
# Context name in the trace -> [(field module, first word of that layout)].
CTX_LAYOUTS = {"QPC": [("qpc", 0), ("qpcex", 64)], "CQC": [("cqc", 0)], "MPT": [("mpt", 0)],
               "SRQC": [("srqc", 0)], "AEQC": [("eqc", 0)], "CEQC": [("eqc", 0)]}


def address_fields(name_re=ADDR_NAME):
    """{module: [(high bit, low bit)]} of the fields whose name matches
    name_re (by default the address fields), wide ones too."""
    out, mod = {}, None
    for line in open(FIELDS):
        m = re.match(r"pub mod (\w+) \{", line)
        if m:
            mod = m.group(1)
            out[mod] = []
            continue
        m = re.search(r"pub const (\w+): Field<\w+> = Field::new\((\d+), (\d+)\)", line)
        if not m:
            m = re.search(r"// [A-Z]+_(\w+) \((\d+)\.\.=(\d+)\) spans", line)
        if m and mod and name_re.search(m.group(1)):
            out[mod].append((int(m.group(2)), int(m.group(3))))
    return out


ADDR_FIELDS = address_fields()
PSN_FIELDS = address_fields(re.compile(r"PSN(_[LH])?$"))


def mask_ctx(line):
    parts = line.split()
    if len(parts) < 4 or parts[0] != "ctx" or parts[1] not in CTX_LAYOUTS:
        return line
    words = [int(w, 16) for w in parts[3:]]
    for mod, base in CTX_LAYOUTS[parts[1]]:
        fields = ADDR_FIELDS.get(mod, []) + (PSN_FIELDS.get(mod, []) if MASK_PSN else [])
        for h, l in fields:
            for bit in range(l, h + 1):
                w = base + bit // 32
                if w < len(words):
                    words[w] &= ~(1 << (bit % 32))
    return " ".join(parts[:3] + ["%08x" % w for w in words])


def load(path):
    out = []
    for line in open(path):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        out.append(mask_ctx(re.sub(r"@[0-9a-f]+", "@ADDR", line)))
    return out


def report(want, rs):
    sys.stdout.writelines(difflib.unified_diff([l + "\n" for l in want], [l + "\n" for l in rs],
                                               "C driver", "Rust driver", n=2))
    sys.exit(1)


MASK_PSN = False


def main():
    global MASK_PSN
    args = sys.argv[1:]
    if "--mask-psn" in args:
        MASK_PSN = True
        args.remove("--mask-psn")
    if len(args) != 3 or args[0] != "--full":
        sys.exit(__doc__)
    c, rs = load(args[1]), load(args[2])
    if c == rs:
        print(f"traces match ({len(rs)} lines)")
        return
    report(c, rs)


if __name__ == "__main__":
    main()
