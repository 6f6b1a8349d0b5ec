#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Where one traced Rust kverbs call spends its instructions, by source line.

make call-lines KIND=<kind> (docs/benchmarks.md). Reads the
traces of the last `make call-count` (build/callcount/traces.json), keeps
the Rust driver's instructions of one traced call of KIND (post_send_1,
post_send_16, post_recv_1, post_recv_16, poll_cq_empty, poll_cq_16), moves
each address from the module as loaded to the same function in the
debug-info build of `make size-attr` (the same .text as the release
module, which size-attr checks), and counts the instructions by the
innermost source line `addr2line -i` gives (the line of the inlined callee,
not of its caller). Instructions outside the Rust object (the C shim, the
kernel's locks and lockdep) are not counted here; report.md has them per
function.

Usage: call-lines.py TRACES.JSON KIND DEBUG_OBJECT [ROWS]
"""

import collections
import importlib.util
import json
import os
import subprocess
import sys


def symbol_values(obj):
    """Function symbols of the object and their offsets in its .text."""
    out = subprocess.run(["nm", "--defined-only", obj], capture_output=True, text=True,
                         check=True).stdout
    vals = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tT":
            vals[parts[2]] = int(parts[0], 16)
    return vals


def script(name):
    """One of the scripts beside this one, loaded as a module (their file
    names have hyphens; neither runs anything when loaded)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py")
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"), path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def innermost_lines(obj, addrs):
    """The innermost (file:line, function) of each address, through
    size-attr.py's addr2line reading."""
    res = {}
    for addr, chain in script("size-attr").chains(obj, addrs).items():
        if chain:
            func, path, line = chain[0]
            res[addr] = (f"{os.path.basename(path)}:{line or '?'}", func)
    return res


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    traces, kind, obj = sys.argv[1:4]
    rows = int(sys.argv[4]) if len(sys.argv) == 5 else 40
    with open(traces) as f:
        rs = json.load(f)["drivers"]["rs"]
    calls = rs["calls"].get(kind) or sys.exit(f"call-lines: no traced Rust call of {kind}")
    call_count = script("call-count")
    syms = call_count.Symbols(tuple(s) for s in rs["syms"])
    vals = symbol_values(obj)
    # The last traced call: the first of a kind may carry one-off work
    # (lockdep registering a lock class, outside the module anyway).
    call = calls[-1]
    count = collections.Counter()
    outside = 0
    for pc in call["pcs"]:
        start, name = syms.lookup(pc)
        if name not in vals:
            outside += 1
            continue
        count[vals[name] + pc - start] += 1
    where = innermost_lines(obj, sorted(count))
    by_line = collections.Counter()
    for addr, n in count.items():
        loc, func = where.get(addr, ("?", "?"))
        by_line[(loc, func)] += n
    per = call_count.divisor(kind)
    total = sum(count.values())
    print(f"{kind}: {total} instructions in the Rust object ({total / per:.1f} per "
          f"{'WR or CQE' if per > 1 else 'call'}), {outside} outside it (shim, kernel)")
    print(f"{'insn':>6} {'per':>6}  line  function (innermost)")
    for (loc, func), n in by_line.most_common(rows):
        print(f"{n:>6} {n / per:>6.1f}  {loc}  {func[:90]}")


if __name__ == "__main__":
    main()
