#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Check that docs/rdma-layer.md reviews every function of the C shim.

usage: shim-review.py [SHIM_C [DOC]]
       shim-review.py --self-test

The shim (bindings/shim.c, the rdma layer's, and bindings/hnae3_shim.c,
the hnae3 client's; both unless SHIM_C names one) is meant to hold only what Rust cannot
express; docs/rdma-layer.md's section "The shim, function by function"
has one table row per function saying why it is C. Fails (exit 1, one
line per fault) when a function of the shim has no row, when a row names
a function the shim does not define, or when a row's reason is empty.
Prints the number of functions reviewed otherwise. --self-test plants a
function without a row in a copy of the shim and a row for no function in
a copy of the doc, and passes only if both are reported.
"""

import os
import re
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECTION = "## The shim, function by function"


def shim_functions(path):
    """Names of the functions defined at file scope in a C file."""
    lines = open(path, encoding="utf-8").read().split("\n")
    names = []
    i = 0
    while i < len(lines):
        line = lines[i]
        starts = line and not line[0].isspace() and not line.startswith(("#", "/", "*", "}", "{"))
        if starts and "(" in line and not line.rstrip().endswith(";"):
            j, text = i, line
            while text.count("(") > text.count(")") and j + 1 < len(lines):
                j += 1
                text += " " + lines[j].strip()
            if j + 1 < len(lines) and lines[j + 1].startswith("{"):
                m = re.search(r"(\w+)\s*\(", text)
                if m:
                    names.append(m.group(1))
            i = j + 1
            continue
        i += 1
    return names


def reviewed(path):
    """(function, reason) of each row of the review section's tables."""
    text = open(path, encoding="utf-8").read()
    start = text.find(SECTION)
    if start < 0:
        return None
    end = text.find("\n## ", start + len(SECTION))
    body = text[start:] if end < 0 else text[start:end]
    rows = []
    for line in body.split("\n"):
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        for name in re.findall(r"`(\w+)`", cells[0]):
            rows.append((name, cells[-1] if len(cells) > 1 else ""))
    return rows


def self_test():
    """Plants one fault of each kind and needs both reported."""
    shim = os.path.join(TOP, "bindings/shim.c")
    doc = os.path.join(TOP, "docs/rdma-layer.md")
    with tempfile.TemporaryDirectory() as d:
        cshim, cdoc = os.path.join(d, "shim.c"), os.path.join(d, "rdma-layer.md")
        with open(cshim, "w", encoding="utf-8") as f:
            f.write(open(shim, encoding="utf-8").read())
            f.write("\nstatic int rdma_shim_planted(int x)\n{\n\treturn x;\n}\n")
        text = open(doc, encoding="utf-8").read()
        row = "| `rdma_shim_gone` | a row for a function that was removed |\n"
        at = text.find(SECTION)
        if at < 0:
            print(f"self-test: {doc} has no section '{SECTION}'")
            return 1
        at = text.find("\n| `", at) + 1
        with open(cdoc, "w", encoding="utf-8") as f:
            f.write(text[:at] + row + text[at:])
        r = subprocess.run([sys.executable, __file__, cshim, cdoc], capture_output=True, text=True)
    want = ["rdma_shim_planted has no review row", "rdma_shim_gone is no function"]
    missed = [w for w in want if w not in r.stdout]
    if r.returncode == 0 or missed:
        print(f"self-test: not reported: {missed} (exit {r.returncode})")
        print(r.stdout)
        return 1
    print("self-test: the planted function and the stale row are both reported")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) > 1:
        shims = [sys.argv[1]]
    else:
        shims = [os.path.join(TOP, f) for f in ("bindings/shim.c", "bindings/hnae3_shim.c")]
    shim = " and ".join(shims)
    doc = sys.argv[2] if len(sys.argv) > 2 else os.path.join(TOP, "docs/rdma-layer.md")
    funcs = [f for s in shims for f in shim_functions(s)]
    rows = reviewed(doc)
    faults = []
    if rows is None:
        faults.append(f"{doc}: no section '{SECTION}'")
        rows = []
    named = {}
    for name, reason in rows:
        if name in named:
            faults.append(f"{doc}: {name} has two rows")
        named[name] = reason
    for f in funcs:
        if f not in named:
            faults.append(f"{doc}: shim function {f} has no review row")
    for name, reason in named.items():
        if name not in funcs:
            faults.append(f"{doc}: {name} is no function of {shim}")
        elif not reason or reason == "`" + name + "`":
            faults.append(f"{doc}: {name} has no reason")
    for f in faults:
        print(f)
    if faults:
        print(f"shim-review: {len(faults)} fault(s)")
        return 1
    print(f"shim-review: {len(funcs)} functions of the shim reviewed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
