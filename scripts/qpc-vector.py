#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Print the MODIFY_QPC mailboxes of one QP from an hns-sim trace as Rust
test-vector tables (for tests/vectors/qpc.rs).

hns-sim notes every MODIFY_QPC's context and mask as posted by the driver
(`# ctx QPC-in tag=...` and `# ctx QPC-mask tag=...`, see sim/src/fw.rs).
For each modify of QP TAG this prints the non-zero context words and the
mask words that differ from the mask's fill (all ones, or all zeros for
RESET->INIT), as `(index, word)` pairs, plus the QP
state the modify moves to (QPC_QP_ST, word 14 bits 31..29).

  qpc-vector.py TRACE TAG
"""
import sys


def words(line):
    return [int(w, 16) for w in line.split()[4:]]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    tag = "tag=%06x" % int(sys.argv[2], 0)
    ctx = None
    n = 0
    for line in open(sys.argv[1]):
        parts = line.split()
        if len(parts) < 4 or parts[0] != "#" or parts[1] != "ctx" or parts[3] != tag:
            continue
        if parts[2] == "QPC-in":
            ctx = words(line)
        elif parts[2] == "QPC-mask" and ctx is not None:
            mask = words(line)
            state = (ctx[14] >> 29) & 7
            print(f"// modify {n}: to state {state}")
            print("const CTX: &[(usize, u32)] = &[")
            for i, w in enumerate(ctx):
                if w:
                    print(f"    ({i}, 0x{w:08x}),")
            print("];")
            # RESET->INIT posts an all-zero mask; list what differs from
            # the more common of all-zeros and all-ones.
            fill = 0 if mask.count(0) > mask.count(0xFFFFFFFF) else 0xFFFFFFFF
            print(f"// mask words not listed: 0x{fill:08x}")
            print("const MASK: &[(usize, u32)] = &[")
            for i, w in enumerate(mask):
                if w != fill:
                    print(f"    ({i}, 0x{w:08x}),")
            print("];")
            ctx = None
            n += 1


if __name__ == "__main__":
    main()
