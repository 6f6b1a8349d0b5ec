#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""How much of each traced kverbs call is stack traffic, C against Rust.

For the last traced call of every kind in `make call-count`'s traces
(build/callcount/traces.json), keeps the instructions executed inside each
driver's own module (C: hns-roce-hw-v2.ko; Rust: hns_roce_rs.ko, its entry
points included), looks each one up in that module's disassembly (GNU
objdump, the kernel toolchain's) and counts the ones with a `(%rsp)`
operand other than push and pop: values the compiler keeps in stack slots
(spilled registers, locals in memory). Neither build keeps a frame
pointer (ORC), so every stack slot is addressed through %rsp. The modules
must be the ones call-count traced. Prints a Markdown table; counts, not
time (docs/benchmarks.md, "The kernel hot path").

Usage: call-stack.py TRACES.JSON C_MODULE RUST_MODULE
"""

import json
import os
import re
import runpy
import sys


STACK = re.compile(r"\(%rsp\)")
PUSH_POP = re.compile(r"^(push|pop)")


def count(call, syms, values, text):
    """(instructions in the module, stack-slot accesses, unknown) of one call."""
    n = stack = unknown = 0
    for pc in call["pcs"]:
        start, name = syms.lookup(pc)
        if name not in values:
            continue
        insn = text.get(values[name] + pc - start)
        n += 1
        if insn is None:
            unknown += 1
        elif STACK.search(insn) and not PUSH_POP.match(insn):
            stack += 1
    return n, stack, unknown


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.strip().splitlines()[-1])
    traces, c_mod, rs_mod = sys.argv[1:]
    # The helpers of call-lines.py (its `script` loads call-count.py) and
    # size-attr.py (the disassembly).
    here = os.path.dirname(os.path.abspath(__file__))
    lines = runpy.run_path(os.path.join(here, "call-lines.py"))
    call_count = lines["script"]("call-count")
    disassembly = runpy.run_path(os.path.join(here, "size-attr.py"))["disassembly"]
    with open(traces) as f:
        drivers = json.load(f)["drivers"]
    rows = {}
    bad = False
    for drv, mod in (("c", c_mod), ("rs", rs_mod)):
        d = drivers.get(drv) or sys.exit(f"call-stack: no {drv} driver in {traces}")
        syms = call_count.Symbols(tuple(s) for s in d["syms"])
        values = lines["symbol_values"](mod)
        text = disassembly(mod)
        for kind in call_count.KINDS:
            calls = d["calls"].get(kind) or []
            if not calls:
                continue
            n, stack, unknown = count(calls[-1], syms, values, text)
            # No instruction of the call in the module, or an address that
            # is no instruction start: not the module call-count traced.
            bad |= n == 0 or unknown > 0
            rows.setdefault(kind, {})[drv] = (n, stack)
    print("| call | C: instructions / stack-slot accesses | Rust: instructions / stack-slot accesses |")
    print("|---|---|---|")
    for kind in call_count.KINDS:
        r = rows.get(kind, {})
        cells = [f"{r[d][0]} / {r[d][1]}" if d in r else "not traced" for d in ("c", "rs")]
        print(f"| {kind} | {cells[0]} | {cells[1]} |")
    if bad:
        sys.exit("call-stack: a call has no instruction in its module, or one "
                 "between instructions: the modules are not the ones call-count traced")


if __name__ == "__main__":
    main()
