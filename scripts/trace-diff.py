#!/usr/bin/env python3
"""Compare the hns-sim traces of the C driver and the Rust driver.

DMA addresses are normalised: the ones hns-sim marks with `@`, and the
address fields inside the contexts it prints (`ctx QPC/CQC/MPT/SRQC/AEQC/
CEQC` lines), found by name (`*_BA_*`, `*_ADDR_*`, `PA0/PA1`, VAs) in the
generated field maps (`hw_v2_fields.rs`). Two runs of the same driver and
workload normalise to the same trace. Notes (`# ...`) are ignored. Modes:

  --full C_TRACE RS_TRACE
      The traces must be equal.

  --without-qp1 C_TRACE RS_TRACE
      For a run that registers the device. The RDMA core's MAD agent creates
      QP1 on every registered device: with the C driver a DMA MR, a CQ and
      the GSI QP (the "QP1 block": from the first WRITE_MPT_BT0 mailbox to
      the last mailbox of the run). hns_roce_rs cannot create all of them
      yet, so the MAD agent gives up and the objects made so far are
      destroyed. The block is cut from both traces and everything else
      (bring-up, EQs, HEM, link table, GIDs, counters, teardown) must be
      equal; inside the block, what the Rust driver did before its first
      DESTROY mailbox must equal the start of the C driver's block.

Prints a unified diff and exits 1 on a difference.
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


def address_fields():
    """{module: [(high bit, low bit)]} of the address fields, wide ones too."""
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
        if m and mod and ADDR_NAME.search(m.group(1)):
            out[mod].append((int(m.group(2)), int(m.group(3))))
    return out


ADDR_FIELDS = address_fields()


def mask_ctx(line):
    parts = line.split()
    if len(parts) < 4 or parts[0] != "ctx" or parts[1] not in CTX_LAYOUTS:
        return line
    words = [int(w, 16) for w in parts[3:]]
    for mod, base in CTX_LAYOUTS[parts[1]]:
        for h, l in ADDR_FIELDS.get(mod, []):
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


def qp1_block(t):
    """(start, end) of the QP1 block of trace `t`, end exclusive; None if
    the run created no MR."""
    first = next((i for i, line in enumerate(t) if line.startswith("mbx > cmd=20 WRITE_MPT_BT0")), None)
    if first is None:
        return None
    start = max(i for i in range(first) if t[i].startswith("cmq > op=8505 QUERY_MB_ST"))
    end = max(i for i, line in enumerate(t) if line.startswith("cmq < op=8504 POST_MB"))
    return start, end + 1


def compare_without_qp1(c, rs):
    """Exit 1 with a diff if the traces differ outside the QP1 block, or if
    the Rust block does not start like the C block."""
    cb = qp1_block(c)
    if cb is None:
        sys.exit("C trace has no WRITE_MPT_BT0: no QP1 block to cut")
    rb = qp1_block(rs) or (cb[0], cb[0])
    c_out, rs_out = c[:cb[0]] + c[cb[1]:], rs[:rb[0]] + rs[rb[1]:]
    if c_out != rs_out:
        report(c_out, rs_out)
    c_blk, rs_blk = c[cb[0]:cb[1]], rs[rb[0]:rb[1]]
    # The Rust block up to its first DESTROY (from that mailbox's status
    # query on) is its own work; after it, the MAD agent's unwinding.
    destroy = next((i for i, line in enumerate(rs_blk) if re.match(r"mbx > cmd=\w+ DESTROY", line)), None)
    k = len(rs_blk) if destroy is None else max(
        (i for i in range(destroy) if rs_blk[i].startswith("cmq > op=8505 QUERY_MB_ST")), default=0)
    if rs_blk[:k] != c_blk[:k]:
        report(c_blk[:k], rs_blk[:k])
    print(f"traces match outside the QP1 block ({len(rs_out)} lines); in it the Rust driver "
          f"matches the first {k} of the C driver's {len(c_blk)} lines before unwinding")


def report(want, rs):
    sys.stdout.writelines(difflib.unified_diff([l + "\n" for l in want], [l + "\n" for l in rs],
                                               "C driver", "Rust driver", n=2))
    sys.exit(1)


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("--full", "--without-qp1"):
        sys.exit(__doc__)
    c, rs = load(sys.argv[2]), load(sys.argv[3])
    if sys.argv[1] == "--without-qp1":
        compare_without_qp1(c, rs)
        return
    if c == rs:
        print(f"traces match ({len(rs)} lines)")
        return
    report(c, rs)


if __name__ == "__main__":
    main()
