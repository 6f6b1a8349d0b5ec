#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Check the rdma layer's size and naming rules (docs/rdma-layer.md).

usage: layer-rules.py [TOP] [--self-test]

- the layer's C shim (bindings/shim.c and bindings/shim.h) is at most
  SHIM_LINES lines together (the hnae3 binding's half,
  bindings/hnae3_shim.[ch], is HNS's bus and not counted);
- the crate root (hns_roce_main.rs) is at most ROOT_LINES lines;
- no code line of the layer outside its hnae3 binding (rdma.rs and
  rdma/, without rdma/hnae3.rs, rdma/hnae3/ and the generated bindings of
  bindings/, which cover both shims' headers; and the layer's C shim)
  names HNS: no `hns` in any case, comments left out (they may cite the
  C functions a piece ports), string literals and identifiers included;
- no Rust file outside the layer names the generated bindings (`raw::`,
  `bindings::`): the driver sees the layer's safe types only.

Each rule prints one line; the exit status is 1 when any fails.
--self-test plants one violation of each rule in a copy of the tree and
fails unless every one is reported.
"""

import os
import re
import runpy
import shutil
import sys
import tempfile
import types

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHIM = ("bindings/shim.c", "bindings/shim.h")
SHIM_LINES = 1000
ROOT = "hns_roce_main.rs"
ROOT_LINES = 150
# The layer's files and its hnae3 binding (HNS's bus, allowed HNS names);
# bindings/ holds the layer's generated bindings (both shims' headers).
LAYER = ("rdma.rs", "rdma", "bindings")
BINDING = ("rdma/hnae3.rs", "rdma/hnae3", "bindings")


def const_once():
    """scripts/const-once.py's names (its file walk and comment blanker)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "const-once.py")
    return types.SimpleNamespace(**runpy.run_path(path))


def lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().splitlines()


def under(path, roots):
    return any(path == r or path.startswith(r + os.sep) for r in roots)


def check(top):
    """(rule, ok, detail) for each rule on the tree at `top`."""
    res = []
    n = sum(len(lines(os.path.join(top, f))) for f in SHIM)
    res.append(("shim-lines", n <= SHIM_LINES,
                f"{' + '.join(SHIM)}: {n} lines (at most {SHIM_LINES})"))
    n = len(lines(os.path.join(top, ROOT)))
    res.append(("crate-root-lines", n <= ROOT_LINES,
                f"{ROOT}: {n} lines (at most {ROOT_LINES})"))
    hns, raw = [], []
    co = const_once()
    # The files the crate compiles (tests/ aside), comments blanked.
    for f in co.mod_files(top):
        if f.startswith(co.SKIP_DIRS):
            continue
        with open(os.path.join(top, f), encoding="utf-8") as src:
            code = co.blank(src.read(), keep_strings=True).splitlines()
        in_layer = under(f, LAYER)
        for i, line in enumerate(code, 1):
            if in_layer and not under(f, BINDING) and re.search(r"hns", line, re.I):
                hns.append(f"{f}:{i}: {line.strip()}")
            if not in_layer and re.search(r"\b(raw|bindings)::", line):
                raw.append(f"{f}:{i}: {line.strip()}")
    for f in SHIM:
        src = open(os.path.join(top, f), encoding="utf-8").read()
        # Comments blanked, line breaks kept for the line numbers (C's
        # comments do not nest, unlike Rust's that const-once.py blanks).
        code = re.sub(r"/\*.*?\*/|//[^\n]*",
                      lambda m: re.sub(r"[^\n]", " ", m.group(0)), src, flags=re.S)
        for i, line in enumerate(code.splitlines(), 1):
            if re.search(r"hns", line, re.I):
                hns.append(f"{f}:{i}: {line.strip()}")
    res.append(("no-hns-name-in-layer", not hns,
                "; ".join(hns[:5]) or "no HNS name in the layer's code outside rdma/hnae3 (Rust and C shim)"))
    res.append(("no-bindings-outside-layer", not raw,
                "; ".join(raw[:5]) or "no raw::/bindings:: outside rdma.rs, rdma/ and bindings/"))
    return res


def self_test():
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "tree")
        keep = ("bindings", "rdma", "rdma.rs", ROOT, "qp.rs")
        os.mkdir(copy)
        for name in keep:
            src = os.path.join(TOP, name)
            if os.path.isdir(src):
                shutil.copytree(src, os.path.join(copy, name))
            else:
                shutil.copy(src, os.path.join(copy, name))
        clean = all(ok for _, ok, _ in check(copy))
        with open(os.path.join(copy, SHIM[0]), "a", encoding="utf-8") as f:
            f.write("\n" * SHIM_LINES)
        with open(os.path.join(copy, ROOT), "a", encoding="utf-8") as f:
            f.write("\n" * ROOT_LINES)
        with open(os.path.join(copy, "rdma/ib.rs"), "a", encoding="utf-8") as f:
            f.write('// hns in a comment is allowed\nconst PLANTED: &str = "hns_0";\n')
        with open(os.path.join(copy, SHIM[0]), "a", encoding="utf-8") as f:
            f.write("/* hns in a comment\n * is allowed */\n#define PLANTED_C RDMA_DRIVER_HNS\n")
        with open(os.path.join(copy, "qp.rs"), "a", encoding="utf-8") as f:
            f.write("// raw:: in a comment is allowed\ntype Planted = raw::ib_qp;\n")
        res = {rule: (ok, detail) for rule, ok, detail in check(copy)}
        caught = [rule for rule, (ok, _) in res.items() if not ok]
        planted_only = ("PLANTED:" in res["no-hns-name-in-layer"][1]
                        and "PLANTED_C" in res["no-hns-name-in-layer"][1]
                        and "comment" not in res["no-hns-name-in-layer"][1]
                        and "Planted" in res["no-bindings-outside-layer"][1]
                        and "comment" not in res["no-bindings-outside-layer"][1])
        ok = clean and len(caught) == len(res) and planted_only
        print("self-test:", "every planted violation reported, comments left alone"
              if ok else f"NOT reported as planted: clean={clean} caught={caught} {res}")
        return ok


def main():
    args = sys.argv[1:]
    if "--self-test" in args:
        return 0 if self_test() else 1
    top = args[0] if args else TOP
    bad = 0
    for rule, ok, detail in check(top):
        print(f"{'ok  ' if ok else 'FAIL'} {rule}: {detail}")
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
